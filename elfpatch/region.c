/* region.c: find and check the pbitmap region of an ELF file.
 *
 * Pure functions on an ELF file's bytes (in memory, or read through a
 * descriptor) and its libelf handle: they print nothing and own no
 * file.  image.c opens a file and locates its region once; identity.c
 * needs the region's place to hash a file without a build-id; run.c
 * reads a library's region through a descriptor.  All of them use these
 * functions, and none of these calls back into them.
 *
 * The region is found through its program header (section headers may be
 * stripped) and checked field by field, each failure with its own
 * message, because a user who sees "bad region" cannot tell a file linked
 * without the plugin from one damaged by a tool that moved sections.
 * Every multi-byte field of the pbitmap header is in the file's byte
 * order (EI_DATA) and is converted explicitly; libelf converts only the
 * ELF structures, and a program header entry written back goes through
 * gelf_xlatetof.
 *
 * Before the region is looked at, the file's layout is checked: the
 * program and section header tables and every PT_LOAD must lie inside
 * the file (a truncated file is refused, not filled), and the region may
 * share its bytes with no header table, no other segment than its
 * PT_LOAD and no section but its own: a fill writes every byte of the
 * region after its first 40, and must never write over code, another
 * note (the build-id the traces are bound to) or the headers.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elfpatch.h"

/* Where a region is, as its program header, a section or a PT_NOTE
   says; NOTE_SEGMENT is the number of the PT_NOTE it is a note of, or
   SIZE_MAX.  */
struct place
{
  uint64_t offset;
  uint64_t vaddr;
  uint64_t size;
  size_t note_segment;
};

/* How far a place got through region_at's checks.  */
enum place_state
{
  PLACE_UNPLACED,               /* not in a PT_LOAD at the matching address */
  PLACE_OVERLAPS,               /* shares bytes with something else */
  PLACE_BAD_HEADER,             /* its bytes are no valid region header */
  PLACE_OK
};

/* The fallback of doc/format.md: a linker that merges every note into
   one PT_NOTE (mold) leaves the region one note among the others, with no
   program header of its own.  Finds the pbitmap notes of the PT_NOTEs
   (owner and type; the header is checked later); the first goes to *OUT.
   Returns how many there are.  */
static size_t
region_in_notes (Elf *elf, uint64_t file_size, struct place *out)
{
  size_t phnum, found = 0;
  if (elf_getphdrnum (elf, &phnum) != 0)
    return 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      Elf_Data *data = pt_note_data (elf, i, file_size, &ph);
      size_t at = 0, next, name, desc;
      GElf_Nhdr nh;
      while (data != NULL && at < data->d_size
             && (next = gelf_getnote (data, at, &nh, &name, &desc)) > 0)
        {
          if (nh.n_type == PBITMAP_NT_BITMAP
              && nh.n_namesz == PBITMAP_NOTE_NAMESZ
              && memcmp ((const char *) data->d_buf + name,
                         PBITMAP_NOTE_NAME, PBITMAP_NOTE_NAMESZ) == 0
              && found++ == 0)
            {
              out->offset = ph.p_offset + at;
              out->vaddr = ph.p_vaddr + at;
              out->size = next - at;
              out->note_segment = i;
            }
          at = next;
        }
    }
  return found;
}

/* Finds the one PT_PRESENT_BITMAP program header (*INDEX is its number),
   or without one the one pbitmap note of the PT_NOTEs (*INDEX is then
   SIZE_MAX), and where it says the region is.  */
