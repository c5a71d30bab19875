/* self.c: this object's own headers (step 2 of runtime/prefetch.c).
 *
 * Nothing is searched for.  The executable's program headers are where
 * AT_PHDR says, its ELF header at the start of their page.  A library's
 * ELF header is at its load address, which the dynamic linker's list
 * gives: the entry with the highest load address at or below
 * __pbitmap_region.  Either is accepted only when its region maps to
 * __pbitmap_region (region.c).  A library also learns here, from the
 * executable's walk record, whether the executable's runtime has done
 * its work already (step 8).
 */

#include "entry.h"
#include "rt.h"
#include "sys.h"

#if defined PBITMAP_HOOK_EXEC

/* The executable's own headers (step 2).  */
int
rt_self_find (const struct proc *pr, struct rt_object *im)
{
  uintptr_t phdr = rt_auxv_value (pr, AT_PHDR);
  const rt_ehdr *eh = (const rt_ehdr *) (phdr & ~(uintptr_t) (RT_PAGE - 1));
  if (phdr == 0
      || rt_object_find_at (eh, (uintptr_t) PBITMAP_REGION_SYM, 0, im) != 0
      || (uintptr_t) im->phdr != phdr)
    return -1;
  return 0;
}

#else /* PBITMAP_HOOK_SHARED */

/* The executable's program headers and load bias, from AT_PHDR, AT_PHENT
   and AT_PHNUM, into EXE: the kernel mapped them, and the bias is
   AT_PHDR minus PT_PHDR's p_vaddr (a program without PT_PHDR has no
   dynamic linker's list to be in).  */
static int
executable_object (const struct proc *pr, struct rt_object *exe)
{
  uintptr_t phdr = rt_auxv_value (pr, AT_PHDR);
  size_t phent = rt_auxv_value (pr, AT_PHENT), phnum = rt_auxv_value (pr, AT_PHNUM);
  if (phdr == 0 || phdr % 8 != 0 || phent < sizeof (rt_phdr)
      || phent % 8 != 0 || phnum == 0 || phnum > RT_PHNUM_MAX)
    return -1;
  exe->ehdr = NULL;
  exe->phdr = (const unsigned char *) phdr;
  exe->phnum = phnum;
  exe->phentsize = phent;
  exe->check = 0;
  for (size_t i = 0; i < phnum; i++)
    if (rt_object_phdr (exe, i)->p_type == PT_PHDR)
      {
        exe->bias = phdr - rt_object_phdr (exe, i)->p_vaddr;
        return 0;
      }
  return -1;
}

/* The executable's walk record (step 8): its region's entry field leads
   to the entry slot, 32 bytes in a readable PT_LOAD's file data whose
   fourth word is "pbm-walk", and the slot's third word to the record, 8
   aligned bytes of a writable PT_LOAD.  The last object the executable's
   runtime walked, or null when any of it is not so.  */
static const struct rt_link_map *
executable_walked (const struct rt_object *exe)
{
  rt_phdr reg;
  if (rt_region_phdr (exe, &reg) != 0)
    return NULL;
  uintptr_t field = exe->bias + reg.p_vaddr + PBITMAP_OFF_ENTRY;
  uintptr_t slot = field + (uintptr_t) *(const int64_t *) field;
  if (slot % 8 != 0
      || !rt_object_holds (exe, slot, PBITMAP_SLOT_SIZE, PF_R, 0))
    return NULL;
  const uint64_t *words = (const uint64_t *) slot;
  uintptr_t record = slot + (uintptr_t) words[PBITMAP_SLOT_WALKED / 8];
  if (words[PBITMAP_SLOT_MAGIC / 8] != PBITMAP_SLOT_MAGIC_VALUE || record % 8 != 0
      || !rt_object_holds (exe, record, 8, PF_R | PF_W, 1))
    return NULL;
  return *(const struct rt_link_map *const volatile *) record;
}

/* This library's entry in the dynamic linker's list, or null when the
   list is not found: the object with the highest load address (l_addr) at
   or below this library's region.  Objects do not overlap, and each one's
   mapping starts at its load address (a shared object's first PT_LOAD is
   at address 0, where its ELF header is), so no other one's load address
   lies between.  *WALKED says whether it comes in the list at or before
   the last object the executable's runtime walked: that runtime has
   already done this library's work (step 8).  */
const struct rt_link_map *
rt_library_entry (const struct proc *pr, int *walked)
{
  struct rt_object exe;
  *walked = 0;
  if (executable_object (pr, &exe) != 0)
    return NULL;
  const struct rt_link_map *last = executable_walked (&exe), *self = NULL;
  int passed = last == NULL;
  uintptr_t here = (uintptr_t) PBITMAP_REGION_SYM;
  const struct rt_link_map *m = rt_loaded_objects (&exe);
  for (unsigned count = 0; m != NULL && count < RT_OBJECTS_MAX;
       count++, m = rt_next_object (m))
    {
      if (m->l_addr <= here && (self == NULL || m->l_addr > self->l_addr))
        {
          self = m;
          *walked = !passed;
        }
      if (m == last)
        passed = 1;
    }
  return self;
}

/* This library's own headers, from its load address in the dynamic
   linker's list; nothing of the image is read before it is faulted in
   (step 2).  */
int
rt_self_find (const struct proc *pr, struct rt_object *im)
{
  int walked;
  const struct rt_link_map *self = rt_library_entry (pr, &walked);
  if (self == NULL || self->l_addr % RT_PAGE != 0
      || rt_object_find_at ((const rt_ehdr *) self->l_addr,
                        (uintptr_t) PBITMAP_REGION_SYM, 1, im) != 0
      || im->bias != self->l_addr)
    return -1;
  return 0;
}

#endif
