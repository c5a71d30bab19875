/* place.c: the plugin's half of a link order: which input sections the
 * listed names are in, and how ld.bfd and gold are made to put them first.
 *
 * claim_file offers every relocatable input (objects and archive members)
 * before the layout is made, and place_scan reads its symbol table.  A
 * listed name defined there as a function (STT_FUNC, STT_GNU_IFUNC) in a
 * section of code named .text or .text.*, or as an object (STT_OBJECT) in
 * an allocated, read-only, non-executable section named .rodata or
 * .rodata.*, gives that section the name's rank (its place in the list;
 * the first listed name counts when a section defines several).  Other
 * sections never move: the pieces of .init and .fini must stay in link
 * order, .ltext and .lrodata where the large code model wants them.  An
 * object compiled without -ffunction-sections has all its functions in
 * one .text, which then moves whole, where the first of its listed names
 * says.
 *
 * Code that moves takes along the read-only data no symbol names, which
 * no order file can list: the jump tables a compiler puts in .rodata.NAME
 * beside a function's .text.NAME (clang with -ffunction-sections and
 * -fdata-sections; also its lookup tables, .rodata..Lreltable.NAME),
 * with that function's rank, and the string and constant pools (SHF_MERGE sections:
 * .rodata.str1.1, .rodata.cst16, ...), whose labels no link can keep
 * apart, and the plain .rodata of each object whose code moves, at the
 * rank of its first listed function.  A
 * start that runs a function reads its switch tables and most of its
 * literals; in the llvm-o2 benchmark they are most of the read-only pages
 * a start touches, spread over the whole of .rodata, where listing symbols
 * cannot reach them.  A section that some symbol names moves only when that
 * name is listed.
 *
 * ld.bfd 2.40 has no interface to order sections, but it reads a linker
 * script that a plugin hands it with add_input_file, and a script that
 * holds only
 *
 *   SECTIONS { .text.pbitmap : { *(".text.f3") *(".text.f2") } }
 *   INSERT BEFORE .text;
 *   SECTIONS { .rodata.pbitmap : { *(".rodata.r2") } }
 *   INSERT AFTER .rodata;
 *
 * keeps the default script and puts the listed input sections into two
 * output sections of their own, in statement order: the code right
 * before .text in the executable segment, the read-only data right after
 * .rodata (INSERT BEFORE .rodata would put it in the executable segment,
 * ahead of the default script's step to the read-only one) in PIE,
 * non-PIE, static and shared links alike.  ld then warns "FILE contains
 * output sections; did you forget -T?": ld 2.40 says so for every script
 * input that adds an output section (ldlang.c, open_input_bfds), and an
 * INSERT script must add one, so no form avoids it, and --fatal-warnings
 * makes an ordered link fail.
 *
 * A section whose name is its symbol's (.text.NAME, .text.unlikely.NAME,
 * .rodata.NAME), or that is part of a section group, is matched by name
 * in every file, *(".text.NAME"): that finds the copy of a COMDAT group
 * that ld keeps (whichever name of the function is listed: a C1
 * constructor lives in its C2's section), and moves all static
 * functions of that name together.  Any other section (a whole .text, a
 * .rodata of several objects) is matched in its own file: ":PATH"(.text)
 * for an object (the empty archive part matches files outside archives
 * only), "ARCHIVE:MEMBER"(.text) for an archive member.  ld treats even a
 * quoted name as an fnmatch pattern when it holds * ? or [, so such names
 * are escaped; a name holding '"' cannot be written at all, and neither
 * can an archive whose path has a ':' (these sections do not move).  A
 * name no input defines is still looked for as .text.NAME, the section
 * -ffunction-sections gives it: that finds the code of the LTO
 * partitions, which another plugin adds after the inputs were offered to
 * this one.
 *
 * Objects in .data.rel.ro and .data.rel.ro.* (vtables, tables of
 * pointers: written only by relocation, before the program runs) move
 * the same way, into .data.rel.ro.pbitmap right after .data.rel.ro,
 * which keeps them inside the RELRO part of the data segment (the
 * default script ends it after .got).
 *
 * gold sorts the input sections of each output section by the list that
 * update_section_order gives it (once allow_section_ordering was called),
 * and puts the sections not in the list first.  So gold is given every
 * section of code and read-only data that claim_file offered: the ranked
 * ones first, by rank, then the others as gold itself would order them
 * (.text.unlikely*, .text.exit*, .text.startup*, .text.hot* first, each
 * group in the order the sections came, then the rest): with ordering
 * on, gold orders by the list alone.  The listed sections then land first
 * in .text and .rodata, after only what was not offered (the runtime;
 * LTO partitions, which gold never offers).
 */

