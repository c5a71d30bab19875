/* main.c: elfpatch's options and dispatch.
 *
 * elfpatch does one thing per run: --record runs a program and writes a
 * trace, --import-perf makes one from perf's output, --fill turns traces
 * into a binary's bitmap, --order into an order file for its next link,
 * --show prints the bitmap, --clear empties it, --resync points a
 * program header that a post-link tool left stale back at the bitmap,
 * --run prefetches a program's bitmaps and execs it.  Exactly one must
 * be given.  Options are parsed in order so
 * that everything after the PROG of --record and --run belongs to PROG
 * ("elfpatch --record -o t ls -l" runs "ls -l"); "--" works too.  Usage
 * errors exit with 64 (EX_USAGE), other errors with 1; --record exits
 * with 2 when it wrote the trace of a program that failed; --run exits
 * with its program's status, or 126 or 127 when it cannot exec it.
 */

#include <argp.h>
#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "elfpatch.h"

int elfpatch_verbose;
int elfpatch_quiet;

const char *argp_program_version = "elfpatch (" PACKAGE_NAME ") " PACKAGE_VERSION;

enum mode { MODE_NONE, MODE_RECORD, MODE_FILL, MODE_SHOW, MODE_CLEAR,
            MODE_RUN, MODE_RESYNC, MODE_IMPORT_PERF, MODE_ORDER, MODE_GC };

enum { OPT_RECORD = 256, OPT_FILL, OPT_SHOW, OPT_CLEAR, OPT_RUN, OPT_DEVICE,
       OPT_MAX_GAP, OPT_MERGE, OPT_MIN_SHARE, OPT_BUDGET, OPT_AGE,
       OPT_TRACES, OPT_FOLLOW, OPT_METHOD, OPT_RESYNC, OPT_IMPORT_PERF,
       OPT_NO_SECCOMP, OPT_ORDER, OPT_DEBUG_FILE, OPT_NO_ORDER,
       OPT_ALLOW_TRUNCATE, OPT_JSON, OPT_STORE, OPT_GC };

