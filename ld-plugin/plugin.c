/* plugin.c: the pbitmap plugin for GNU ld, and how it sizes the region.
 *
 * No plugin hook can add a program header, so the plugin gets one in
 * three steps, all through the ordinary plugin interface
 * (binutils include/plugin-api.h):
 *
 *   claim_file        called for every object and every archive member
 *                     the link loads (ld.bfd offers whole archives too,
 *                     which are skipped).  The plugin never claims
 *                     anything; it only reads each relocatable input with
 *                     libelf and adds up what it will contribute to the
 *                     image.  Shared libraries are not part of it.
 *   all_symbols_read  called once all inputs are known.  The plugin writes
 *                     a small relocatable object holding the zero-filled
 *                     region as a 16-aligned note (reserve.c), hands it to
 *                     the linker with add_input_file, and adds the runtime
 *                     object that reads the region at start-up.  ld.bfd
 *                     places the orphan note right after .interp, inside
 *                     the first PT_LOAD, and gives it a PT_NOTE of its own
 *                     because no other note has its alignment.  gold
 *                     (it passes LDPT_GOLD_VERSION) does the same but may
 *                     let the PT_NOTE of its 4-aligned notes span the
 *                     region, so for gold the object also holds an empty
 *                     note that buys a spare program header (patch.c).
 *   cleanup           called after the output is written and closed.  The
 *                     plugin retypes that PT_NOTE to PT_PRESENT_BITMAP
 *                     (patch.c) and removes its temporary object.
 *
 * The capacity (file pages the bitmap can describe) must be fixed before
 * the layout is, so it is estimated from the inputs claim_file sees, as
 * policy.c says, and cleanup warns when the finished image is larger.
 * LTO IR objects count LTO_GROWTH times their size, both those this
 * plugin sees and those GCC's LTO plugin, loaded first, claimed before it
 * could (lto.c).
 *
 * Where the runtime starts (hook=entry, the default, or hook=preinit) is
 * the link policy's (policy.c) and patch.c's: a dynamic executable from
 * .preinit_array, a static one from the runtime's entry stub unless
 * hook=preinit keeps the linked entry point.
 *
 * With order=FILE the plugin also applies a link order (an order file,
 * doc/format.md): it is read and checked when the plugin is loaded,
 * claim_file notes which input sections define its names, and
 * all_symbols_read hands the linker their order (place.c): ld.bfd as a
 * linker script, gold through its section-ordering interface.  cleanup
 * then reads the output's symbol table and says how much of the list it
 * holds in order (order.c).
 *
 * Options (-plugin-opt=OPT) are the link policy's (policy.c).
 * Relocatable links (-r) are left alone entirely.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdint.h>     /* plugin-api.h needs the fixed-width types first */
#include <plugin-api.h>
#include <gelf.h>

#include "pbitmap-format.h"
#include "plugin.h"
#include "policy.h"

/* The linker's interface, as offered in onload. */
static ld_plugin_message tv_message;
static ld_plugin_register_claim_file tv_register_claim_file;
static ld_plugin_register_all_symbols_read tv_register_all_symbols_read;
static ld_plugin_register_cleanup tv_register_cleanup;
static ld_plugin_add_input_file tv_add_input_file;
static ld_plugin_update_section_order tv_update_section_order;      /* gold */
static ld_plugin_allow_section_ordering tv_allow_section_ordering;  /* gold */
static const char *tv_output_name;
static bool tv_linker_output_seen;

/* The options and what the linker told of the link. */
static struct link_policy policy;

/* What the inputs told us. */
static struct link_estimate estimate;
static unsigned lto_count;              /* IR objects the LTO plugin claimed */
static char *lto_resolution;            /* its resolution file, if named */

/* The state of this link. */
static uint64_t capacity;
static char *reserve_path;              /* the temporary object, if any */
static bool reserved;                   /* the region went into the link */
static bool failed;                     /* a fatal message was sent */
static struct order order;              /* read when order= is set */
static bool ordering;                   /* ... and this link applies it */

