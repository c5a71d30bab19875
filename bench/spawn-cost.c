/* spawn-cost.c: what a way of starting a program costs it, when its
 * pages are all in the page cache.
 *
 * A warm start takes a few milliseconds here and its time spreads by a
 * millisecond or more from run to run, while what is measured (an
 * LD_AUDIT module, say) costs tens of microseconds.  So the commands are
 * started in turn, round after round, many times, and each one's
 * quartiles are printed: differences of medians taken in one run, side by
 * side, are what can be read.  A shell between would cost a fork and an
 * exec of its own, and its timing is coarse: each command is spawned
 * directly and waited for, and timed with the monotonic clock.
 *
 *     spawn-cost N [VAR=VALUE...] PROG [ARG...] [-- [VAR=VALUE...] PROG ...]
 *
 * runs each command N times after 20 rounds not counted, with the
 * variables added to the environment, and prints one line per command:
 * "q1 median q3" in microseconds, then the command.  Exit status 1 when a
 * command cannot be started or does not exit 0.  Build:
 *
 *     cc -O2 -o spawn-cost bench/spawn-cost.c
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define COMMANDS_MAX 16
#define ENV_MAX 256
#define WARMUP 20

extern char **environ;

struct command
{
  char *env[ENV_MAX];
  char **argv;
  double *us;
};

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
by_value (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Fills C from the words at ARGV (leading VAR=VALUE words, then the
   program and its arguments, ended by null).  */
static int
command_parse (struct command *c, char **argv)
{
  size_t n = 0;
  for (char **e = environ; *e != NULL; e++)
    if (n < ENV_MAX - 1)
      c->env[n++] = *e;
  for (; *argv != NULL && strchr (*argv, '=') != NULL; argv++)
    if (n < ENV_MAX - 1)
      c->env[n++] = *argv;
  c->env[n] = NULL;
  c->argv = argv;
  return *argv != NULL ? 0 : -1;
}

/* Runs C once; its wall time in microseconds, or -1.  */
static double
command_run (const struct command *c)
{
  pid_t pid;
  int status;
  double t0 = now_us ();
  if (posix_spawn (&pid, c->argv[0], NULL, NULL, c->argv, c->env) != 0
      || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    return -1;
  return now_us () - t0;
}

int
main (int argc, char **argv)
{
  struct command cmds[COMMANDS_MAX];
  int ncmds = 0;
  long runs = argc > 2 ? atol (argv[1]) : 0;
  if (runs < 1)
    {
      fprintf (stderr, "usage: spawn-cost N [VAR=VALUE...] PROG [ARG...] "
               "[-- ...]\n");
      return 64;
    }
  char **word = argv + 2;
  while (*word != NULL && ncmds < COMMANDS_MAX)
    {
      char **end = word;
      while (*end != NULL && strcmp (*end, "--") != 0)
        end++;
      int last = *end == NULL;
      *end = NULL;
      if (command_parse (&cmds[ncmds], word) != 0)
        {
          fprintf (stderr, "spawn-cost: error: command %d has no program\n",
                   ncmds + 1);
          return 64;
        }
      cmds[ncmds++].us = calloc ((size_t) runs, sizeof (double));
      word = last ? end : end + 1;
    }
  for (long r = -WARMUP; r < runs; r++)
    for (int c = 0; c < ncmds; c++)
      {
        double us = command_run (&cmds[c]);
        if (us < 0)
          {
            fprintf (stderr, "spawn-cost: error: %s: did not run and exit 0\n",
                     cmds[c].argv[0]);
            return 1;
          }
        if (r >= 0)
          cmds[c].us[r] = us;
      }
  for (int c = 0; c < ncmds; c++)
    {
      double *us = cmds[c].us;
      qsort (us, (size_t) runs, sizeof *us, by_value);
      printf ("%.0f %.0f %.0f ", us[runs / 4], us[runs / 2], us[runs * 3 / 4]);
      for (char **a = cmds[c].argv; *a != NULL; a++)
        printf ("%s%s", a == cmds[c].argv ? "" : " ", *a);
      putchar ('\n');
    }
  return 0;
}