static const struct argp_option options[] =
{
  { NULL, 0, NULL, 0, "Commands (exactly one):", 1 },
  { "record", OPT_RECORD, NULL, 0,
    "Run PROG once and write the file pages it used to TRACE", 1 },
  { "fill", OPT_FILL, NULL, 0,
    "Set the bitmap of each FILE from the traces recorded for its build "
    "(by default a page is set when at least a quarter of them have it); "
    "without FILE, of every file the traces name that has a region", 1 },
  { "order", OPT_ORDER, NULL, 0,
    "Write to ORDERFILE the functions and read-only data of BINARY that "
    "the traces used, in the order they used them, for BINARY's next link "
    "(the pages are chosen as --fill chooses them)", 1 },
  { "show", OPT_SHOW, NULL, 0, "Print the region and bitmap of each BINARY",
    1 },
  { "clear", OPT_CLEAR, NULL, 0, "Empty BINARY's bitmap", 1 },
  { "resync", OPT_RESYNC, NULL, 0,
    "Point BINARY's PT_PRESENT_BITMAP back at its bitmap after a tool "
    "moved it (patchelf); the bits are kept", 1 },
  { "run", OPT_RUN, NULL, 0,
    "Prefetch the bitmaps of PROG and its libraries, then exec PROG", 1 },
  { "gc", OPT_GC, NULL, 0,
    "Drop the store's entries whose object is gone or another build", 1 },
  { "import-perf", OPT_IMPORT_PERF, NULL, 0,
    "Turn PERF_SCRIPT (perf script output of page-fault samples and mmap "
    "events) into TRACE", 1 },
  { NULL, 0, NULL, 0, "Options:", 2 },
  { "output", 'o', "FILE", 0,
    "Where --record and --import-perf write the trace, --order the order "
    "file", 2 },
  { "device", OPT_DEVICE, "DEVICE", 0,
    "--fill pins the gap for DEVICE: nvme, ssd, cloud, hdd, or auto (the "
    "device BINARY is on); without it and --max-gap, each reader chooses "
    "for the device it reads from", 2 },
  { "max-gap", OPT_MAX_GAP, "PAGES", 0,
    "--fill lets readers read through gaps of up to PAGES pages (wins over "
    "--device)", 2 },
  { "follow", OPT_FOLLOW, NULL, 0,
    "--record also records forked children and the programs they and PROG "
    "exec", 2 },
  { "method", OPT_METHOD, "METHOD", 0,
    "--record: exact (the default: evict the mapped files and turn off "
    "read-around in PROG, so only the pages it faults are present) or "
    "present (what is present at exit, which read-around inflates)", 2 },
  { "no-seccomp", OPT_NO_SECCOMP, NULL, 0,
    "--record stops PROG at every system call instead of only at those a "
    "seccomp filter picks (slower; the processes --follow does not record "
    "then run untraced)", 2 },
  { "no-order", OPT_NO_ORDER, NULL, 0,
    "--record does not watch which code PROG runs first (no 'order' and "
    "'calls' in the trace, which is then version 1)", 2 },
  { "merge", OPT_MERGE, "RULE", 0,
    "--fill and --order keep a page any trace has (or), every trace has "
    "(and), or at least a share of the traces have (share, the default)",
    2 },
  { "min-share", OPT_MIN_SHARE, "F", 0,
    "--fill and --order keep a page at least a fraction F (0 < F <= 1) of "
    "the traces have (implies --merge=share; default 0.25)", 2 },
  { "budget", OPT_BUDGET, "SIZE", 0,
    "--fill keeps at most SIZE bytes (suffix K, M or G) of pages, the most "
    "used first", 2 },
  { "age", OPT_AGE, "WEIGHT", OPTION_ARG_OPTIONAL,
    "--fill counts the bitmap BINARY holds as WEIGHT runs (default 1) "
    "that used its set pages", 2 },
  { "debug-file", OPT_DEBUG_FILE, "FILE", 0,
    "--order takes the symbols of a stripped BINARY from FILE instead of "
    "/usr/lib/debug/.build-id/", 2 },
  { "allow-truncate", OPT_ALLOW_TRUNCATE, NULL, 0,
    "--fill drops, with a warning, recorded pages past the bitmap's "
    "capacity instead of failing", 2 },
  { "store", OPT_STORE, "DIR", OPTION_ARG_OPTIONAL,
    "--fill, --show and --clear work on the bitmap store (DIR, else "
    "PBITMAP_STORE, else the default), never on the objects; --run and "
    "--gc use DIR", 2 },
  { "traces", OPT_TRACES, NULL, 0,
    "--show also says, for each TRACE, how many of its pages the bitmap "
    "covers", 2 },
  { "json", OPT_JSON, NULL, 0,
    "--show prints one JSON array, an object per BINARY, for tools", 2 },
  { "quiet", 'q', NULL, 0, "Print no warnings", 2 },
  { "verbose", 'v', NULL, 0, "Say what is done", 2 },
  { NULL, 0, NULL, 0, NULL, 0 }
};

struct arguments
{
  enum mode mode;
  const char *output;
  const char *debug_file;       /* --order --debug-file */
  char **args;                  /* the non-option arguments */
  size_t n_args;
  char **prog_argv;             /* PROG and its arguments */
  struct gap_choice gap;
  int gap_given;                /* --device or --max-gap */
  struct fill_policy policy;
  int merge_given, share_given, policy_given;  /* policy: --budget, --age */
  int traces;                   /* --show --traces */
  int json;                     /* --show --json */
  struct record_options record;
  int record_given;             /* --follow, --method or --no-order */
  int no_seccomp_given;
  int store;                    /* --store */
};