static int
region_phdr (Elf *elf, uint64_t file_size, struct place *at, size_t *index,
             char *why, size_t whysize)
{
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    {
      snprintf (why, whysize, "cannot read program headers: %s",
                elf_errmsg (-1));
      return -1;
    }

  size_t found = 0;
  *index = SIZE_MAX;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL)
        {
          snprintf (why, whysize, "cannot read program header %zu: %s", i,
                    elf_errmsg (-1));
          return -1;
        }
      if (ph.p_type == PT_PRESENT_BITMAP && found++ == 0)
        {
          *at = (struct place) { ph.p_offset, ph.p_vaddr, ph.p_filesz,
                                 SIZE_MAX };
          *index = i;
        }
    }
  if (found > 1)
    {
      snprintf (why, whysize, "more than one PT_PRESENT_BITMAP program header");
      return -1;
    }
  if (found == 1)
    return 0;
  found = region_in_notes (elf, file_size, at);
  if (found > 1)
    {
      snprintf (why, whysize, "no PT_PRESENT_BITMAP program header, and "
                "more than one pbitmap note in the PT_NOTEs");
      return -1;
    }
  if (found == 0)
    {
      snprintf (why, whysize, "no PT_PRESENT_BITMAP program header "
                "(not linked with the pbitmap plugin?)");
      return -1;
    }
  return 0;
}

/* Checks that a region at P, as WHAT says, lies in the file and in the
   file range of one PT_LOAD at the matching address.  */
static int
place_check (Elf *elf, uint64_t file_size, const char *what,
             const struct place *p, char *why, size_t whysize)
{
  if (p->size > file_size || p->offset > file_size - p->size)
    {
      snprintf (why, whysize, "%s (offset 0x%" PRIx64 ", size %" PRIu64
                ") lies outside the file (%" PRIu64 " bytes)", what,
                p->offset, p->size, file_size);
      return -1;
    }
  if (p->offset % PBITMAP_READ_ALIGN != 0)
    {
      snprintf (why, whysize, "%s offset 0x%" PRIx64 " is not a multiple "
                "of %u", what, p->offset, PBITMAP_READ_ALIGN);
      return -1;
    }
  if (p->size < PBITMAP_HEADER_SIZE)
    {
      snprintf (why, whysize, "%s is %" PRIu64 " bytes, too small for the "
                "%u-byte pbitmap header", what, p->size, PBITMAP_HEADER_SIZE);
      return -1;
    }

  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    phnum = 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr load;
      if (gelf_getphdr (elf, (int) i, &load) == NULL
          || load.p_type != PT_LOAD)
        continue;
      if (p->offset < load.p_offset
          || p->offset - load.p_offset > load.p_filesz
          || p->size > load.p_filesz - (p->offset - load.p_offset))
        continue;
      if (p->vaddr - load.p_vaddr != p->offset - load.p_offset)
        {
          snprintf (why, whysize, "%s address 0x%" PRIx64 " does not match "
                    "its offset in its PT_LOAD", what, p->vaddr);
          return -1;
        }
      return 0;
    }
  snprintf (why, whysize, "%s lies outside every PT_LOAD", what);
  return -1;
}

/* The .note.pbitmap section, allocated and of type SHT_NOTE.  */
static int
note_by_section (Elf *elf, struct place *p)
{
  size_t shstrndx;
  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    return -1;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      const char *name;
      if (gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_NOTE
          || !(sh.sh_flags & SHF_ALLOC)
          || (name = elf_strptr (elf, shstrndx, sh.sh_name)) == NULL
          || strcmp (name, PBITMAP_NOTE_SECTION) != 0)
        continue;
      p->offset = sh.sh_offset;
      p->vaddr = sh.sh_addr;
      p->size = sh.sh_size;
      p->note_segment = SIZE_MAX;
      return 0;
    }
  return -1;
}

/* Whether [A, A + ASIZE) and [B, B + BSIZE), both inside the file,
   share a byte.  */
static int
ranges_overlap (uint64_t a, uint64_t asize, uint64_t b, uint64_t bsize)
{
  return asize > 0 && bsize > 0 && a < b + bsize && b < a + asize;
}

/* Whether SIZE bytes at OFFSET lie inside a file of FILE_SIZE bytes.  */
static int
inside_file (uint64_t offset, uint64_t size, uint64_t file_size)
{
  return size <= file_size && offset <= file_size - size;
}

