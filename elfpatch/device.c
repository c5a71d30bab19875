/* device.c: the region's max_gap when a fill pins it (elfpatch --fill
 * --device=... / --max-gap=...), and the device class elfpatch --run
 * reads a file from.
 *
 * Whoever prefetches a bitmap (the runtime, elfpatch --run) turns the set
 * pages into runs and reads through gaps of up to max_gap unset pages
 * where reading the gap costs less than one more I/O.  That threshold
 * depends on the device the file is read from, whose classes and gaps
 * include/pbitmap-plan.h defines (nvme 1, ssd 6, cloud 10, hdd 122
 * pages).  By default a fill leaves the choice to the reader
 * (PBITMAP_F_GAP_AUTO): the machine that fills is often not the one that
 * runs the program (a package build), so only the reader knows its
 * device.  --device=CLASS or --max-gap=PAGES pin the gap instead, for
 * every reader; the reader then uses the region's max_gap as it is.
 *
 * --device=auto finds the device a file lives on: stat's st_dev names a
 * block device in /sys/dev/block/MAJ:MIN.  A file system without one,
 * such as btrfs, whose st_dev is an anonymous number per subvolume, is
 * found in /proc/self/mountinfo by the file's mount ID (from
 * /proc/self/fdinfo), and its source device taken.  A partition is
 * replaced by its whole disk; a device-mapper or md device by its members
 * (slaves/), the slowest of them counting (of equally slow ones, the
 * first by name, so that readdir's order does not matter); a loop device
 * by the device of its backing file (by that file itself when it is a
 * block device), or, when that cannot be found (the file was deleted, it
 * is out of this mount namespace's sight, it is on no block device), by
 * the loop device's own flags, which the kernel sets from the backing
 * file's device.  The disk's queue/rotational says hdd; otherwise a name
 * starting with "nvme" says nvme; anything else is an ssd.  A file on no
 * block device that can be found (tmpfs, NFS) gets the gap the readers
 * use for a device they cannot tell, PBITMAP_GAP_UNKNOWN, for the reason
 * they use it: a gap too small is what hurts.  (Here DEVICE_AUTO stands
 * for "not found".)  In a virtual machine nvme and ssd are cloud, as for
 * the readers (include/pbitmap-plan.h): a guest's disk is the
 * hypervisor's.  A file on overlayfs, whose st_dev is the overlay's own
 * anonymous number, counts as on the slowest device among the directories
 * of its layers (upperdir and lowerdir in the mount's options): the layer
 * a file comes from cannot be told from outside, and a copy-up moves it.
 *
 * --device=auto pins what this machine's device says.  Its answer is
 * only right where the program runs on the machine that fills, and a
 * virtual disk commonly says it is rotational whatever backs it.  -v says
 * which gap was chosen and why, auto's with the devices it followed, from
 * the file's to the disk that decided ("dm-0 > loop1p1 > loop1 > vda").
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elfpatch.h"

/* The class of each kind, slowest last: "the slowest member" of a
   stacked device is the one with the highest kind.  */
static const struct
{
  const char *name;
  enum pbitmap_device device;
} profiles[] =
{
  [DEVICE_NONE] = { NULL, PBITMAP_DEVICE_UNKNOWN },
  [DEVICE_AUTO] = { "auto", PBITMAP_DEVICE_UNKNOWN },
  [DEVICE_NVME] = { "nvme", PBITMAP_DEVICE_NVME },
  [DEVICE_SSD] = { "ssd", PBITMAP_DEVICE_SSD },
  [DEVICE_CLOUD] = { "cloud", PBITMAP_DEVICE_CLOUD },
  [DEVICE_HDD] = { "hdd", PBITMAP_DEVICE_HDD },
};

/* Stacked devices (a loop file on a dm device on a partition) are
   followed this deep at most.  */
#define DEVICE_DEPTH_MAX 8

/* The longest chain of device names -v shows; a longer one is cut.  */
#define DEVICE_CHAIN_MAX 160

int
device_parse (const char *name, enum device_kind *kind)
{
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
    if (profiles[i].name != NULL && strcmp (name, profiles[i].name) == 0)
      {
        *kind = (enum device_kind) i;
        return 0;
      }
  return -1;
}

uint32_t
device_max_gap (enum device_kind kind)
{
  return pbitmap_device_gap (profiles[kind].device);
}

