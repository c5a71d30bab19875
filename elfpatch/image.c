/* image.c: open an ELF file and find and check its pbitmap region.
 *
 * The whole file is read into memory and handed to libelf with
 * elf_memory, which only reads it; the region's bytes are then patched in
 * that same buffer and update.c writes the buffer out.  Reading once
 * gives one consistent snapshot: what is checked is what is written.
 *
 * The region is found through its program header (section headers may be
 * stripped) and checked field by field, each failure with its own
 * message, because a user who sees "bad region" cannot tell a file linked
 * without the plugin from one damaged by a tool that moved sections.
 * Every multi-byte field is in the file's byte order (EI_DATA) and is
 * converted explicitly; libelf converts only the ELF structures.
 *
 * Before the region is looked at, the file's layout is checked: the
 * program and section header tables and every PT_LOAD must lie inside
 * the file (a truncated file is refused, not filled), and the region may
 * share its bytes with no header table, no other segment than its
 * PT_LOAD and no section but its own: a fill writes every byte of the
 * region after its first 40, and must never write over code, another
 * note (the build-id the traces are bound to) or the headers.
 *
 * An image is opened for an update with an exclusive flock (see
 * update.c), and carries the file's identity (identity.c).
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "elfpatch.h"

/* The fallback of doc/format.md: a linker that merges every note into
   one PT_NOTE (mold) leaves the region one note among the others, with no
   program header of its own.  Finds the pbitmap notes of the PT_NOTEs
   (owner and type; the header is checked later); the first, as a
   PT_PRESENT_BITMAP would describe it, goes to *OUT and the number of its
   PT_NOTE to *HOLDER.  Returns how many there are.  */
static size_t
region_in_notes (Elf *elf, uint64_t file_size, size_t phnum, GElf_Phdr *out,
                 size_t *holder)
{
  size_t found = 0;
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
              *out = ph;
              out->p_type = PT_PRESENT_BITMAP;
              out->p_offset += at;
              out->p_vaddr += at;
              out->p_paddr += at;
              out->p_filesz = out->p_memsz = next - at;
              *holder = i;
            }
          at = next;
        }
    }
  return found;
}

/* Finds the one PT_PRESENT_BITMAP program header, or without one the one
   pbitmap note of the PT_NOTEs (*HOLDER is then its PT_NOTE's number,
   otherwise the number of program headers), and the PT_LOAD that holds
   it.  */
static int
region_phdr (Elf *elf, uint64_t file_size, GElf_Phdr *out, size_t *holder,
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
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL)
        {
          snprintf (why, whysize, "cannot read program header %zu: %s", i,
                    elf_errmsg (-1));
          return -1;
        }
      if (ph.p_type == PT_PRESENT_BITMAP)
        {
          if (found++ == 0)
            *out = ph;
        }
    }
  *holder = phnum;
  if (found == 0
      && region_in_notes (elf, file_size, phnum, out, holder) > 1)
    {
      snprintf (why, whysize, "no PT_PRESENT_BITMAP program header, and "
                "more than one pbitmap note in the PT_NOTEs");
      return -1;
    }
  if (found == 0 && *holder == phnum)
    {
      snprintf (why, whysize, "no PT_PRESENT_BITMAP program header "
                "(not linked with the pbitmap plugin?)");
      return -1;
    }
  if (found > 1)
    {
      snprintf (why, whysize, "more than one PT_PRESENT_BITMAP program header");
      return -1;
    }

  if (out->p_filesz > file_size || out->p_offset > file_size - out->p_filesz)
    {
      snprintf (why, whysize, "PT_PRESENT_BITMAP (offset 0x%" PRIx64
                ", size %" PRIu64 ") lies outside the file (%" PRIu64
                " bytes)", (uint64_t) out->p_offset, (uint64_t) out->p_filesz,
                file_size);
      return -1;
    }
  if (out->p_offset % 16 != 0)
    {
      snprintf (why, whysize, "PT_PRESENT_BITMAP offset 0x%" PRIx64
                " is not a multiple of 16", (uint64_t) out->p_offset);
      return -1;
    }
  if (out->p_filesz < PBITMAP_HEADER_SIZE)
    {
      snprintf (why, whysize, "PT_PRESENT_BITMAP is %" PRIu64 " bytes, too "
                "small for the %u-byte pbitmap header",
                (uint64_t) out->p_filesz, PBITMAP_HEADER_SIZE);
      return -1;
    }

  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr load;
      if (gelf_getphdr (elf, (int) i, &load) == NULL
          || load.p_type != PT_LOAD)
        continue;
      if (out->p_offset < load.p_offset
          || out->p_offset - load.p_offset > load.p_filesz
          || out->p_filesz > load.p_filesz - (out->p_offset - load.p_offset))
        continue;
      if (out->p_vaddr - load.p_vaddr != out->p_offset - load.p_offset)
        {
          snprintf (why, whysize, "PT_PRESENT_BITMAP address 0x%" PRIx64
                    " does not match its offset in its PT_LOAD",
                    (uint64_t) out->p_vaddr);
          return -1;
        }
      return 0;
    }
  snprintf (why, whysize, "PT_PRESENT_BITMAP lies outside every PT_LOAD");
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
   inside it.  */
