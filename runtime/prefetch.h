/* prefetch.h: the entry points of the pbitmap runtime.
 *
 * The runtime is one translation unit, runtime/prefetch.c, compiled twice:
 * with PBITMAP_HOOK_EXEC into pbitmap-rt.o, which the linker plugin links
 * into executables, and with PBITMAP_HOOK_SHARED into pbitmap-rt-shared.o,
 * which it links into shared libraries.  Each object defines exactly one
 * global function, hidden so that it never reaches a dynamic symbol table,
 * and puts a pointer to it in .preinit_array (executables) or .init_array
 * (shared libraries).  glibc calls both with (argc, argv, envp).
 *
 * Everything else in the object is static.  The work itself is split so
 * that a later entry-point stub can reuse it: the core takes the program
 * headers and the load bias, and the environment is read separately.
 */
#ifndef PBITMAP_PREFETCH_H
#define PBITMAP_PREFETCH_H

#define PBITMAP_HIDDEN __attribute__ ((visibility ("hidden")))

#if defined PBITMAP_HOOK_EXEC
/* Runs from .preinit_array: before the constructors of the program and of
   every library it loads.  NAME in the debug line is ARGV[0].  */
PBITMAP_HIDDEN void __pbitmap_preinit (int argc, char **argv, char **envp);
#elif defined PBITMAP_HOOK_SHARED
/* Runs from .init_array of a shared library, when the dynamic linker
   initializes it (at start-up or in dlopen).  NAME in the debug line is
   the library's DT_SONAME, or "lib".  */
PBITMAP_HIDDEN void __pbitmap_init (int argc, char **argv, char **envp);
#else
# error "define PBITMAP_HOOK_EXEC or PBITMAP_HOOK_SHARED"
#endif

#endif /* PBITMAP_PREFETCH_H */