/* The number of program headers and of section headers the ELF header
   claims.  libelf's counts are clamped to what fits in the file, which
   would hide a table that runs past its end; they are used only for the
   extended numbering (e_phnum PN_XNUM, e_shnum 0), where the count is in
   section 0, and at least that section must be there.  */
static void
header_counts (Elf *elf, const GElf_Ehdr *ehdr, size_t *phnum, size_t *shnum)
{
  *phnum = ehdr->e_phnum;
  if (*phnum == PN_XNUM && elf_getphdrnum (elf, phnum) != 0)
    *phnum = PN_XNUM;
  *shnum = ehdr->e_shnum;
  if (*shnum == 0 && ehdr->e_shoff != 0
      && (elf_getshdrnum (elf, shnum) != 0 || *shnum == 0))
    *shnum = 1;
}

/* The KIND header table, N entries of ENTSIZE bytes at OFFSET, lies
   inside a file of FILE_SIZE bytes.  N is below 2^32 and ENTSIZE below
   2^16: the product cannot overflow.  */
static int
table_check (const char *kind, uint64_t offset, size_t n, unsigned entsize,
             uint64_t file_size, char *why, size_t whysize)
{
  if (inside_file (offset, (uint64_t) n * entsize, file_size))
    return 0;
  snprintf (why, whysize, "%s headers (offset 0x%" PRIx64 ", %zu entries of "
            "%u bytes) lie outside the file (%" PRIu64 " bytes)", kind,
            offset, n, entsize, file_size);
  return -1;
}

/* The header tables and the PT_LOADs of a file of FILE_SIZE bytes lie
   inside it, and its program headers have the class's entry size.
   libelf reads them at that size whatever e_phentsize says, and a
   re-sync writes one where e_phentsize puts it; the kernel and ld.so
   load no file with another.  */
static int
layout_check (Elf *elf, const GElf_Ehdr *ehdr, uint64_t file_size,
              char *why, size_t whysize)
{
  size_t phnum, shnum;
  header_counts (elf, ehdr, &phnum, &shnum);
  if (table_check ("program", ehdr->e_phoff, phnum, ehdr->e_phentsize,
                   file_size, why, whysize) != 0)
    return -1;
  size_t phent = gelf_fsize (elf, ELF_T_PHDR, 1, EV_CURRENT);
  if (phnum > 0 && ehdr->e_phentsize != phent)
    {
      snprintf (why, whysize, "program header entry size %u (expected %zu "
                "for the file's class)", ehdr->e_phentsize, phent);
      return -1;
    }
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) != NULL && ph.p_type == PT_LOAD
          && !inside_file (ph.p_offset, ph.p_filesz, file_size))
        {
          snprintf (why, whysize, "PT_LOAD %zu (offset 0x%" PRIx64 ", size %"
                    PRIu64 ") lies outside the file (%" PRIu64 " bytes; "
                    "truncated?)", i, (uint64_t) ph.p_offset,
                    (uint64_t) ph.p_filesz, file_size);
          return -1;
        }
    }
  if (ehdr->e_shoff != 0)
    return table_check ("section", ehdr->e_shoff, shnum, ehdr->e_shentsize,
                        file_size, why, whysize);
  return 0;
}

/* The region at P shares no byte with the ELF header, the header
   tables, a segment other than a PT_LOAD, PT_PRESENT_BITMAP and the
   PT_NOTE P is a note of, or a section other than its own (the one that
   starts where it does).  */
