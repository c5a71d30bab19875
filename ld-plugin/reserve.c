/* reserve.c: the relocatable object that carries the pbitmap region.
 *
 * The linker is given one extra input, written here with libelf for the
 * link's own ELF class, byte order and machine.  It has no code, these
 * sections:
 *
 *   .note.pbitmap       SHT_NOTE, SHF_ALLOC, aligned 16: the region as
 *                       pbitmap-format.h lays it out, header filled in,
 *                       bits zero.  The alignment is what makes ld.bfd
 *                       give it a PT_NOTE of its own (notes aligned 4 or 8
 *                       share one); patch.c sets it back to 4 after the
 *                       link.
 *   .note.gnu.property  on x86 and AArch64: the linker ANDs the CET (IBT,
 *                       SHSTK) and BTI/PAC feature bits over all inputs,
 *                       so an object without the note would strip the
 *                       marking from every program linked with the plugin.
 *                       Claiming the features is honest: there is no code
 *                       here to violate them.
 *   .note.GNU-stack     empty and not executable, so the output keeps a
 *                       non-executable stack.
 *   .note.pbitmap.spare only when asked for (gold): an empty SHT_NOTE
 *                       aligned 32.  gold gives every alignment of note
 *                       its own PT_NOTE, so this one buys a spare program
 *                       header, which patch.c needs when gold's PT_NOTE of
 *                       4-aligned notes spans the region (see there).
 *   .symtab, .strtab    the hidden symbol __pbitmap_region at the region's
 *                       first byte.  The runtime finds its region, and
 *                       from there its ELF header, through it: a hidden
 *                       symbol's address is PC-relative, with no GOT entry
 *                       and no dynamic relocation, and a runtime linked
 *                       without this object fails to link.
 *   .rela.note.pbitmap  only when asked for, on x86-64: one
 *                       R_X86_64_PC64 against a hidden symbol of the
 *                       runtime, so that the linker stores at a header
 *                       field the distance from the field to the symbol.
 *                       In executables with the runtime it is the entry
 *                       field and the entry slot, so that patch.c finds
 *                       the slot after the link without a symbol table;
 *                       in shared libraries with the runtime, the mark
 *                       field and the runtime's mark, so that the
 *                       executable's runtime finds the library's mark
 *                       from the library's region alone.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "pbitmap-format.h"
#include "plugin.h"

#ifndef NT_GNU_PROPERTY_TYPE_0
# define NT_GNU_PROPERTY_TYPE_0 5
#endif
#define PROPERTY_X86_FEATURE_1_AND 0xc0000002u
#define PROPERTY_X86_FEATURE_1_IBT 0x1u
#define PROPERTY_X86_FEATURE_1_SHSTK 0x2u
#define PROPERTY_AARCH64_FEATURE_1_AND 0xc0000000u
#define PROPERTY_AARCH64_FEATURE_1_BTI 0x1u
#define PROPERTY_AARCH64_FEATURE_1_PAC 0x2u

/* Section names, in the order of the string table.  The relocation
 * section's name ends in the note's, which is shared. */
static const char shstrtab[] =
  "\0.rela" PBITMAP_NOTE_SECTION
  "\0.note.gnu.property"
  "\0.note.GNU-stack"
  "\0.symtab"
  "\0.strtab"
  "\0.shstrtab"
  "\0" PBITMAP_SPARE_SECTION;
#define NAME_RELA 1
#define NAME_PBITMAP (NAME_RELA + 5)
#define NAME_PROPERTY (NAME_RELA + sizeof ".rela" PBITMAP_NOTE_SECTION)
#define NAME_STACK (NAME_PROPERTY + sizeof ".note.gnu.property")
#define NAME_SYMTAB (NAME_STACK + sizeof ".note.GNU-stack")
#define NAME_STRTAB (NAME_SYMTAB + sizeof ".symtab")
#define NAME_SHSTRTAB (NAME_STRTAB + sizeof ".strtab")
#define NAME_SPARE (NAME_SHSTRTAB + sizeof ".shstrtab")

/* Symbol names, in the order of the symbol string table. */
static const char strtab[] =
  "\0" PBITMAP_REGION_SYMBOL
  "\0" PBITMAP_ENTRY_SLOT_SYMBOL
  "\0" PBITMAP_MARK_SYMBOL;
#define NAME_REGION_SYMBOL 1
#define NAME_SLOT_SYMBOL (NAME_REGION_SYMBOL + sizeof PBITMAP_REGION_SYMBOL)
#define NAME_MARK_SYMBOL (NAME_SLOT_SYMBOL + sizeof PBITMAP_ENTRY_SLOT_SYMBOL)
#define SYM_REGION 1
#define SYM_TARGET 2            /* the relocation's: slot or mark */

