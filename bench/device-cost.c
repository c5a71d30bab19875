/* device-cost.c: what the runtime's device lookup costs a cold start.
 *
 * A bitmap filled without --device leaves the gap to the reader, and the
 * runtime then, on a cold start only, tells the class of the device its
 * file is on (include/pbitmap-plan.h): newfstatat on the file, readlinkat
 * of /sys/dev/block/MAJ:MIN (not for a loop device) and, for a disk that
 * is neither NVMe nor virtual, openat, preadv2 and close of its
 * queue/rotational.  A process makes that lookup once (per device), at
 * its start, so what counts is the first lookup in a fresh process: it
 * costs several times what a later one in the same process does, because
 * the kernel's path walk through sysfs and the calls' own code and data
 * are not in the CPU's caches yet.
 *
 *     device-cost --fresh N [FILE]
 *
 * runs N fresh processes (this program again, one at a time) that each
 * make one lookup of FILE, the first, and prints the median, 10th and
 * 90th percentile of their times, in nanoseconds; then N more that time
 * each system call of that first lookup on its own (interleaved with the
 * first N), and their medians.  FILE defaults to this program's own file,
 * the name it was started by, as the runtime looks up the file of the
 * program that was just started (the kernel has walked that name moments
 * before, as it has a library's).  Before its timed lookup each process
 * makes one of a file on no block device (/proc), which brings the code
 * in, as it is when the runtime runs.  The lookup timed is the runtime's
 * own (runtime/device.c, linked in).
 *
 *     device-cost FILE [N]
 *
 * times N lookups (default 2001) in one process instead: the first, and
 * the median and 90th percentile of the N after it, which show what a
 * warm lookup costs.  Build:
 *
 *     cc -O2 -Iinclude -Iruntime -o device-cost bench/device-cost.c \
 *        runtime/device.c runtime/options.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "rt.h"
#include "sys.h"

/* The runtime's lookup (runtime/device.c) in a process that is not
   secure, with the last device forgotten so that every call looks.  */
static enum pbitmap_device
lookup (const char *path)
{
  static const unsigned long auxv[] = { AT_PAGESZ, RT_PAGE, AT_SECURE, 0,
                                        AT_NULL, 0 };
  struct proc pr = { 0, auxv, -1, 0, PBITMAP_DEVICE_UNKNOWN };
  return rt_file_device (&pr, path);
}

static long long
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
cmp (const void *a, const void *b)
{
  long long x = *(const long long *) a, y = *(const long long *) b;
  return (x > y) - (x < y);
}

/* Sorts the N times T and returns the one at per mille PM.  */
static long long
pct (long long *t, int n, int pm)
{
  qsort (t, (size_t) n, sizeof *t, cmp);
  return t[(long long) (n - 1) * pm / 1000];
}


/* ---- one process, many lookups ------------------------------------------ */

static int
in_process (const char *file, int n)
{
  long long *t = malloc (sizeof *t * (size_t) n);
  if (t == NULL)
    return 1;
  lookup ("/proc");
  long long t0 = now ();
  enum pbitmap_device d = lookup (file);
  long long first = now () - t0;
  for (int i = 0; i < n; i++)
    {
      t0 = now ();
      lookup (file);
      t[i] = now () - t0;
    }
  printf ("%s: %s (gap %u): first %lld ns, median %lld ns, p90 %lld ns "
          "(%d lookups)\n", file, pbitmap_device_name (d),
          pbitmap_device_gap (d), first, pct (t, n, 500), pct (t, n, 900),
          n);
  free (t);
  return 0;
}


/* ---- the children of --fresh ------------------------------------------- */

/* The time of each step of one lookup: newfstatat, readlinkat, the
   rotational read (openat, preadv2, close).  */
enum { STEP_STAT, STEP_LINK, STEP_ROT, NSTEPS };
static long long step_ns[NSTEPS];

static long
timed_readlink (void *ctx, const char *path, char *buf, unsigned long size)
{
  long long t0 = now ();
  long len = rt_sysfs_readlink (ctx, path, buf, size);
  step_ns[STEP_LINK] = now () - t0;
  return len;
}

static int
timed_first_byte (void *ctx, const char *path, char *byte)
{
  long long t0 = now ();
  int r = rt_sysfs_first_byte (ctx, path, byte);
  step_ns[STEP_ROT] = now () - t0;
  return r;
}

/* A child: one lookup of FILE, whole (KIND 'w': the runtime's own code)
   or step by step ('s': the same calls, each timed), after one of /proc.
   Prints the class and the times.  */