#include <ar.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "pbitmap-symtab.h"
#include "plugin.h"

#define RANK_NONE UINT32_MAX

/* Which sections may move, and where to. */
enum kind
{
  KIND_NONE,
  KIND_TEXT,                    /* into .text.pbitmap */
  KIND_RODATA,                  /* into .rodata.pbitmap */
  KIND_RELRO                    /* into .data.rel.ro.pbitmap */
};

/* One input section that moves (for gold, also one that stays). */
struct section
{
  uint32_t rank;                /* RANK_NONE: none of its names is listed */
  uint32_t seq;                 /* the order claim_file offered it in */
  unsigned group;               /* gold's grouping by name prefix */
  enum kind kind;
  void *handle;                 /* gold: the file's, and its index */
  unsigned shndx;
  char *pattern;                /* ld.bfd: its input section statement */
  size_t file_len;              /* of its file part; 0 for "*" */
};

static struct section *sections;
static size_t nsections, asections;
static bool *found;             /* per listed name: an input defines it */
static unsigned unnamed;        /* sections no script can name */
static char *script_path;

/* The archive whose members were named last: members come in runs. */
static struct
{
  char *path;
  int fd;
  Elf *elf;
} archive = { NULL, -1, NULL };

/* ---- naming sections in a linker script ------------------------------ */

/* S between double quotes, as a pattern that matches S alone: ld
 * compares a name with * ? or [ in it as fnmatch does (so those and '\'
 * are escaped then), any other as it is.  NULL when S cannot be quoted. */
static char *
quote (const char *s)
{
  bool wild = strpbrk (s, "*?[") != NULL;
  char *q = malloc (2 * strlen (s) + 3), *p = q;

  if (q == NULL)
    return NULL;
  *p++ = '"';
  for (; *s != '\0'; s++)
    {
      if (*s == '"' || (unsigned char) *s < 0x20)
        {
          free (q);
          return NULL;
        }
      if (wild && strchr ("*?[\\", *s) != NULL)
        *p++ = '\\';
      *p++ = *s;
    }
  *p++ = '"';
  *p = '\0';
  return q;
}

static void
forget_archive (void)
{
  elf_end (archive.elf);
  if (archive.fd >= 0)
    close (archive.fd);
  free (archive.path);
  archive.path = NULL;
  archive.elf = NULL;
  archive.fd = -1;
}

/* The name of the member of archive PATH whose contents start at
 * OFFSET, to be freed, or NULL. */
static char *
member_name (const char *path, off_t offset)
{
  Elf *member;
  Elf_Arhdr *hdr;
  char *name = NULL;

  if (archive.path == NULL || strcmp (archive.path, path) != 0)
    {
      forget_archive ();
      archive.fd = open (path, O_RDONLY | O_CLOEXEC);
      archive.elf = (archive.fd >= 0
                     ? elf_begin (archive.fd, ELF_C_READ_MMAP, NULL) : NULL);
      archive.path = strdup (path);
    }
  if (archive.elf == NULL || elf_kind (archive.elf) != ELF_K_AR
      || offset < (off_t) sizeof (struct ar_hdr)
      || elf_rand (archive.elf, offset - sizeof (struct ar_hdr)) == 0)
    return NULL;
  member = elf_begin (archive.fd, ELF_C_READ_MMAP, archive.elf);
  hdr = member != NULL ? elf_getarhdr (member) : NULL;
  if (hdr != NULL && hdr->ar_name != NULL)
    name = strdup (hdr->ar_name);
  elf_end (member);
  return name;
}

