/* mapped.c: the files a recording maps, as the kernel names them.
 *
 * Both record.c (at each capture of /proc/PID/maps) and watch.c (at each
 * mmap of a file it watches) meet a mapping and need its file in the
 * recording: the one entry per inode (device and inode number), opened
 * once, its pages added as they are found.  Each file is opened when it
 * is first met and checked to be the inode that is mapped: a file
 * deleted or replaced since it was mapped is skipped, the replaced one
 * with a warning.  Both read the kernel's view of a process the same
 * way too: its mappings from /proc/PID/maps (maps_parse) and which of
 * their pages are present from /proc/PID/pagemap (pagemap_present).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfpatch.h"

#define PAGEMAP_PRESENT (UINT64_C (1) << 63)
#define PAGEMAP_CHUNK 4096      /* entries per pread */

int
mapped_file_add_page (struct mapped_file *f, uint64_t page)
{
  if (array_reserve ((void **) &f->pages, &f->alloc, f->n_pages,
                     sizeof *f->pages) != 0)
    return -1;
  f->pages[f->n_pages++] = page;
  return 0;
}

/* The kernel writes a newline in a path as "\012".  */
static void
unescape_maps_path (char *path)
{
  char *out = path;
  for (const char *p = path; *p != '\0'; p++)
    if (strncmp (p, "\\012", 4) == 0)
      {
        *out++ = '\n';
        p += 3;
      }
    else
      *out++ = *p;
  *out = '\0';
}

/* Whether maps says the file was deleted (or is a memfd).  */
static int
is_deleted (const char *path)
{
  static const char deleted[] = " (deleted)";
  size_t len = strlen (path);
  return len >= sizeof deleted - 1
         && strcmp (path + len - (sizeof deleted - 1), deleted) == 0;
}

/* Why a mapped file is not recorded.  */
enum skip { RECORDED, SKIP_QUIETLY, SKIP_REPLACED };

/* Opens the file of a mapping and checks it is the mapped inode, a
   regular file (not a device such as /dev/zero).  */
static int
open_mapped (pid_t pid, uint64_t start, uint64_t end, const char *path,
             uint64_t ino, enum skip *why)
{
  struct stat st;
  *why = SKIP_QUIETLY;
  if (is_deleted (path))
    return -1;
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0 || (uint64_t) st.st_ino != ino)
    {
      /* Stacked file systems (overlayfs) may show the inode of the layer
         below in maps; the map_files link (root only) opens the mapped
         file itself.  */
      char link[96];
      snprintf (link, sizeof link, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
                (int) pid, start, end);
      if (fd >= 0)
        close (fd);
      fd = open (link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || fstat (fd, &st) != 0)
        {
          if (fd >= 0)
            close (fd);
          *why = SKIP_REPLACED;
          return -1;
        }
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return -1;
    }
  *why = RECORDED;
  return fd;
}

struct mapped_file *
recording_file (struct recording *rec, pid_t pid, unsigned maj, unsigned min,
                uint64_t ino, uint64_t start, uint64_t end, char *path)
{
  for (size_t i = 0; i < rec->n_files; i++)
    {
      struct mapped_file *f = &rec->files[i];
      if (f->dev_major == maj && f->dev_minor == min && f->ino == ino)
        return f;
    }
  if (array_reserve ((void **) &rec->files, &rec->alloc, rec->n_files,
                     sizeof *rec->files) != 0)
    return NULL;
  struct mapped_file *f = &rec->files[rec->n_files];
  memset (f, 0, sizeof *f);
  unescape_maps_path (path);
  f->path = strdup (path);
  if (f->path == NULL)
    return NULL;
  f->dev_major = maj;
  f->dev_minor = min;
  f->ino = ino;
  enum skip why;
  f->fd = open_mapped (pid, start, end, path, ino, &why);
  if (why == SKIP_QUIETLY)
    elfpatch_note ("%s: not recorded", path);
  else if (why == SKIP_REPLACED)
    elfpatch_warn ("%s: replaced since it was mapped; not recorded", path);
  rec->n_files++;
  return f;
}