static int
child (const char *kind, const char *file)
{
  lookup ("/proc");
  now ();
  if (strcmp (kind, "w") == 0)
    {
      long long t0 = now ();
      enum pbitmap_device d = lookup (file);
      long long t = now () - t0;
      printf ("%d %lld\n", (int) d, t);
      return 0;
    }
  struct rt_stat st;
  long long t0 = now ();
  long r = rt_newfstatat (RT_AT_FDCWD, file, &st, 0);
  step_ns[STEP_STAT] = now () - t0;
  if (r != 0)
    return 1;
  struct pbitmap_sysfs sys = { timed_readlink, timed_first_byte, NULL };
  enum pbitmap_device d = pbitmap_device_classify (rt_major (st.st_dev),
                                                   rt_minor (st.st_dev),
                                                   &sys);
  printf ("%d %lld %lld %lld\n", (int) d, step_ns[STEP_STAT],
          step_ns[STEP_LINK], step_ns[STEP_ROT]);
  return 0;
}

/* Runs SELF as a child of KIND on FILE and reads its line into LINE.  */
static int
spawn (const char *self, const char *kind, const char *file, char *line,
       size_t size)
{
  int fd[2];
  if (pipe (fd) != 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (fd[1], 1);
      close (fd[0]);
      close (fd[1]);
      execl (self, self, "--child", kind, file, (char *) NULL);
      _exit (127);
    }
  close (fd[1]);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < size && (r = read (fd[0], line + got, size - 1 - got)) > 0)
    got += (size_t) r;
  line[got] = '\0';
  close (fd[0]);
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) != pid || status != 0)
    return -1;
  return 0;
}

static int
fresh (const char *self, const char *file, int n)
{
  long long *whole = malloc (sizeof *whole * (size_t) n);
  long long *steps[NSTEPS];
  for (int s = 0; s < NSTEPS; s++)
    steps[s] = malloc (sizeof *steps[s] * (size_t) n);
  int d = 0, link = 0, rot = 0;
  char line[128];
  for (int i = 0; i < n; i++)
    {
      if (spawn (self, "w", file, line, sizeof line) != 0
          || sscanf (line, "%d %lld", &d, &whole[i]) != 2)
        {
          fprintf (stderr, "device-cost: a child failed\n");
          return 1;
        }
      if (spawn (self, "s", file, line, sizeof line) != 0
          || sscanf (line, "%d %lld %lld %lld", &d, &steps[STEP_STAT][i],
                     &steps[STEP_LINK][i], &steps[STEP_ROT][i]) != 4)
        {
          fprintf (stderr, "device-cost: a child failed\n");
          return 1;
        }
      link |= steps[STEP_LINK][i] != 0;
      rot |= steps[STEP_ROT][i] != 0;
    }
  printf ("%s: %s (gap %u): first lookup in a fresh process: median %lld "
          "ns, p10 %lld ns, p90 %lld ns (%d processes)\n", file,
          pbitmap_device_name ((enum pbitmap_device) d),
          pbitmap_device_gap ((enum pbitmap_device) d),
          pct (whole, n, 500), pct (whole, n, 100), pct (whole, n, 900), n);
  printf ("%s: its calls, medians: newfstatat %lld ns", file,
          pct (steps[STEP_STAT], n, 500));
  if (link)
    printf (", readlinkat %lld ns", pct (steps[STEP_LINK], n, 500));
  if (rot)
    printf (", rotational (openat, preadv2, close) %lld ns",
            pct (steps[STEP_ROT], n, 500));
  printf ("\n");
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--child") == 0)
    return child (argv[2], argv[3]);
  if (argc >= 3 && argc <= 4 && strcmp (argv[1], "--fresh") == 0
      && atoi (argv[2]) > 0)
    {
      char self[4096];
      ssize_t len = readlink ("/proc/self/exe", self, sizeof self - 1);
      if (len <= 0)
        return 1;
      self[len] = '\0';
      return fresh (self, argc == 4 ? argv[3] : self, atoi (argv[2]));
    }
  if (argc < 2 || argc > 3 || argv[1][0] == '-')
    {
      fprintf (stderr, "usage: device-cost --fresh N [FILE]\n"
                       "       device-cost FILE [N]\n");
      return 64;
    }
  int n = argc > 2 ? atoi (argv[2]) : 2001;
  return in_process (argv[1], n < 1 ? 1 : n);
}
