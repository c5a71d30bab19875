/* dynamic.c: an object's dynamic section, read only where its PT_LOADs
 * map the file, and the dynamic linker's list of loaded objects, which
 * the executable's DT_DEBUG leads to (step 8 of runtime/prefetch.c).
 *
 * A DT_* pointer may or may not have been relocated in place by the
 * dynamic linker; both readings are tried, and only one that lies in the
 * object is used.
 */

#include "rt.h"
#include "sys.h"

/* Whether [ADDR, ADDR + LEN) lies inside the file-backed part of one
   readable PT_LOAD of IM; if so, *AVAIL is how many bytes from ADDR do.  */
int
rt_object_readable (const struct rt_object *im, uintptr_t addr, size_t len,
                size_t *avail)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
        continue;
      uintptr_t start = im->bias + ph->p_vaddr;
      if (addr < start || addr - start > ph->p_filesz
          || len > ph->p_filesz - (addr - start))
        continue;
      *avail = ph->p_filesz - (addr - start);
      return 1;
    }
  return 0;
}

/* The address a DT_* d_ptr stands for: the dynamic linker may or may not
   have relocated it in place.  0 when neither lies in IM.  */
static uintptr_t
dyn_address (const struct rt_object *im, uintptr_t d_ptr, size_t len)
{
  size_t avail;
  if (rt_object_readable (im, d_ptr, len, &avail))
    return d_ptr;
  if (rt_object_readable (im, d_ptr + im->bias, len, &avail))
    return d_ptr + im->bias;
  return 0;
}

/* IM's dynamic section, checked to lie in its mapped file bytes, and
   the number of entries that do; null without one.  */
const rt_dyn *
rt_object_dynamic (const struct rt_object *im, size_t *ndyn)
{
  const rt_phdr *dyn_ph = NULL;
  for (size_t i = 0; i < im->phnum; i++)
    if (rt_object_phdr (im, i)->p_type == PT_DYNAMIC)
      dyn_ph = rt_object_phdr (im, i);
  size_t avail;
  uintptr_t dyn_addr = dyn_ph != NULL ? im->bias + dyn_ph->p_vaddr : 0;
  if (dyn_ph == NULL || dyn_addr % 8 != 0
      || !rt_object_readable (im, dyn_addr, sizeof (rt_dyn), &avail))
    return NULL;
  if (avail > dyn_ph->p_filesz)
    avail = dyn_ph->p_filesz;
  if (avail > RT_DYN_BYTES_MAX)
    avail = RT_DYN_BYTES_MAX;
  /* The headers may not be the ones the kernel mapped (a crafted file
     can put a second ELF header where the runtime looks first): ask.  */
  if (!rt_memory_readable (im, dyn_addr, avail))
    return NULL;
  *ndyn = avail / sizeof (rt_dyn);
  return (const rt_dyn *) dyn_addr;
}

/* The d_un of IM's first dynamic entry TAG, in *VAL; 0 if there is one.  */
int
rt_dyn_value (const struct rt_object *im, int64_t tag, uint64_t *val)
{
  size_t ndyn = 0;
  const rt_dyn *dyn = rt_object_dynamic (im, &ndyn);
  for (size_t i = 0; dyn != NULL && i < ndyn && dyn[i].d_tag != DT_NULL; i++)
    if (dyn[i].d_tag == tag)
      {
        *val = dyn[i].d_un.d_val;
        return 0;
      }
  return -1;
}

/* The string at offset OFF of IM's dynamic string table, with *MAX cut
   to the bytes it may span; null if anything is out of place.  */
static const char *
dyn_string (const struct rt_object *im, uint64_t off, size_t *max)
{
  uint64_t strtab_ptr, strsz;
  size_t avail;
  if (rt_dyn_value (im, DT_STRTAB, &strtab_ptr) != 0
      || rt_dyn_value (im, DT_STRSZ, &strsz) != 0 || off >= strsz)
    return NULL;
  uintptr_t strtab = dyn_address (im, strtab_ptr, 1);
  if (strtab == 0 || !rt_object_readable (im, strtab + off, 1, &avail))
    return NULL;
  if (avail > strsz - off)
    avail = strsz - off;
  if (*max > avail)
    *max = avail;
  if (!rt_memory_readable (im, strtab + off, *max))
    return NULL;
  return (const char *) (strtab + off);
}

const char *
rt_object_name (const struct rt_object *im, const char *path, size_t *max)
{
  uint64_t soname;
  const char *name = NULL;
  if (im != NULL && rt_dyn_value (im, DT_SONAME, &soname) == 0)
    name = dyn_string (im, soname, max);
  if (name != NULL)
    return name;
  return path != NULL && *path != '\0' ? path : "lib";
}

/* The dynamic linker's list of loaded objects, through the DT_DEBUG of
   the executable EXE, which the dynamic linker sets; null in a static
   program or before it is set.  */
const struct rt_link_map *
rt_loaded_objects (const struct rt_object *exe)
{
  uint64_t r_ptr;
  if (rt_dyn_value (exe, DT_DEBUG, &r_ptr) != 0 || r_ptr == 0 || r_ptr % 8 != 0)
    return NULL;
  const struct rt_r_debug *r = (const struct rt_r_debug *) r_ptr;
  if (r->r_version < 1 || (uintptr_t) r->r_map % 8 != 0)
    return NULL;
  return r->r_map;
}

/* The next object of the list after M, or null at the end or at an entry
   that is not where one can be.  */
const struct rt_link_map *
rt_next_object (const struct rt_link_map *m)
{
  const struct rt_link_map *next = m->l_next;
  return (uintptr_t) next % 8 == 0 ? next : NULL;
}
