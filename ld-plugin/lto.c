/* lto.c: the size of the IR objects another plugin claimed.
 *
 * GCC's link line loads its LTO plugin (liblto_plugin.so) before
 * pbitmap's, and the linker offers each input to the plugins in load
 * order until one claims it: the LTO plugin claims every IR object, so
 * pbitmap's claim_file never sees them, and the machine code they become
 * (the LTO partitions) enters the link only after all_symbols_read, when
 * the capacity must already be fixed.  A -flto program sized from the
 * rest of its inputs got a region far too small (redis: 128 pages for
 * 765).
 *
 * The plugin interface names no file claimed by another plugin, but the
 * LTO plugin writes them down: in its all_symbols_read, which the linker
 * calls before pbitmap's (load order again), it writes its resolution
 * file, whose name GCC passes it as -plugin-opt=-fresolution=FILE on the
 * linker's command line (the plugin notes it, lto_note_resolution, when
 * it reads that line at onload).  That file starts with the number of claimed
 * files; then, for each, a line "NAME SYMBOLS" followed by SYMBOLS symbol
 * lines.  NAME is a path, or PATH@0xOFFSET for an archive member, whose
 * ar header (60 bytes, the size in decimal at byte 48) precedes OFFSET.
 * The sum of their sizes is what lto_claimed_bytes returns; the caller
 * scales it like the IR objects it sees itself (LTO_GROWTH).
 *
 * When pbitmap's plugin is loaded first, its claim_file sees the IR
 * objects itself and the resolution file does not exist yet at its
 * all_symbols_read: nothing is counted twice.  Anything unreadable counts
 * as nothing; the capacity warning at the end of the link still holds.
 */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin.h"

#define RESOLUTION_OPT "-plugin-opt=-fresolution="
#define AR_HEADER_SIZE 60
#define AR_SIZE_FIELD 48

void
lto_note_resolution (const char *arg, char **path)
{
  if (strncmp (arg, RESOLUTION_OPT, strlen (RESOLUTION_OPT)) == 0)
    {
      free (*path);
      *path = strdup (arg + strlen (RESOLUTION_OPT));
    }
}

/* The size of the member whose data starts at OFFSET of archive PATH. */
static uint64_t
member_size (const char *path, uint64_t offset)
{
  char header[AR_HEADER_SIZE + 1];
  int fd;
  ssize_t got;

  if (offset < AR_HEADER_SIZE || (fd = open (path, O_RDONLY)) < 0)
    return 0;
  got = pread (fd, header, AR_HEADER_SIZE, offset - AR_HEADER_SIZE);
  close (fd);
  if (got != AR_HEADER_SIZE)
    return 0;
  header[AR_HEADER_SIZE] = '\0';
  return strtoull (header + AR_SIZE_FIELD, NULL, 10);
}

/* The size of the claimed file NAME (PATH or PATH@0xOFFSET). */
static uint64_t
claimed_size (char *name)
{
  char *at = strrchr (name, '@');
  struct stat st;

  if (at != NULL && strncmp (at, "@0x", 3) == 0)
    {
      uint64_t offset = strtoull (at + 3, NULL, 16);

      *at = '\0';
      return member_size (name, offset);
    }
  return stat (name, &st) == 0 ? (uint64_t) st.st_size : 0;
}

uint64_t
lto_claimed_bytes (const char *resolution, unsigned *files)
{
  FILE *f = resolution != NULL ? fopen (resolution, "r") : NULL;
  char *line = NULL;
  size_t cap = 0;
  unsigned count = 0;
  uint64_t bytes = 0;

  *files = 0;
  if (f != NULL && getline (&line, &cap, f) > 0
      && sscanf (line, "%u", &count) == 1)
    for (unsigned i = 0; i < count && getline (&line, &cap, f) > 0; i++)
      {
        char *space = strrchr (line, ' ');
        unsigned long symbols;

        if (space == NULL || sscanf (space, "%lu", &symbols) != 1)
          break;
        *space = '\0';
        bytes += claimed_size (line);
        ++*files;
        /* Skip the file's symbol lines. */
        for (unsigned long s = 0; s < symbols; s++)
          if (getline (&line, &cap, f) <= 0)
            break;
      }
  free (line);
  if (f != NULL)
    fclose (f);
  return bytes;
}
