/* device-cost.c: what the runtime's device lookup costs a cold start.
 *
 * A bitmap filled without --device leaves the gap to the reader, and the
 * runtime then, on a cold start only, tells the class of the device its
 * file is on (include/pbitmap-plan.h): newfstatat on the file, readlinkat
 * of /sys/dev/block/MAJ:MIN and, for a disk that is neither NVMe nor
 * virtual, openat, preadv2 and close of its queue/rotational.  This times
 * exactly those calls, with the runtime's own raw system calls
 * (runtime/sys.h) and classification:
 *
 *     device-cost FILE [N]
 *
 * prints the class of FILE's device, the time of the first lookup in this
 * process, after one of a file on no block device (/proc) has brought the
 * code and the stack in, as they are when the runtime runs, and the
 * median and 90th percentile of N more (default 2001), in nanoseconds.
 * Build:
 *
 *     cc -O2 -Iinclude -Iruntime -o device-cost bench/device-cost.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pbitmap-plan.h"
#include "sys.h"

static long
sysfs_readlink (void *ctx, const char *path, char *buf, unsigned long size)
{
  (void) ctx;
  return rt_readlinkat (RT_AT_FDCWD, path, buf, size);
}

static int
sysfs_first_byte (void *ctx, const char *path, char *byte)
{
  (void) ctx;
  long fd = rt_openat (RT_AT_FDCWD, path, RT_O_RDONLY | RT_O_CLOEXEC);
  if (fd < 0)
    return -1;
  long got = rt_preadv2 ((int) fd, byte, 1, 0, 0);
  rt_close ((int) fd);
  return got == 1 ? 0 : -1;
}

static enum pbitmap_device
lookup (const char *path)
{
  struct rt_stat st;
  struct pbitmap_sysfs sys = { sysfs_readlink, sysfs_first_byte, NULL };
  if (rt_newfstatat (RT_AT_FDCWD, path, &st, 0) != 0)
    return PBITMAP_DEVICE_UNKNOWN;
  return pbitmap_device_classify (rt_major (st.st_dev), rt_minor (st.st_dev),
                                  &sys);
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
