/* memfile.h: the harnesses' in-memory files.
 *
 * elfpatch opens files by name, so a harness that wants to run it
 * unchanged on fuzzed bytes needs a file with a name: a memfd, named by
 * its /proc/self/fd path, is one without any disk I/O.
 */
#ifndef FUZZ_MEMFILE_H
#define FUZZ_MEMFILE_H

#include <stddef.h>
#include <stdint.h>

#define MEMFILE_PATH_MAX 64

struct memfile
{
  int fd;
  char path[MEMFILE_PATH_MAX];
};

/* Creates F; aborts on failure (a harness cannot run without it).  */
void memfile_open (struct memfile *f, const char *name);
/* Makes F's contents exactly DATA.  */
void memfile_set (const struct memfile *f, const uint8_t *data, size_t size);

#endif /* FUZZ_MEMFILE_H */
