/* region.h: locating and checking the pbitmap region of an ELF file.
 *
 * The functions of region.c print nothing and keep no state: each takes
 * the file's libelf handle and its bytes (BUF, or when BUF is null a
 * descriptor FD to read them from) and says in WHY, one line, what is
 * wrong.  The region's format is include/pbitmap-format.h's and
 * doc/format.md's.
 */
#ifndef ELFPATCH_REGION_H
#define ELFPATCH_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

#include "pbitmap-format.h"

/* A located, checked region; HDR is its header in host byte order.
   STALE: the PT_PRESENT_BITMAP program header (number PHDR_INDEX, which
   said PHDR_OFFSET and PHDR_VADDR) does not point at the region, which
   was found through its note; PHDR_PLACED: that header was at least
   well placed (inside a PT_LOAD at the matching address).  */
struct region
{
  uint64_t offset;
  uint64_t vaddr;
  uint64_t size;
  struct pbitmap_header hdr;
  int stale;
  int phdr_placed;
  size_t phdr_index;
  uint64_t phdr_offset;
  uint64_t phdr_vaddr;
};

/* Finds and checks the region of ELF, a file of FILE_SIZE bytes whose
   contents are BUF (or, when BUF is null, readable from FD).  Returns 0;
   REGION_STALE when the program header is stale but the note is a valid
   region elsewhere (R describes the note, WHY says what is wrong); or -1
   with a one-line reason in WHY.  */
#define REGION_STALE 1
int region_find (Elf *elf, const unsigned char *buf, int fd,
                 uint64_t file_size, struct region *r,
                 char *why, size_t whysize);
/* The region of a separate debug file ELF (objcopy --only-keep-debug,
   eu-strip -f), whose FILE_SIZE bytes are BUF: the .note.pbitmap
   section's copy, only its header checked.  Returns 0 or -1 with WHY.  */
int region_find_debug (Elf *elf, const unsigned char *buf,
                       uint64_t file_size, struct region *r,
                       char *why, size_t whysize);
/* Where R's program header entry lies in ELF, a file of FILE_SIZE
   bytes: *AT its offset, *LEN the bytes of one entry in the file's
   class.  -1 when the entry is too short or outside the file.  */
int region_phdr_at (Elf *elf, uint64_t file_size, const struct region *r,
                    uint64_t *at, size_t *len);
/* Writes R's place into the program header ENTRY (in the file's class
   and byte order, as ELF says) through gelf_xlatetom and gelf_xlatetof:
   what a re-sync stores.  Returns 0, or -1 when libelf cannot convert
   it.  */
int region_phdr_encode (Elf *elf, unsigned char *entry,
                        const struct region *r);

#endif /* ELFPATCH_REGION_H */
