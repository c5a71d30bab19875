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
      if (count == 0 || m->l_ld == exe_dyn || rt_object_loaded (m, &im) != 0)
        continue;
      struct outcome o;
      rt_run (pr, &im, m->l_name, &o);
      if (o.st == ST_EMPTY || o.st == ST_INVALID)
        continue;
      if (pr->opts & OPT_DEBUG)
        {
          size_t max = RT_NAME_MAX;
          const char *name = rt_object_name (&im, m->l_name, &max);
          rt_report ("pbitmap", name, max, &o, "via", via);
        }
    }
  __pbitmap_walked = last;
}
