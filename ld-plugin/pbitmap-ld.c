/* pbitmap-ld.c: the pbitmap region for linkers that run no plugin of ours.
 *
 * mold runs a linker plugin only for LTO inputs and keeps only the last
 * -plugin option (so ours would replace GCC's LTO plugin), and lld runs
 * none at all.  pbitmap-ld stands where the compiler driver expects the
 * linker and does, around the real linker, what the plugin does inside
 * ld.bfd and gold, with the same code (policy.c, reserve.c, patch.c):
 *
 *   1. It writes the region object for the link's target (reserve.c) and
 *      appends it and the runtime object to the linker's arguments.
 *   2. It runs the real linker with them.
 *   3. It patches the output like the plugin's cleanup hook (patch.c):
 *      the region's PT_NOTE becomes PT_PRESENT_BITMAP, and a static
 *      executable's entry point becomes the runtime's stub.  Where the
 *      linker has merged every note into one PT_NOTE (mold), the region
 *      stays a note among the others; the runtime and elfpatch find it
 *      there by its owner and type (doc/format.md).
 *
 * With an order file (--pbitmap-order=FILE, or -plugin-opt=order=FILE as
 * the plugin takes it), pbitmap-ld reads and checks it first (order.c),
 * hands its names to the linker as --symbol-ordering-file when the
 * linker's --help lists that option (lld does; mold 1.10 has no way to
 * order sections, and then a warning says the order is not applied),
 * silences lld's warning for each name it does not find
 * (--no-warn-symbol-ordering) and, after the link, says how much of the
 * list the output holds in order, as the plugin does.
 *
 * The capacity must be fixed before the link, but which archive members
 * the link loads is only known after it.  So the first link gets a
 * capacity estimated, as the plugin estimates it (policy.c), from the
 * object files named on the command line; when the image turns out
 * larger, the link runs once more with a capacity for the image it made.
 * Both are functions of the inputs, so the output is reproducible.
 *
 * Which linker is real: --pbitmap-ld=PROG, else $PBITMAP_LD, else the
 * name pbitmap-ld was called by when it is ld.NAME (a symlink ld.mold or
 * ld.lld in a directory given to gcc -B selects mold or lld with
 * -fuse-ld=mold or -fuse-ld=lld), else ld.  It is looked up in PATH,
 * skipping pbitmap-ld itself.  gold needs the spare note (reserve.c)
 * under pbitmap-ld too; a linker is gold when its --version says so
 * ("GNU gold ..."), whatever its name.
 *
 * Options, all removed before the real linker sees the arguments (pass
 * them with -Wl,): --pbitmap-ld=PROG, and the link policy's (policy.c)
 * as --pbitmap-NAME: runtime-dir=DIR, no-runtime, capacity=PAGES,
 * hook=entry|preinit, order=FILE, verbose, quiet; order=FILE also as the
 * plugin takes it.  Relocatable links (-r) and queries (--version,
 * --help) go to the real linker untouched.  Response files (@FILE) are
 * read as the linker reads them (argfile.c), for all of the above: GCC's
 * driver puts every -Wl, option in one of its own when it was given one.
 * A response file holding one of pbitmap-ld's options goes to the real
 * linker written again without it (and is removed after the link), any
 * other as it is.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <gelf.h>

#include "pbitmap-format.h"
#include "plugin.h"
#include "policy.h"

#define OWN_PREFIX "--pbitmap-"

/* What the command line says besides the options. */
struct link
{
  char **args;                  /* the real linker's, NULL-terminated */
  size_t nargs;
  const char *linker;           /* as asked for */
  const char *output;
  bool query;                   /* --version, --help, -v: no output */
  struct argfile_args line;     /* the arguments, response files read */
  char **written;               /* @FILE of each response file written */
  size_t nwritten;
};

/* The options and the link's kind, and the estimate of its image. */
static struct link_policy policy;
static struct link_estimate estimate;