/* The C library's calls for include/pbitmap-plan.h's classification.  */
static long
sysfs_readlink (void *ctx, const char *path, char *buf, unsigned long size)
{
  (void) ctx;
  return (long) readlink (path, buf, size);
}

static int
sysfs_first_byte (void *ctx, const char *path, char *byte)
{
  (void) ctx;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t got = pread (fd, byte, 1, 0);
  close (fd);
  return got == 1 ? 0 : -1;
}

enum pbitmap_device
device_of_file (int fd)
{
  struct stat st;
  struct pbitmap_sysfs sys = { sysfs_readlink, sysfs_first_byte, NULL };
  if (fstat (fd, &st) != 0)
    return PBITMAP_DEVICE_UNKNOWN;
  return pbitmap_device_classify (major (st.st_dev), minor (st.st_dev), &sys);
}

/* The first line of sysfs file DIR/NAME into BUF, without its newline.  */
static int
read_sysfs (const char *dir, const char *name, char *buf, size_t size)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -1;
  int rc = fgets (buf, (int) size, f) != NULL ? 0 : -1;
  fclose (f);
  buf[strcspn (buf, "\n")] = '\0';
  return rc;
}

/* Append " > NAME" to CHAIN (or NAME, when CHAIN is empty), cut to SIZE.  */
static void
chain_append (char *chain, size_t size, const char *name)
{
  size_t len = strlen (chain);
  for (const char *p = len > 0 ? " > " : ""; *p != '\0' && len + 1 < size; p++)
    chain[len++] = *p;
  for (const char *p = name; *p != '\0' && len + 1 < size; p++)
    chain[len++] = *p;
  chain[len] = '\0';
}

/* A disk that is not stacked on another: its own flags and name.  */
static enum device_kind
classify_disk (const char *dir)
{
  char buf[16];
  if (read_sysfs (dir, "queue/rotational", buf, sizeof buf) == 0
      && strcmp (buf, "1") == 0)
    return DEVICE_HDD;
  return strncmp (strrchr (dir, '/') + 1, "nvme", 4) == 0
         ? DEVICE_NVME : DEVICE_SSD;
}

static enum device_kind classify_file (int fd, int depth, char *chain,
                                       size_t chainsize);
static enum device_kind classify_sysfs (const char *dir, int depth,
                                        char *chain, size_t chainsize);

/* The slowest member of the stacked device whose sysfs directory is DIR,
   or DEVICE_AUTO when it has none that can be told.  Of equally slow
   members the one whose chain sorts first counts, whatever order readdir
   gives; CHAIN receives its chain.  */
static enum device_kind
classify_slaves (const char *dir, int depth, char *chain, size_t chainsize)
{
  char slaves_dir[PATH_MAX + 16];
  snprintf (slaves_dir, sizeof slaves_dir, "%s/slaves", dir);
  DIR *slaves = opendir (slaves_dir);
  enum device_kind slowest = DEVICE_AUTO;
  chain[0] = '\0';
  if (slaves == NULL)
    return DEVICE_AUTO;
  struct dirent *e;
  while ((e = readdir (slaves)) != NULL)
    {
      char member[NAME_MAX + 32], member_chain[DEVICE_CHAIN_MAX];
      if (e->d_name[0] == '.')
        continue;
      snprintf (member, sizeof member, "/sys/class/block/%s", e->d_name);
      enum device_kind k = classify_sysfs (member, depth + 1, member_chain,
                                           sizeof member_chain);
      if (k > slowest || (k == slowest && k != DEVICE_AUTO
                          && strcmp (member_chain, chain) < 0))
        {
          slowest = k;
          snprintf (chain, chainsize, "%s", member_chain);
        }
    }
  closedir (slaves);
  return slowest;
}

/* The kind of the block device whose sysfs directory is DIR, or
   DEVICE_AUTO when it cannot be told.  CHAIN receives the devices
   followed, from DIR's to the disk that decided ("loop0p1 > loop0 >
   vda").  */
