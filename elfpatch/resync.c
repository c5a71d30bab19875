/* resync.c: point a stale PT_PRESENT_BITMAP back at the pbitmap note
 * (elfpatch --resync).
 *
 * A tool that rewrites a linked file without knowing pbitmap may move
 * the note's section and update the section header and every program
 * header it knows, but not ours: patchelf 0.14, when it grows the
 * program header table, moves .note.pbitmap (with .interp, the other
 * notes and the dynamic string table) to a new PT_LOAD and leaves
 * PT_PRESENT_BITMAP pointing at the old place, which then holds other
 * bytes.  image.c calls such a header stale: it finds the note through
 * the section headers (or, without them, a PT_NOTE), and the other
 * commands refuse the file with a message that names --resync.  The
 * runtime cannot see section headers; it finds no valid bitmap at the
 * old place and does nothing.
 *
 * --resync writes the note's place into the program header, moves the
 * note's entry and mark fields by the distance the note moved (they are
 * relative to their own address), and writes the file back atomically
 * like a fill.  The bits are kept: they still count the file pages of
 * the layout they were recorded on, so when the tool also moved the
 * program's pages (patchelf shifts a non-PIE program by a page) a filled
 * bitmap must be recorded and filled again, which the warning says.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdio.h>

#include "elfpatch.h"

int
resync_command (const char *binary)
{
  struct image img;
  int status = 1;
  if (image_open (binary, IMAGE_UPDATE | IMAGE_STALE, &img) != 0)
    goto out;
  struct region *r = &img.region;
  if (!r->stale)
    {
      elfpatch_note ("%s: PT_PRESENT_BITMAP already points at the note",
                     binary);
      status = 0;
      goto out;
    }
  uint64_t from = r->phdr_offset;
  if (image_resync (&img) != 0 || update_write_back (&img) != 0)
    goto out;
  printf ("%s: PT_PRESENT_BITMAP re-synced: offset 0x%" PRIx64 " -> 0x%"
          PRIx64 ", vaddr 0x%" PRIx64 "\n", binary, from, r->offset,
          r->vaddr);
  if (fflush (stdout) != 0)
    {
      error (0, errno, "error: standard output");
      goto out;
    }
  if (r->hdr.flags & PBITMAP_F_FILLED)
    elfpatch_warn ("%s: the bits were filled before the note moved; if the "
                   "tool moved other pages too, record and fill again",
                   binary);
  status = 0;

out:
  image_close (&img);
  return status;
}
