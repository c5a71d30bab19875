/* entry.c: the C side of the entry stub, and the guard that makes the
 * prefetch run once.
 *
 * A static executable linked with pbitmap can reach the prefetch twice:
 * from its entry stub (entry.S), which the plugin made the entry point,
 * and from the runtime's .preinit_array entry, which stays as the
 * fallback for a program whose entry point was not redirected.  The first
 * to come does the work; a flag in this object's .bss tells the second.
 * A process starts single-threaded and both calls happen before main, so
 * a plain flag suffices.
 *
 * This code runs at the entry point, before the C library has done
 * anything and, in a static PIE, before the program has applied its own
 * relocations.  So it uses no pointer stored in data, only PC-relative
 * addresses of hidden symbols (the object is built -fPIC with hidden
 * visibility), and calls nothing but the runtime, which makes raw system
 * calls only.
 */

#include "prefetch.h"

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
