/* entry.h: the entry points of the pbitmap runtime, and what the hooks'
 * files (entry.c, self.c, walk.c) share.
 *
 * The runtime's files are compiled twice: with PBITMAP_HOOK_EXEC into
 * pbitmap-rt.o, which the linker plugin links into executables together
 * with entry.S (the entry-point stub for static executables) and walk.c,
 * and with PBITMAP_HOOK_SHARED into pbitmap-rt-shared.o, which it links
 * into shared libraries.  Each object puts a pointer to its hook in
 * .preinit_array (executables) or .init_array (shared libraries); glibc
 * calls both with (argc, argv, envp).  Every global symbol is hidden, so
 * that none reaches a dynamic symbol table, and only the __pbitmap_*
 * ones stay global in the objects (Makefile.am).
 */
#ifndef PBITMAP_ENTRY_H
#define PBITMAP_ENTRY_H

#include "pbitmap-runtime.h"
#include "rt.h"

#define PBITMAP_HIDDEN __attribute__ ((visibility ("hidden")))

/* The first byte of this object's region: the object the linker plugin
   adds to every link defines it, hidden, so its address is PC-relative
   (no GOT entry, no dynamic relocation, usable before a static PIE has
   relocated itself).  A link without that object fails.  */
extern const unsigned char PBITMAP_REGION_SYM[] PBITMAP_HIDDEN;

#if defined PBITMAP_HOOK_EXEC
/* Runs from .preinit_array: before the constructors of the program and of
   every library it loads; in a static executable also from the entry stub
   (runtime/entry.S, through __pbitmap_start), before the C library
   starts.  Does its work only the first time it is called.  NAME in the
   debug line is ARGV[0].  */
PBITMAP_HIDDEN void __pbitmap_preinit (int argc, char **argv, char **envp);

/* The same from the entry stub; then, when it issued reads, faults read
   no more than their own page until __pbitmap_preinit runs.  */
PBITMAP_HIDDEN void __pbitmap_entry_run (int argc, char **argv, char **envp);

/* Nonzero the first time it is called in a process, zero after.  */
PBITMAP_HIDDEN int __pbitmap_first_run (void);

/* Called by the entry stub with the initial stack pointer, at which the
   kernel put argc, argv, envp and the auxiliary vector.  */
PBITMAP_HIDDEN void __pbitmap_start (long *sp);

/* walk.c: the last object of the dynamic linker's list the executable's
   runtime walked, or that pbitmap's audit module prefetched; null until
   one has.  */
PBITMAP_HIDDEN extern const struct rt_link_map *volatile __pbitmap_walked;

/* walk.c: prefetches, as PR says, the objects the dynamic linker loaded
   with the executable EXE, naming it VIA in their debug lines.  */
RT_HIDDEN void rt_walk_objects (struct proc *pr, const struct rt_object *exe,
                                const char *via);
#elif defined PBITMAP_HOOK_SHARED
/* Runs from .init_array of a shared library, when the dynamic linker
   initializes it (at start-up or in dlopen).  NAME in the debug line is
   the library's DT_SONAME, else its path in the dynamic linker's list,
   else "lib".  */
PBITMAP_HIDDEN void __pbitmap_init (int argc, char **argv, char **envp);

/* self.c: this library's entry in the dynamic linker's list, or null;
   *WALKED says whether the executable's runtime has done its work.  */
RT_HIDDEN const struct rt_link_map *rt_library_entry (const struct proc *pr,
                                                      int *walked);
#else
# error "define PBITMAP_HOOK_EXEC or PBITMAP_HOOK_SHARED"
#endif

#endif /* PBITMAP_ENTRY_H */