void
plugin_message (enum ld_plugin_level level, const char *fmt, ...)
{
  char text[1024];
  va_list ap;

  if (level == LDPL_WARNING && policy.quiet)
    return;
  if (level == LDPL_FATAL || level == LDPL_ERROR)
    failed = true;

  va_start (ap, fmt);
  vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);

  /* The linker formats its message with its own printf-like machinery,
   * which knows conversions of its own: pass the text as an argument.
   * ld.bfd prints LDPL_WARNING on stdout, where a build log hides it (and
   * LDPL_ERROR fails the link): a warning goes to stderr, in ld.bfd's own
   * form, from here.  gold prints warnings on stderr itself. */
  if (level == LDPL_WARNING && tv_message != NULL && !policy.gold)
    fprintf (stderr, "%s: warning: pbitmap: %s\n",
             program_invocation_name, text);
  else if (tv_message != NULL)
    tv_message (level, "pbitmap: %s", text);
  else
    fprintf (stderr, "pbitmap: %s\n", text);
}

static enum ld_plugin_status
parse_option (const char *opt)
{
  switch (policy_option (&policy, opt, opt))
    {
    case 1:
      return LDPS_OK;
    case 0:
      policy_unknown_option (&policy, opt, NULL);
      /* Fall through. */
    default:
      return LDPS_ERR;
    }
}

/* Sizing: claim_file offers each input file and archive member.  ld.bfd
 * offers a whole archive as well as the members it loads; only the
 * members count (policy.c). */

/* Notes where the relocatable object ELF defines the names of the order. */
static void
scan_object (Elf *elf, void *arg)
{
  if (ordering)
    place_scan (&order, elf, arg, policy.gold);
}

/* The hooks. */

static enum ld_plugin_status
onclaim_file (const struct ld_plugin_input_file *file, int *claimed)
{
  static bool allowed;

  *claimed = 0;
  /* gold takes this from claim_file on, not from onload. */
  if (ordering && policy.gold && !allowed)
    {
      tv_allow_section_ordering ();
      allowed = true;
    }
  if (policy.output != LDPO_REL)
    estimate_input (&estimate, file->fd, file->offset, file->filesize,
                    scan_object, (void *) file);
  return LDPS_OK;
}

static enum ld_plugin_status
add_reserve_object (void)
{
  if (policy_write_region (&policy, estimate_target (&estimate), capacity,
                           &reserve_path) != 0)
    return LDPS_ERR;
  if (tv_add_input_file (reserve_path) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused the region object %s",
                      reserve_path);
      return LDPS_ERR;
    }
  reserved = true;
  return LDPS_OK;
}

/* Adds the runtime object PATH. */
static enum ld_plugin_status
add_runtime_object (const char *path)
{
  if (tv_add_input_file (path) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused the runtime object %s",
                      path);
      return LDPS_ERR;
    }
  return LDPS_OK;
}

/* The one line of -plugin-opt=verbose. */
static void
report_link (const char *runtime)
{
  char basis[128];

  if (policy.capacity != 0)
    snprintf (basis, sizeof basis, "set by capacity=");
  else
    snprintf (basis, sizeof basis, "estimated from %u inputs%s, %" PRIu64
              " KiB%s", estimate.inputs, lto_count != 0 ? " and the LTO "
              "plugin's IR objects" : "", estimate.bytes / 1024,
              policy_padding (&policy) != 0 ? ", and the padding of "
              "-z max-page-size" : "");
  plugin_message (LDPL_INFO, "%s: capacity %" PRIu64 " pages (%s), region "
                  "%" PRIu64 " bytes, runtime %s",
                  policy_output_kind (&policy), capacity, basis,
                  pbitmap_region_size (capacity),
                  runtime != NULL ? runtime
                  : policy.foreign_target ? "not linked (another machine's)"
                  : "not linked (no-runtime)");
}

static enum ld_plugin_status
onall_symbols_read (void)
{
  enum ld_plugin_status status;
  char *runtime = NULL;

  if (policy.output == LDPO_REL)
    {
      if (policy.verbose)
        plugin_message (LDPL_INFO, "relocatable link: nothing reserved");
      return LDPS_OK;
    }
  estimate_add_ir (&estimate, lto_claimed_bytes (lto_resolution,
                                                   &lto_count));
  capacity = policy_capacity (&policy, &estimate);

  /* The runtime first: a link without it gets a region that links no
   * field to it. */
  status = policy_runtime (&policy, estimate_target (&estimate), &runtime)
           == 0 ? add_reserve_object () : LDPS_ERR;
  if (status == LDPS_OK && runtime != NULL)
    status = add_runtime_object (runtime);
  if (status == LDPS_OK && policy.verbose)
    report_link (runtime);
  if (status == LDPS_OK && ordering)
    {
      struct place_linker linker = { policy.gold, tv_add_input_file,
                                     tv_update_section_order };

      status = place_apply (&order, &linker, policy.verbose);
    }
  free (runtime);
  return status;
}