static int
layout_check (Elf *elf, const GElf_Ehdr *ehdr, uint64_t file_size,
              char *why, size_t whysize)
{
  size_t phnum, shnum;
  header_counts (elf, ehdr, &phnum, &shnum);
  if (table_check ("program", ehdr->e_phoff, phnum, ehdr->e_phentsize,
                   file_size, why, whysize) != 0)
    return -1;
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

/* The region R (offset and size) shares no byte with the ELF header, the
   header tables, a segment other than a PT_LOAD, itself and HOLDER (the
   PT_NOTE a region without a program header of its own is a note of), or
   a section other than its own (the one that starts where it does).  */
static int
overlap_check (Elf *elf, const GElf_Ehdr *ehdr, const GElf_Phdr *r,
               size_t holder, char *why, size_t whysize)
{
  size_t phnum, shnum;
  header_counts (elf, ehdr, &phnum, &shnum);
  if (ranges_overlap (r->p_offset, r->p_filesz, 0, ehdr->e_ehsize)
      || ranges_overlap (r->p_offset, r->p_filesz, ehdr->e_phoff,
                         (uint64_t) phnum * ehdr->e_phentsize)
      || (ehdr->e_shoff != 0
          && ranges_overlap (r->p_offset, r->p_filesz, ehdr->e_shoff,
                             (uint64_t) shnum * ehdr->e_shentsize)))
    {
      snprintf (why, whysize, "PT_PRESENT_BITMAP overlaps the ELF header or "
                "a header table");
      return -1;
    }
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) != NULL && ph.p_type != PT_LOAD
          && ph.p_type != PT_PRESENT_BITMAP && i != holder
          && ranges_overlap (r->p_offset, r->p_filesz, ph.p_offset,
                             ph.p_filesz))
        {
          snprintf (why, whysize, "PT_PRESENT_BITMAP overlaps program "
                    "header %zu (type 0x%" PRIx32 ")", i, ph.p_type);
          return -1;
        }
    }
  for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn != NULL;
       scn = elf_nextscn (elf, scn))
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) != NULL && sh.sh_type != SHT_NOBITS
          && sh.sh_offset != r->p_offset
          && ranges_overlap (r->p_offset, r->p_filesz, sh.sh_offset,
                             sh.sh_size))
        {
          snprintf (why, whysize, "PT_PRESENT_BITMAP overlaps section %zu "
                    "(offset 0x%" PRIx64 ", size %" PRIu64 ")",
                    elf_ndxscn (scn), (uint64_t) sh.sh_offset,
                    (uint64_t) sh.sh_size);
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
  h->entry = get_u64 (raw + PBITMAP_OFF_ENTRY, msb);
  h->mark = get_u64 (raw + PBITMAP_OFF_MARK, msb);
  for (int i = 0; i < 2; i++)
    h->reserved[i] = get_u64 (raw + PBITMAP_OFF_RESERVED + 8 * i, msb);
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
      snprintf (why, whysize, "unsupported pbitmap version %u", h->version);
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
    }
  return -1;
}

int
region_find (Elf *elf, const unsigned char *buf, int fd, uint64_t file_size,
             struct region *r, char *why, size_t whysize)
{
  GElf_Ehdr ehdr;
  if (gelf_getehdr (elf, &ehdr) == NULL)
    {
      snprintf (why, whysize, "cannot read the ELF header: %s",
                elf_errmsg (-1));
      return -1;
    }
  int msb = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;

  GElf_Phdr ph = { 0 };
  size_t holder;
  if (layout_check (elf, &ehdr, file_size, why, whysize) != 0
      || region_phdr (elf, file_size, &ph, &holder, why, whysize) != 0
      || overlap_check (elf, &ehdr, &ph, holder, why, whysize) != 0)
    return -1;

  unsigned char hdr[PBITMAP_HEADER_SIZE];
  if (read_at (buf, fd, ph.p_offset, hdr, sizeof hdr) != 0)
    {
      snprintf (why, whysize, "cannot read the region: %s",
                strerror (errno));
      return -1;
    }
  r->offset = ph.p_offset;
  r->vaddr = ph.p_vaddr;
  r->size = ph.p_filesz;
  header_decode (hdr, msb, &r->hdr);
  return header_check (&r->hdr, ph.p_filesz, why, whysize);
}

/* Opens PATH; for an update also takes the exclusive lock, on the inode
   that PATH still names once the lock is held (a concurrent elfpatch may
   have renamed a new file over it while we waited).  */
