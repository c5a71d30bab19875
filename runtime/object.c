/* object.c: an object's ELF and program headers, as they are mapped in
 * memory (step 2 of runtime/prefetch.c).
 *
 * The runtime reads only the first page of an object's file as its
 * headers, and believes nothing in it it has not checked: the program
 * headers must lie in that page, no unreadable PT_LOAD may share a page
 * of memory with another one, and the load bias must agree with PT_PHDR.
 * Memory of an object that must be checked (a library's own image, which
 * constructors that ran before may have unmapped) is read only once
 * MADV_POPULATE_READ has faulted it in.
 */

#include "rt.h"
#include "sys.h"

/* Whether [ADDR, ADDR + LEN) of IM may be read: always, or for an object
   that must be checked, once MADV_POPULATE_READ has faulted it in.  */
int
rt_memory_readable (const struct rt_object *im, uintptr_t addr, size_t len)
{
  if (addr == 0 || len == 0 || addr > UINTPTR_MAX - len)
    return 0;
  if (!im->check)
    return 1;
  uintptr_t start = addr & ~(uintptr_t) (RT_PAGE - 1);
  return rt_populate (start, addr + len - start) == 0;
}

const rt_phdr *
rt_object_phdr (const struct rt_object *im, size_t i)
{
  return (const rt_phdr *) (im->phdr + i * im->phentsize);
}

/* The pages [*FIRST, *LAST] of memory the PT_LOAD PH maps.  */
static void
load_pages (const rt_phdr *ph, uintptr_t bias, uintptr_t *first,
            uintptr_t *last)
{
  *first = (bias + ph->p_vaddr) / RT_PAGE;
  *last = (bias + ph->p_vaddr + (ph->p_memsz ? ph->p_memsz - 1 : 0)) / RT_PAGE;
}

/* Whether two PT_LOADs of IM map the same page of memory and one of them
   cannot be read: the later one's mapping replaces the earlier one's
   there, so a page one of them says is readable may not be.  (Two
   readable ones may share a page: the linker makes that when a segment
   ends one byte into the next one's first page.)  */
static int
loads_overlap (const struct rt_object *im)
{
  for (size_t i = 0; i < im->phnum; i++)
    for (size_t j = i + 1; j < im->phnum; j++)
      {
        const rt_phdr *a = rt_object_phdr (im, i), *b = rt_object_phdr (im, j);
        uintptr_t a0, a1, b0, b1;
        if (a->p_type != PT_LOAD || b->p_type != PT_LOAD)
          continue;
        load_pages (a, im->bias, &a0, &a1);
        load_pages (b, im->bias, &b0, &b1);
        if (a0 <= b1 && b0 <= a1
            && ((a->p_flags & PF_R) == 0 || (b->p_flags & PF_R) == 0))
          return 1;
      }
  return 0;
}

/* Fills IM from the ELF header at EH, which CHECK says how to read.
   Returns 0, or -1 when anything is unexpected.  */
int
rt_object_from_ehdr (const rt_ehdr *eh, int check, struct rt_object *im)
{
  im->check = check;
  if (eh == NULL || (uintptr_t) eh % RT_PAGE != 0
      || !rt_memory_readable (im, (uintptr_t) eh, RT_FIRST_PAGE_BYTES)
      || eh->e_ident[EI_MAG0] != ELFMAG0 || eh->e_ident[EI_MAG1] != ELFMAG1
      || eh->e_ident[EI_MAG2] != ELFMAG2 || eh->e_ident[EI_MAG3] != ELFMAG3
      || eh->e_ident[EI_CLASS] != ELFCLASS64
      || eh->e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                  ? ELFDATA2LSB : ELFDATA2MSB))
    return -1;
  size_t phnum = eh->e_phnum, phentsize = eh->e_phentsize;
  if (phnum == 0 || phnum > RT_PHNUM_MAX || phentsize < sizeof (rt_phdr)
      || phentsize % 8 != 0 || eh->e_phoff % 8 != 0
      || eh->e_phoff > RT_FIRST_PAGE_BYTES
      || phnum * phentsize > RT_FIRST_PAGE_BYTES - eh->e_phoff)
    return -1;

  im->ehdr = (const unsigned char *) eh;
  im->phdr = (const unsigned char *) eh + eh->e_phoff;
  im->phnum = phnum;
  im->phentsize = phentsize;

  int have_bias = 0;
  for (size_t i = 0; i < phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type == PT_LOAD && ph->p_offset == 0 && !have_bias)
        {
          im->bias = (uintptr_t) eh - ph->p_vaddr;
          have_bias = 1;
        }
    }
  if (!have_bias || loads_overlap (im))
    return -1;
  for (size_t i = 0; i < phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type == PT_PHDR
          && (uintptr_t) im->phdr - ph->p_vaddr != im->bias)
        return -1;
    }
  return 0;
}


