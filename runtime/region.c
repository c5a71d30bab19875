/* region.c: an object's pbitmap region (step 3 of runtime/prefetch.c),
 * and whether the headers found are this object's (step 2).
 *
 * The region is the one PT_PRESENT_BITMAP, or, when a linker merged all
 * notes into one PT_NOTE, the one pbitmap note among the PT_NOTEs' notes;
 * it must lie in the file range of a readable PT_LOAD at the matching
 * address and hold a header that pbitmap_header_check accepts.
 */

#include "rt.h"
#include "sys.h"

/* The pbitmap notes in the PT_NOTE NOTE: the first, as a program header
   of its own would describe it, into *OUT.  Returns how many there are,
   or -1 when the notes cannot be walked.  */
static int
note_region (const struct rt_object *im, const rt_phdr *note, rt_phdr *out)
{
  if (note->p_vaddr % 4 != 0
      || !rt_object_maps (im, note->p_offset, note->p_vaddr, note->p_filesz)
      || !rt_memory_readable (im, im->bias + note->p_vaddr, note->p_filesz))
    return -1;
  const unsigned char *p = (const unsigned char *) (im->bias + note->p_vaddr);
  uint64_t align = note->p_align == 8 ? 8 : 4, size = note->p_filesz;
  uint64_t at = 0;
  int found = 0;
  while (size - at >= 12)
    {
      const uint32_t *n = (const uint32_t *) (p + at);
      uint64_t name = (n[0] + align - 1) & ~(align - 1);
      uint64_t desc = (n[1] + align - 1) & ~(align - 1);
      if (name > size - at - 12 || desc > size - at - 12 - name)
        return -1;
      const char *owner = (const char *) (p + at + 12);
      if (n[0] == PBITMAP_NOTE_NAMESZ && n[2] == PBITMAP_NT_BITMAP
          && owner[0] == 'p' && owner[1] == 'b' && owner[2] == 'i'
          && owner[3] == 't' && owner[4] == 'm' && owner[5] == 'a'
          && owner[6] == 'p' && owner[7] == '\0' && found++ == 0)
        {
          *out = *note;
          out->p_type = PT_PRESENT_BITMAP;
          out->p_offset = note->p_offset + at;
          out->p_vaddr = note->p_vaddr + at;
          out->p_paddr = note->p_paddr + at;
          out->p_filesz = out->p_memsz = 12 + name + (uint64_t) n[1];
        }
      at += 12 + name + desc;
    }
  return at == size ? found : -1;
}

/* The region's place, as its program header says: the one
   PT_PRESENT_BITMAP, or without one (a linker that merges all notes into
   one PT_NOTE, doc/format.md) the one pbitmap note of the PT_NOTEs.
   Returns 0 when it lies where it may be read.  */
int
rt_region_phdr (const struct rt_object *im, rt_phdr *reg)
{
  int found = 0;
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type != PT_PRESENT_BITMAP)
        continue;
      if (found++)
        return -1;
      *reg = *ph;
    }
  int have_phdr = found != 0;
  for (size_t i = 0; i < im->phnum && !have_phdr; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      rt_phdr in_note;
      /* A PT_NOTE whose notes cannot be walked holds no region.  */
      int n = ph->p_type == PT_NOTE ? note_region (im, ph, &in_note) : 0;
      if (n > 0 && found == 0)
        *reg = in_note;
      if (n > 0)
        found += n;
    }
  if (found != 1 || reg->p_offset % PBITMAP_READ_ALIGN != 0
      || reg->p_filesz < PBITMAP_HEADER_SIZE
      || !rt_object_maps (im, reg->p_offset, reg->p_vaddr, reg->p_filesz))
    return -1;
  return 0;
}

/* Whether the PT_PRESENT_BITMAP of IM, which is not at ADDR, points at a
   re-synced region: ADDR, where the linker put the region, lies in the
   file range of one of IM's PT_LOADs (step 2).  */
static int
region_moved (const struct rt_object *im, uintptr_t addr)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ld = rt_object_phdr (im, i);
      uintptr_t start = im->bias + ld->p_vaddr;
      if (ld->p_type == PT_LOAD && addr >= start
          && addr - start < ld->p_filesz)
        return 1;
    }
  return 0;
}

/* Reads the object's headers from the ELF header EH, as CHECK says, and
   accepts them when its region is at REGION (step 2).  A function of its
   own so that the fuzz harness can call it on the objects it maps.  */
int
rt_object_find_at (const rt_ehdr *eh, uintptr_t region, int check,
               struct rt_object *im)
{
  rt_phdr reg;
  if (rt_object_from_ehdr (eh, check, im) != 0 || rt_region_phdr (im, &reg) != 0)
    return -1;
  return im->bias + reg.p_vaddr == region || region_moved (im, region)
         ? 0 : -1;
}


/* The checked header of the region, or null.  */
const struct pbitmap_header *
rt_region_header (const struct rt_object *im)
{
  rt_phdr reg;
  if (rt_region_phdr (im, &reg) != 0)
    return NULL;
  const struct pbitmap_header *h
    = (const struct pbitmap_header *) (im->bias + reg.p_vaddr);
  if ((uintptr_t) h % PBITMAP_READ_ALIGN != 0
      || !rt_memory_readable (im, (uintptr_t) h, reg.p_filesz))
    return NULL;

  return pbitmap_header_check (h, reg.p_filesz) == PBITMAP_HEADER_OK
         ? h : NULL;
}

/* Whether the checked region H marks nothing: never filled, or filled
   with no page.  */
int
rt_region_empty (const struct pbitmap_header *h)
{
  return !(h->flags & PBITMAP_F_FILLED) || h->pages_set == 0
         || h->capacity == 0;
}