#ifndef R_X86_64_PC64
# define R_X86_64_PC64 24
#endif

/* Store in the byte order of the target. */

static void
put16 (unsigned char *p, uint16_t v, unsigned char data)
{
  for (int i = 0; i < 2; i++)
    p[data == ELFDATA2MSB ? 1 - i : i] = (unsigned char) (v >> (8 * i));
}

static void
put32 (unsigned char *p, uint32_t v, unsigned char data)
{
  for (int i = 0; i < 4; i++)
    p[data == ELFDATA2MSB ? 3 - i : i] = (unsigned char) (v >> (8 * i));
}

static void
put64 (unsigned char *p, uint64_t v, unsigned char data)
{
  for (int i = 0; i < 8; i++)
    p[data == ELFDATA2MSB ? 7 - i : i] = (unsigned char) (v >> (8 * i));
}

/* The region of CAPACITY pages: note header, pbitmap header, zero bits,
 * an empty read order. */
static unsigned char *
build_region (uint64_t capacity, unsigned char data, size_t *size)
{
  uint64_t region = pbitmap_region_size (capacity);
  unsigned char *p;

  if (region > SIZE_MAX || region - 20 > UINT32_MAX)
    return NULL;
  p = calloc (1, region);
  if (p == NULL)
    return NULL;
  put32 (p + PBITMAP_OFF_NAMESZ, PBITMAP_NOTE_NAMESZ, data);
  put32 (p + PBITMAP_OFF_DESCSZ, (uint32_t) (region - 20), data);
  put32 (p + PBITMAP_OFF_TYPE, PBITMAP_NT_BITMAP, data);
  memcpy (p + PBITMAP_OFF_NAME, PBITMAP_NOTE_NAME, PBITMAP_NOTE_NAMESZ);
  put32 (p + PBITMAP_OFF_MAGIC, PBITMAP_MAGIC, data);
  put16 (p + PBITMAP_OFF_VERSION, PBITMAP_VERSION, data);
  put16 (p + PBITMAP_OFF_HEADER_SIZE, PBITMAP_HEADER_SIZE, data);
  put32 (p + PBITMAP_OFF_PAGE_SHIFT, PBITMAP_PAGE_SHIFT, data);
  put64 (p + PBITMAP_OFF_CAPACITY, capacity, data);
  put32 (p + PBITMAP_OFF_ORDER_SIZE, (uint32_t) pbitmap_order_blocks (capacity),
         data);
  *size = region;
  return p;
}

/* One GNU property note with a single 4-byte AND property, padded to the
 * class's word as the gABI wants; into BUF (at least 32 bytes).  Returns
 * its size, or 0 when the machine has no such property. */
static size_t
build_property (const struct reserve_target *t, unsigned char *buf)
{
  size_t word = t->elfclass == ELFCLASS64 ? 8 : 4;
  size_t descsz = (8 + 4 + word - 1) / word * word;
  uint32_t type, bits;

  switch (t->machine)
    {
    case EM_X86_64:
    case EM_386:
      type = PROPERTY_X86_FEATURE_1_AND;
      bits = PROPERTY_X86_FEATURE_1_IBT | PROPERTY_X86_FEATURE_1_SHSTK;
      break;
    case EM_AARCH64:
      type = PROPERTY_AARCH64_FEATURE_1_AND;
      bits = PROPERTY_AARCH64_FEATURE_1_BTI | PROPERTY_AARCH64_FEATURE_1_PAC;
      break;
    default:
      return 0;
    }
  memset (buf, 0, 16 + descsz);
  put32 (buf, 4, t->data);                      /* namesz: "GNU" */
  put32 (buf + 4, (uint32_t) descsz, t->data);
  put32 (buf + 8, NT_GNU_PROPERTY_TYPE_0, t->data);
  memcpy (buf + 12, "GNU", 4);
  put32 (buf + 16, type, t->data);
  put32 (buf + 20, 4, t->data);                 /* pr_datasz */
  put32 (buf + 24, bits, t->data);
  return 16 + descsz;
}

/* A section holding the SIZE bytes at BUF, written as they are. */
static Elf_Scn *
add_section (Elf *elf, size_t name, GElf_Word type, GElf_Xword flags,
             GElf_Xword align, void *buf, size_t size)
{
  Elf_Scn *scn = elf_newscn (elf);
  GElf_Shdr shdr;

  if (scn == NULL || gelf_getshdr (scn, &shdr) == NULL)
    return NULL;
  if (size != 0)
    {
      Elf_Data *data = elf_newdata (scn);

      if (data == NULL)
        return NULL;
      data->d_buf = buf;
      data->d_size = size;
      data->d_type = ELF_T_BYTE;
      data->d_align = align;
      data->d_version = EV_CURRENT;
    }
  shdr.sh_name = name;
  shdr.sh_type = type;
  shdr.sh_flags = flags;
  shdr.sh_addralign = align;
  return gelf_update_shdr (scn, &shdr) ? scn : NULL;
}

