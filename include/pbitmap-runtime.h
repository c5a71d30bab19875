/* pbitmap-runtime.h: the names the linker side (ld-plugin/, pbitmap-ld)
 * and the runtime (runtime/) must spell alike.
 *
 * The plugin adds a region object that defines the region's symbol and
 * refers, through the region header's entry or mark field, to a symbol
 * of the runtime object it links in; both are hidden, so the names meet
 * only in the link.  A name spelled differently on the two sides is a
 * link that fails, or a field left 0.  The runtime spells them as
 * identifiers (C and assembler, *_SYM), the linker side as strings
 * (*_SYMBOL), both from the one spelling here.  Every one begins with
 * __pbitmap_, the prefix of the only symbols the runtime objects keep
 * global (Makefile.am).
 *
 * The runtime objects' file names, which the plugin and pbitmap-ld look
 * for in the runtime directory, are Makefile.am's pbitmaprt_DATA; it
 * cannot include this file, and test/ld-plugin/runtime-object.test links
 * with both names as the build installs them.
 */
#ifndef PBITMAP_RUNTIME_H
#define PBITMAP_RUNTIME_H

/* The region's first byte, defined by the plugin's region object.  */
#define PBITMAP_REGION_SYM __pbitmap_region
/* The executables' runtime's entry slot (runtime/entry.S), which the
   region's entry field points at.  */
#define PBITMAP_ENTRY_SLOT_SYM __pbitmap_entry_slot
/* The libraries' runtime's 8-byte mark, which the mark field points at.  */
#define PBITMAP_MARK_SYM __pbitmap_mark

#define PBITMAP_STRING(s) PBITMAP_STRING_ (s)
#define PBITMAP_STRING_(s) #s

#define PBITMAP_REGION_SYMBOL PBITMAP_STRING (PBITMAP_REGION_SYM)
#define PBITMAP_ENTRY_SLOT_SYMBOL PBITMAP_STRING (PBITMAP_ENTRY_SLOT_SYM)
#define PBITMAP_MARK_SYMBOL PBITMAP_STRING (PBITMAP_MARK_SYM)

/* The runtime objects, in the runtime directory: the executables' and
   the shared libraries'.  */
#define PBITMAP_RUNTIME_EXEC "pbitmap-rt.o"
#define PBITMAP_RUNTIME_SHARED "pbitmap-rt-shared.o"

#endif /* PBITMAP_RUNTIME_H */
