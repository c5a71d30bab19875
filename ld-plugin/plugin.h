/* plugin.h: what the files of the pbitmap linker plugin share.
 *
 * plugin.c talks to the linker (onload and the hooks); policy.c decides,
 * for the plugin and pbitmap-ld alike, what a link gets and how large its
 * region is (policy.h); reserve.c writes the relocatable object that
 * carries the region; patch.c turns the region's PT_NOTE into
 * PT_PRESENT_BITMAP once the linker has written the output.  The helpers
 * report through plugin_message, which goes to the linker's own message
 * hook (to stderr in pbitmap-ld), and return -1 after reporting; the
 * caller then decides what the failure means.
 */
#ifndef PBITMAP_LD_PLUGIN_H
#define PBITMAP_LD_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <plugin-api.h>
#include <gelf.h>

/* The hidden symbols shared with the runtime, PBITMAP_*_SYMBOL, and the
 * runtime objects' names, PBITMAP_RUNTIME_*. */
#include "pbitmap-runtime.h"

/* The empty note section that buys gold's links a spare program header,
 * and its alignment, which no other note has. */
#define PBITMAP_SPARE_SECTION ".note.pbitmap.spare"
#define PBITMAP_SPARE_ALIGN 32

/* The ELF flavour of the link, taken from its first relocatable input:
 * the generated object must match it or the linker refuses it. */
struct reserve_target
{
  unsigned char elfclass;       /* ELFCLASS32 or ELFCLASS64 */
  unsigned char data;           /* ELFDATA2LSB or ELFDATA2MSB */
  unsigned char osabi;
  uint16_t machine;
  uint32_t flags;               /* e_flags: the ABI variant on some targets */
};

/* Report one line through the linker, prefixed "pbitmap: ".  FATAL makes
 * the linker stop; the other levels return. */
