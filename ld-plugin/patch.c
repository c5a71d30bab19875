/* patch.c: give the linked region its PT_PRESENT_BITMAP program header.
 *
 * By the time the cleanup hook runs, the linker has written and closed
 * the output.  ld.bfd has given .note.pbitmap a PT_NOTE of its own (the
 * note is the only one aligned 16), so turning that program header into
 * PT_PRESENT_BITMAP is a change of one field; nothing moves.  The
 * section's sh_addralign goes back to 4 at the same time: the note is
 * laid out like any 4-aligned note (12-byte header, name padded to 4), and
 * readers such as readelf -n warn about a note section aligned 16.
 *
 * The PT_NOTE is only ours when it starts at the note and covers exactly
 * the region; mold puts all notes under one PT_NOTE, and retyping that
 * would hide the others from the loader and the debuggers.  No other
 * PT_NOTE may overlap the region either.  gold gives the region its own
 * PT_NOTE (it groups notes by alignment), but the PT_NOTE of its 4-aligned
 * notes runs from the first to the last of them and can span the region
 * and the padding before it; then that PT_NOTE is cut in two around the
 * region, the second half going into a spare program header that the
 * plugin made gold create (split_note).  pbitmap-ld, around mold, asks
 * for the fallback of doc/format.md instead: a region that is one note of
 * a PT_NOTE holding all notes stays there, with no program header of its
 * own, and the runtime and elfpatch find it by its owner and type
 * (keep_in_shared_note).  When the region cannot have a program header
 * of its own (or that fallback), or is not where the runtime can find it,
 * the output is removed and the link fails with a message saying why:
 * a program that silently lacks its bitmap is worse than no program.
 *
 * A static executable (one without PT_INTERP) also gets a new entry
 * point, unless hook=preinit: the runtime's stub, which prefetches before
 * the C library's start-up code and then jumps to the original entry.
 * The stub reads that original entry from the entry slot in the runtime's
 * own read-only data (PBITMAP_SLOT_*, include/pbitmap-format.h), never
 * from the region, so that a damaged region can never break the program.
 * Only its first two words matter here: the stub's address, which the
 * linker set, and the original entry, set here (0 before), both relative
 * to the slot, so a static PIE needs no relocation for them (its stub
 * runs before it relocates itself).  The slot is found
 * through the region's entry field, which the linker set to the slot's
 * address minus the field's own (reserve.c).  If anything there is not as
 * expected the entry point stays, with a warning: the runtime's
 * .preinit_array entry still runs the prefetch, only later.  In a dynamic
 * executable the entry point is never changed: the dynamic linker runs
 * .preinit_array before any library's initializer, the entry point only
 * after them all, so .preinit_array is the earlier hook there.
 *
 * libelf opens the output ELF_C_RDWR with ELF_F_LAYOUT, so elf_update
 * writes back only the headers and data changed here, converted for the
 * file's class and byte order, and leaves every offset as the linker chose
 * it.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "pbitmap-format.h"
#include "plugin.h"

#define NOTE_ALIGN 4

/* The part of the entry slot read and written here: its first two words. */
#define SLOT_USED (PBITMAP_SLOT_START + 8)

/* Removes the output that must not be used, then fails the link with
 * "PATH: " and the message.  The removal comes first because ld.bfd does
 * not return from a fatal message. */
static void __attribute__ ((format (printf, 2, 3)))
refuse_output (const char *path, const char *fmt, ...)
{
  char text[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);
  unlink (path);
  plugin_message (LDPL_FATAL, "%s: %s", path, text);
}

struct region
{
  Elf_Scn *scn;
  GElf_Shdr shdr;
  size_t phndx;
  GElf_Phdr phdr;               /* the region's own, or as one would be */
  bool in_shared_note;          /* the region stays in a shared PT_NOTE */
};

/* Opens PATH for patching, or returns -1 with *RESULT saying why not:
 * after a failed link the output is missing, or exists without the ELF
 * header that ld.bfd writes last. */