/* How a script names FILE: ":PATH" for an object, "ARCHIVE:MEMBER" for
 * an archive member (it starts after its header).  NULL when it cannot. */
static char *
file_pattern (const struct ld_plugin_input_file *file)
{
  char *member, *a = NULL, *m = NULL, *pattern = NULL;
  const char *path = file->name;

  if (file->offset == 0)
    {
      if (asprintf (&pattern, ":%s", path) < 0)
        return NULL;
      a = quote (pattern);
      free (pattern);
      return a;
    }
  member = member_name (path, file->offset);
  if (member != NULL && strchr (path, ':') == NULL
      && (a = quote (path)) != NULL && (m = quote (member)) != NULL
      && asprintf (&pattern, "%.*s:%s", (int) strlen (a) - 1, a, m + 1) < 0)
    pattern = NULL;
  free (member);
  free (a);
  free (m);
  return pattern;
}

/* Whether section SECNAME is named after its symbol NAME, as
 * -ffunction-sections and -fdata-sections name them. */
static bool
named_after (const char *secname, const char *name)
{
  size_t s = strlen (secname), n = strlen (name);

  return s > n + 1 && secname[s - n - 1] == '.'
         && strcmp (secname + s - n, name) == 0;
}

/* The input section statement for SECNAME, whose first listed symbol
 * is NAME, in FILE, or NULL; GROUP says it is part of a section group.
 * *FILE_SPEC caches the file's pattern ("" when it has none); *FILE_LEN
 * is set to the length of the statement's file part, 0 for "*". */
static char *
section_pattern (const char *secname, const char *name, bool group,
                 const struct ld_plugin_input_file *file, char **file_spec,
                 size_t *file_len)
{
  char *sec = quote (secname), *pattern = NULL;
  const char *in = "*";

  if (sec == NULL)
    return NULL;
  if (!group && !named_after (secname, name))
    {
      if (*file_spec == NULL && (*file_spec = file_pattern (file)) == NULL)
        *file_spec = strdup ("");
      in = *file_spec;
    }
  if (in == NULL || *in == '\0' || asprintf (&pattern, "%s(%s)", in, sec) < 0)
    pattern = NULL;
  *file_len = strcmp (in, "*") == 0 ? 0 : strlen (in);
  free (sec);
  return pattern;
}

/* ---- claim_file ------------------------------------------------------- */

