/* device-cost.c: what the runtime's device lookup costs a cold start.
 *
 * A bitmap filled without --device leaves the gap to the reader, and the
 * runtime then, on a cold start only, tells the class of the device its
 * file is on (include/pbitmap-plan.h): newfstatat on the file, readlinkat
 * of /sys/dev/block/MAJ:MIN and, for a disk that is neither NVMe nor
 * virtual, openat, preadv2 and close of its queue/rotational.  This times
 * the runtime's own lookup (runtime/device.c, linked in):
 *
 *     device-cost FILE [N]
 *
 * prints the class of FILE's device, the time of the first lookup in this
 * process, after one of a file on no block device (/proc) has brought the
 * code and the stack in, as they are when the runtime runs, and the
 * median and 90th percentile of N more (default 2001), in nanoseconds.
 * Build:
 *
 *     cc -O2 -Iinclude -Iruntime -o device-cost bench/device-cost.c \
 *        runtime/device.c runtime/options.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rt.h"

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

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: device-cost FILE [N]\n");
      return 64;
    }
  int n = argc > 2 ? atoi (argv[2]) : 2001;
  if (n < 1)
    n = 1;
  long long *t = malloc (sizeof *t * (size_t) n);
  lookup ("/proc");
  long long t0 = now ();
  enum pbitmap_device d = lookup (argv[1]);
  long long first = now () - t0;
  for (int i = 0; i < n; i++)
    {
      t0 = now ();
      lookup (argv[1]);
      t[i] = now () - t0;
    }
  qsort (t, (size_t) n, sizeof *t, cmp);
  printf ("%s: %s (gap %u): first %lld ns, median %lld ns, p90 %lld ns "
          "(%d lookups)\n", argv[1], pbitmap_device_name (d),
          pbitmap_device_gap (d), first, t[n / 2], t[n * 9 / 10], n);
  free (t);
  return 0;
}