static int
open_output (const char *path, enum patch_result *result)
{
  unsigned char magic[SELFMAG];
  struct stat st;
  int fd = open (path, O_RDWR | O_CLOEXEC);

  *result = PATCH_NO_OUTPUT;
  if (fd < 0)
    {
      if (errno != ENOENT)
        {
          plugin_message (LDPL_FATAL, "%s: cannot open the output to patch "
                          "it: %s", path, strerror (errno));
          *result = PATCH_FAILED;
        }
      return -1;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)
      || pread (fd, magic, SELFMAG, 0) != SELFMAG
      || memcmp (magic, ELFMAG, SELFMAG) != 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static bool
find_section (Elf *elf, struct region *r)
{
  size_t shstrndx;

  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    return false;
  r->scn = NULL;
  while ((r->scn = elf_nextscn (elf, r->scn)) != NULL)
    {
      const char *name;

      if (gelf_getshdr (r->scn, &r->shdr) == NULL)
        return false;
      name = elf_strptr (elf, shstrndx, r->shdr.sh_name);
      if (r->shdr.sh_type == SHT_NOTE && name != NULL
          && strcmp (name, PBITMAP_NOTE_SECTION) == 0)
        return true;
    }
  return false;
}

/* Whether the file holds a pbitmap note header at OFFSET describing a
 * region of SIZE bytes. */
static bool
is_region_note (Elf *elf, GElf_Off offset, GElf_Xword size)
{
  Elf_Data *nhdr = elf_getdata_rawchunk (elf, offset, sizeof (GElf_Nhdr),
                                         ELF_T_NHDR);
  Elf_Data *name = elf_getdata_rawchunk (elf, offset + sizeof (GElf_Nhdr),
                                         PBITMAP_NOTE_NAMESZ, ELF_T_BYTE);
  const GElf_Nhdr *n;

  if (nhdr == NULL || name == NULL)
    return false;
  n = nhdr->d_buf;
  return (n->n_namesz == PBITMAP_NOTE_NAMESZ
          && n->n_type == PBITMAP_NT_BITMAP
          && (GElf_Xword) n->n_descsz + 20 == size
          && memcmp (name->d_buf, PBITMAP_NOTE_NAME,
                     PBITMAP_NOTE_NAMESZ) == 0);
}

/* The PT_NOTEs of the output as they relate to the region: its own, the
 * empty one gold made for PBITMAP_SPARE_SECTION, and how many others
 * overlap the region (OTHER is the last of them). */
struct notes
{
  size_t phnum;
  size_t own, spare, other;     /* phnum when there is none */
  unsigned overlapping;
  bool merged;                  /* a PT_NOTE holds the region and more */
  bool loaded;                  /* the region is inside a PT_LOAD */
};

static GElf_Off
spare_offset (Elf *elf)
{
  size_t shstrndx;
  Elf_Scn *scn = NULL;

  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    return (GElf_Off) -1;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;
      const char *name;

      if (gelf_getshdr (scn, &shdr) == NULL)
        break;
      name = elf_strptr (elf, shstrndx, shdr.sh_name);
      if (shdr.sh_type == SHT_NOTE && shdr.sh_size == 0 && name != NULL
          && strcmp (name, PBITMAP_SPARE_SECTION) == 0)
        return shdr.sh_offset;
    }
  return (GElf_Off) -1;
}

static bool
survey_notes (Elf *elf, const struct region *r, struct notes *n)
{
  GElf_Off start = r->shdr.sh_offset, end = start + r->shdr.sh_size;
  GElf_Off spare = spare_offset (elf);

  if (elf_getphdrnum (elf, &n->phnum) != 0)
    return false;
  n->own = n->spare = n->other = n->phnum;
  n->overlapping = 0;
  n->merged = n->loaded = false;
  for (size_t i = 0; i < n->phnum; i++)
    {
      GElf_Phdr phdr;

      if (gelf_getphdr (elf, i, &phdr) == NULL)
        return false;
      if (phdr.p_type == PT_LOAD && phdr.p_offset <= start
          && end <= phdr.p_offset + phdr.p_filesz)
        n->loaded = true;
      if (phdr.p_type != PT_NOTE)
        continue;
      if (phdr.p_filesz == 0 && phdr.p_offset == spare)
        n->spare = i;
      else if (phdr.p_offset == start && phdr.p_filesz == r->shdr.sh_size
               && n->own == n->phnum)
        n->own = i;
      else if (phdr.p_offset < end && start < phdr.p_offset + phdr.p_filesz)
        {
          n->overlapping++;
          n->other = i;
          if (phdr.p_offset <= start && end <= phdr.p_offset + phdr.p_filesz)
            n->merged = true;
        }
    }
  return true;
}