void
plugin_message (enum ld_plugin_level level, const char *fmt, ...)
{
  va_list ap;

  if (level == LDPL_WARNING && policy.quiet)
    return;
  fprintf (stderr, "pbitmap-ld: %s", level == LDPL_WARNING ? "warning: "
           : level == LDPL_INFO ? "" : "error: ");
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

/* ---- the command line ------------------------------------------------- */

static bool
has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

/* Takes the policy's option OPT, given as ARG: the process ends on an
 * error. */
static void
take_option (const char *opt, const char *arg)
{
  switch (policy_option (&policy, opt, arg))
    {
    case 1:
      return;
    case 0:
      policy_unknown_option (&policy, arg, OWN_PREFIX "ld=PROG");
      /* Fall through. */
    default:
      exit (1);
    }
}

/* Takes pbitmap-ld's own option ARG, or the plugin's spelling of order=
 * in one argument; returns false for any other. */
static bool
own_option (struct link *l, const char *arg)
{
  static const char *const plugin_order[] = {
    "-plugin-opt=order=", "--plugin-opt=order="
  };

  if (has_prefix (arg, OWN_PREFIX "ld="))
    l->linker = arg + strlen (OWN_PREFIX "ld=");
  else if (has_prefix (arg, OWN_PREFIX))
    take_option (arg + strlen (OWN_PREFIX), arg);
  else
    {
      for (size_t i = 0; i < sizeof plugin_order / sizeof *plugin_order; i++)
        if (has_prefix (arg, plugin_order[i]))
          {
            take_option (strchr (arg, '=') + 1, arg);
            return true;
          }
      return false;
    }
  return true;
}

/* Linker options that take the next argument as their value, so that it
 * is not mistaken for an input file. */
static bool
takes_value (const char *arg)
{
  static const char *const with_value[] = {
    "-L", "-l", "-T", "-dT", "-e", "-m", "-z", "-y", "-u", "-h", "-R",
    "-o", "--output", "-plugin", "-plugin-opt", "--plugin", "--plugin-opt",
    "-soname", "--soname", "-rpath", "--rpath", "-rpath-link",
    "--rpath-link", "-dynamic-linker", "--dynamic-linker", "--sysroot",
    "-Map", "--version-script", "--dynamic-list", "--defsym", "--script",
    "--entry", "--undefined", "--wrap", "--library", "--library-path",
    "-init", "-fini", "--just-symbols",
    NULL
  };

  for (size_t i = 0; with_value[i] != NULL; i++)
    if (strcmp (arg, with_value[i]) == 0)
      return true;
  return false;
}

/* An input file the link will certainly load: counts it in the estimate,
 * as the plugin counts what claim_file offers it (policy.c). */
static void
size_input (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;

  if (fd < 0)
    return;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    estimate_input (&estimate, fd, 0, st.st_size, NULL, NULL);
  close (fd);
}

/* Removes the response files rewrite_response_file wrote. */
static void
drop_response_files (struct link *l)
{
  for (size_t i = 0; i < l->nwritten; i++)
    {
      unlink (l->written[i] + 1);
      free (l->written[i]);
    }
  l->nwritten = 0;
}

/* Reads what matters in one argument of the real linker's; *SKIP is set
 * when the next argument is this one's value. */
static void
scan_argument (struct link *l, char *const *argv, size_t i, bool *skip)
{
  const char *arg = argv[i];

  *skip = false;
  if ((strcmp (arg, "-o") == 0 || strcmp (arg, "--output") == 0)
      && argv[i + 1] != NULL)
    l->output = argv[i + 1];
  else if (has_prefix (arg, "--output="))
    l->output = arg + 9;
  else if (has_prefix (arg, "-o") && arg[2] != '\0')
    l->output = arg + 2;
  if (policy_linker_argument (&policy, arg, argv[i + 1]))
    *skip = true;
  else if (takes_value (arg))
    *skip = argv[i + 1] != NULL;
  else if (strcmp (arg, "-shared") == 0 || strcmp (arg, "--shared") == 0
           || strcmp (arg, "-Bshareable") == 0)
    policy.output = LDPO_DYN;
  else if ((strcmp (arg, "-pie") == 0 || strcmp (arg, "--pie") == 0
            || strcmp (arg, "--pic-executable") == 0)
           && policy.output != LDPO_DYN)
    policy.output = LDPO_PIE;
  else if (strcmp (arg, "-no-pie") == 0 || strcmp (arg, "--no-pie") == 0)
    policy.output = policy.output == LDPO_PIE ? LDPO_EXEC : policy.output;
  else if (strcmp (arg, "-r") == 0 || strcmp (arg, "--relocatable") == 0
           || strcmp (arg, "-Ur") == 0 || strcmp (arg, "-i") == 0)
    policy.output = LDPO_REL;
  else if (strcmp (arg, "--version") == 0 || strcmp (arg, "--help") == 0)
    l->query = true;
  else if (arg[0] != '-' && arg[0] != '@')
    size_input (arg);
}

/* Writes the arguments of L->line that came from the response file at
 * index ORIGIN of the line and that KEPT marks to a response file of its
 * own, removed at the end (drop_response_files), and returns its @FILE
 * argument; the process ends on an error. */
static char *
rewrite_response_file (struct link *l, int origin, const bool *kept)
{
  char *path, *arg = NULL;
  int fd = reserve_create_file (".rsp", &path);
  FILE *f;
  int rc = 0;

  if (fd < 0)
    {
      drop_response_files (l);
      exit (1);
    }
  f = fdopen (fd, "w");
  if (f == NULL)
    {
      close (fd);
      rc = -1;
    }
  for (size_t i = 0; f != NULL && rc == 0 && i < l->line.count; i++)
    if (l->line.origin[i] == origin && kept[i])
      rc = argfile_write (f, &l->line.args[i], 1);
  if ((f != NULL && fclose (f) != 0) || rc != 0
      || asprintf (&arg, "@%s", path) < 0)
    {
      plugin_message (LDPL_FATAL, "%s: cannot write the response file "
                      "without pbitmap-ld's options: %s", path,
                      strerror (errno));
      unlink (path);
      free (path);
      drop_response_files (l);
      exit (1);
    }
  free (path);
  l->written[l->nwritten++] = arg;
  return arg;
}

/* Reads the command line ARGV, response files included, and sets L's
 * real linker arguments to it without pbitmap-ld's own options: an
 * argument that is one is left out, and a response file that holds one
 * is written again without it.  The process ends on an error. */
static void
parse_command_line (struct link *l, int argc, char **argv)
{
  bool skip = false, *kept, *dropped;
  char **e;

  /* Room for the region and runtime objects, the ordering options and
   * the NULL; each argument given is passed on once at most. */
  l->args = calloc (argc + 5, sizeof *l->args);
  l->written = calloc (argc, sizeof *l->written);
  dropped = calloc (argc, sizeof *dropped);
  if (l->args == NULL || l->written == NULL || dropped == NULL
      || argfile_expand (argc - 1, argv + 1, &l->line) != 0
      || (kept = calloc (l->line.count + 1, sizeof *kept)) == NULL)
    {
      plugin_message (LDPL_FATAL, "out of memory");
      exit (1);
    }
  l->args[l->nargs++] = NULL;           /* the real linker, later */
  l->output = "a.out";
  e = l->line.args;
  for (size_t i = 0; i < l->line.count; i++)
    {
      int origin = l->line.origin[i];

      if (!skip && own_option (l, e[i]))
        {
          dropped[origin] = true;
          continue;
        }
      /* The plugin's option in two arguments: -plugin-opt order=FILE. */
      if (!skip && e[i + 1] != NULL && has_prefix (e[i + 1], "order=")
          && (strcmp (e[i], "-plugin-opt") == 0
              || strcmp (e[i], "--plugin-opt") == 0))
        {
          take_option (e[i + 1], e[i + 1]);
          dropped[origin] = dropped[l->line.origin[++i]] = true;
          continue;
        }
      kept[i] = true;
      if (skip)
        skip = false;
      else
        scan_argument (l, e, i, &skip);
    }
  for (int j = 0; j < argc - 1; j++)
    if (!dropped[j])
      l->args[l->nargs++] = argv[j + 1];
    else if (l->line.read[j])
      l->args[l->nargs++] = rewrite_response_file (l, j, kept);
  free (kept);
  free (dropped);
}

/* ---- the real linker -------------------------------------------------- */

/* The linker asked for: --pbitmap-ld, $PBITMAP_LD, the name called by
 * when it is ld.NAME, or ld. */
static const char *
linker_name (const struct link *l, const char *argv0)
{
  const char *base = strrchr (argv0, '/');
  const char *env = getenv ("PBITMAP_LD");

  base = base != NULL ? base + 1 : argv0;
  if (l->linker != NULL)
    return l->linker;
  if (env != NULL && *env != '\0')
    return env;
  if (has_prefix (base, "ld.") && base[3] != '\0')
    return base;
  return "ld";
}

static bool
same_file (const char *a, const struct stat *b)
{
  struct stat st;

  return stat (a, &st) == 0 && st.st_dev == b->st_dev
         && st.st_ino == b->st_ino;
}

/* NAME as a path, looked up in PATH unless it has a slash, skipping
 * pbitmap-ld itself (found under the linker's name, it would run itself
 * for ever).  Returns a string to be freed, or NULL. */
static char *
find_linker (const char *name)
{
  const char *path = getenv ("PATH");
  struct stat self;
  bool know_self = stat ("/proc/self/exe", &self) == 0;

  if (strchr (name, '/') != NULL)
    return (know_self && same_file (name, &self)) ? NULL : strdup (name);
  if (path == NULL)
    path = "/usr/bin:/bin";
  while (*path != '\0')
    {
      size_t len = strcspn (path, ":");
      char *candidate;

      if (asprintf (&candidate, "%.*s/%s", (int) (len ? len : 1),
                    len ? path : ".", name) < 0)
        return NULL;
      if (access (candidate, X_OK) == 0
          && !(know_self && same_file (candidate, &self)))
        return candidate;
      free (candidate);
      path += len + (path[len] == ':');
    }
  return NULL;
}

/* Runs ARGS; returns its exit status, 127 when it could not run. */
static int
run (char **args)
{
  pid_t pid = fork ();
  int status;

  if (pid < 0)
    {
      plugin_message (LDPL_FATAL, "cannot run %s: %s", args[0],
                      strerror (errno));
      return 127;
    }
  if (pid == 0)
    {
      execv (args[0], args);
      fprintf (stderr, "pbitmap-ld: error: cannot run %s: %s\n", args[0],
               strerror (errno));
      _exit (127);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}

/* What LINKER OPTION (--help, --version) prints on standard output, to
 * be freed, or NULL. */
static char *
linker_says (const char *linker, const char *option)
{
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream (&text, &size);
  int fds[2];
  pid_t pid;

  if (out == NULL || pipe2 (fds, O_CLOEXEC) != 0)
    {
      if (out != NULL)
        fclose (out);
      free (text);
      return NULL;
    }
  pid = fork ();
  if (pid == 0)
    {
      int null = open ("/dev/null", O_WRONLY);

      dup2 (fds[1], STDOUT_FILENO);
      if (null >= 0)
        dup2 (null, STDERR_FILENO);
      execl (linker, linker, option, (char *) NULL);
      _exit (127);
    }
  close (fds[1]);
  for (char buf[4096];;)
    {
      ssize_t n = read (fds[0], buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      fwrite (buf, 1, n, out);
    }
  close (fds[0]);
  while (pid > 0 && waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  fclose (out);
  return text;
}

/* Whether LINKER is gold, by its own word: gold's --version starts with
 * "GNU gold", and no other linker's does. */
static bool
is_gold (const char *linker)
{
  char *version = linker_says (linker, "--version");
  bool gold = version != NULL && has_prefix (version, "GNU gold");

  free (version);
  return gold;
}

/* ---- the link with a region ------------------------------------------- */

/* One link with a region of CAPACITY pages and the runtime object
 * RUNTIME (or none: NULL), patched afterwards.  Returns the linker's
 * status, or 1 when pbitmap-ld failed. */
static int
link_once (struct link *l, uint64_t capacity, char *runtime,
           struct patch_outcome *outcome)
{
  char *region = NULL;
  size_t n = l->nargs;
  int status = 1;

  if (policy_write_region (&policy, estimate_target (&estimate), capacity,
                           &region) != 0)
    goto out;
  l->args[n] = region;
  l->args[n + 1] = runtime;
  l->args[n + 2] = NULL;
  status = run (l->args);
  l->args[n] = NULL;
  if (status != 0)
    goto out;
  switch (patch_output (l->output, policy_redirect_entry (&policy), true,
                        outcome))
    {
    case PATCH_DONE:
      break;
    case PATCH_NO_OUTPUT:
      plugin_message (LDPL_FATAL, "%s: the linker wrote no output",
                      l->output);
      status = 1;
      break;
    default:
      status = 1;
    }
 out:
  if (region != NULL)
    unlink (region);
  free (region);
  return status;
}

static int
link_with_region (struct link *l, const char *linker)
{
  uint64_t capacity = policy_capacity (&policy, &estimate);
  struct patch_outcome outcome;
  char *runtime;
  int status;

  if (policy_runtime (&policy, estimate_target (&estimate), &runtime) != 0)
    return 1;
  status = link_once (l, capacity, runtime, &outcome);
  if (status == 0 && policy.capacity == 0 && outcome.image_pages > capacity)
    {
      /* The archives added more than the objects showed. */
      if (policy.verbose)
        plugin_message (LDPL_INFO, "%s: the image has %" PRIu64 " pages, "
                        "more than the estimate of %" PRIu64 ": linking "
                        "again", l->output, outcome.image_pages, capacity);
      capacity = policy_capacity_for (outcome.image_pages
                                      * PBITMAP_PAGE_SIZE);
      status = link_once (l, capacity, runtime, &outcome);
    }
  free (runtime);
  if (status != 0)
    return status;
  policy_report_output (&policy, l->output, capacity, &outcome);
  if (policy.verbose)
    plugin_message (LDPL_INFO, "%s: %s linked by %s: capacity %" PRIu64
                    " pages, region %s", l->output,
                    policy_output_kind (&policy), linker, capacity,
                    outcome.in_shared_note
                    ? "a note in a shared PT_NOTE" : "PT_PRESENT_BITMAP");
  return 0;
}

/* ---- the order ---------------------------------------------------------- */

/* Whether the help text HELP lists OPTION as an option of its own. */
static bool
lists_option (const char *help, const char *option)
{
  size_t n = strlen (option);

  for (const char *p = help; p != NULL && (p = strstr (p, option)); p += n)
    if (!(p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z')))
      return true;
  return false;
}

/* Hands the names of the order file to the linker as its
 * --symbol-ordering-file, written to *PATH, the option in *OPTION (both
 * to be freed); a linker without one is warned about and links without
 * the order.  Returns 0, or -1 after an error message. */
static int
pass_order (struct link *l, const struct order *o, const char *linker,
            char **path, char **option)
{
  char *help = linker_says (linker, "--help");
  const char *base = strrchr (linker, '/');
  int fd;

  base = base != NULL ? base + 1 : linker;
  if (help == NULL || !lists_option (help, "--symbol-ordering-file"))
    {
      plugin_message (LDPL_WARNING, "%s has no --symbol-ordering-file: %s "
                      "is not applied", base, o->path);
      free (help);
      return 0;
    }
  fd = reserve_create_file (".txt", path);
  if (fd < 0 || order_write_names (o, fd, *path) != 0)
    {
      if (fd >= 0)
        close (fd);
      free (help);
      return -1;
    }
  close (fd);
  if (asprintf (option, "--symbol-ordering-file=%s", *path) < 0)
    {
      *option = NULL;
      plugin_message (LDPL_FATAL, "out of memory");
      free (help);
      return -1;
    }
  l->args[l->nargs++] = *option;
  /* One warning of ours instead of one of lld's per missing name. */
  if (lists_option (help, "--no-warn-symbol-ordering"))
    l->args[l->nargs++] = "--no-warn-symbol-ordering";
  free (help);
  return 0;
}

/* The link with the order of L's order file, when it has one. */
static int
link_in_order (struct link *l, const char *linker)
{
  struct order o;
  char *names = NULL, *option = NULL;
  int status;

  if (policy.order == NULL)
    return link_with_region (l, linker);
  if (order_read (policy.order, &o) != 0)
    return 1;
  status = pass_order (l, &o, linker, &names, &option) != 0 ? 1
           : link_with_region (l, linker);
  if (status == 0 && option != NULL && !policy.quiet)
    order_report (&o, l->output);
  if (names != NULL)
    unlink (names);
  free (names);
  free (option);
  order_free (&o);
  return status;
}

int
main (int argc, char **argv)
{
  struct link l = { 0 };
  const char *name;
  char *linker;
  int status;

  if (elf_version (EV_CURRENT) == EV_NONE)
    {
      plugin_message (LDPL_FATAL, "libelf: %s", elf_errmsg (-1));
      return 1;
    }
  policy_init (&policy, OWN_PREFIX, OWN_PREFIX);
  parse_command_line (&l, argc, argv);
  name = linker_name (&l, argv[0]);
  linker = find_linker (name);
  if (linker == NULL)
    {
      plugin_message (LDPL_FATAL, "cannot find the linker %s (set "
                      "--pbitmap-ld=PROG or PBITMAP_LD)", name);
      drop_response_files (&l);
      return 1;
    }
  l.args[0] = linker;
  if (l.query || policy.output == LDPO_REL)
    status = run (l.args);
  else
    {
      policy.gold = is_gold (linker);
      status = link_in_order (&l, linker);
    }
  drop_response_files (&l);
  free (l.written);
  argfile_free (&l.line);
  free (linker);
  free (l.args);
  return status;
}
