/* main.c: elfpatch's options and dispatch.
 *
 * elfpatch does one of four things per run: --record runs a program and
 * writes a trace, --fill turns traces into a binary's bitmap, --show
 * prints it, --clear empties it.  Exactly one must be given.  Options are
 * parsed in order so that everything after --record's PROG belongs to
 * PROG ("elfpatch --record -o t ls -l" runs "ls -l"); "--" works too.
 * Usage errors exit with 64 (EX_USAGE), other errors with 1.
 */

#include <argp.h>
#include <errno.h>
#include <error.h>
#include <stdlib.h>
#include <sysexits.h>

#include "elfpatch.h"

int elfpatch_verbose;
int elfpatch_quiet;

const char *argp_program_version = "elfpatch (" PACKAGE_NAME ") " PACKAGE_VERSION;

enum mode { MODE_NONE, MODE_RECORD, MODE_FILL, MODE_SHOW, MODE_CLEAR };

enum { OPT_RECORD = 256, OPT_FILL, OPT_SHOW, OPT_CLEAR };

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
  { NULL, 0, NULL, 0, "Options:", 2 },
  { "output", 'o', "TRACE", 0, "Where --record writes the trace", 2 },
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
  char **record_argv;           /* PROG and its arguments */
};

static void
set_mode (struct argp_state *state, enum mode mode)
{
  struct arguments *a = state->input;
  if (a->mode != MODE_NONE && a->mode != mode)
    argp_error (state, "only one of --record, --fill, --show and --clear "
                "may be given");
  a->mode = mode;
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
    case 'o':
      a->output = arg;
      break;
    case 'q':
      elfpatch_quiet = 1;
      break;
    case 'v':
      elfpatch_verbose++;
      break;
    case ARGP_KEY_ARG:
      if (a->mode == MODE_RECORD && a->n_args == 0)
        {
          /* PROG: it and everything after it are the command.  */
          a->record_argv = &state->argv[state->next - 1];
          state->next = state->argc;
          break;
        }
      a->args[a->n_args++] = arg;
      break;
    case ARGP_KEY_END:
      if (a->mode == MODE_NONE)
        argp_error (state, "one of --record, --fill, --show or --clear is "
                    "required");
      if (a->output != NULL && a->mode != MODE_RECORD)
        argp_error (state, "-o is only for --record");
      if (a->mode == MODE_RECORD)
        {
          if (a->record_argv == NULL && a->n_args > 0)
            a->record_argv = a->args;
          if (a->record_argv == NULL)
            argp_error (state, "--record needs a program to run");
          if (a->output == NULL)
            argp_error (state, "--record needs -o TRACE");
        }
      else if (a->mode == MODE_FILL && a->n_args < 2)
        argp_error (state, "--fill needs one or more traces and a binary");
      else if ((a->mode == MODE_SHOW || a->mode == MODE_CLEAR)
               && a->n_args != 1)
        argp_error (state, "--%s needs exactly one binary",
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
  "--clear BINARY";

static const char doc[] =
  "Record, fill, show and clear the start-up bitmap of a program linked "
  "with the pbitmap linker plugin."
  "\vExit status: 0 on success, 1 on an error, 64 on a usage error.";

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
      status = record_command (a.record_argv, a.output);
      break;
    case MODE_FILL:
      status = fill_command (a.args, a.n_args - 1, a.args[a.n_args - 1]);
      break;
    case MODE_SHOW:
      status = show_command (a.args[0]);
      break;
    case MODE_CLEAR:
      status = clear_command (a.args[0]);
      break;
    case MODE_NONE:
      break;
    }
  free (a.args);
  return status;
}