/* Whether the file bytes [OFFSET, OFFSET + SIZE) are a well-formed
 * sequence of notes laid out for ALIGN. */
static bool
is_note_sequence (Elf *elf, GElf_Off offset, GElf_Xword size,
                  GElf_Xword align)
{
  Elf_Data *data = elf_getdata_rawchunk (elf, offset, size,
                                         align == 8 ? ELF_T_NHDR8
                                         : ELF_T_NHDR);
  size_t at = 0, name, desc;
  GElf_Nhdr nhdr;

  if (data == NULL)
    return false;
  while (at < size)
    {
      size_t next = gelf_getnote (data, at, &nhdr, &name, &desc);

      if (next == 0)
        return false;
      at = next;
    }
  return at == size;
}

/* gold gives each alignment of note one PT_NOTE, from its first note of
 * that alignment to its last; the region (aligned 16) can fall between
 * two 4-aligned notes, so that their PT_NOTE spans it, padding included.
 * That PT_NOTE is cut in two here: the notes before the region keep it,
 * the notes after it get the spare program header, which gold made for
 * the empty PBITMAP_SPARE_SECTION.  Nothing moves.  Returns NULL, or why
 * it cannot be done. */
static const char *
split_note (Elf *elf, const struct region *r, struct notes *n)
{
  GElf_Off start = r->shdr.sh_offset, end = start + r->shdr.sh_size;
  GElf_Off before = 0, after = (GElf_Off) -1, last;
  GElf_Phdr other, spare;
  Elf_Scn *scn = NULL;

  if (n->overlapping > 1 || !n->merged || n->spare == n->phnum
      || gelf_getphdr (elf, n->other, &other) == NULL
      || gelf_getphdr (elf, n->spare, &spare) == NULL)
    return "another PT_NOTE spans it and there is no spare program header";
  last = other.p_offset + other.p_filesz;
  before = other.p_offset;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;

      if (gelf_getshdr (scn, &shdr) == NULL)
        return "the section headers cannot be read";
      if (shdr.sh_type != SHT_NOTE || !(shdr.sh_flags & SHF_ALLOC)
          || shdr.sh_size == 0 || shdr.sh_offset < other.p_offset
          || shdr.sh_offset + shdr.sh_size > last)
        continue;
      if (shdr.sh_offset + shdr.sh_size <= start
          && shdr.sh_offset + shdr.sh_size > before)
        before = shdr.sh_offset + shdr.sh_size;
      else if (shdr.sh_offset >= end && shdr.sh_offset < after)
        after = shdr.sh_offset;
    }
  if (after == (GElf_Off) -1)
    after = last;
  if (!is_note_sequence (elf, other.p_offset, before - other.p_offset,
                         other.p_align)
      || !is_note_sequence (elf, after, last - after, other.p_align))
    return ("another PT_NOTE spans it and the notes around it are not "
            "whole notes");

  spare = other;
  spare.p_offset = after;
  spare.p_vaddr = other.p_vaddr + (after - other.p_offset);
  spare.p_paddr = other.p_paddr + (after - other.p_offset);
  spare.p_filesz = spare.p_memsz = last - after;
  other.p_filesz = other.p_memsz = before - other.p_offset;
  /* An empty side needs no program header: PT_NULL is ignored by all. */
  if (other.p_filesz == 0)
    other.p_type = PT_NULL;
  if (spare.p_filesz == 0)
    spare.p_type = PT_NULL;
  if (!gelf_update_phdr (elf, n->other, &other)
      || !gelf_update_phdr (elf, n->spare, &spare))
    return "the program headers cannot be updated";
  n->spare = n->phnum;
  return NULL;
}

