/* walk.c: the executable's runtime does the libraries' work too (step 8
 * of runtime/prefetch.c).
 *
 * In glibc the dynamic linker runs the executable's .preinit_array
 * before the initializers of the libraries it loaded with it, so the
 * executable's hook walks the dynamic linker's list and prefetches every
 * object whose headers and region check out, then records the last
 * object it walked, where the libraries' own runtimes look for it
 * (self.c).  Only the executables' runtime has this file.
 */

#include "entry.h"
#include "rt.h"
#include "sys.h"

/* The last object of the dynamic linker's list that the executable's
   runtime has walked (step 8), null until it has.  Libraries find it
   through the executable's region and entry slot (entry.S), never
   through a symbol, and only read it.  */
PBITMAP_HIDDEN const struct rt_link_map *volatile __pbitmap_walked;

/* The headers of the loaded object M: the ELF header must be at l_addr
   (where a shared object's first PT_LOAD, at address 0, puts it), valid,
   and its PT_DYNAMIC must be M's l_ld.  The dynamic linker has mapped the
   object and nothing has run since that could have changed it, but l_addr
   is only the load bias: an object whose first PT_LOAD is not at address
   0 has no header there, and possibly no mapping.  So the page is faulted
   in first, which fails where it is not mapped; a kernel that does not
   know MADV_POPULATE_READ (before 5.14) says EINVAL, and then the page is
   read as ld.so left it.  */
static int
loaded_object (const struct rt_link_map *m, struct rt_object *im)
{
  uintptr_t eh = m->l_addr;
  if (eh == 0 || eh % RT_PAGE != 0)
    return -1;
  long populated = rt_populate (eh, RT_PAGE);
  if ((populated != 0 && populated != -RT_EINVAL)
      || rt_object_from_ehdr ((const rt_ehdr *) eh, 0, im) != 0
      || im->bias != eh)
    return -1;
  size_t ndyn;
  if (rt_object_dynamic (im, &ndyn) != m->l_ld)
    return -1;
  return 0;
}

/* Prefetches, as PR says, every object the dynamic linker has loaded
   with this executable (EXE) that has a valid bitmap with work in it,
   and records the last object it walked for their own runtimes.  The
   executable itself comes first in the list and is left out.  */
void
rt_walk_objects (struct proc *pr, const struct rt_object *exe,
                 const char *via)
{
  size_t ndyn;
  const rt_dyn *exe_dyn = rt_object_dynamic (exe, &ndyn);
  const struct rt_link_map *m = rt_loaded_objects (exe), *last = NULL;
  for (unsigned count = 0; m != NULL && count < RT_OBJECTS_MAX;
       count++, last = m, m = rt_next_object (m))
    {
      struct rt_object im;
      if (count == 0 || m->l_ld == exe_dyn || loaded_object (m, &im) != 0)
        continue;
      struct outcome o;
      rt_run (pr, &im, m->l_name, &o);
      if (o.st == ST_EMPTY || o.st == ST_INVALID)
        continue;
      if (pr->opts & OPT_DEBUG)
        {
          size_t max = RT_NAME_MAX;
          const char *name = rt_object_name (&im, m->l_name, &max);
          rt_report (name, max, &o, via);
        }
    }
  __pbitmap_walked = last;
}
