/* ehframe.c: the function starts a file's unwind table lists.
 *
 * Ordering a link by the functions a start entered needs to know where
 * the functions start, in a binary that may be stripped: the recorder
 * plants a breakpoint on each start of a page the program touches, and
 * the order tool tells the functions so watched from those that were
 * not.  Every function compiled with unwind information (the default for
 * C and C++ on x86-64, and what C++ exceptions need) has a frame
 * description entry (FDE) in .eh_frame, and the linker's --eh-frame-hdr
 * (the default for dynamic links) writes .eh_frame_hdr, the sorted
 * search table the unwinder looks functions up in, found through the
 * program header PT_GNU_EH_FRAME:
 *
 *     u8  version                1
 *     u8  eh_frame_ptr_enc       encoding of the next field
 *     u8  fde_count_enc          encoding of the count (DW_EH_PE_omit:
 *     u8  table_enc                no table), and of the table's entries
 *     eh_frame_ptr               address of .eh_frame
 *     fde_count                  number of table entries
 *     table[fde_count]           pairs (initial location, FDE address)
 *
 * A pointer encoding (DW_EH_PE_*) is a format in the low four bits
 * (absptr, udata2/4/8, sdata2/4/8) and an application in the next three
 * (absolute, pc-relative: from the field's own address, data-relative:
 * from the start of .eh_frame_hdr).  Linkers write the table as
 * datarel sdata4; every fixed-size form is read here.  The initial
 * locations are addresses; a PT_LOAD maps each to its file offset.
 *
 * The table comes from the file under study, which may be hostile or
 * damaged: the header and table must lie inside the segment, and every
 * location inside a PT_LOAD's file contents, or the table is refused
 * with one message.  An FDE of zero length still marks its start; the
 * unwinder's table does not say lengths.  A file without PT_GNU_EH_FRAME,
 * or whose header says it has no table, has no entries.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "elfpatch.h"

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* The header as it lies in the file.  */
struct eh_hdr
{
  const unsigned char *p;       /* its bytes */
  uint64_t size;
  uint64_t vaddr;               /* of its first byte */
  int msb;
  int elfclass;
};

/* Bytes of a field of encoding ENC, or 0 when it is not a fixed-size
   form this reader knows.  */
static unsigned
encoding_size (const struct eh_hdr *h, unsigned enc)
{
  unsigned app = enc & 0x70;
  if (app != 0 && app != DW_EH_PE_pcrel && app != DW_EH_PE_datarel)
    return 0;
  switch (enc & 0x0f)
    {
    case DW_EH_PE_absptr:
      return h->elfclass == ELFCLASS64 ? 8 : 4;
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2:
      return 2;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
      return 4;
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
      return 8;
    default:
      return 0;
    }
}

/* The value of the field of encoding ENC (known to be fixed-size) at
   byte AT of the header, applied: an address, or a count.  */
static uint64_t
read_encoded (const struct eh_hdr *h, unsigned enc, uint64_t at)
{
  const unsigned char *p = h->p + at;
  uint64_t v;
  switch (enc & 0x0f)
    {
    case DW_EH_PE_udata2:
      v = get_u16 (p, h->msb);
      break;
    case DW_EH_PE_sdata2:
      v = (uint64_t) (int64_t) (int16_t) get_u16 (p, h->msb);
      break;
    case DW_EH_PE_udata4:
      v = get_u32 (p, h->msb);
      break;
    case DW_EH_PE_sdata4:
      v = (uint64_t) (int64_t) (int32_t) get_u32 (p, h->msb);
      break;
    case DW_EH_PE_absptr:
      v = h->elfclass == ELFCLASS64 ? get_u64 (p, h->msb)
                                    : get_u32 (p, h->msb);
      break;
    default:
      v = get_u64 (p, h->msb);
      break;
    }
  if ((enc & 0x70) == DW_EH_PE_pcrel)
    v += h->vaddr + at;
  else if ((enc & 0x70) == DW_EH_PE_datarel)
    v += h->vaddr;
  if (h->elfclass == ELFCLASS32)
    v &= UINT32_MAX;
  return v;
}