/* Whether the region R is one of the notes of the PT_NOTE OTHER, which
 * holds more: walking that PT_NOTE's notes from its start reaches the
 * region's first byte, and everything up to the PT_NOTE's end is notes. */
static bool
note_among_notes (Elf *elf, const struct region *r, size_t other)
{
  GElf_Phdr phdr;
  GElf_Off start = r->shdr.sh_offset;

  return (gelf_getphdr (elf, other, &phdr) != NULL
          && is_note_sequence (elf, phdr.p_offset, start - phdr.p_offset,
                               phdr.p_align)
          && is_note_sequence (elf, start, phdr.p_offset + phdr.p_filesz
                               - start, phdr.p_align));
}

/* The fallback for a linker that merges every note into one PT_NOTE
 * (mold): the region stays one note among the others, and the runtime
 * and elfpatch find it there by its owner and type (doc/format.md).  R's
 * program header is then the one a PT_PRESENT_BITMAP would be. */
static const char *
keep_in_shared_note (Elf *elf, struct region *r, const struct notes *n)
{
  if (n->overlapping != 1 || !n->merged || !note_among_notes (elf, r,
                                                              n->other))
    return ("its PT_NOTE also covers other notes and the region is not "
            "one of them");
  if (!n->loaded)
    return "it is not inside a loadable segment";
  if (!is_region_note (elf, r->shdr.sh_offset, r->shdr.sh_size))
    return "its note header is not a pbitmap region header";
  if (gelf_getphdr (elf, n->other, &r->phdr) == NULL)
    return "the program headers cannot be read";
  r->phdr.p_type = PT_PRESENT_BITMAP;
  r->phdr.p_offset = r->shdr.sh_offset;
  r->phdr.p_vaddr = r->phdr.p_paddr = r->shdr.sh_addr;
  r->phdr.p_filesz = r->phdr.p_memsz = r->shdr.sh_size;
  r->phndx = n->other;
  r->in_shared_note = true;
  return NULL;
}

/* Finds the PT_NOTE that holds the section and nothing else, making sure
 * no other PT_NOTE overlaps it; or, with SHARED_NOTE, accepts a region
 * that is one note of a PT_NOTE holding more.  Returns NULL, or the
 * reason there is none. */
static const char *
find_program_header (Elf *elf, struct region *r, bool shared_note)
{
  struct notes n;
  const char *why;

  r->in_shared_note = false;
  if (!survey_notes (elf, r, &n))
    return "the program headers cannot be read";
  if (n.own == n.phnum && n.merged && shared_note)
    return keep_in_shared_note (elf, r, &n);
  if (n.own == n.phnum)
    return (n.merged ? "its PT_NOTE also covers other notes (the linker "
            "merged them); link through pbitmap-ld to keep it there"
            : "no PT_NOTE program header covers it");
  if (gelf_getphdr (elf, n.own, &r->phdr) == NULL)
    return "the program headers cannot be read";
  r->phndx = n.own;
  if (!is_region_note (elf, r->phdr.p_offset, r->phdr.p_filesz))
    return "its note header is not a pbitmap region header";
  if (!n.loaded)
    return "it is not inside a loadable segment";
  if (n.overlapping != 0 && (why = split_note (elf, r, &n)) != NULL)
    return why;
  /* gold's spare, when it was not needed, is an empty PT_NOTE: make it
   * the header everyone ignores. */
  if (n.spare != n.phnum)
    {
      GElf_Phdr spare;

      if (gelf_getphdr (elf, n.spare, &spare) == NULL)
        return "the program headers cannot be read";
      spare.p_type = PT_NULL;
      if (!gelf_update_phdr (elf, n.spare, &spare))
        return "the program headers cannot be updated";
    }
  return NULL;
}

