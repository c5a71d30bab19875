/* entry.c: the runtime's hooks, the ways into it.
 *
 * An executable's runtime is entered from its .preinit_array entry,
 * which glibc runs before any constructor, and in a static executable
 * also from the entry stub (entry.S), which the plugin makes the entry
 * point.  The first to come does the work; a flag in this object's .bss
 * tells the second.  A process starts single-threaded and both calls
 * happen before main, so a plain flag suffices.  A library's runtime is
 * entered from its .init_array entry.
 *
 * The entry stub's side runs at the entry point, before the C library
 * has done anything and, in a static PIE, before the program has applied
 * its own relocations.  So it uses no pointer stored in data, only
 * PC-relative addresses of hidden symbols (the object is built -fPIC
 * with hidden visibility), and calls nothing but the runtime, which makes
 * raw system calls only.
 */

#include "entry.h"
#include "rt.h"
#include "sys.h"

#if defined PBITMAP_HOOK_EXEC

static int pbitmap_ran;

int
__pbitmap_first_run (void)
{
  if (pbitmap_ran)
    return 0;
  pbitmap_ran = 1;
  return 1;
}

/* SP is the initial stack: argc, argv[0..argc-1], NULL, envp[], NULL,
   then the auxiliary vector, as the kernel laid them out.  */
void
__pbitmap_start (long *sp)
{
  int argc = (int) sp[0];
  char **argv = (char **) (sp + 1);
  __pbitmap_entry_run (argc, argv, argv + argc + 1);
}

/* The executable's run, from the entry stub or from .preinit_array.  */
static void
exec_run (int argc, char **argv, char **envp, struct outcome *o)
{
  struct proc pr;
  /* Set before anything of the program ran: pbitmap's audit module has
     prefetched it and its libraries (audit/audit.c, step 7).  */
  if (__pbitmap_walked != NULL)
    {
      o->st = ST_OFF;
      o->have_image = 0;
      return;
    }
  rt_proc_init (&pr, argc, argv, envp);
  const char *name = argc > 0 && argv != NULL ? argv[0] : NULL;
  rt_run (&pr, NULL, (const char *) rt_auxv_value (&pr, AT_EXECFN), o);
  if (pr.opts & OPT_DEBUG)
    rt_report ("pbitmap", name, RT_NAME_MAX, o, NULL, NULL);
  if (o->have_image)
    rt_walk_objects (&pr, &o->im, name != NULL ? name : "?");
}

/* Start-up without read-around.  When the entry stub has issued the
   bitmap's reads, the C library's start-up still faults on pages before
   they have arrived, and on pages exec read with a read-ahead mark (the
   kernel reads the ELF header with read-ahead, which marks the page after
   it: the first fault there reads the next read_ahead_kb of the file, up
   to 8 MiB here, gaps and all).  Every page start-up needs is already on
   its way, so from the stub to the .preinit_array hook the segments are
   MADV_RANDOM: a fault reads its own page and no more, and a mark is not
   acted on.  The hook sets them back to MADV_NORMAL, before any
   constructor or main runs.  */
static int random_until_preinit;

static void
segments_advise (const struct rt_object *im, int advice)
{
  struct segment segs[PBITMAP_LOADS_MAX];
  long n = rt_segments_collect (im, segs);
  for (long k = 0; k < n; k++)
    rt_madvise (segs[k].delta + segs[k].first * RT_PAGE,
                (segs[k].last - segs[k].first + 1) * RT_PAGE, advice);
}

void
__pbitmap_entry_run (int argc, char **argv, char **envp)
{
  if (!__pbitmap_first_run ())
    return;
  struct outcome o;
  exec_run (argc, argv, envp, &o);
  if (o.st == ST_WILLNEED || o.st == ST_POPULATE)
    {
      segments_advise (&o.im, RT_MADV_RANDOM);
      random_until_preinit = 1;
    }
}