void plugin_message (enum ld_plugin_level level, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Which header field of the region the linker fills in, and with the
 * distance to which runtime symbol (x86-64 only). */
enum reserve_link
{
  RESERVE_LINK_NONE,    /* neither: no runtime, or a relocatable link */
  RESERVE_LINK_ENTRY,   /* entry, PBITMAP_ENTRY_SLOT_SYMBOL: executables */
  RESERVE_LINK_MARK     /* mark, PBITMAP_MARK_SYMBOL: shared libraries */
};

/* reserve.c: write to FD (named PATH, for messages) a relocatable object
 * for TARGET holding a region of CAPACITY pages in .note.pbitmap, the
 * hidden symbol PBITMAP_REGION_SYMBOL at its start, the GNU property note
 * that keeps the output's CET/BTI marking, and an empty .note.GNU-stack.
 * On an x86-64 target the field LINK names is relocated to hold the
 * distance to its symbol, which the link must then define.  With SPARE
 * the object also holds PBITMAP_SPARE_SECTION.  Returns 0, or -1 after an
 * error message. */
int reserve_write_object (int fd, const char *path,
                          const struct reserve_target *target,
                          uint64_t capacity, enum reserve_link link,
                          bool spare);

/* argfile.c: a command line with its response files (@FILE) read, as
 * the linker reads them.  ARGS holds COUNT arguments and a NULL, each to
 * be freed; ORIGIN[I] is the index, in the line given, of the argument
 * ARGS[I] comes from (itself, or the response file it was read from);
 * READ[J] is whether the line's argument J was a response file that was
 * read. */
struct argfile_args
{
  char **args;
  int *origin;
  bool *read;
  size_t count, room;
};

/* Sets *A to ARGC arguments ARGV with every response file read.  Returns
 * 0, or -1 when out of memory (then *A holds nothing). */
int argfile_expand (int argc, char *const *argv, struct argfile_args *a);
void argfile_free (struct argfile_args *a);

/* Writes COUNT arguments ARGS to F as a response file the linker reads
 * back as the same arguments.  Returns 0, or -1 on a write error. */
int argfile_write (FILE *f, char *const *args, size_t count);

/* lto.c: when ARG is GCC's -plugin-opt=-fresolution=FILE, sets *PATH
 * (to be freed) to FILE, the LTO plugin's resolution file. */
void lto_note_resolution (const char *arg, char **path);

/* lto.c: the bytes of the IR objects the LTO plugin claimed before
 * pbitmap's plugin could see them, as its resolution file RESOLUTION
 * (NULL: none) lists them; *FILES is set to their number.  0 when there
 * are none, or when the LTO plugin has not run yet or runs after ours. */
uint64_t lto_claimed_bytes (const char *resolution, unsigned *files);

/* The target of a link whose relocatable input has the header EHDR, or,
 * without one, of the machine we run on. */
void reserve_target_of (const GElf_Ehdr *ehdr, struct reserve_target *t);
void reserve_default_target (struct reserve_target *t);

/* Creates a temporary file under $TMPDIR like the linker's own
 * temporaries, its name ending in SUFFIX (".o", ".ld"); *PATH is set to
 * its name (to be freed).  Returns its descriptor, or -1 after an error
 * message. */
int reserve_create_file (const char *suffix, char **path);

/* patch.c: outcome of patch_output. */
enum patch_result
{
  PATCH_DONE,           /* the region has its PT_PRESENT_BITMAP now */
  PATCH_NO_OUTPUT,      /* no finished ELF output: the link failed */
  PATCH_FAILED          /* reported; the output must not be used */
};

/* What patch_output did about the entry point. */
enum patch_entry
{
  ENTRY_KEPT,           /* not asked, or a dynamic program: e_entry as linked */
  ENTRY_REDIRECTED,     /* e_entry is the runtime's stub now */
  ENTRY_NOT_FOUND       /* asked for a static program, but no usable slot */
};

/* What patch_output found and did. */
struct patch_outcome
{
  uint64_t image_pages;         /* file pages the loadable segments reach */
  enum patch_entry entry;
  bool in_shared_note;          /* the region stayed in a shared PT_NOTE */
};

/* Give the region in the linked file PATH its own program header type and
 * a note alignment readelf accepts.  With REDIRECT_ENTRY, a program without
 * PT_INTERP (a static executable) gets the runtime's entry stub as its
 * entry point, the original one going into the stub's slot.  With
 * SHARED_NOTE, a region the linker put into one PT_NOTE with other notes
 * stays there (the fallback of doc/format.md) instead of failing the link.
 * On PATCH_DONE *OUT says what was found and done. */
enum patch_result patch_output (const char *path, bool redirect_entry,
                                bool shared_note, struct patch_outcome *out);

/* order.c: an order file (doc/format.md, section 4): its names in
 * file order, each once, and a table to look them up by. */
struct order
{
  const char *path;             /* as given, for messages */
  char *text;                   /* the file, its lines NUL-terminated */
  const char **names;           /* into TEXT */
  size_t count;
  uint32_t *slots;              /* hash table: name index + 1, or 0 */
  size_t mask;                  /* slots - 1 */
};

#define ORDER_NONE ((size_t) -1)

/* Reads and checks the order file PATH into O.  Returns 0, or -1 after
 * one fatal message "PATH:LINE: what is wrong" (or "PATH: why it cannot
 * be read"). */
int order_read (const char *path, struct order *o);
void order_free (struct order *o);

/* The index of NAME in O's list, or ORDER_NONE. */
size_t order_find (const struct order *o, const char *name);

/* Writes O's names one a line to FD (named PATH), as lld's and mold's
 * --symbol-ordering-file take them.  Returns 0, or -1 after a message. */
int order_write_names (const struct order *o, int fd, const char *path);

/* Calls FN (with ARG) for each function and object of ELF's symbol
 * table that is defined in a section (SHNDX, extended indices resolved)
 * and whose name O lists (at INDEX).  Returns false when ELF has no
 * symbol table. */
typedef void order_symbol_fn (const GElf_Sym *sym, size_t shndx,
                              size_t index, const char *name, void *arg);
bool order_symbols (const struct order *o, Elf *elf, order_symbol_fn *fn,
                    void *arg);

/* Says how much of O the linked file OUTPUT holds in order: a warning
 * for the names it does not define, then the line "placed X of Y MiB in
 * order (N of M symbols)". */
void order_report (const struct order *o, const char *output);

/* place.c, the plugin only: which input sections the listed names are in,
 * and how the linker is told to put them first. */

/* Looks at the symbols of one relocatable input, ELF, as claim_file
 * offers it in FILE: records each input section that defines a name of
 * O (for gold, every section of code and read-only data). */
void place_scan (const struct order *o, Elf *elf,
                 const struct ld_plugin_input_file *file, bool gold);

/* The linker's interfaces place_apply needs. */
struct place_linker
{
  bool gold;
  ld_plugin_add_input_file add_input_file;             /* ld.bfd */
  ld_plugin_update_section_order update_section_order; /* gold */
};

/* In all_symbols_read: hands the linker the order of the recorded
 * sections.  ld.bfd gets a linker script (place_cleanup removes it),
 * gold the section order.  VERBOSE says what was done.  Returns LDPS_OK,
 * or an error after a fatal message. */
enum ld_plugin_status place_apply (const struct order *o,
                                   const struct place_linker *linker,
                                   bool verbose);

/* Removes the linker script, if any, and forgets everything. */
void place_cleanup (void);

#endif /* PBITMAP_LD_PLUGIN_H */