/* File pages up to the end of the last loadable byte. */
static uint64_t
count_image_pages (Elf *elf)
{
  uint64_t end = 0;
  size_t phnum;

  if (elf_getphdrnum (elf, &phnum) != 0)
    return 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr phdr;

      if (gelf_getphdr (elf, i, &phdr) != NULL && phdr.p_type == PT_LOAD
          && phdr.p_offset + phdr.p_filesz > end)
        end = phdr.p_offset + phdr.p_filesz;
    }
  return (end + PBITMAP_PAGE_SIZE - 1) / PBITMAP_PAGE_SIZE;
}

static bool
write_headers (Elf *elf, struct region *r)
{
  r->phdr.p_type = PT_PRESENT_BITMAP;
  r->shdr.sh_addralign = NOTE_ALIGN;
  return ((r->in_shared_note || gelf_update_phdr (elf, r->phndx, &r->phdr))
          && gelf_update_shdr (r->scn, &r->shdr)
          && elf_update (elf, ELF_C_WRITE) >= 0);
}

/* The entry point.  */

static bool
has_program_header (Elf *elf, GElf_Word type)
{
  size_t phnum;

  if (elf_getphdrnum (elf, &phnum) != 0)
    return false;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr phdr;

      if (gelf_getphdr (elf, i, &phdr) != NULL && phdr.p_type == type)
        return true;
    }
  return false;
}

/* Whether [VADDR, VADDR + SIZE) lies in the file bytes of a PT_LOAD with
 * all of FLAGS. */
static bool
loaded (Elf *elf, GElf_Addr vaddr, GElf_Xword size, GElf_Word flags)
{
  size_t phnum;

  if (elf_getphdrnum (elf, &phnum) != 0)
    return false;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr phdr;

      if (gelf_getphdr (elf, i, &phdr) != NULL && phdr.p_type == PT_LOAD
          && (phdr.p_flags & flags) == flags && phdr.p_vaddr <= vaddr
          && size <= phdr.p_filesz
          && vaddr - phdr.p_vaddr <= phdr.p_filesz - size)
        return true;
    }
  return false;
}

/* The data of the allocated section that holds [VADDR, VADDR + SIZE) in
 * the file, and the offset of VADDR in it. */
static Elf_Data *
data_at (Elf *elf, GElf_Addr vaddr, GElf_Xword size, size_t *offset)
{
  Elf_Scn *scn = NULL;

  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;
      Elf_Data *data;

      if (gelf_getshdr (scn, &shdr) == NULL || !(shdr.sh_flags & SHF_ALLOC)
          || shdr.sh_type != SHT_PROGBITS || shdr.sh_addr > vaddr
          || size > shdr.sh_size || vaddr - shdr.sh_addr > shdr.sh_size - size)
        continue;
      data = elf_getdata (scn, NULL);
      if (data == NULL || data->d_size != shdr.sh_size)
        return NULL;
      *offset = vaddr - shdr.sh_addr;
      return data;
    }
  return NULL;
}

/* Converts one 64-bit value between the file's byte order and ours. */
static bool
xlate64 (Elf *elf, void *to, const void *from, bool to_memory)
{
  GElf_Ehdr ehdr;
  Elf_Data dst = { .d_buf = to, .d_type = ELF_T_SXWORD, .d_size = 8,
                   .d_version = EV_CURRENT };
  Elf_Data src = { .d_buf = (void *) from, .d_type = ELF_T_SXWORD,
                   .d_size = 8, .d_version = EV_CURRENT };

  if (gelf_getehdr (elf, &ehdr) == NULL)
    return false;
  return (to_memory
          ? gelf_xlatetom (elf, &dst, &src, ehdr.e_ident[EI_DATA])
          : gelf_xlatetof (elf, &dst, &src, ehdr.e_ident[EI_DATA])) != NULL;
}

/* Points e_entry at the runtime's stub and stores the original entry in
 * its slot, found through the region R.  Returns false, changing nothing,
 * when the slot or the stub is not where it must be.  The slot is filled
 * before e_entry is moved, never after: if moving e_entry then fails, a
 * filled slot that no entry point uses is harmless, while a stub entered
 * with an empty slot would jump to itself. */