/* Patches the finished output and says what became of it. */
static enum ld_plugin_status
finish_output (void)
{
  struct patch_outcome outcome;

  switch (patch_output (tv_output_name, policy_redirect_entry (&policy),
                        false, &outcome))
    {
    case PATCH_DONE:
      policy_report_output (&policy, tv_output_name, capacity, &outcome);
      if (ordering && !policy.quiet)
        order_report (&order, tv_output_name);
      return LDPS_OK;
    case PATCH_NO_OUTPUT:
      return LDPS_OK;
    default:
      return LDPS_ERR;
    }
}

static enum ld_plugin_status
oncleanup (void)
{
  enum ld_plugin_status status = LDPS_OK;

  if (reserve_path != NULL)
    {
      unlink (reserve_path);
      free (reserve_path);
      reserve_path = NULL;
    }
  place_cleanup ();
  free (lto_resolution);
  lto_resolution = NULL;
  /* After a failed link there is nothing to patch, and a second fatal
   * message would only hide the first. */
  if (reserved && !failed)
    status = finish_output ();
  order_free (&order);
  return status;
}

/* onload. */

static enum ld_plugin_status
parse_tv_tag (struct ld_plugin_tv *tv)
{
#define SETVAR(x) x = tv->tv_u.x
  switch (tv->tv_tag)
    {
    case LDPT_MESSAGE:
      SETVAR (tv_message);
      break;
    case LDPT_REGISTER_CLAIM_FILE_HOOK:
      SETVAR (tv_register_claim_file);
      break;
    case LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK:
      SETVAR (tv_register_all_symbols_read);
      break;
    case LDPT_REGISTER_CLEANUP_HOOK:
      SETVAR (tv_register_cleanup);
      break;
    case LDPT_ADD_INPUT_FILE:
      SETVAR (tv_add_input_file);
      break;
    case LDPT_UPDATE_SECTION_ORDER:
      SETVAR (tv_update_section_order);
      break;
    case LDPT_ALLOW_SECTION_ORDERING:
      SETVAR (tv_allow_section_ordering);
      break;
    case LDPT_OUTPUT_NAME:
      tv_output_name = tv->tv_u.tv_string;
      break;
    case LDPT_LINKER_OUTPUT:
      policy.output = tv->tv_u.tv_val;
      tv_linker_output_seen = true;
      break;
    case LDPT_GOLD_VERSION:
      /* Only gold passes its version. */
      policy.gold = true;
      break;
    case LDPT_OPTION:
      return parse_option (tv->tv_u.tv_string);
    default:
      break;
    }
#undef SETVAR
  return LDPS_OK;
}

/* Names the first thing this plugin needs that the linker did not offer,
 * or returns NULL. */
static const char *
missing_interface (void)
{
  if (tv_register_claim_file == NULL)
    return "LDPT_REGISTER_CLAIM_FILE_HOOK";
  if (tv_register_all_symbols_read == NULL)
    return "LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK";
  if (tv_register_cleanup == NULL)
    return "LDPT_REGISTER_CLEANUP_HOOK";
  if (tv_add_input_file == NULL)
    return "LDPT_ADD_INPUT_FILE";
  if (tv_output_name == NULL)
    return "LDPT_OUTPUT_NAME";
  if (!tv_linker_output_seen)
    return "LDPT_LINKER_OUTPUT";
  return NULL;
}

/* Reads the order file, when there is one and the link is not -r. */
static enum ld_plugin_status
start_order (void)
{
  if (policy.order == NULL || policy.output == LDPO_REL)
    return LDPS_OK;
  if (policy.gold && (tv_update_section_order == NULL
                      || tv_allow_section_ordering == NULL))
    {
      plugin_message (LDPL_FATAL, "this gold does not offer section "
                      "ordering (LDPT_UPDATE_SECTION_ORDER), which "
                      "order= needs");
      return LDPS_ERR;
    }
  if (order_read (policy.order, &order) != 0)
    return LDPS_ERR;
  ordering = true;
  return LDPS_OK;
}