static void
set_mode (struct argp_state *state, enum mode mode)
{
  struct arguments *a = state->input;
  if (a->mode != MODE_NONE && a->mode != mode)
    argp_error (state, "error: only one of --record, --fill, --order, --show, "
                "--clear, --resync, --run, --gc and --import-perf may be "
                "given");
  a->mode = mode;
}

/* Reads the decimal digits at the start of ARG into *V and points *END
   past them: 0 when there is at least one and they make a number of at
   most MAX, else -1 (no digit, or too large: *V is then meaningless).  */
static int
scan_number (const char *arg, uint64_t max, uint64_t *v, const char **end)
{
  uint64_t n = 0;
  int over = 0;
  const char *p = arg;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      uint64_t d = (uint64_t) (*p - '0');
      if (d > max || n > (max - d) / 10)
        over = 1;
      else
        n = n * 10 + d;
    }
  *v = n;
  *end = p;
  return p == arg || over ? -1 : 0;
}

/* A decimal number ARG of at most MAX, or argp_error naming OPTION and,
   when not null, the number's UNIT.  With END, the number may be
   followed by more (*END points there).  */
static uint64_t
parse_count (struct argp_state *state, const char *option, const char *arg,
             uint64_t max, const char *unit, const char **end)
{
  uint64_t v;
  const char *p;
  int bad = scan_number (arg, max, &v, &p) != 0
            || (end == NULL && *p != '\0');
  if (bad && unit != NULL)
    argp_error (state, "error: %s: '%s' is not a number of %s (0 to %"
                PRIu64 ")", option, arg, unit, max);
  else if (bad)
    argp_error (state, "error: %s: '%s' is not a number from 0 to %" PRIu64,
                option, arg, max);
  if (end != NULL)
    *end = p;
  return v;
}

/* F for --min-share: a decimal fraction 0 < F <= 1 with at most six
   digits after the point, in millionths.  */
static uint32_t
parse_share (struct argp_state *state, const char *arg)
{
  const char *p = arg;
  uint64_t whole = 0, frac = 0, scale = FILL_SHARE_ONE;
  if (*p >= '0' && *p <= '9')
    {
      if (scan_number (arg, 1, &whole, &p) != 0)
        p = NULL;
    }
  else if (*p != '.')
    p = NULL;
  if (p != NULL && *p == '.')
    for (p++; *p >= '0' && *p <= '9' && scale > 1; p++)
      {
        scale /= 10;
        frac += (uint64_t) (*p - '0') * scale;
      }
  uint64_t share = p != NULL && *p == '\0' ? whole * FILL_SHARE_ONE + frac : 0;
  if (share == 0 || share > FILL_SHARE_ONE)
    argp_error (state, "error: --min-share: '%s' is not a fraction above 0 "
                "and at most 1 (at most 6 decimals)", arg);
  return (uint32_t) share;
}

/* SIZE for --budget: bytes, or K, M or G of 1024; whole pages.  */
static uint64_t
parse_budget (struct argp_state *state, const char *arg)
{
  const char *p;
  uint64_t v;
  int bad = scan_number (arg, UINT64_MAX, &v, &p) != 0;
  unsigned shift = 0;
  if (*p == 'K')
    shift = 10;
  else if (*p == 'M')
    shift = 20;
  else if (*p == 'G')
    shift = 30;
  if (bad || (shift != 0 && p[1] != '\0') || (shift == 0 && *p != '\0')
      || v > (UINT64_MAX >> shift))
    argp_error (state, "error: --budget: '%s' is not a size (bytes, or a "
                "number with K, M or G)", arg);
  return (v << shift) / PBITMAP_PAGE_SIZE;
}