static bool
redirect_entry (Elf *elf, const struct region *r)
{
  GElf_Addr field = r->phdr.p_vaddr + PBITMAP_OFF_ENTRY;
  Elf_Data *chunk = elf_getdata_rawchunk (elf, r->phdr.p_offset
                                          + PBITMAP_OFF_ENTRY, 8, ELF_T_BYTE);
  int64_t distance, stub, start;
  GElf_Addr slot;
  GElf_Ehdr ehdr;
  Elf_Data *data;
  size_t at;
  char *bytes;

  if (chunk == NULL || !xlate64 (elf, &distance, chunk->d_buf, true)
      || distance == 0 || gelf_getehdr (elf, &ehdr) == NULL)
    return false;
  slot = field + (GElf_Addr) distance;
  if (!loaded (elf, slot, SLOT_USED, PF_R)
      || (data = data_at (elf, slot, SLOT_USED, &at)) == NULL)
    return false;
  bytes = (char *) data->d_buf + at;
  if (!xlate64 (elf, &stub, bytes + PBITMAP_SLOT_STUB, true)
      || !xlate64 (elf, &start, bytes + PBITMAP_SLOT_START, true)
      || start != 0 || !loaded (elf, slot + (GElf_Addr) stub, 1, PF_X)
      || slot + (GElf_Addr) stub == ehdr.e_entry)
    return false;

  start = (int64_t) (ehdr.e_entry - slot);
  ehdr.e_entry = slot + (GElf_Addr) stub;
  return (xlate64 (elf, bytes + PBITMAP_SLOT_START, &start, false)
          && elf_flagdata (data, ELF_C_SET, ELF_F_DIRTY) != 0
          && gelf_update_ehdr (elf, &ehdr));
}

static enum patch_result
patch_elf (const char *path, Elf *elf, bool want_entry, bool shared_note,
           struct patch_outcome *out)
{
  struct region r;
  const char *why;

  if (elf_kind (elf) != ELF_K_ELF)
    {
      refuse_output (path, "cannot read the output: %s", elf_errmsg (-1));
      return PATCH_FAILED;
    }
  elf_flagelf (elf, ELF_C_SET, ELF_F_LAYOUT);
  if (!find_section (elf, &r))
    {
      refuse_output (path, "the output has no %s section (did a linker "
                     "script discard it?)", PBITMAP_NOTE_SECTION);
      return PATCH_FAILED;
    }
  why = find_program_header (elf, &r, shared_note);
  if (why != NULL)
    {
      refuse_output (path, "cannot give %s its own program header: %s",
                     PBITMAP_NOTE_SECTION, why);
      return PATCH_FAILED;
    }
  out->image_pages = count_image_pages (elf);
  out->in_shared_note = r.in_shared_note;
  out->entry = ENTRY_KEPT;
  if (want_entry && !has_program_header (elf, PT_INTERP))
    out->entry = (redirect_entry (elf, &r) ? ENTRY_REDIRECTED
                  : ENTRY_NOT_FOUND);
  if (!write_headers (elf, &r))
    {
      refuse_output (path, "cannot write the program header: %s",
                     elf_errmsg (-1));
      return PATCH_FAILED;
    }
  return PATCH_DONE;
}

enum patch_result
patch_output (const char *path, bool redirect_entry, bool shared_note,
              struct patch_outcome *out)
{
  enum patch_result result;
  int fd = open_output (path, &result);
  Elf *elf;

  if (fd < 0)
    return result;
  elf = elf_begin (fd, ELF_C_RDWR, NULL);
  if (elf != NULL)
    result = patch_elf (path, elf, redirect_entry, shared_note, out);
  else
    {
      refuse_output (path, "cannot read the output: %s", elf_errmsg (-1));
      result = PATCH_FAILED;
    }
  elf_end (elf);
  if (close (fd) != 0 && result == PATCH_DONE)
    {
      refuse_output (path, "%s", strerror (errno));
      result = PATCH_FAILED;
    }
  return result;
}
