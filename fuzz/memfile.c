/* memfile.c: memfd files for the harnesses; see memfile.h.  */

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memfile.h"

void
memfile_open (struct memfile *f, const char *name)
{
  f->fd = memfd_create (name, MFD_CLOEXEC);
  if (f->fd < 0)
    {
      perror ("memfd_create");
      abort ();
    }
  snprintf (f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
}

void
memfile_set (const struct memfile *f, const uint8_t *data, size_t size)
{
  if (ftruncate (f->fd, 0) != 0)
    abort ();
  for (size_t done = 0; done < size;)
    {
      ssize_t n = pwrite (f->fd, data + done, size - done, (off_t) done);
      if (n <= 0)
        abort ();
      done += (size_t) n;
    }
}
