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

/* Appends the starts of ELF's symbol table's functions to *V (*N of
   *ALLOC).  Returns 0, or -1 (errno set).  */
static int
symtab_starts (Elf *elf, uint64_t **v, size_t *n, size_t *alloc)
{
  Elf_Scn *scn = NULL;
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    return 0;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;
      Elf_Data *data;
      if (gelf_getshdr (scn, &shdr) == NULL || shdr.sh_type != SHT_SYMTAB
          || shdr.sh_entsize == 0 || (data = elf_getdata (scn, NULL)) == NULL)
        continue;
      for (size_t i = 1; i < shdr.sh_size / shdr.sh_entsize; i++)
        {
          GElf_Sym sym;
          uint64_t offset;
          if (gelf_getsym (data, (int) i, &sym) == NULL)
            break;
          if ((GELF_ST_TYPE (sym.st_info) != STT_FUNC
               && GELF_ST_TYPE (sym.st_info) != STT_GNU_IFUNC)
              || sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS
              || !code_offset (elf, phnum, sym.st_value, &offset))
            continue;
          if (array_reserve ((void **) v, alloc, *n, sizeof **v) != 0)
            return -1;
          (*v)[(*n)++] = offset;
        }
    }
  return 0;
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