static enum device_kind
classify_sysfs (const char *dir, int depth, char *chain, size_t chainsize)
{
  char real[PATH_MAX], buf[PATH_MAX], below[DEVICE_CHAIN_MAX];
  enum device_kind kind = DEVICE_AUTO;
  chain[0] = '\0';
  if (depth > DEVICE_DEPTH_MAX || realpath (dir, real) == NULL)
    return DEVICE_AUTO;
  chain_append (chain, chainsize, strrchr (real, '/') + 1);
  if (read_sysfs (real, "partition", buf, sizeof buf) == 0)
    {
      *strrchr (real, '/') = '\0';      /* the whole disk */
      chain_append (chain, chainsize, strrchr (real, '/') + 1);
    }

  /* A loop device: the device of its backing file.  When that cannot be
     found (the file was deleted, is out of this mount namespace's sight,
     or is on no block device), the loop device's own flags, which the
     kernel sets from the backing file's device.  */
  if (read_sysfs (real, "loop/backing_file", buf, sizeof buf) == 0)
    {
      int backing = open (buf, O_PATH | O_CLOEXEC);
      if (backing >= 0)
        {
          kind = classify_file (backing, depth + 1, below, sizeof below);
          close (backing);
        }
      if (kind == DEVICE_AUTO)
        return classify_disk (real);
      chain_append (chain, chainsize, below);
      return kind;
    }

  /* Device-mapper, md: the slowest member.  */
  kind = classify_slaves (real, depth, below, sizeof below);
  if (kind != DEVICE_AUTO)
    {
      chain_append (chain, chainsize, below);
      return kind;
    }
  return classify_disk (real);
}

/* The mount ID of the file open on FD, from the "mnt_id:" line of
   /proc/self/fdinfo/FD, or -1.  */
static long long
mount_id (int fd)
{
  char path[64], line[256];
  long long id = -1;
  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", fd);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -1;
  while (id < 0 && fgets (line, sizeof line, f) != NULL)
    if (sscanf (line, "mnt_id: %lld", &id) != 1)
      id = -1;
  fclose (f);
  return id;
}

/* The line of /proc/self/mountinfo for the mount the file open on FD
   (on device DEV) is on: "ID PARENT MAJ:MIN ROOT POINT OPTS... - TYPE
   SOURCE SUPEROPTS", allocated, or NULL.  The mount is found by its ID:
   MAJ:MIN need not be the file's st_dev (btrfs gives each subvolume an
   anonymous device number of its own, and the mount another one).
   Without an ID, DEV is matched against MAJ:MIN.  */
static char *
mount_line (int fd, dev_t dev)
{
  long long want = mount_id (fd);
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return NULL;
  char *line = NULL;
  size_t size = 0;
  int found = 0;
  while (!found && getline (&line, &size, f) > 0)
    {
      long long id;
      unsigned maj, min;
      found = sscanf (line, "%lld %*u %u:%u", &id, &maj, &min) == 3
              && (want >= 0 ? id == want
                            : maj == major (dev) && min == minor (dev))
              && strstr (line, " - ") != NULL;
    }
  fclose (f);
  if (!found)
    {
      free (line);
      return NULL;
    }
  line[strcspn (line, "\n")] = '\0';
  return line;
}

/* The source device of the mount LINE describes, when it is a block
   device.  */
static int
mount_source (const char *line, dev_t *source)
{
  char src[PATH_MAX];
  struct stat st;
  if (sscanf (strstr (line, " - "), " - %*s %4095s", src) != 1
      || src[0] != '/' || stat (src, &st) != 0 || !S_ISBLK (st.st_mode))
    return -1;
  *source = st.st_rdev;
  return 0;
}

/* An overlay mount (LINE) keeps its files in the directories of its
   layers, named in its super options ("upperdir=U,lowerdir=L1:L2"): the
   slowest of their devices counts, as for a stacked block device, of
   equally slow ones the first found.  DEVICE_AUTO when LINE is not an
   overlay or no layer can be told (a container's layers are paths of
   another mount namespace).  A layer path with an escaped ',' or ':' is
   cut there and, not found, left out.  */