static error_t
parse_opt (int key, char *arg, struct argp_state *state)
{
  struct arguments *a = state->input;
  switch (key)
    {
    case OPT_RECORD:
      set_mode (state, MODE_RECORD);
      break;
    case OPT_FILL:
      set_mode (state, MODE_FILL);
      break;
    case OPT_ORDER:
      set_mode (state, MODE_ORDER);
      break;
    case OPT_SHOW:
      set_mode (state, MODE_SHOW);
      break;
    case OPT_CLEAR:
      set_mode (state, MODE_CLEAR);
      break;
    case OPT_RESYNC:
      set_mode (state, MODE_RESYNC);
      break;
    case OPT_RUN:
      set_mode (state, MODE_RUN);
      break;
    case OPT_IMPORT_PERF:
      set_mode (state, MODE_IMPORT_PERF);
      break;
    case OPT_GC:
      set_mode (state, MODE_GC);
      break;
    case OPT_STORE:
      a->store = 1;
      elfpatch_store_dir = arg;
      break;
    case 'o':
      a->output = arg;
      break;
    case OPT_DEVICE:
      if (device_parse (arg, &a->gap.device) != 0)
        argp_error (state, "error: --device: unknown device '%s' (nvme, ssd, "
                    "cloud, hdd or auto)", arg);
      a->gap_given = 1;
      break;
    case OPT_MAX_GAP:
      a->gap.max_gap = (uint32_t) parse_count (state, "--max-gap", arg,
                                               UINT32_MAX, "pages", NULL);
      a->gap.explicit_gap = 1;
      a->gap_given = 1;
      break;
    case OPT_MERGE:
      if (strcmp (arg, "or") == 0)
        a->policy.merge = MERGE_OR;
      else if (strcmp (arg, "and") == 0)
        a->policy.merge = MERGE_AND;
      else if (strcmp (arg, "share") == 0)
        a->policy.merge = MERGE_SHARE;
      else
        argp_error (state, "error: --merge: unknown rule '%s' (or, and or "
                    "share)", arg);
      a->merge_given = 1;
      break;
    case OPT_MIN_SHARE:
      a->policy.min_share = parse_share (state, arg);
      a->share_given = 1;
      break;
    case OPT_BUDGET:
      a->policy.budget_pages = parse_budget (state, arg);
      a->policy.budget_given = a->policy_given = 1;
      break;
    case OPT_AGE:
      a->policy.age_weight = arg == NULL ? 1
        : (uint32_t) parse_count (state, "--age", arg, UINT16_MAX, NULL,
                                  NULL);
      if (a->policy.age_weight == 0)
        argp_error (state, "error: --age: the weight must be at least 1");
      a->policy_given = 1;
      break;
    case OPT_DEBUG_FILE:
      a->debug_file = arg;
      break;
    case OPT_ALLOW_TRUNCATE:
      a->policy.allow_truncate = 1;
      break;
    case OPT_TRACES:
      a->traces = 1;
      break;
    case OPT_JSON:
      a->json = 1;
      break;
    case OPT_FOLLOW:
      a->record.follow = a->record_given = 1;
      break;
    case OPT_METHOD:
      if (strcmp (arg, "exact") == 0 || strcmp (arg, "present") == 0)
        a->record.exact = arg[0] == 'e';
      else
        argp_error (state, "error: --method: unknown method '%s' (exact or "
                    "present)", arg);
      a->record_given = 1;
      break;
    case OPT_NO_ORDER:
      a->record.order = 0;
      a->record_given = 1;
      break;
    case OPT_NO_SECCOMP:
      a->record.no_seccomp = a->no_seccomp_given = 1;
      break;
    case 'q':
      elfpatch_quiet = 1;
      break;
    case 'v':
      elfpatch_verbose++;
      break;
    case ARGP_KEY_ARG:
      if ((a->mode == MODE_RECORD || a->mode == MODE_RUN) && a->n_args == 0)
        {
          /* PROG: it and everything after it are the command.  */
          a->prog_argv = &state->argv[state->next - 1];
          state->next = state->argc;
          break;
        }
      a->args[a->n_args++] = arg;
      break;
    case ARGP_KEY_END:
      if (a->mode == MODE_NONE)
        argp_error (state, "error: one of --record, --fill, --order, --show, "
                    "--clear, --resync, --run, --gc or --import-perf is "
                    "required");
      if (a->output != NULL && a->mode != MODE_RECORD
          && a->mode != MODE_IMPORT_PERF && a->mode != MODE_ORDER)
        argp_error (state, "error: -o is only for --record, --import-perf "
                    "and --order");
      if (a->gap_given && a->mode != MODE_FILL)
        argp_error (state, "error: --device and --max-gap are only for "
                    "--fill");
      if ((a->merge_given || a->share_given) && a->mode != MODE_FILL
          && a->mode != MODE_ORDER)
        argp_error (state, "error: --merge and --min-share are only for "
                    "--fill and --order");
      if (a->policy_given && a->mode != MODE_FILL)
        argp_error (state, "error: --budget and --age are only for --fill");
      if (a->debug_file != NULL && a->mode != MODE_ORDER)
        argp_error (state, "error: --debug-file is only for --order");
      if (a->policy.allow_truncate && a->mode != MODE_FILL)
        argp_error (state, "error: --allow-truncate is only for --fill");
      if (a->share_given && a->merge_given
          && a->policy.merge != MERGE_SHARE)
        argp_error (state, "error: --min-share needs --merge=share");
      if (a->record_given && a->mode != MODE_RECORD)
        argp_error (state, "error: --follow, --method and --no-order are "
                    "only for --record");
      if (a->no_seccomp_given && a->mode != MODE_RECORD)
        argp_error (state, "error: --no-seccomp is only for --record");
      if (a->traces && a->mode != MODE_SHOW)
        argp_error (state, "error: --traces is only for --show");
      if (a->json && a->mode != MODE_SHOW)
        argp_error (state, "error: --json is only for --show");
      if (a->store && a->mode != MODE_FILL && a->mode != MODE_SHOW
          && a->mode != MODE_CLEAR && a->mode != MODE_RUN
          && a->mode != MODE_GC)
        argp_error (state, "error: --store is only for --fill, --show, "
                    "--clear, --run and --gc");
      if (a->store && (a->traces || a->json))
        argp_error (state, "error: --traces and --json do not work with "
                    "--store");
      if (a->mode == MODE_GC && a->n_args != 0)
        argp_error (state, "error: --gc takes no arguments");
      if (a->store && a->mode == MODE_FILL && a->n_args == 0)
        argp_error (state, "error: --fill --store needs one or more traces");
      if (a->store && a->mode == MODE_CLEAR && a->n_args == 0)
        argp_error (state, "error: --clear --store needs one or more "
                    "objects");
      if (a->store && a->mode != MODE_RUN)
        break;
      if (a->mode == MODE_RECORD || a->mode == MODE_RUN)
        {
          const char *name = a->mode == MODE_RECORD ? "record" : "run";
          if (a->prog_argv == NULL && a->n_args > 0)
            a->prog_argv = a->args;
          if (a->prog_argv == NULL)
            argp_error (state, "error: --%s needs a program to run", name);
          if (a->mode == MODE_RECORD && a->output == NULL)
            argp_error (state, "error: --record needs -o TRACE");
        }
      else if (a->mode == MODE_FILL && a->n_args < 1)
        argp_error (state, "error: --fill needs one or more traces");
      else if (a->mode == MODE_ORDER && (a->n_args < 2 || a->output == NULL))
        argp_error (state, "error: --order needs one or more traces, a "
                    "binary and -o ORDERFILE");
      else if (a->mode == MODE_IMPORT_PERF
               && (a->n_args != 1 || a->output == NULL))
        argp_error (state, "error: --import-perf needs -o TRACE and one "
                    "perf script output");
      else if (a->mode == MODE_SHOW && a->traces && a->n_args < 2)
        argp_error (state, "error: --show --traces needs one or more traces "
                    "and a binary");
      else if (a->mode == MODE_SHOW && a->n_args < 1)
        argp_error (state, "error: --show needs one or more binaries");
      else if ((a->mode == MODE_CLEAR || a->mode == MODE_RESYNC)
               && a->n_args != 1)
        argp_error (state, "error: --%s needs exactly one binary",
                    a->mode == MODE_CLEAR ? "clear" : "resync");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static const char args_doc[] =
  "--record -o TRACE [--] PROG [ARG...]\n"
  "--fill TRACE... [FILE...]\n"
  "--order TRACE... BINARY -o ORDERFILE\n"
  "--show [--json] [--traces TRACE...] BINARY...\n"
  "--clear BINARY\n"
  "--resync BINARY\n"
  "--run [--] PROG [ARG...]\n"
  "--import-perf -o TRACE PERF_SCRIPT\n"
  "--fill --store[=DIR] TRACE...\n"
  "--show --store[=DIR] [OBJECT...]\n"
  "--clear --store[=DIR] OBJECT...\n"
  "--gc [--store=DIR]";

static const char doc[] =
  "Record, fill, show and clear the start-up bitmap of a program linked "
  "with the pbitmap linker plugin, and write the order its next link "
  "should place its code and read-only data in."
  "\vExit status: 0 on success, 1 on an error, 64 on a usage error; "
  "--record: 2 when PROG failed (exited with another status than 0, or "
  "was killed) and its trace was written; --run: PROG's status, 127 when "
  "PROG is not found, 126 when it cannot be executed.";

static const struct argp argp = { options, parse_opt, args_doc, doc, NULL,
                                  NULL, NULL };

int
main (int argc, char **argv)
{
  /* error() prefixes messages with this; keep them "elfpatch: ...".  */
  program_invocation_name = program_invocation_short_name;
  argp_err_exit_status = EX_USAGE;

  struct arguments a = { 0 };
  a.policy.merge = MERGE_SHARE;
  a.policy.min_share = FILL_DEFAULT_SHARE;
  a.record.exact = 1;
  a.record.order = 1;
  a.args = calloc ((size_t) argc + 1, sizeof *a.args);
  if (a.args == NULL)
    error (EXIT_FAILURE, errno, "error");
  argp_parse (&argp, argc, argv, ARGP_IN_ORDER, NULL, &a);

  int status = 1;
  switch (a.mode)
    {
    case MODE_RECORD:
      status = record_command (a.prog_argv, a.output, &a.record);
      break;
    case MODE_FILL:
      if (a.store)
        {
          status = store_fill_command (a.args, a.n_args, &a.policy, &a.gap);
          break;
        }
      status = fill_command (a.args, a.n_args, &a.policy, &a.gap);
      break;
    case MODE_ORDER:
      /* The order is for a relink, which can fix the capacity: pages
         past it are dropped with the warning, not refused.  */
      a.policy.allow_truncate = 1;
      status = order_command (a.args, a.n_args - 1, a.args[a.n_args - 1],
                              &a.policy, a.debug_file, a.output);
      break;
    case MODE_SHOW:
      if (a.store)
        {
          status = store_show_command (a.args, a.n_args);
          break;
        }
      status = show_command (a.args, a.n_args, a.traces, a.json);
      break;
    case MODE_CLEAR:
      status = a.store ? store_clear_command (a.args, a.n_args)
                       : clear_command (a.args[0]);
      break;
    case MODE_RESYNC:
      status = resync_command (a.args[0]);
      break;
    case MODE_RUN:
      status = run_command (a.prog_argv);
      break;
    case MODE_IMPORT_PERF:
      status = import_perf_command (a.args[0], a.output);
      break;
    case MODE_GC:
      status = store_gc_command ();
      break;
    case MODE_NONE:
      break;
    }
  free (a.args);
  return status;
}
