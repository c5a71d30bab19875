/* pbitmap-symtab.h: one walk over an ELF file's symbol table.
 *
 * The plugin reads each input object's symbols to see which sections a
 * name is defined in (ld-plugin/place.c), and elfpatch reads a program's
 * to find where its functions start (elfpatch/starts.c).  Both visit
 * every symbol of every SHT_SYMTAB section through libelf, the null
 * symbol 0 excepted, and skip a section whose entries cannot be counted
 * (sh_entsize 0) or read; what each does with a symbol is its own.
 */
#ifndef PBITMAP_SYMTAB_H
#define PBITMAP_SYMTAB_H

#include <gelf.h>

/* What EACH sees: the symbol, and the header of its section (sh_link
   is its string table, for elf_strptr).  A nonzero return stops the
   walk.  */
typedef int pbitmap_symbol_fn (Elf *elf, const GElf_Shdr *symtab,
                               const GElf_Sym *sym, void *arg);

/* A symbol that libelf cannot read stops the walk with this value.  */
#define PBITMAP_SYMTAB_UNREADABLE (-2)

/* Calls EACH for the symbols of ELF's symbol tables.  Returns 0, EACH's
   nonzero return, or PBITMAP_SYMTAB_UNREADABLE.  */
static inline int
pbitmap_symtab_walk (Elf *elf, pbitmap_symbol_fn *each, void *arg)
{
  Elf_Scn *scn = NULL;
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
          int rc;
          if (gelf_getsym (data, (int) i, &sym) == NULL)
            return PBITMAP_SYMTAB_UNREADABLE;
          if ((rc = each (elf, &shdr, &sym, arg)) != 0)
            return rc;
        }
    }
  return 0;
}

#endif /* PBITMAP_SYMTAB_H */