static int
overlap_check (Elf *elf, const GElf_Ehdr *ehdr, const char *what,
               const struct place *p, char *why, size_t whysize)
{
  size_t phnum, shnum;
  header_counts (elf, ehdr, &phnum, &shnum);
  if (ranges_overlap (p->offset, p->size, 0, ehdr->e_ehsize)
      || ranges_overlap (p->offset, p->size, ehdr->e_phoff,
                         (uint64_t) phnum * ehdr->e_phentsize)
      || (ehdr->e_shoff != 0
          && ranges_overlap (p->offset, p->size, ehdr->e_shoff,
                             (uint64_t) shnum * ehdr->e_shentsize)))
    {
      snprintf (why, whysize, "%s overlaps the ELF header or a header table",
                what);
      return -1;
    }
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) != NULL && ph.p_type != PT_LOAD
          && ph.p_type != PT_PRESENT_BITMAP && i != p->note_segment
          && ranges_overlap (p->offset, p->size, ph.p_offset,
                             ph.p_filesz))
        {
          snprintf (why, whysize, "%s overlaps program header %zu (type 0x%"
                    PRIx32 ")", what, i, ph.p_type);
          return -1;
        }
    }
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn != NULL;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) != NULL && sh.sh_type != SHT_NOBITS
          && sh.sh_offset != p->offset
          && ranges_overlap (p->offset, p->size, sh.sh_offset,
                             sh.sh_size))
        {
          snprintf (why, whysize, "%s overlaps section %zu (offset 0x%"
                    PRIx64 ", size %" PRIu64 ")", what, elf_ndxscn (scn),
                    (uint64_t) sh.sh_offset, (uint64_t) sh.sh_size);
          return -1;
        }
    }
  return 0;
}

/* The header at RAW in host byte order.  */
static void
header_decode (const unsigned char *raw, int msb, struct pbitmap_header *h)
{
  h->n_namesz = get_u32 (raw + PBITMAP_OFF_NAMESZ, msb);
  h->n_descsz = get_u32 (raw + PBITMAP_OFF_DESCSZ, msb);
  h->n_type = get_u32 (raw + PBITMAP_OFF_TYPE, msb);
  memcpy (h->n_name, raw + PBITMAP_OFF_NAME, sizeof h->n_name);
  h->magic = get_u32 (raw + PBITMAP_OFF_MAGIC, msb);
  h->version = get_u16 (raw + PBITMAP_OFF_VERSION, msb);
  h->header_size = get_u16 (raw + PBITMAP_OFF_HEADER_SIZE, msb);
  h->page_shift = get_u32 (raw + PBITMAP_OFF_PAGE_SHIFT, msb);
  h->capacity = get_u64 (raw + PBITMAP_OFF_CAPACITY, msb);
  h->pages_set = get_u64 (raw + PBITMAP_OFF_PAGES_SET, msb);
  h->runs = get_u64 (raw + PBITMAP_OFF_RUNS, msb);
  h->flags = get_u32 (raw + PBITMAP_OFF_FLAGS, msb);
  h->max_gap = get_u32 (raw + PBITMAP_OFF_MAX_GAP, msb);
  h->entry = (int64_t) get_u64 (raw + PBITMAP_OFF_ENTRY, msb);
  h->mark = (int64_t) get_u64 (raw + PBITMAP_OFF_MARK, msb);
  h->order_size = get_u32 (raw + PBITMAP_OFF_ORDER_SIZE, msb);
  h->order_len = get_u32 (raw + PBITMAP_OFF_ORDER_LEN, msb);
  h->reserved = get_u64 (raw + PBITMAP_OFF_RESERVED, msb);
}

void
region_header_decode (const unsigned char *raw, int msb,
                      struct pbitmap_header *h)
{
  header_decode (raw, msb, h);
}