/* The contents of PT_GNU_EH_FRAME in *H; 0 when ELF has none.  */
static int
find_hdr (Elf *elf, const char *path, struct eh_hdr *h)
{
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    {
      error (0, 0, "error: %s: %s", path, elf_errmsg (-1));
      return -1;
    }
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL)
        {
          error (0, 0, "error: %s: %s", path, elf_errmsg (-1));
          return -1;
        }
      if (ph.p_type != PT_GNU_EH_FRAME)
        continue;
      size_t file_size;
      if (elf_rawfile (elf, &file_size) == NULL
          || ph.p_filesz > file_size || ph.p_offset > file_size - ph.p_filesz)
        {
          error (0, 0, "error: %s: PT_GNU_EH_FRAME lies past the end of the "
                 "file", path);
          return -1;
        }
      Elf_Data *d = elf_getdata_rawchunk (elf, (int64_t) ph.p_offset,
                                          ph.p_filesz, ELF_T_BYTE);
      if (d == NULL)
        {
          error (0, 0, "error: %s: .eh_frame_hdr: %s", path, elf_errmsg (-1));
          return -1;
        }
      h->p = d->d_buf;
      h->size = d->d_size;
      h->vaddr = ph.p_vaddr;
      return 1;
    }
  return 0;
}

/* Reads the table of H (COUNT entries of ENC from byte AT) into
   OFFSETS, allocated by the caller.  */
static int
read_table (Elf *elf, const char *path, const struct eh_hdr *h,
            unsigned enc, uint64_t at, uint64_t count, uint64_t *offsets)
{
  unsigned size = encoding_size (h, enc);
  for (uint64_t i = 0; i < count; i++)
    {
      uint64_t addr = read_encoded (h, enc, at + i * 2 * size);
      if (vaddr_offset (elf, addr, &offsets[i]) != 0)
        {
          error (0, 0, "error: %s: .eh_frame_hdr: function start 0x%" PRIx64
                 " (entry %" PRIu64 ") is outside the file's loaded "
                 "contents", path, addr, i);
          return -1;
        }
    }
  return 0;
}

int
ehframe_entries (Elf *elf, const char *path, uint64_t **offsets, size_t *n)
{
  struct eh_hdr h = { 0 };
  *offsets = NULL;
  *n = 0;
  int found = find_hdr (elf, path, &h);
  if (found <= 0)
    return found;
  h.msb = elf_msb (elf);
  h.elfclass = gelf_getclass (elf);
  if (h.size < 4 || h.p[0] != 1)
    {
      error (0, 0, "error: %s: .eh_frame_hdr: %s", path,
             h.size < 4 ? "shorter than its header"
                        : "unsupported version (expected 1)");
      return -1;
    }
  unsigned ptr_enc = h.p[1], count_enc = h.p[2], table_enc = h.p[3];
  if (count_enc == DW_EH_PE_omit || table_enc == DW_EH_PE_omit)
    return 0;
  unsigned ptr_size = encoding_size (&h, ptr_enc);
  unsigned count_size = encoding_size (&h, count_enc);
  unsigned entry_size = encoding_size (&h, table_enc);
  if (ptr_size == 0 || count_size == 0 || entry_size == 0)
    {
      error (0, 0, "error: %s: .eh_frame_hdr: unsupported pointer encoding "
             "0x%02x", path, ptr_size == 0 ? ptr_enc : count_size == 0
                                           ? count_enc : table_enc);
      return -1;
    }
  uint64_t at = 4 + ptr_size;
  uint64_t count = at + count_size <= h.size
                   ? read_encoded (&h, count_enc & 0x0f, at) : UINT64_MAX;
  at += count_size;
  if (at > h.size || count > (h.size - at) / (2 * entry_size))
    {
      error (0, 0, "error: %s: .eh_frame_hdr: its table runs past the end "
             "of the segment", path);
      return -1;
    }
  if (count == 0)
    return 0;
  uint64_t *v = malloc ((size_t) count * sizeof *v);
  if (v == NULL)
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  if (read_table (elf, path, &h, table_enc, at, count, v) != 0)
    {
      free (v);
      return -1;
    }
  qsort (v, (size_t) count, sizeof *v, u64_cmp);
  size_t kept = 0;
  for (size_t i = 0; i < count; i++)
    if (kept == 0 || v[i] != v[kept - 1])
      v[kept++] = v[i];
  *offsets = v;
  *n = kept;
  return 0;
}