static int
set_header (Elf *elf, const struct reserve_target *t, size_t shstrndx)
{
  GElf_Ehdr ehdr;

  if (gelf_getehdr (elf, &ehdr) == NULL)
    return -1;
  ehdr.e_ident[EI_DATA] = t->data;
  ehdr.e_ident[EI_OSABI] = t->osabi;
  ehdr.e_type = ET_REL;
  ehdr.e_machine = t->machine;
  ehdr.e_version = EV_CURRENT;
  ehdr.e_flags = t->flags;
  ehdr.e_shstrndx = shstrndx;
  return gelf_update_ehdr (elf, &ehdr) ? 0 : -1;
}

/* The symbol table in the target's layout, into BUF (at least 3 * 24
 * bytes): the null symbol, __pbitmap_region over the region in section
 * NOTE_NDX, and unless LINK is RESERVE_LINK_NONE the undefined symbol the
 * relocation refers to.  Both are global and hidden: visible to the other
 * objects of the link, never exported.  Returns its size. */
static size_t
build_symtab (const struct reserve_target *t, size_t note_ndx,
              size_t region_size, enum reserve_link link, unsigned char *buf)
{
  size_t entsize = t->elfclass == ELFCLASS64 ? 24 : 16;
  size_t count = link != RESERVE_LINK_NONE ? 3 : 2;
  struct
  {
    uint32_t name;
    unsigned char info;
    uint16_t shndx;
    uint64_t size;
  } syms[] = {
    { NAME_REGION_SYMBOL, GELF_ST_INFO (STB_GLOBAL, STT_OBJECT),
      (uint16_t) note_ndx, region_size },
    { link == RESERVE_LINK_MARK ? NAME_MARK_SYMBOL : NAME_SLOT_SYMBOL,
      GELF_ST_INFO (STB_GLOBAL, STT_NOTYPE), SHN_UNDEF, 0 },
  };

  memset (buf, 0, count * entsize);
  for (size_t i = 1; i < count; i++)
    {
      unsigned char *p = buf + i * entsize;

      put32 (p, syms[i - 1].name, t->data);
      if (t->elfclass == ELFCLASS64)
        {
          p[4] = syms[i - 1].info;
          p[5] = STV_HIDDEN;
          put16 (p + 6, syms[i - 1].shndx, t->data);
          put64 (p + 16, syms[i - 1].size, t->data);
        }
      else
        {
          put32 (p + 8, (uint32_t) syms[i - 1].size, t->data);
          p[12] = syms[i - 1].info;
          p[13] = STV_HIDDEN;
          put16 (p + 14, syms[i - 1].shndx, t->data);
        }
    }
  return count * entsize;
}

/* The one relocation that makes the linker store, at the region's entry
 * or mark field, the symbol's address minus the field's (x86-64 only). */
static size_t
build_rela (const struct reserve_target *t, enum reserve_link link,
            unsigned char *buf)
{
  put64 (buf, link == RESERVE_LINK_MARK ? PBITMAP_OFF_MARK : PBITMAP_OFF_ENTRY,
         t->data);
  put64 (buf + 8, ((uint64_t) SYM_TARGET << 32) | R_X86_64_PC64, t->data);
  put64 (buf + 16, 0, t->data);
  return 24;
}

/* Sets the fields add_section leaves zero. */
static bool
link_section (Elf_Scn *scn, size_t link, size_t info, GElf_Xword entsize,
              GElf_Xword flags)
{
  GElf_Shdr shdr;

  if (scn == NULL || gelf_getshdr (scn, &shdr) == NULL)
    return false;
  shdr.sh_link = link;
  shdr.sh_info = info;
  shdr.sh_entsize = entsize;
  shdr.sh_flags |= flags;
  return gelf_update_shdr (scn, &shdr);
}

/* The symbol table, its string table and, unless LINK is
 * RESERVE_LINK_NONE, the relocation of the region NOTE. */
static bool
write_symbols (Elf *elf, const struct reserve_target *t, Elf_Scn *note,
               size_t region_size, enum reserve_link link)
{
  static unsigned char symtab[3 * 24];
  static unsigned char rela[24];
  size_t word = t->elfclass == ELFCLASS64 ? 8 : 4;
  size_t entsize = t->elfclass == ELFCLASS64 ? 24 : 16;
  size_t symtab_size = build_symtab (t, elf_ndxscn (note), region_size,
                                     link, symtab);
  Elf_Scn *sym, *str;

  sym = add_section (elf, NAME_SYMTAB, SHT_SYMTAB, 0, word,
                     symtab, symtab_size);
  str = add_section (elf, NAME_STRTAB, SHT_STRTAB, 0, 1,
                     (void *) strtab, sizeof strtab);
  if (sym == NULL || str == NULL
      || !link_section (sym, elf_ndxscn (str), 1, entsize, 0))
    return false;
  if (link == RESERVE_LINK_NONE)
    return true;
  return link_section (add_section (elf, NAME_RELA, SHT_RELA, 0, 8,
                                    rela, build_rela (t, link, rela)),
                       elf_ndxscn (sym), elf_ndxscn (note), 24,
                       SHF_INFO_LINK);
}

