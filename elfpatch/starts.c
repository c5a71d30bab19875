/* starts.c: where a file's functions start, for the recorder's
 * breakpoints (watch.c).
 *
 * Two sources, merged: the unwind table (ehframe.c), which a stripped
 * binary keeps, and the symbol table's functions, which a static
 * program has where the unwind table is missing: a static link gets no
 * --eh-frame-hdr from gcc's driver, so it has FDEs in .eh_frame but no
 * sorted table of them.  Each start is a file offset inside an
 * executable PT_LOAD's file contents; the list is sorted and holds each
 * offset once.  A function symbol that does not lie there (an absolute
 * symbol, one in a section the file does not load) is not a start.
 */

#include <errno.h>
#include <error.h>
#include <stdlib.h>

#include "elfpatch.h"
#include "pbitmap-symtab.h"

/* Whether the file offset of ADDR in ELF, into *OFFSET, lies in the file
   contents of an executable PT_LOAD.  */
static int
code_offset (Elf *elf, size_t phnum, uint64_t addr, uint64_t *offset)
{
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) != NULL && ph.p_type == PT_LOAD
          && (ph.p_flags & PF_X) && addr >= ph.p_vaddr
          && addr - ph.p_vaddr < ph.p_filesz)
        {
          *offset = ph.p_offset + (addr - ph.p_vaddr);
          return 1;
        }
    }
  return 0;
}

/* The starts symtab_starts collects.  */
struct starts
{
  size_t phnum;
  uint64_t **v;
  size_t *n, *alloc;
};

static int
add_start (Elf *elf, const GElf_Shdr *symtab, const GElf_Sym *sym, void *arg)
{
  struct starts *s = arg;
  uint64_t offset;
  (void) symtab;
  if ((GELF_ST_TYPE (sym->st_info) != STT_FUNC
       && GELF_ST_TYPE (sym->st_info) != STT_GNU_IFUNC)
      || sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_ABS
      || !code_offset (elf, s->phnum, sym->st_value, &offset))
    return 0;
  if (array_reserve ((void **) s->v, s->alloc, *s->n, sizeof **s->v) != 0)
    return -1;
  (*s->v)[(*s->n)++] = offset;
  return 0;
}

/* Appends the starts of ELF's symbol table's functions to *V (*N of
   *ALLOC).  A symbol libelf cannot read ends the list, as a missing
   symbol table does.  Returns 0, or -1 (errno set).  */
static int
symtab_starts (Elf *elf, uint64_t **v, size_t *n, size_t *alloc)
{
  struct starts s = { 0, v, n, alloc };
  if (elf_getphdrnum (elf, &s.phnum) != 0)
    return 0;
  return pbitmap_symtab_walk (elf, add_start, &s) == -1 ? -1 : 0;
}

int
function_starts (Elf *elf, const char *path, uint64_t **offsets, size_t *n)
{
  size_t alloc;
  if (ehframe_entries (elf, path, offsets, n) != 0)
    return -1;
  alloc = *n;
  if (symtab_starts (elf, offsets, n, &alloc) != 0)
    {
      error (0, errno, "error: %s", path);
      free (*offsets);
      *offsets = NULL;
      *n = 0;
      return -1;
    }
  if (*n > 1)
    qsort (*offsets, *n, sizeof **offsets, u64_cmp);
  size_t kept = 0;
  for (size_t i = 0; i < *n; i++)
    if (kept == 0 || (*offsets)[i] != (*offsets)[kept - 1])
      (*offsets)[kept++] = (*offsets)[i];
  *n = kept;
  return 0;
}
