/* main.c: elfpatch's options and dispatch.
 *
 * elfpatch does one of five things per run: --record runs a program and
 * writes a trace, --fill turns traces into a binary's bitmap, --show
 * prints it, --clear empties it, --run prefetches a program's bitmaps and
 * execs it.  Exactly one must be given.  Options are parsed in order so
 * that everything after the PROG of --record and --run belongs to PROG
 * ("elfpatch --record -o t ls -l" runs "ls -l"); "--" works too.  Usage
 * errors exit with 64 (EX_USAGE), other errors with 1; --run exits with
 * its program's status, or 126 or 127 when it cannot exec it.
 */

#include <argp.h>
#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sysexits.h>

#include "elfpatch.h"

int elfpatch_verbose;
int elfpatch_quiet;

const char *argp_program_version = "elfpatch (" PACKAGE_NAME ") " PACKAGE_VERSION;

enum mode { MODE_NONE, MODE_RECORD, MODE_FILL, MODE_SHOW, MODE_CLEAR,
            MODE_RUN };

enum { OPT_RECORD = 256, OPT_FILL, OPT_SHOW, OPT_CLEAR, OPT_RUN, OPT_DEVICE,
       OPT_MAX_GAP };

static const struct argp_option options[] =
{
  { NULL, 0, NULL, 0, "Commands (exactly one):", 1 },
  { "record", OPT_RECORD, NULL, 0,
    "Run PROG once and write the file pages it used to TRACE", 1 },
  { "fill", OPT_FILL, NULL, 0,
    "Set BINARY's bitmap from the traces (a page is set when any trace "
    "recorded it for this build of BINARY)", 1 },
  { "show", OPT_SHOW, NULL, 0, "Print BINARY's region and bitmap", 1 },
  { "clear", OPT_CLEAR, NULL, 0, "Empty BINARY's bitmap", 1 },
  { "run", OPT_RUN, NULL, 0,
    "Prefetch the bitmaps of PROG and its libraries, then exec PROG", 1 },
  { NULL, 0, NULL, 0, "Options:", 2 },
  { "output", 'o', "TRACE", 0, "Where --record writes the trace", 2 },
  { "device", OPT_DEVICE, "DEVICE", 0,
    "--fill plans reads for DEVICE: nvme, ssd, hdd, or auto (the device "
    "BINARY is on); without it and --max-gap, runs are not merged", 2 },
  { "max-gap", OPT_MAX_GAP, "PAGES", 0,
    "--fill lets readers read through gaps of up to PAGES pages (wins over "
    "--device)", 2 },
  { "quiet", 'q', NULL, 0, "Print no warnings", 2 },
  { "verbose", 'v', NULL, 0, "Say what is done", 2 },
  { NULL, 0, NULL, 0, NULL, 0 }
};

struct arguments
{
  enum mode mode;
  const char *output;
  char **args;                  /* the non-option arguments */
  size_t n_args;
  char **prog_argv;             /* PROG and its arguments */
  struct gap_choice gap;
  int gap_given;                /* --device or --max-gap */
};

static void
set_mode (struct argp_state *state, enum mode mode)
{
  struct arguments *a = state->input;
  if (a->mode != MODE_NONE && a->mode != mode)
    argp_error (state, "error: only one of --record, --fill, --show, --clear "
                "and --run may be given");
  a->mode = mode;
}

/* PAGES for --max-gap: decimal, 0 to the field's largest value.  */
static void
parse_max_gap (struct argp_state *state, const char *arg, uint32_t *out)
{
  uint64_t v = 0;
  const char *p = arg;
  for (; *p >= '0' && *p <= '9' && v <= UINT32_MAX; p++)
    v = v * 10 + (uint64_t) (*p - '0');
  if (p == arg || *p != '\0' || v > UINT32_MAX)
    argp_error (state, "error: --max-gap: '%s' is not a number of pages "
                "(0 to %" PRIu32 ")", arg, UINT32_MAX);
  *out = (uint32_t) v;
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
    case OPT_SHOW:
      set_mode (state, MODE_SHOW);
      break;
    case OPT_CLEAR:
      set_mode (state, MODE_CLEAR);
      break;
    case OPT_RUN:
      set_mode (state, MODE_RUN);
      break;
    case 'o':
      a->output = arg;
      break;
    case OPT_DEVICE:
      if (device_parse (arg, &a->gap.device) != 0)
        argp_error (state, "error: --device: unknown device '%s' (nvme, ssd, "
                    "hdd or auto)", arg);
      a->gap_given = 1;
      break;
    case OPT_MAX_GAP:
      parse_max_gap (state, arg, &a->gap.max_gap);
      a->gap.explicit_gap = 1;
      a->gap_given = 1;
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
        argp_error (state, "error: one of --record, --fill, --show, --clear "
                    "or --run is required");
      if (a->output != NULL && a->mode != MODE_RECORD)
        argp_error (state, "error: -o is only for --record");
      if (a->gap_given && a->mode != MODE_FILL)
        argp_error (state, "error: --device and --max-gap are only for "
                    "--fill");
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
      else if (a->mode == MODE_FILL && a->n_args < 2)
        argp_error (state, "error: --fill needs one or more traces and a "
                    "binary");
      else if ((a->mode == MODE_SHOW || a->mode == MODE_CLEAR)
               && a->n_args != 1)
        argp_error (state, "error: --%s needs exactly one binary",
                    a->mode == MODE_SHOW ? "show" : "clear");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static const char args_doc[] =
  "--record -o TRACE [--] PROG [ARG...]\n"
  "--fill TRACE... BINARY\n"
  "--show BINARY\n"
  "--clear BINARY\n"
  "--run [--] PROG [ARG...]";

static const char doc[] =
  "Record, fill, show and clear the start-up bitmap of a program linked "
  "with the pbitmap linker plugin."
  "\vExit status: 0 on success, 1 on an error, 64 on a usage error; "
  "--run: PROG's status, 127 when PROG is not found, 126 when it cannot "
  "be executed.";

static const struct argp argp = { options, parse_opt, args_doc, doc, NULL,
                                  NULL, NULL };

int
main (int argc, char **argv)
{
  /* error() prefixes messages with this; keep them "elfpatch: ...".  */
  program_invocation_name = program_invocation_short_name;
  argp_err_exit_status = EX_USAGE;

  struct arguments a = { 0 };
  a.args = calloc ((size_t) argc + 1, sizeof *a.args);
  if (a.args == NULL)
    error (EXIT_FAILURE, errno, "error");
  argp_parse (&argp, argc, argv, ARGP_IN_ORDER, NULL, &a);

  int status = 1;
  switch (a.mode)
    {
    case MODE_RECORD:
      status = record_command (a.prog_argv, a.output);
      break;
    case MODE_FILL:
      status = fill_command (a.args, a.n_args - 1, a.args[a.n_args - 1],
                             &a.gap);
      break;
    case MODE_SHOW:
      status = show_command (a.args[0]);
      break;
    case MODE_CLEAR:
      status = clear_command (a.args[0]);
      break;
    case MODE_RUN:
      status = run_command (a.prog_argv);
      break;
    case MODE_NONE:
      break;
    }
  free (a.args);
  return status;
}