/* Whether [ADDR, ADDR + LEN) lies in one PT_LOAD of IM whose p_flags
   include FLAGS, inside its file-backed part (p_filesz) or, with MEM,
   anywhere in its memory (p_memsz).  */
int
rt_object_holds (const struct rt_object *im, uintptr_t addr, size_t len,
                 unsigned flags, int mem)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      uint64_t size = mem ? ph->p_memsz : ph->p_filesz;
      uintptr_t start = im->bias + ph->p_vaddr;
      if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags
          && addr >= start && addr - start <= size
          && len <= size - (addr - start))
        return 1;
    }
  return 0;
}

/* Whether the dynamic linker has read its hash table of the loaded object
   M, which it sets up (DT_GNU_HASH, else DT_HASH) when it maps an object,
   from the page at EH: then that page is mapped.  M's dynamic section is
   mapped (the dynamic linker read it to its DT_NULL), and its d_ptr
   values are addresses, or, where it left a read-only section alone,
   addresses less the load bias.  */
static int
hash_read_from (const struct rt_link_map *m, uintptr_t eh)
{
  const rt_dyn *d = m->l_ld;
  uint64_t hash = 0;
  if (d == NULL || (uintptr_t) d % 8 != 0)
    return 0;
  for (size_t i = 0; i < RT_DYN_BYTES_MAX / sizeof *d && d[i].d_tag != DT_NULL;
       i++)
    if (d[i].d_tag == DT_GNU_HASH
        || (d[i].d_tag == DT_HASH && hash == 0))
      hash = d[i].d_un.d_ptr;
  return hash != 0 && (hash - eh < RT_PAGE || hash < RT_PAGE);
}

/* The headers of the loaded object M: the ELF header must be at l_addr
   (where a shared object's first PT_LOAD, at address 0, puts it), valid,
   and its PT_DYNAMIC must be M's l_ld.  The dynamic linker has mapped the
   object and nothing has run since that could have changed it, but l_addr
   is only the load bias: an object whose first PT_LOAD is not at address
   0 has no header there, and possibly no mapping.  The page is known to
   be mapped when the dynamic linker has read its hash table from it
   (every ordinary shared object has it in its first page); otherwise it
   is faulted in first, which fails where it is not mapped, and a kernel
   that does not know MADV_POPULATE_READ (before 5.14) says EINVAL, and
   then the page is read as ld.so left it.  */
int
rt_object_loaded (const struct rt_link_map *m, struct rt_object *im)
{
  uintptr_t eh = m->l_addr;
  if (eh == 0 || eh % RT_PAGE != 0)
    return -1;
  if (!hash_read_from (m, eh))
    {
      long populated = rt_populate (eh, RT_PAGE);
      if (populated != 0 && populated != -RT_EINVAL)
        return -1;
    }
  size_t ndyn;
  if (rt_object_from_ehdr ((const rt_ehdr *) eh, 0, im) != 0
      || im->bias != eh || rt_object_dynamic (im, &ndyn) != m->l_ld)
    return -1;
  return 0;
}

/* Whether [OFFSET, OFFSET + SIZE) of the file lies in the file range of
   a readable PT_LOAD that maps it at VADDR: the bytes may be read at
   bias + VADDR.  */
int
rt_object_maps (const struct rt_object *im, uint64_t offset, uint64_t vaddr,
            uint64_t size)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ld = rt_object_phdr (im, i);
      if (ld->p_type != PT_LOAD || !(ld->p_flags & PF_R)
          || offset < ld->p_offset
          || offset - ld->p_offset > ld->p_filesz
          || size > ld->p_filesz - (offset - ld->p_offset))
        continue;
      return vaddr - ld->p_vaddr == offset - ld->p_offset;
    }
  return 0;
}