static bool
has_prefix (const char *name, const char *prefix)
{
  size_t n = strlen (prefix);

  return strncmp (name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

/* gold's own grouping of .text sections: the place of the first of its
 * prefixes that NAME starts with, or after them. */
static unsigned
gold_group (const char *name)
{
  static const char *const prefix[] = {
    ".text.unlikely", ".text.exit", ".text.startup", ".text.hot"
  };
  unsigned i;

  for (i = 0; i < sizeof prefix / sizeof *prefix; i++)
    if (strncmp (name, prefix[i], strlen (prefix[i])) == 0)
      break;
  return i;
}

static enum kind
section_kind (const GElf_Shdr *shdr, const char *name)
{
  if (name == NULL || shdr->sh_type != SHT_PROGBITS
      || !(shdr->sh_flags & SHF_ALLOC))
    return KIND_NONE;
  if ((shdr->sh_flags & SHF_EXECINSTR) && has_prefix (name, ".text"))
    return KIND_TEXT;
  if (!(shdr->sh_flags & (SHF_EXECINSTR | SHF_WRITE))
      && has_prefix (name, ".rodata"))
    return KIND_RODATA;
  if ((shdr->sh_flags & (SHF_EXECINSTR | SHF_WRITE)) == SHF_WRITE
      && has_prefix (name, ".data.rel.ro"))
    return KIND_RELRO;
  return KIND_NONE;
}

static struct section *
new_section (void)
{
  if (nsections == asections)
    {
      size_t n = asections ? 2 * asections : 1024;
      struct section *s = realloc (sections, n * sizeof *s);

      if (s == NULL)
        return NULL;
      sections = s;
      asections = n;
    }
  memset (&sections[nsections], 0, sizeof *sections);
  sections[nsections].seq = (uint32_t) nsections;
  return &sections[nsections++];
}

/* What one input tells: per section, its kind, name, whether it is in a
 * section group, its rank and the listed name that gave it the rank. */
struct input
{
  size_t shnum;
  enum kind *kind;
  bool *group;
  bool *anonymous;              /* no symbol is defined in it */
  bool *merge;                  /* SHF_MERGE: a string or constant pool */
  const char **secname;
  uint32_t *rank;
  const char **name;
};

/* Clears in->anonymous of the section SYM is defined in, when it is
 * a name an order file could list: not a section or file symbol, nor an
 * assembler-local label (".L...", which clang leaves in the symbol table
 * for string literals and constants). */
static int
mark_named_symbol (Elf *elf, const GElf_Shdr *symtab, const GElf_Sym *sym,
                   void *arg)
{
  struct input *in = arg;
  int type = GELF_ST_TYPE (sym->st_info);
  const char *name = elf_strptr (elf, symtab->sh_link, sym->st_name);

  if (type != STT_SECTION && type != STT_FILE
      && sym->st_shndx != SHN_UNDEF && sym->st_shndx < in->shnum
      && name != NULL && strncmp (name, ".L", 2) != 0)
    in->anonymous[sym->st_shndx] = false;
  return 0;
}

/* Clears in->anonymous of each section a symbol of ELF names; false when
 * a symbol cannot be read. */
static bool
mark_named (Elf *elf, struct input *in)
{
  return pbitmap_symtab_walk (elf, mark_named_symbol, in) == 0;
}

static bool
read_sections (Elf *elf, struct input *in)
{
  size_t shstrndx;

  if (elf_getshdrnum (elf, &in->shnum) != 0
      || elf_getshdrstrndx (elf, &shstrndx) != 0)
    return false;
  in->kind = calloc (in->shnum + 1, sizeof *in->kind);
  in->group = calloc (in->shnum + 1, sizeof *in->group);
  in->anonymous = calloc (in->shnum + 1, sizeof *in->anonymous);
  in->merge = calloc (in->shnum + 1, sizeof *in->merge);
  in->secname = calloc (in->shnum + 1, sizeof *in->secname);
  in->rank = malloc ((in->shnum + 1) * sizeof *in->rank);
  in->name = calloc (in->shnum + 1, sizeof *in->name);
  if (in->kind == NULL || in->group == NULL || in->anonymous == NULL
      || in->merge == NULL || in->secname == NULL
      || in->rank == NULL || in->name == NULL)
    return false;
  for (size_t i = 0; i < in->shnum; i++)
    {
      Elf_Scn *scn = elf_getscn (elf, i);
      GElf_Shdr shdr;

      in->rank[i] = RANK_NONE;
      if (i == 0 || scn == NULL || gelf_getshdr (scn, &shdr) == NULL)
        continue;
      in->secname[i] = elf_strptr (elf, shstrndx, shdr.sh_name);
      in->kind[i] = section_kind (&shdr, in->secname[i]);
      in->group[i] = (shdr.sh_flags & SHF_GROUP) != 0;
      in->anonymous[i] = true;
      in->merge[i] = (shdr.sh_flags & SHF_MERGE) != 0;
    }
  return mark_named (elf, in);
}

/* Gives section I of IN rank K from the listed name NAME, unless it has
 * a better one. */
static void
rank_section (struct input *in, size_t i, uint32_t k, const char *name)
{
  if (k < in->rank[i])
    {
      in->rank[i] = k;
      in->name[i] = name;
    }
}

/* Gives the section of one listed symbol its rank, when the symbol's
 * kind may move from there. */
static void
rank_symbol (const GElf_Sym *sym, size_t shndx, size_t k, const char *name,
             void *arg)
{
  struct input *in = arg;
  int type = GELF_ST_TYPE (sym->st_info);

  if (shndx >= in->shnum
      || (type == STT_OBJECT ? in->kind[shndx] != KIND_RODATA
                               && in->kind[shndx] != KIND_RELRO
                             : in->kind[shndx] != KIND_TEXT))
    return;
  found[k] = true;
  rank_section (in, shndx, (uint32_t) k, name);
}

/* qsort and bsearch order of section indices: by the function name in
 * the section's name (".text.NAME", ".rodata.NAME" and clang's lookup
 * tables ".rodata..Lreltable.NAME": ".NAME"). */
static const struct input *sorting;

static const char *
suffix (size_t i)
{
  const char *name = sorting->secname[i];

  if (sorting->kind[i] == KIND_TEXT)
    return name + 5;
  name += 7;
  if (strncmp (name, "..L", 3) == 0 && strchr (name + 3, '.') != NULL)
    name = strchr (name + 3, '.');
  return name;
}

static int
compare_suffixes (const void *a, const void *b)
{
  return strcmp (suffix (*(const size_t *) a), suffix (*(const size_t *) b));
}

/* The read-only data of IN that goes with its ranked code (see the top
 * of this file): .rodata.NAME with .text.NAME, and the file's pools and
 * plain .rodata with its first listed function. */
static void
rank_companions (struct input *in)
{
  uint32_t first = RANK_NONE;
  const char *first_name = NULL;
  size_t *rodata = malloc ((in->shnum + 1) * sizeof *rodata), n = 0;

  if (rodata == NULL)
    return;
  for (size_t i = 1; i < in->shnum; i++)
    {
      if (in->kind[i] == KIND_TEXT && in->rank[i] < first)
        {
          first = in->rank[i];
          first_name = in->name[i];
        }
      if (in->kind[i] == KIND_RODATA && in->anonymous[i]
          && in->secname[i][7] == '.')
        rodata[n++] = i;
    }
  sorting = in;
  qsort (rodata, n, sizeof *rodata, compare_suffixes);
  for (size_t i = 1; first != RANK_NONE && i < in->shnum; i++)
    {
      size_t *match;

      if (in->kind[i] == KIND_TEXT && in->rank[i] != RANK_NONE
          && in->secname[i][5] == '.'
          && (match = bsearch (&i, rodata, n, sizeof *rodata,
                               compare_suffixes)) != NULL)
        rank_section (in, *match, in->rank[i], in->name[i]);
      else if (in->kind[i] == KIND_RODATA
               && (in->merge[i] || (in->anonymous[i]
                                    && strcmp (in->secname[i], ".rodata") == 0)))
        rank_section (in, i, first, first_name);
    }
  free (rodata);
}

/* Records the sections of IN: for gold every one of a kind that moves,
 * for ld.bfd the ranked ones, with their statements. */
static void
record_sections (const struct input *in,
                 const struct ld_plugin_input_file *file, bool gold)
{
  char *file_spec = NULL;

  for (size_t i = 1; i < in->shnum; i++)
    {
      struct section *s;
      char *pattern = NULL;
      size_t file_len = 0;

      if (in->kind[i] == KIND_NONE || (!gold && in->rank[i] == RANK_NONE))
        continue;
      if (!gold && (pattern = section_pattern (in->secname[i], in->name[i],
                                               in->group[i], file,
                                               &file_spec, &file_len))
                   == NULL)
        {
          unnamed++;
          continue;
        }
      if ((s = new_section ()) == NULL)
        {
          free (pattern);
          break;
        }
      s->rank = in->rank[i];
      s->group = gold_group (in->secname[i]);
      s->kind = in->kind[i];
      s->handle = file->handle;
      s->shndx = (unsigned) i;
      s->pattern = pattern;
      s->file_len = file_len;
    }
  free (file_spec);
}

void
place_scan (const struct order *o, Elf *elf,
            const struct ld_plugin_input_file *file, bool gold)
{
  struct input in = { 0 };

  if (found == NULL && (found = calloc (o->count + 1, sizeof *found)) == NULL)
    return;
  if (read_sections (elf, &in))
    {
      order_symbols (o, elf, rank_symbol, &in);
      rank_companions (&in);
      record_sections (&in, file, gold);
    }
  free (in.kind);
  free (in.group);
  free (in.anonymous);
  free (in.merge);
  free (in.secname);
  free (in.rank);
  free (in.name);
}

/* ---- all_symbols_read ------------------------------------------------- */

/* Ranked sections first, by rank, then the others by gold's group; in
 * each, the order they came in. */
static int
compare_sections (const void *a, const void *b)
{
  const struct section *x = a, *y = b;

  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  if (x->rank == RANK_NONE && x->group != y->group)
    return x->group < y->group ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The pattern hash set: one statement per pattern, the first. */
struct seen
{
  const char **slot;
  size_t mask;
};

static bool
first_time (struct seen *seen, const char *pattern)
{
  uint32_t h = 2166136261u;
  size_t i;

  for (const unsigned char *p = (const unsigned char *) pattern; *p; p++)
    h = (h ^ *p) * 16777619u;
  for (i = h & seen->mask; seen->slot[i] != NULL; i = (i + 1) & seen->mask)
    if (strcmp (seen->slot[i], pattern) == 0)
      return false;
  seen->slot[i] = pattern;
  return true;
}

/* Writes the statement of section S into F, where *OPEN is the section
 * whose statement is still open, or NULL: a section of the same file at
 * the same rank joins it, "FILE(SEC1 SEC2)", since one statement costs
 * ld.bfd a walk over every input file.  Returns the statements begun. */
static size_t
write_statement (FILE *f, const struct section *s,
                 const struct section **open)
{
  const struct section *o = *open;
  size_t file = s->file_len > 0 ? s->file_len : 1;      /* "*" */
  const char *sec = s->pattern + file + 1;
  int sec_len = (int) strlen (sec) - 1;         /* without the ')' */

  if (o != NULL && s->file_len > 0 && o->rank == s->rank
      && o->file_len == s->file_len
      && strncmp (o->pattern, s->pattern, s->file_len) == 0)
    {
      fprintf (f, " %.*s", sec_len, sec);
      return 0;
    }
  if (o != NULL)
    fputs (")\n", f);
  fprintf (f, "    %.*s(%.*s", (int) file, s->pattern, sec_len, sec);
  *open = s;
  return 1;
}

/* The statements of KIND into F, in rank order, the .text.NAME of names
 * no input defines at their places; returns how many. */
static size_t
write_statements (FILE *f, const struct order *o, enum kind kind,
                  struct seen *seen)
{
  size_t n = 0, at = 0;
  const struct section *open = NULL;

  for (size_t k = 0; k <= o->count; k++)
    {
      char *fallback = NULL, *q;

      for (; at < nsections && sections[at].rank == k; at++)
        if (sections[at].kind == kind
            && first_time (seen, sections[at].pattern))
          n += write_statement (f, &sections[at], &open);
      if (kind != KIND_TEXT || k == o->count || found[k]
          || asprintf (&fallback, ".text.%s", o->names[k]) < 0)
        continue;
      if (open != NULL)
        fputs (")\n", f);
      open = NULL;
      if ((q = quote (fallback)) != NULL)
        {
          fprintf (f, "    *(%s)\n", q);
          n++;
        }
      free (q);
      free (fallback);
    }
  if (open != NULL)
    fputs (")\n", f);
  return n;
}

/* One output section of KIND, named NAME, inserted WHERE (unless it would
 * be empty), into F; returns its statements. */
static size_t
write_block (FILE *f, const struct order *o, enum kind kind,
             struct seen *seen, const char *name, const char *where)
{
  char *body = NULL;
  size_t size = 0, n;
  FILE *m = open_memstream (&body, &size);

  if (m == NULL)
    return 0;
  n = write_statements (m, o, kind, seen);
  if (fclose (m) == 0 && n > 0)
    fprintf (f, "SECTIONS\n{\n  %s :\n  {\n%s  }\n}\nINSERT %s;\n",
             name, body, where);
  free (body);
  return n;
}

/* The script into F; *TEXT, *RODATA and *RELRO count its statements of
 * each. */
static bool
write_script (FILE *f, const struct order *o, size_t *text, size_t *rodata,
              size_t *relro)
{
  struct seen seen;
  size_t nslots = 16;

  while (nslots < 2 * nsections)
    nslots *= 2;
  seen.mask = nslots - 1;
  seen.slot = calloc (nslots, sizeof *seen.slot);
  if (seen.slot == NULL)
    return false;
  fprintf (f, "/* pbitmap: the link order of %s */\n", o->path);
  *text = write_block (f, o, KIND_TEXT, &seen, ".text.pbitmap",
                       "BEFORE .text");
  *rodata = write_block (f, o, KIND_RODATA, &seen, ".rodata.pbitmap",
                         "AFTER .rodata");
  *relro = write_block (f, o, KIND_RELRO, &seen, ".data.rel.ro.pbitmap",
                        "AFTER .data.rel.ro");
  free (seen.slot);
  return !ferror (f);
}

static enum ld_plugin_status
apply_bfd (const struct order *o, ld_plugin_add_input_file add_input_file,
           bool verbose)
{
  int fd = reserve_create_file (".ld", &script_path);
  FILE *f = fd >= 0 ? fdopen (fd, "w") : NULL;
  size_t text = 0, rodata = 0, relro = 0;
  bool ok;

  if (fd < 0)
    return LDPS_ERR;
  ok = f != NULL && write_script (f, o, &text, &rodata, &relro);
  if ((f != NULL ? fclose (f) : close (fd)) != 0 || !ok)
    {
      plugin_message (LDPL_FATAL, "%s: cannot write the linker script: %s",
                      script_path, strerror (errno));
      return LDPS_ERR;
    }
  if (verbose)
    plugin_message (LDPL_INFO, "%s: ld's script: %zu input section "
                    "statements for .text.pbitmap, %zu for .rodata.pbitmap, "
                    "%zu for .data.rel.ro.pbitmap%s",
                    o->path, text, rodata, relro,
                    unnamed > 0 ? " (a script cannot name some)" : "");
  if (text + rodata + relro == 0)
    return LDPS_OK;
  if (add_input_file (script_path) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused the linker script %s",
                      script_path);
      return LDPS_ERR;
    }
  return LDPS_OK;
}

static enum ld_plugin_status
apply_gold (const struct order *o, ld_plugin_update_section_order update,
            bool verbose)
{
  struct ld_plugin_section *list = malloc ((nsections + 1) * sizeof *list);
  size_t listed = 0;
  enum ld_plugin_status status;

  if (list == NULL)
    {
      plugin_message (LDPL_FATAL, "out of memory");
      return LDPS_ERR;
    }
  for (size_t i = 0; i < nsections; i++)
    {
      list[i].handle = sections[i].handle;
      list[i].shndx = sections[i].shndx;
      listed += sections[i].rank != RANK_NONE;
    }
  status = update (list, (unsigned) nsections);
  free (list);
  if (status != LDPS_OK)
    plugin_message (LDPL_FATAL, "gold refused the section order");
  else if (verbose)
    plugin_message (LDPL_INFO, "%s: %zu of gold's %zu sections of code and "
                    "read-only data go first", o->path, listed, nsections);
  return status;
}

enum ld_plugin_status
place_apply (const struct order *o, const struct place_linker *linker,
             bool verbose)
{
  if (found == NULL && (found = calloc (o->count + 1, sizeof *found)) == NULL)
    {
      plugin_message (LDPL_FATAL, "out of memory");
      return LDPS_ERR;
    }
  forget_archive ();
  if (nsections > 1)            /* none at all in an LTO link's IR */
    qsort (sections, nsections, sizeof *sections, compare_sections);
  return (linker->gold
          ? apply_gold (o, linker->update_section_order, verbose)
          : apply_bfd (o, linker->add_input_file, verbose));
}

void
place_cleanup (void)
{
  if (script_path != NULL)
    unlink (script_path);
  free (script_path);
  script_path = NULL;
  for (size_t i = 0; i < nsections; i++)
    free (sections[i].pattern);
  free (sections);
  sections = NULL;
  nsections = asections = 0;
  free (found);
  found = NULL;
  forget_archive ();
}
