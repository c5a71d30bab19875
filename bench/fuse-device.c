/* fuse-device.c: a read-only FUSE view of a directory whose reads are
 * paced like a device with a random-read IOPS limit and a bandwidth.
 *
 * bench/throttle-burst shows why the cgroup blkio throttle is a poor
 * device for cold-start measurements: it grants a 100 ms slice's budget
 * of reads at once and holds the rest until the slice ends, so a read
 * inside the budget costs only the backing disk's latency and one past
 * it up to 100 ms.  Here every read request the kernel sends is one I/O
 * of a single queue, served in arrival order, taking
 *
 *     max (1 / IOPS, bytes / BPS)
 *
 * after the one before it ends: no burst, no idle budget.  The data
 * comes from SOURCE (the host's page cache may well hold it), so the
 * pacing is all the device there is.
 *
 *     fuse-device --iops=N --bps=N SOURCE MOUNTPOINT [-f] [-o OPTION...]
 *
 * The file system is read-only and keeps its page cache across opens
 * (kernel_cache), as a disk's file system does, so that a warm start is
 * warm; change files in SOURCE only while it is not mounted.  A
 * mapping's reads come as the kernel's read-ahead makes them: set the
 * read_ahead_kb of its bdi (/sys/class/bdi/0:N, N the mount's minor
 * device number) as for a disk.  Read requests come at most 128 KiB
 * long (measured with libfuse 3.14 on Linux 6.18: the kernel keeps its
 * default max_pages for reads, though max_write and max_readahead are
 * offered at 1 MiB below), so a 512 KiB read is four paced requests.
 * Build with pkg-config fuse3.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct options
{
  const char *source;
  unsigned long iops;
  unsigned long bps;
} opt;

static int source_fd = -1;

/* The device's single queue: when the last request ends.  */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct timespec queue_free;

static struct timespec
ts_add_ns (struct timespec t, long long ns)
{
  ns += t.tv_nsec;
  t.tv_sec += ns / 1000000000;
  t.tv_nsec = ns % 1000000000;
  return t;
}

static int
ts_before (struct timespec a, struct timespec b)
{
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/* Waits until a request of SIZE bytes, queued now, would end.  */
static void
pace (size_t size)
{
  long long ns = opt.iops ? 1000000000LL / (long long) opt.iops : 0;
  long long bytes_ns = opt.bps ? (long long) ((double) size * 1e9 / (double) opt.bps) : 0;
  if (bytes_ns > ns)
    ns = bytes_ns;
  struct timespec now, done;
  clock_gettime (CLOCK_MONOTONIC, &now);
  pthread_mutex_lock (&queue_lock);
  done = ts_add_ns (ts_before (now, queue_free) ? queue_free : now, ns);
  queue_free = done;
  pthread_mutex_unlock (&queue_lock);
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &done, NULL) == EINTR)
    ;
}

/* PATH ("/a/b") relative to SOURCE ("a/b", "." for the root).  */
static const char *
rel (const char *path)
{
  return path[1] == '\0' ? "." : path + 1;
}

static void *
fd_init (struct fuse_conn_info *conn, struct fuse_config *cfg)
{
  conn->max_write = 1 << 20;
  conn->max_readahead = 1 << 20;
  cfg->kernel_cache = 1;
  cfg->entry_timeout = cfg->attr_timeout = 3600;
  cfg->use_ino = 1;
  return NULL;
}

static int
fd_getattr (const char *path, struct stat *st, struct fuse_file_info *fi)
{
  (void) fi;
  return fstatat (source_fd, rel (path), st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static int
fd_readlink (const char *path, char *buf, size_t size)
{
  ssize_t n = readlinkat (source_fd, rel (path), buf, size - 1);
  if (n < 0)
    return -errno;
  buf[n] = '\0';
  return 0;
}

static int
fd_readdir (const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
            struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
  (void) off, (void) fi, (void) flags;
  int fd = openat (source_fd, rel (path), O_RDONLY | O_DIRECTORY);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      int err = errno;
      if (fd >= 0)
        close (fd);
      return -err;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    fill (buf, e->d_name, NULL, 0, 0);
  closedir (d);
  return 0;
}

static int
fd_open (const char *path, struct fuse_file_info *fi)
{
  if ((fi->flags & O_ACCMODE) != O_RDONLY)
    return -EROFS;
  int fd = openat (source_fd, rel (path), O_RDONLY);
  if (fd < 0)
    return -errno;
  fi->fh = (uint64_t) fd;
  fi->keep_cache = 1;
  return 0;
}

static int
fd_read (const char *path, char *buf, size_t size, off_t off,
         struct fuse_file_info *fi)
{
  (void) path;
  pace (size);
  ssize_t n = pread ((int) fi->fh, buf, size, off);
  return n < 0 ? -errno : (int) n;
}

static int
fd_release (const char *path, struct fuse_file_info *fi)
{
  (void) path;
  close ((int) fi->fh);
  return 0;
}

static int
fd_statfs (const char *path, struct statvfs *st)
{
  (void) path;
  return fstatvfs (source_fd, st) == 0 ? 0 : -errno;
}

static const struct fuse_operations ops = {
  .init = fd_init,
  .getattr = fd_getattr,
  .readlink = fd_readlink,
  .readdir = fd_readdir,
  .open = fd_open,
  .read = fd_read,
  .release = fd_release,
  .statfs = fd_statfs,
};

#define OPT(t, p) { t, offsetof (struct options, p), 1 }
static const struct fuse_opt option_spec[] = {
  OPT ("--iops=%lu", iops),
  OPT ("--bps=%lu", bps),
  FUSE_OPT_END
};

/* The first non-option argument is SOURCE; the rest go to FUSE.  */
static int
take_source (void *data, const char *arg, int key, struct fuse_args *outargs)
{
  (void) data, (void) outargs;
  if (key == FUSE_OPT_KEY_NONOPT && opt.source == NULL)
    {
      opt.source = arg;
      return 0;
    }
  return 1;
}

int
main (int argc, char **argv)
{
  struct fuse_args args = FUSE_ARGS_INIT (argc, argv);
  if (fuse_opt_parse (&args, &opt, option_spec, take_source) != 0)
    return 64;
  if (opt.source == NULL)
    {
      fprintf (stderr, "usage: fuse-device --iops=N --bps=N SOURCE MOUNTPOINT "
                       "[FUSE OPTION...]\n");
      return 64;
    }
  source_fd = open (opt.source, O_RDONLY | O_DIRECTORY);
  if (source_fd < 0)
    {
      fprintf (stderr, "fuse-device: error: %s: %s\n", opt.source,
               strerror (errno));
      return 1;
    }
  fuse_opt_add_arg (&args, "-oro,default_permissions,allow_other,fsname=fuse-device");
  int status = fuse_main (args.argc, args.argv, &ops, NULL);
  fuse_opt_free_args (&args);
  return status;
}
