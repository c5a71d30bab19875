/* relocs.c: how much a file's dynamic relocations would shrink packed.
 *
 * The dynamic linker reads and applies a shared library's (or a PIE's)
 * relocations when it loads the file, before any runtime of ours runs, so
 * those pages always come by demand paging, whatever the bitmap says.  In
 * a position-independent C++ library most of them are relative ones
 * (R_X86_64_RELATIVE: "add the load address here"), 24 bytes each in
 * .rela.dyn; linked with -z pack-relative-relocs they become DT_RELR
 * (.relr.dyn), a word for the first address of a run and a bitmap word
 * for each 63 words after it (31 in a 32-bit file), a few hundred KiB
 * where .rela.dyn took megabytes.  elfpatch --show says so when it saves
 * enough to matter.
 *
 * The count reads every allocated SHT_REL and SHT_RELA section through
 * gelf (both classes, both byte orders); the packed size is what the
 * sections would hold without their word-aligned relative relocations,
 * plus the RELR words that encode those, the encoding ld.bfd, lld and
 * mold write.  The packed size is never more than the sections' own: each
 * RELR word encodes at least one relocation and is no larger than the
 * entry it replaces.  A file with an SHT_RELR section is packed already.
 */

#include <errno.h>
#include <stdlib.h>

#include "elfpatch.h"

/* The relative relocation type of MACHINE, or 0 when we do not know it.  */
static uint32_t
relative_type (GElf_Half machine)
{
  switch (machine)
    {
    case EM_X86_64:
      return R_X86_64_RELATIVE;
    case EM_386:
      return R_386_RELATIVE;
    case EM_AARCH64:
      return R_AARCH64_RELATIVE;
    case EM_ARM:
      return R_ARM_RELATIVE;
    case EM_RISCV:
      return R_RISCV_RELATIVE;
    case EM_PPC:
      return R_PPC_RELATIVE;
    case EM_PPC64:
      return R_PPC64_RELATIVE;
    case EM_S390:
      return R_390_RELATIVE;
    default:
      return 0;
    }
}

/* The RELR words that encode the sorted, word-aligned addresses
   OFFS[0..N) of words of WORD bytes.  */
static uint64_t
relr_words (const uint64_t *offs, size_t n, uint64_t word)
{
  uint64_t bits = 8 * word - 1, words = 0;
  size_t i = 0;
  while (i < n)
    {
      uint64_t base = offs[i++] + word;
      words++;
      while (i < n && offs[i] < base)   /* the same address twice */
        i++;
      for (;;)
        {
          int any = 0;
          while (i < n && offs[i] - base < bits * word)
            {
              any = 1;
              i++;
            }
          if (!any)
            break;
          words++;
          base += bits * word;
        }
    }
  return words;
}

/* Adds the relocations of section SCN (SH) of ELF to RC, and the
   addresses of its word-aligned relative ones to *OFFS (*N of them,
   room for *ALLOC).  Returns -1 when memory runs out.  */
static int
count_section (Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint32_t rtype,
               uint64_t word, struct reloc_count *rc, uint64_t **offs,
               size_t *n, size_t *alloc)
{
  Elf_Type type = sh->sh_type == SHT_RELA ? ELF_T_RELA : ELF_T_REL;
  size_t entsize = gelf_fsize (elf, type, 1, EV_CURRENT);
  Elf_Data *data = elf_getdata (scn, NULL);
  if (data == NULL || entsize == 0)
    return 0;
  size_t count = data->d_size / entsize;
  rc->bytes += sh->sh_size;
  for (size_t i = 0; i < count; i++)
    {
      GElf_Rela rela;
      GElf_Rel rel;
      uint64_t offset, info;
      if (type == ELF_T_RELA)
        {
          if (gelf_getrela (data, (int) i, &rela) == NULL)
            break;
          offset = rela.r_offset, info = rela.r_info;
        }
      else
        {
          if (gelf_getrel (data, (int) i, &rel) == NULL)
            break;
          offset = rel.r_offset, info = rel.r_info;
        }
      uint32_t t = word == 4 ? ELF32_R_TYPE (info) : ELF64_R_TYPE (info);
      if (rtype == 0 || t != rtype)
        continue;
      rc->relative++;
      if (offset % word != 0)
        continue;
      if (*n == *alloc)
        {
          size_t more = *alloc ? 2 * *alloc : 1024;
          uint64_t *grown = realloc (*offs, more * sizeof **offs);
          if (grown == NULL)
            return -1;
          *offs = grown, *alloc = more;
        }
      (*offs)[(*n)++] = offset;
      rc->packable_bytes += entsize;
    }
  return 0;
}

int
relocs_count (Elf *elf, struct reloc_count *rc)
{
  GElf_Ehdr eh;
  *rc = (struct reloc_count) { 0 };
  if (gelf_getehdr (elf, &eh) == NULL)
    return 0;
  uint32_t rtype = relative_type (eh.e_machine);
  uint64_t word = gelf_getclass (elf) == ELFCLASS32 ? 4 : 8;
  uint64_t *offs = NULL;
  size_t n = 0, alloc = 0;
  int ret = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC))
        continue;
      if (sh.sh_type == SHT_RELR)
        rc->packed = 1;
      if ((sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL)
          && count_section (elf, scn, &sh, rtype, word, rc, &offs, &n,
                            &alloc) != 0)
        {
          ret = -1;
          break;
        }
    }
  if (ret == 0)
    {
      if (n > 0)                /* qsort's array must not be null */
        qsort (offs, n, sizeof *offs, u64_cmp);
      rc->packed_bytes = rc->bytes - rc->packable_bytes
                         + relr_words (offs, n, word) * word;
    }
  free (offs);
  return ret;
}
