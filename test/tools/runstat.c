/* runstat: run a program and report what its start cost in page faults.
 *
 *   runstat [-o FILE] [-e ERRFILE] -- PROG [ARGS...]
 *
 * Runs PROG, waits for it, and prints one line
 * "majflt=N minflt=N us=T status=S" to FILE (default stderr): the faults
 * from wait4's rusage of that one child, T its wall time in microseconds.
 * With -e, PROG's standard error goes to ERRFILE (the benchmark keeps the
 * runtime's debug line that way, under a timer that cannot redirect it).
 * Exits with the child's exit status, so a test can still check it.
 */
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  const char *out = NULL, *err = NULL;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] != '-'; i += 2)
    if (strcmp (argv[i], "-o") == 0)
      out = argv[i + 1];
    else if (strcmp (argv[i], "-e") == 0)
      err = argv[i + 1];
    else
      error (2, 0, "unknown option %s", argv[i]);
  if (i < argc && strcmp (argv[i], "--") == 0)
    i++;
  if (i >= argc)
    error (2, 0, "usage: runstat [-o FILE] [-e ERRFILE] -- PROG [ARGS...]");

  struct timespec start, end;
  clock_gettime (CLOCK_MONOTONIC, &start);
  pid_t pid = fork ();
  if (pid < 0)
    error (2, errno, "fork");
  if (pid == 0)
    {
      int fd;
      if (err != NULL
          && ((fd = open (err, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0
              || dup2 (fd, 2) < 0))
        error (127, errno, "%s", err);
      execvp (argv[i], argv + i);
      error (127, errno, "%s", argv[i]);
    }
  int status;
  struct rusage ru;
  if (wait4 (pid, &status, 0, &ru) < 0)
    error (2, errno, "wait4");
  clock_gettime (CLOCK_MONOTONIC, &end);
  long long us = (end.tv_sec - start.tv_sec) * 1000000LL
                 + (end.tv_nsec - start.tv_nsec) / 1000;

  FILE *f = out ? fopen (out, "w") : stderr;
  if (f == NULL)
    error (2, errno, "%s", out);
  int code = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  fprintf (f, "majflt=%ld minflt=%ld us=%lld status=%d\n", ru.ru_majflt,
           ru.ru_minflt, us, code);
  if (out)
    fclose (f);
  return code;
}