static int
write_sections (Elf *elf, const struct reserve_target *t,
                unsigned char *region, size_t region_size,
                enum reserve_link link, bool spare)
{
  static unsigned char property[32];
  size_t property_size = build_property (t, property);
  Elf_Scn *note, *strtab;

  if (gelf_newehdr (elf, t->elfclass) == NULL
      || (note = add_section (elf, NAME_PBITMAP, SHT_NOTE, SHF_ALLOC,
                              PBITMAP_LINK_ALIGN, region,
                              region_size)) == NULL
      || (property_size != 0
          && add_section (elf, NAME_PROPERTY, SHT_NOTE, SHF_ALLOC,
                          t->elfclass == ELFCLASS64 ? 8 : 4,
                          property, property_size) == NULL)
      || add_section (elf, NAME_STACK, SHT_PROGBITS, 0, 1, NULL, 0) == NULL
      || (spare
          && add_section (elf, NAME_SPARE, SHT_NOTE, SHF_ALLOC,
                          PBITMAP_SPARE_ALIGN, NULL, 0) == NULL)
      || !write_symbols (elf, t, note, region_size, link)
      || (strtab = add_section (elf, NAME_SHSTRTAB, SHT_STRTAB, 0, 1,
                                (void *) shstrtab, sizeof shstrtab)) == NULL
      || set_header (elf, t, elf_ndxscn (strtab)) != 0
      || elf_update (elf, ELF_C_WRITE) < 0)
    return -1;
  return 0;
}

int
reserve_write_object (int fd, const char *path,
                      const struct reserve_target *target, uint64_t capacity,
                      enum reserve_link link, bool spare)
{
  size_t region_size;
  unsigned char *region = build_region (capacity, target->data, &region_size);
  Elf *elf;
  int status = -1;

  if (region == NULL)
    {
      plugin_message (LDPL_FATAL, "no memory for a region of %" PRIu64
                      " pages", capacity);
      return -1;
    }
  elf = elf_begin (fd, ELF_C_WRITE, NULL);
  if (elf != NULL)
    status = write_sections (elf, target, region, region_size,
                             target->machine == EM_X86_64
                             && target->elfclass == ELFCLASS64
                             ? link : RESERVE_LINK_NONE, spare);
  if (status != 0)
    plugin_message (LDPL_FATAL, "%s: cannot write the region object: %s",
                    path, elf_errmsg (-1));
  elf_end (elf);
  free (region);
  return status;
}

/* What the plugin and pbitmap-ld share besides the object itself. */

void
reserve_target_of (const GElf_Ehdr *ehdr, struct reserve_target *t)
{
  t->elfclass = ehdr->e_ident[EI_CLASS];
  t->data = ehdr->e_ident[EI_DATA];
  t->osabi = ehdr->e_ident[EI_OSABI];
  t->machine = ehdr->e_machine;
  t->flags = ehdr->e_flags;
}

void
reserve_default_target (struct reserve_target *t)
{
  t->elfclass = sizeof (void *) == 8 ? ELFCLASS64 : ELFCLASS32;
  t->data = (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
             ? ELFDATA2LSB : ELFDATA2MSB);
  t->osabi = ELFOSABI_NONE;
#if defined __x86_64__
  t->machine = EM_X86_64;
#elif defined __i386__
  t->machine = EM_386;
#elif defined __aarch64__
  t->machine = EM_AARCH64;
#else
  t->machine = EM_NONE;
#endif
  t->flags = 0;
}

int
reserve_create_file (const char *suffix, char **path)
{
  const char *dir = getenv ("TMPDIR");
  int fd;

  if (dir == NULL || *dir == '\0')
    dir = "/tmp";
  if (asprintf (path, "%s/pbitmap-XXXXXX%s", dir, suffix) < 0)
    {
      *path = NULL;
      plugin_message (LDPL_FATAL, "out of memory");
      return -1;
    }
  fd = mkstemps (*path, strlen (suffix));
  if (fd < 0)
    {
      plugin_message (LDPL_FATAL, "cannot create a temporary file in "
                      "%s: %s", dir, strerror (errno));
      free (*path);
      *path = NULL;
    }
  return fd;
}
