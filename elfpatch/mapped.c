/* mapped.c: the files a recording maps, as the kernel names them.
 *
 * Both record.c (at each capture of /proc/PID/maps) and watch.c (at each
 * mmap of a file it watches) meet a mapping and need its file in the
 * recording: the one entry per inode (device and inode number), opened
 * once, its pages added as they are found.  Each file is opened when it
 * is first met and checked to be the inode that is mapped: a file
 * deleted or replaced since it was mapped is skipped, the replaced one
 * with a warning.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfpatch.h"

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