void
__pbitmap_preinit (int argc, char **argv, char **envp)
{
  /* A static executable may have run this from its entry stub already.  */
  if (!__pbitmap_first_run ())
    {
      struct rt_object im;
      struct proc pr;
      rt_proc_init (&pr, argc, argv, envp);
      if (random_until_preinit && rt_self_find (&pr, &im) == 0)
        segments_advise (&im, RT_MADV_NORMAL);
      random_until_preinit = 0;
      return;
    }
  struct outcome o;
  exec_run (argc, argv, envp, &o);
}

/* glibc runs .preinit_array entries, in executables only, before any
   constructor, with (argc, argv, envp).  In a dynamic executable this is
   the earliest hook: the dynamic linker runs it before the initializers
   of the libraries, and jumps to the entry point only after them.  In a
   static one the plugin makes the entry stub (entry.S) the entry point,
   and this entry is the fallback.  */
static void (*const pbitmap_preinit_entry) (int, char **, char **)
  __attribute__ ((section (".preinit_array"), aligned (sizeof (void *)),
                  used)) = __pbitmap_preinit;

#else /* PBITMAP_HOOK_SHARED */

/* The linker plugin has the linker store in this library's region header
   the distance from the header's mark field to this symbol, which holds
   "pbm-todo" (doc/format.md).  pbitmap's audit module, which prefetches
   every object the dynamic linker maps, makes it "pbm-done" when it has
   done this library's work, before the library is relocated
   (audit/audit.c, step 7); the runtime only reads it.  Whether the
   executable's runtime has done the work is read from the executable's
   own data (step 8).  */
PBITMAP_HIDDEN volatile uint64_t PBITMAP_MARK_SYM = PBITMAP_MARK_TODO;

/* For the debug line of a library the executable's runtime walked: what
   that runtime found, when it found no bitmap or an empty one (*O, and 0);
   -1 when it did the library's work.  */
static int
walked_status (const struct proc *pr, struct outcome *o)
{
  unsigned opts = pr->opts;
  o->n.pages = o->n.runs = o->n.reads = 0;
  o->gap.pages = 0;
  o->gap.device = GAP_PINNED;
  o->us = 0;
  o->have_image = rt_self_find (pr, &o->im) == 0;
  const struct pbitmap_header *h = o->have_image ? rt_region_header (&o->im)
                                                 : NULL;
  if (h == NULL)
    o->st = ST_INVALID;
  else if ((opts & OPT_MODE) != MODE_FULL && rt_region_empty (h))
    o->st = ST_EMPTY;
  else
    return -1;
  return 0;
}

void
__pbitmap_init (int argc, char **argv, char **envp)
{
  struct proc pr;
  if (PBITMAP_MARK_SYM == PBITMAP_MARK_DONE)
    return;
  rt_proc_init (&pr, argc, argv, envp);
  int walked;
  const struct rt_link_map *self = rt_library_entry (&pr, &walked);
  const char *path = self != NULL ? self->l_name : NULL;
  struct outcome o;
  if ((pr.opts & OPT_MODE) != MODE_OFF && walked)
    {
      /* The executable's line says what it did; one that found nothing
         to do has none, and this library says so itself.  */
      if (!(pr.opts & OPT_DEBUG) || walked_status (&pr, &o) != 0)
        return;
    }
  else
    rt_run (&pr, NULL, path, &o);
  if (!(pr.opts & OPT_DEBUG))
    return;
  /* With the prefetch off the headers were not looked at yet.  */
  if (!o.have_image)
    o.have_image = rt_self_find (&pr, &o.im) == 0;
  size_t max = RT_NAME_MAX;
  const char *name = rt_object_name (o.have_image ? &o.im : NULL, path,
                                     &max);
  rt_report ("pbitmap", name, max, &o, NULL, NULL);
}

/* glibc passes (argc, argv, envp) to .init_array entries too.  */
static void (*const pbitmap_init_entry) (int, char **, char **)
  __attribute__ ((section (".init_array"), aligned (sizeof (void *)),
                  used)) = __pbitmap_init;

#endif