/* Checks the header H of a region of SIZE bytes.  */
static int
header_check (const struct pbitmap_header *h, uint64_t size, char *why,
              size_t whysize)
{
  switch (pbitmap_header_check (h, size))
    {
    case PBITMAP_HEADER_OK:
      return 0;
    case PBITMAP_HEADER_BAD_OWNER:
      snprintf (why, whysize, "bad note header: owner is not \"%s\"",
                PBITMAP_NOTE_NAME);
      break;
    case PBITMAP_HEADER_BAD_TYPE:
      snprintf (why, whysize, "bad note header: type %" PRIu32
                " (expected %u)", h->n_type, PBITMAP_NT_BITMAP);
      break;
    case PBITMAP_HEADER_BAD_NOTE_SIZE:
      snprintf (why, whysize, "note size %" PRIu64 " does not match the "
                "region size %" PRIu64, (uint64_t) h->n_descsz + 20, size);
      break;
    case PBITMAP_HEADER_BAD_MAGIC:
      snprintf (why, whysize, "bad pbitmap magic 0x%08" PRIx32
                " (expected 0x%08x)", h->magic, PBITMAP_MAGIC);
      break;
    case PBITMAP_HEADER_BAD_VERSION:
      snprintf (why, whysize, "unsupported pbitmap version %u (this elfpatch "
                "reads %u to %u)", h->version, PBITMAP_VERSION_MIN,
                PBITMAP_VERSION);
      break;
    case PBITMAP_HEADER_BAD_HEADER_SIZE:
      snprintf (why, whysize, "bad pbitmap header size %u (expected %u)",
                h->header_size, PBITMAP_HEADER_SIZE);
      break;
    case PBITMAP_HEADER_BAD_PAGE_SHIFT:
      snprintf (why, whysize, "unsupported page shift %" PRIu32
                " (expected %u)", h->page_shift, PBITMAP_PAGE_SHIFT);
      break;
    case PBITMAP_HEADER_BAD_CAPACITY:
      snprintf (why, whysize, "capacity %" PRIu64 " does not fit the region "
                "(%" PRIu64 " bytes)", h->capacity, size);
      break;
    case PBITMAP_HEADER_BAD_ORDER:
      if (h->order_size != pbitmap_order_blocks (h->capacity))
        snprintf (why, whysize, "read order size %" PRIu32 " (expected %"
                  PRIu64 " for capacity %" PRIu64 ")", h->order_size,
                  pbitmap_order_blocks (h->capacity), h->capacity);
      else if (h->order_len > h->order_size)
        snprintf (why, whysize, "read order length %" PRIu32 " is more "
                  "than its size %" PRIu32, h->order_len, h->order_size);
      else
        snprintf (why, whysize, "read order table (%" PRIu32 " entries) "
                  "does not fit the region (%" PRIu64 " bytes)", h->order_size,
                  size);
      break;
    }
  return -1;
}

/* Reads and checks the region at P (WHAT names where P came from) into
   R; *STATE says how far it got.  A region that overlaps anything else is
   refused before its bytes are read.  */
static int
region_at (Elf *elf, const GElf_Ehdr *ehdr, const unsigned char *buf,
           int fd, uint64_t file_size, const char *what,
           const struct place *p, struct region *r, enum place_state *state,
           char *why, size_t whysize)
{
  *state = PLACE_UNPLACED;
  if (place_check (elf, file_size, what, p, why, whysize) != 0)
    return -1;
  *state = PLACE_OVERLAPS;
  if (overlap_check (elf, ehdr, what, p, why, whysize) != 0)
    return -1;
  *state = PLACE_BAD_HEADER;
  unsigned char hdr[PBITMAP_HEADER_SIZE];
  if (read_at (buf, fd, p->offset, hdr, sizeof hdr) != 0)
    {
      snprintf (why, whysize, "cannot read the region: %s",
                strerror (errno));
      return -1;
    }
  r->offset = p->offset;
  r->vaddr = p->vaddr;
  r->size = p->size;
  header_decode (hdr, ehdr->e_ident[EI_DATA] == ELFDATA2MSB, &r->hdr);
  if (header_check (&r->hdr, p->size, why, whysize) != 0)
    return -1;
  *state = PLACE_OK;
  return 0;
}