static int
open_locked (const char *path, int for_update, struct stat *st)
{
  for (int attempt = 0; attempt < 100; attempt++)
    {
      /* O_NONBLOCK: a FIFO must be refused, not waited on.  */
      int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        {
          error (0, errno, "error: %s", path);
          return -1;
        }
      if (fstat (fd, st) != 0)
        {
          error (0, errno, "error: %s", path);
          close (fd);
          return -1;
        }
      if (S_ISDIR (st->st_mode) || !S_ISREG (st->st_mode))
        {
          error (0, S_ISDIR (st->st_mode) ? EISDIR : 0, "error: %s%s", path,
                 S_ISDIR (st->st_mode) ? "" : ": not a regular file");
          close (fd);
          return -1;
        }
      if (!for_update)
        return fd;

      int rc;
      while ((rc = flock (fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
      struct stat now;
      if (rc != 0 || stat (path, &now) != 0)
        {
          error (0, errno, "error: %s", path);
          close (fd);
          return -1;
        }
      if (now.st_dev == st->st_dev && now.st_ino == st->st_ino)
        return fd;
      close (fd);
    }
  error (0, 0, "error: %s: keeps being replaced while waiting for its lock",
         path);
  return -1;
}

static int
read_whole (struct image *img)
{
  img->size = (size_t) img->st.st_size;
  img->buf = malloc (img->size ? img->size : 1);
  if (img->buf == NULL)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  size_t done = 0;
  while (done < img->size)
    {
      ssize_t n = read (img->fd, img->buf + done, img->size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          error (0, errno, "error: %s", img->path);
          return -1;
        }
      if (n == 0)
        break;
      done += (size_t) n;
    }
  if (done != img->size)
    {
      error (0, 0, "error: %s: file changed size while being read",
             img->path);
      return -1;
    }
  return 0;
}

/* Says why libelf did not take IMG as ELF: a file with the ELF magic
   and a class, byte order or version libelf does not know is named as
   such, anything else is not ELF.  */
static void
ident_error (const struct image *img)
{
  const unsigned char *id = img->buf;
  if (img->size < EI_NIDENT || memcmp (id, ELFMAG, SELFMAG) != 0)
    error (0, 0, "error: %s: not an ELF file", img->path);
  else if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
    error (0, 0, "error: %s: unknown ELF class %u", img->path, id[EI_CLASS]);
  else if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
    error (0, 0, "error: %s: unknown ELF byte order %u", img->path,
           id[EI_DATA]);
  else
    error (0, 0, "error: %s: unsupported ELF version %u", img->path,
           id[EI_VERSION]);
}

int
image_open (const char *path, int for_update, struct image *img)
{
  memset (img, 0, sizeof *img);
  img->path = path;
  img->fd = open_locked (path, for_update, &img->st);
  if (img->fd < 0 || read_whole (img) != 0)
    return -1;

  elf_version (EV_CURRENT);
  img->elf = elf_memory ((char *) img->buf, img->size);
  if (img->elf == NULL)
    {
      error (0, 0, "error: %s: %s", path, elf_errmsg (-1));
      return -1;
    }
  if (elf_kind (img->elf) != ELF_K_ELF)
    {
      ident_error (img);
      return -1;
    }
  GElf_Ehdr ehdr;
  if (gelf_getehdr (img->elf, &ehdr) == NULL)
    {
      error (0, 0, "error: %s: %s", path, elf_errmsg (-1));
      return -1;
    }
  img->msb = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
  img->elfclass = ehdr.e_ident[EI_CLASS];

  char why[256];
  if (region_find (img->elf, img->buf, -1, img->size, &img->region, why,
                   sizeof why) != 0)
    {
      error (0, 0, "error: %s: %s", path, why);
      return -1;
    }
  return identity_compute (path, img->elf, img->buf, -1, img->size, &img->id);
}

void
image_close (struct image *img)
{
  if (img->elf != NULL)
    elf_end (img->elf);
  free (img->buf);
  if (img->fd >= 0)
    close (img->fd);
  memset (img, 0, sizeof *img);
  img->fd = -1;
}

unsigned char *
image_bits (struct image *img)
{
  return img->buf + img->region.offset + PBITMAP_HEADER_SIZE;
}

void
image_store_header (struct image *img)
{
  unsigned char *hdr = img->buf + img->region.offset;
  put_u64 (hdr + PBITMAP_OFF_PAGES_SET, img->region.hdr.pages_set, img->msb);
  put_u64 (hdr + PBITMAP_OFF_RUNS, img->region.hdr.runs, img->msb);
  put_u32 (hdr + PBITMAP_OFF_FLAGS, img->region.hdr.flags, img->msb);
  put_u32 (hdr + PBITMAP_OFF_MAX_GAP, img->region.hdr.max_gap, img->msb);
}