static enum device_kind
classify_overlay (const char *line, int depth, char *chain, size_t chainsize)
{
  char type[32];
  const char *opts = strrchr (line, ' ');
  enum device_kind slowest = DEVICE_AUTO;
  chain[0] = '\0';
  if (sscanf (strstr (line, " - "), " - %31s", type) != 1
      || strcmp (type, "overlay") != 0 || opts == NULL)
    return DEVICE_AUTO;
  char *copy = strdup (opts + 1), *save = NULL;
  for (char *opt = copy ? strtok_r (copy, ",", &save) : NULL; opt != NULL;
       opt = strtok_r (NULL, ",", &save))
    {
      char *dirs = NULL, *dsave = NULL;
      if (strncmp (opt, "upperdir=", 9) == 0
          || strncmp (opt, "lowerdir=", 9) == 0)
        dirs = opt + 9;
      for (char *dir = dirs ? strtok_r (dirs, ":", &dsave) : NULL;
           dir != NULL; dir = strtok_r (NULL, ":", &dsave))
        {
          char layer_chain[DEVICE_CHAIN_MAX];
          int layer = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
          if (layer < 0)
            continue;
          enum device_kind k = classify_file (layer, depth + 1, layer_chain,
                                              sizeof layer_chain);
          close (layer);
          if (k > slowest)
            {
              slowest = k;
              chain[0] = '\0';
              chain_append (chain, chainsize, "overlay");
              chain_append (chain, chainsize, layer_chain);
            }
        }
    }
  free (copy);
  return slowest;
}

/* The kind of the device the file open on FD is on, or, when it is a
   block device itself (a loop device's backing file may be), of that
   device.  */
static enum device_kind
classify_file (int fd, int depth, char *chain, size_t chainsize)
{
  char dir[64];
  struct stat st;
  chain[0] = '\0';
  if (fstat (fd, &st) != 0)
    return DEVICE_AUTO;
  dev_t dev = S_ISBLK (st.st_mode) ? st.st_rdev : st.st_dev;
  snprintf (dir, sizeof dir, "/sys/dev/block/%u:%u", major (dev), minor (dev));
  if (stat (dir, &st) != 0)
    {
      dev_t source;
      char *line = depth > DEVICE_DEPTH_MAX ? NULL : mount_line (fd, dev);
      int have_source = line != NULL && mount_source (line, &source) == 0
                        && source != dev;
      enum device_kind kind = DEVICE_AUTO;
      if (line != NULL && !have_source)
        kind = classify_overlay (line, depth, chain, chainsize);
      free (line);
      if (!have_source)
        return kind;
      snprintf (dir, sizeof dir, "/sys/dev/block/%u:%u", major (source),
                minor (source));
    }
  return classify_sysfs (dir, depth, chain, chainsize);
}

uint32_t
device_choose_gap (const struct gap_choice *c, int fd, char *why,
                   size_t whysize, int *pinned)
{
  *pinned = 1;
  if (c->explicit_gap)
    {
      snprintf (why, whysize, "--max-gap");
      return c->max_gap;
    }
  enum device_kind kind = c->device;
  char chain[DEVICE_CHAIN_MAX] = "";
  int len = 0;
  if (kind == DEVICE_NONE)
    {
      *pinned = 0;
      snprintf (why, whysize, "no --device or --max-gap: the reader "
                "chooses for its device, %u for older readers",
                PBITMAP_GAP_UNKNOWN);
      return PBITMAP_GAP_UNKNOWN;
    }
  if (kind == DEVICE_AUTO)
    {
      kind = classify_file (fd, 0, chain, sizeof chain);
      if (kind == DEVICE_AUTO)
        {
          snprintf (why, whysize, "--device=auto: no block device found, "
                    "unknown: the readers' gap for a device that cannot "
                    "be told");
          return PBITMAP_GAP_UNKNOWN;
        }
      len = snprintf (why, whysize, "--device=auto: %s, ", chain);
      /* As the readers do (include/pbitmap-plan.h, step 4).  */
      if (pbitmap_device_virtual (profiles[kind].device)
          == PBITMAP_DEVICE_CLOUD && kind != DEVICE_CLOUD)
        {
          if (len >= 0 && (size_t) len < whysize)
            len += snprintf (why + len, whysize - (size_t) len,
                             "%s in a virtual machine, ", profiles[kind].name);
          kind = DEVICE_CLOUD;
        }
    }
  else
    len = snprintf (why, whysize, "--device=");
  enum pbitmap_device d = profiles[kind].device;
  if (len >= 0 && (size_t) len < whysize)
    snprintf (why + len, whysize - (size_t) len, "%s: %" PRIu64 " IOPS, %"
              PRIu64 " MB/s", profiles[kind].name, pbitmap_device_iops (d),
              pbitmap_device_bandwidth (d) / 1000000);
  return device_max_gap (kind);
}