/* The arguments of the NUL-separated line TEXT of SIZE bytes, to be
 * freed (not the strings, which are TEXT's), or NULL; *COUNT is set to
 * their number. */
static char **
split_command_line (char *text, size_t size, int *count)
{
  char **argv = calloc (size + 1, sizeof *argv);

  *count = 0;
  if (argv != NULL)
    for (char *arg = text, *end = text + size; arg < end;
         arg += strlen (arg) + 1)
      argv[(*count)++] = arg;
  return argv;
}

/* Calls FN (CTX, ARG, NEXT) for each argument ARG of the linker's own
 * command line, response files read (argfile.c), NEXT the one after it
 * or NULL; when FN returns nonzero, NEXT was ARG's value and is passed
 * over.  The plugin runs inside the linker, and the plugin interface
 * gives it only its own options, so the line is read from
 * /proc/self/cmdline; when it cannot be, FN is not called. */
static void
plugin_linker_arguments (int (*fn) (void *ctx, const char *arg,
                                    const char *next),
                         void *ctx)
{
  FILE *f = fopen ("/proc/self/cmdline", "re");
  FILE *text_stream;
  char *text = NULL, chunk[4096], **argv = NULL;
  size_t size = 0, got;
  struct argfile_args line = { 0 };
  int argc;

  if (f == NULL)
    return;
  text_stream = open_memstream (&text, &size);
  if (text_stream == NULL)
    {
      fclose (f);
      return;
    }
  while ((got = fread (chunk, 1, sizeof chunk, f)) > 0)
    fwrite (chunk, 1, got, text_stream);
  fclose (f);
  /* Each argument ends with a NUL. */
  if (fclose (text_stream) == 0
      && (argv = split_command_line (text, size, &argc)) != NULL
      && argfile_expand (argc, argv, &line) == 0)
    for (size_t i = 0; i < line.count; i++)
      if (fn (ctx, line.args[i], line.args[i + 1]) && i + 1 < line.count)
        i++;
  argfile_free (&line);
  free (argv);
  free (text);
}

/* plugin_linker_arguments' receiver: the policy's arguments, and GCC's
 * resolution file for lto.c. */
static int
take_linker_argument (void *ctx, const char *arg, const char *next)
{
  lto_note_resolution (arg, &lto_resolution);
  return policy_linker_argument (ctx, arg, next);
}

enum ld_plugin_status onload (struct ld_plugin_tv *tv);

enum ld_plugin_status
onload (struct ld_plugin_tv *tv)
{
  enum ld_plugin_status rv;
  const char *missing;

  if (tv == NULL)
    return LDPS_ERR;
  policy_init (&policy, "-plugin-opt=", "");
  plugin_linker_arguments (take_linker_argument, &policy);

  /* The message hook comes first, so that option errors can be told. */
  if (tv[0].tv_tag == LDPT_MESSAGE)
    tv_message = tv[0].tv_u.tv_message;

  do
    if ((rv = parse_tv_tag (tv)) != LDPS_OK)
      return rv;
  while ((tv++)->tv_tag != LDPT_NULL);

  if (tv_message == NULL)
    {
      fprintf (stderr, "pbitmap: the linker offers no message hook "
               "(LDPT_MESSAGE); use GNU ld (ld.bfd)\n");
      return LDPS_ERR;
    }
  missing = missing_interface ();
  if (missing != NULL)
    {
      plugin_message (LDPL_FATAL, "the linker does not offer %s; "
                      "use GNU ld (ld.bfd)", missing);
      return LDPS_ERR;
    }
  if (elf_version (EV_CURRENT) == EV_NONE)
    {
      plugin_message (LDPL_FATAL, "libelf: %s", elf_errmsg (-1));
      return LDPS_ERR;
    }
  if ((rv = start_order ()) != LDPS_OK)
    return rv;

  if ((rv = tv_register_claim_file (onclaim_file)) != LDPS_OK
      || (rv = tv_register_all_symbols_read (onall_symbols_read)) != LDPS_OK
      || (rv = tv_register_cleanup (oncleanup)) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused to register a hook");
      return rv;
    }
  return LDPS_OK;
}