/* The region is found through its program header, and the note through
   the section headers.  Tools that move sections (patchelf, which needs
   section headers) move the note and update the section header, but
   leave a program header of a type they do not know pointing at the old
   place: when the note is found elsewhere and is a valid region there,
   the program header is stale.  A note that is no valid region is
   ignored, and the program header is all there is.  */
int
region_find (Elf *elf, const unsigned char *buf, int fd, uint64_t file_size,
             struct region *r, char *why, size_t whysize)
{
  memset (r, 0, sizeof *r);
  GElf_Ehdr ehdr;
  if (gelf_getehdr (elf, &ehdr) == NULL)
    {
      snprintf (why, whysize, "cannot read the ELF header: %s",
                elf_errmsg (-1));
      return -1;
    }
  struct place at_phdr;
  size_t index;
  if (layout_check (elf, &ehdr, file_size, why, whysize) != 0
      || region_phdr (elf, file_size, &at_phdr, &index, why, whysize) != 0)
    return -1;
  enum place_state state;
  int ok = region_at (elf, &ehdr, buf, fd, file_size, "PT_PRESENT_BITMAP",
                      &at_phdr, r, &state, why, whysize) == 0;
  int placed = state != PLACE_UNPLACED;
  r->phdr_index = index;
  r->phdr_offset = at_phdr.offset;
  r->phdr_vaddr = at_phdr.vaddr;
  r->phdr_placed = placed;
  /* A region found as a note, without a program header of its own, has
     no header to be stale.  */
  if (index == SIZE_MAX)
    return ok ? 0 : -1;

  /* The note must pass every check the re-synced header will get.  */
  struct place note;
  struct region found;
  char note_why[256];
  enum place_state note_state;
  if (note_by_section (elf, &note) != 0
      || (note.offset == at_phdr.offset && note.vaddr == at_phdr.vaddr
          && note.size == at_phdr.size))
    return ok ? 0 : -1;
  if (region_at (elf, &ehdr, buf, fd, file_size, "the note", &note, &found,
                 &note_state, note_why, sizeof note_why) != 0)
    {
      size_t len = strlen (why);
      if (!ok && len < whysize)
        snprintf (why + len, whysize - len, "; the %s section (offset 0x%"
                  PRIx64 ") is no valid region either: %s",
                  PBITMAP_NOTE_SECTION, note.offset, note_why);
      return ok ? 0 : -1;
    }

  char phdr_why[256];
  if (state != PLACE_BAD_HEADER && !ok)
    snprintf (phdr_why, sizeof phdr_why, "%s", why);
  else if (!ok)
    snprintf (phdr_why, sizeof phdr_why, "PT_PRESENT_BITMAP (offset 0x%"
              PRIx64 ") does not hold the note: %s", at_phdr.offset, why);
  else
    snprintf (phdr_why, sizeof phdr_why, "PT_PRESENT_BITMAP (offset 0x%"
              PRIx64 ") is not the note", at_phdr.offset);
  snprintf (why, whysize, "%s; the note is at offset 0x%" PRIx64 " (the %s "
            "section), elfpatch --resync points the header at it", phdr_why,
            note.offset, PBITMAP_NOTE_SECTION);
  found.stale = 1;
  found.phdr_index = index;
  found.phdr_offset = at_phdr.offset;
  found.phdr_vaddr = at_phdr.vaddr;
  found.phdr_placed = placed;
  *r = found;
  return REGION_STALE;
}

/* In a separate debug file the PT_LOADs describe the program, not the
   file (objcopy keeps the region's place, eu-strip moves the section
   without updating the program header): the region is the
   .note.pbitmap section's copy, and only its header is checked.  */
