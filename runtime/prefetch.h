/* prefetch.h: the entry points of the pbitmap runtime.
 *
 * The runtime's core, runtime/prefetch.c, is compiled twice: with
 * PBITMAP_HOOK_EXEC into pbitmap-rt.o, which the linker plugin links into
 * executables together with entry.S and entry.c (the entry-point stub for
 * static executables), and with PBITMAP_HOOK_SHARED into
 * pbitmap-rt-shared.o, which it links into shared libraries.  Each object
 * puts a pointer to its hook in .preinit_array (executables) or
 * .init_array (shared libraries); glibc calls both with (argc, argv,
 * envp).  Every global symbol is hidden, so that none reaches a dynamic
 * symbol table.
 *
 * Everything else in the object is static.  The core takes the program
 * headers and the load bias, and the environment is read separately.
 */
#ifndef PBITMAP_PREFETCH_H
#define PBITMAP_PREFETCH_H

#define PBITMAP_HIDDEN __attribute__ ((visibility ("hidden")))

#if defined PBITMAP_HOOK_EXEC
/* Runs from .preinit_array: before the constructors of the program and of
   every library it loads; in a static executable also from the entry stub
   (runtime/entry.S, through __pbitmap_start in entry.c), before the C
   library starts.  Does its work only the first time it is called.  NAME
   in the debug line is ARGV[0].  */
PBITMAP_HIDDEN void __pbitmap_preinit (int argc, char **argv, char **envp);

/* The same from the entry stub; then, when it issued reads, faults read
   no more than their own page until __pbitmap_preinit runs.  */
PBITMAP_HIDDEN void __pbitmap_entry_run (int argc, char **argv, char **envp);

/* entry.c: nonzero the first time it is called in a process, zero after.  */
PBITMAP_HIDDEN int __pbitmap_first_run (void);

/* entry.c: called by the entry stub with the initial stack pointer, at
   which the kernel put argc, argv, envp and the auxiliary vector.  */
PBITMAP_HIDDEN void __pbitmap_start (long *sp);
#elif defined PBITMAP_HOOK_SHARED
/* Runs from .init_array of a shared library, when the dynamic linker
   initializes it (at start-up or in dlopen).  NAME in the debug line is
   the library's DT_SONAME, or "lib".  */
PBITMAP_HIDDEN void __pbitmap_init (int argc, char **argv, char **envp);
#else
# error "define PBITMAP_HOOK_EXEC or PBITMAP_HOOK_SHARED"
#endif

#endif /* PBITMAP_PREFETCH_H */
