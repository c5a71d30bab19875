/* evict: drop files from the page cache, for cold-start tests.
 *
 * /proc/sys/vm/drop_caches is root-only and global; POSIX_FADV_DONTNEED
 * drops one file's clean, unmapped pages.  Pages just written are dirty and
 * survive DONTNEED, so the file is synced first.  The result is checked
 * with mincore: a test that believes it runs cold but does not is worse
 * than a failing one.
 *
 *   evict FILE...      exit 0 when no page of any FILE is resident
 */
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static long
resident_pages (int fd, off_t size)
{
  long page = sysconf (_SC_PAGESIZE);
  size_t n = (size + page - 1) / page;
  if (n == 0)
    return 0;
  void *map = mmap (NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    return -1;
  unsigned char *vec = malloc (n);
  long count = -1;
  if (vec != NULL && mincore (map, size, vec) == 0)
    {
      count = 0;
      for (size_t i = 0; i < n; i++)
        count += vec[i] & 1;
    }
  free (vec);
  munmap (map, size);
  return count;
}

static int
evict (const char *path)
{
  int fd = open (path, O_RDONLY);
  if (fd < 0)
    {
      error (0, errno, "error: %s", path);
      return 1;
    }
  struct stat st;
  int status = 1;
  if (fstat (fd, &st) != 0)
    error (0, errno, "error: %s", path);
  else
    {
      long left = -1;
      /* A page under writeback or briefly mapped by a dying process may
         survive one call; a few rounds settle it. */
      for (int round = 0; round < 20 && left != 0; round++)
        {
          fdatasync (fd);
          posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
          left = resident_pages (fd, st.st_size);
          if (left != 0)
            usleep (10000);
        }
      if (left == 0)
        status = 0;
      else
        error (0, 0, "error: %s: %ld pages still resident", path, left);
    }
  close (fd);
  return status;
}

int
main (int argc, char **argv)
{
  int status = 0;
  if (argc < 2)
    error (2, 0, "usage: evict FILE...");
  for (int i = 1; i < argc; i++)
    status |= evict (argv[i]);
  return status;
}