int
maps_parse (char *line, struct maps_entry *e)
{
  int path_at = 0;
  line[strcspn (line, "\n")] = '\0';
  if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %"
              SCNu64 " %n", &e->start, &e->end, e->perms, &e->offset,
              &e->maj, &e->min, &e->ino, &path_at) < 7 || path_at == 0)
    return -1;
  e->path = line + path_at;
  return e->path[0] == '/' && e->ino != 0 ? 0 : -1;
}

/* PAGEMAP_SCAN (Linux 6.7; <linux/fs.h> from then on): the present
   ranges of a stretch of a process's memory, in one ioctl, without an
   entry for each page that is not present.  */
#ifndef PAGEMAP_SCAN
struct page_region
{
  uint64_t start, end, categories;
};
struct pm_scan_arg
{
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
  uint64_t category_inverted, category_mask, category_anyof_mask;
  uint64_t return_mask;
};
#define PAGEMAP_SCAN _IOWR ('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#endif

/* The ranges per PAGEMAP_SCAN call.  */
#define PAGEMAP_REGIONS 256

/* pagemap_present with PAGEMAP_SCAN: 0, -1 with errno set, or 1 when
   the kernel has no such ioctl (its first call fails so, before any
   page was passed on: the pread that follows passes none twice).  */
static int
pagemap_scan (int pagemap, uint64_t start, uint64_t end,
              pagemap_page_fn *page, void *ctx)
{
  static struct page_region regions[PAGEMAP_REGIONS];
  uint64_t at = start;
  while (at < end)
    {
      struct pm_scan_arg arg = {
        .size = sizeof arg, .start = at, .end = end,
        .vec = (uint64_t) (uintptr_t) regions, .vec_len = PAGEMAP_REGIONS,
        .category_mask = PAGE_IS_PRESENT, .return_mask = PAGE_IS_PRESENT };
      long n = ioctl (pagemap, PAGEMAP_SCAN, &arg);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return at == start && (errno == ENOTTY || errno == EINVAL) ? 1 : -1;
      for (long i = 0; i < n; i++)
        for (uint64_t a = regions[i].start; a < regions[i].end;
             a += PBITMAP_PAGE_SIZE)
          if (page (ctx, (a - start) / PBITMAP_PAGE_SIZE) != 0)
            {
              errno = 0;
              return -1;
            }
      if (arg.walk_end <= at)
        return -1;
      at = arg.walk_end;
    }
  return 0;
}

int
pagemap_present (int pagemap, uint64_t start, uint64_t end,
                 pagemap_page_fn *page, void *ctx)
{
  static int no_scan;
  if (!no_scan)
    {
      int rc = pagemap_scan (pagemap, start, end, page, ctx);
      if (rc <= 0)
        return rc;
      no_scan = 1;
    }
  static uint64_t entries[PAGEMAP_CHUNK];
  uint64_t npages = (end - start) / PBITMAP_PAGE_SIZE;
  uint64_t first_vpage = start / PBITMAP_PAGE_SIZE;
  for (uint64_t done = 0; done < npages;)
    {
      size_t want = npages - done < PAGEMAP_CHUNK
                    ? (size_t) (npages - done) : PAGEMAP_CHUNK;
      ssize_t got = pread (pagemap, entries, want * sizeof *entries,
                           (off_t) ((first_vpage + done) * sizeof *entries));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0 || got % sizeof *entries != 0)
        return -1;
      size_t n = (size_t) got / sizeof *entries;
      for (size_t i = 0; i < n; i++)
        if ((entries[i] & PAGEMAP_PRESENT) && page (ctx, done + i) != 0)
          return -1;
      done += n;
    }
  return 0;
}