int
region_find_debug (Elf *elf, const unsigned char *buf, uint64_t file_size,
                   struct region *r, char *why, size_t whysize)
{
  struct place p;
  memset (r, 0, sizeof *r);
  if (note_by_section (elf, &p) != 0)
    {
      snprintf (why, whysize, "a separate debug file without a %s section",
                PBITMAP_NOTE_SECTION);
      return -1;
    }
  if (p.size < PBITMAP_HEADER_SIZE || p.size > file_size
      || p.offset > file_size - p.size)
    {
      snprintf (why, whysize, "the %s section (offset 0x%" PRIx64 ", size %"
                PRIu64 ") is not a region in the file", PBITMAP_NOTE_SECTION,
                p.offset, p.size);
      return -1;
    }
  r->offset = p.offset;
  r->vaddr = p.vaddr;
  r->size = p.size;
  header_decode (buf + p.offset, elf_msb (elf), &r->hdr);
  return header_check (&r->hdr, p.size, why, whysize);
}

int
region_phdr_at (Elf *elf, uint64_t file_size, const struct region *r,
                uint64_t *at, size_t *len)
{
  GElf_Ehdr ehdr;
  if (gelf_getehdr (elf, &ehdr) == NULL)
    return -1;
  *len = gelf_fsize (elf, ELF_T_PHDR, 1, EV_CURRENT);
  *at = ehdr.e_phoff + (uint64_t) r->phdr_index * ehdr.e_phentsize;
  if (*len == 0 || ehdr.e_phentsize < *len
      || !inside_file (*at, *len, file_size))
    return -1;
  return 0;
}

/* A program header entry in memory, of either class.  */
union phdr_mem
{
  Elf32_Phdr p32;
  Elf64_Phdr p64;
};

/* The Elf_Data gelf_xlatetom and gelf_xlatetof convert ENTRY with.  */
static void
phdr_data (Elf *elf, unsigned char *entry, union phdr_mem *mem,
           Elf_Data *file, Elf_Data *memory)
{
  size_t len = gelf_fsize (elf, ELF_T_PHDR, 1, EV_CURRENT);
  *file = (Elf_Data) { .d_buf = entry, .d_type = ELF_T_PHDR,
                       .d_size = len, .d_version = EV_CURRENT };
  *memory = (Elf_Data) { .d_buf = mem, .d_type = ELF_T_PHDR,
                         .d_size = gelf_getclass (elf) == ELFCLASS32
                                   ? sizeof mem->p32 : sizeof mem->p64,
                         .d_version = EV_CURRENT };
}

/* The fields a re-sync rewrites: offset, address (virtual and physical),
   size (in the file and in memory), and the alignment when the old one
   does not divide the new offset (the note is at least 8-aligned).  */
#define PHDR_RESYNC(ph, r)                                                    \
  do                                                                          \
    {                                                                         \
      (ph).p_offset = (r)->offset;                                            \
      (ph).p_vaddr = (ph).p_paddr = (r)->vaddr;                               \
      (ph).p_filesz = (ph).p_memsz = (r)->size;                               \
      if ((ph).p_align > PBITMAP_READ_ALIGN && (r)->offset % (ph).p_align != 0) \
        (ph).p_align = PBITMAP_READ_ALIGN;                                    \
    }                                                                         \
  while (0)

int
region_phdr_encode (Elf *elf, unsigned char *entry, const struct region *r)
{
  GElf_Ehdr ehdr;
  union phdr_mem mem;
  Elf_Data file, memory;
  if (gelf_getehdr (elf, &ehdr) == NULL)
    return -1;
  unsigned encoding = ehdr.e_ident[EI_DATA];
  phdr_data (elf, entry, &mem, &file, &memory);
  if (gelf_xlatetom (elf, &memory, &file, encoding) == NULL)
    return -1;
  if (gelf_getclass (elf) == ELFCLASS32)
    PHDR_RESYNC (mem.p32, r);
  else
    PHDR_RESYNC (mem.p64, r);
  phdr_data (elf, entry, &mem, &file, &memory);
  return gelf_xlatetof (elf, &file, &memory, encoding) == NULL ? -1 : 0;
}
