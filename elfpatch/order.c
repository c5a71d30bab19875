/* order.c: elfpatch --order, a link order from the traces of a program.
 *
 * A start needs a few hundred functions and tables scattered over the
 * whole file, so its pages are many and far apart.  Linking those symbols
 * next to each other, in the order the start used them, makes the pages
 * few and adjacent.  The linker side (ld-plugin/order.c) takes a list of
 * symbol names, the order file (doc/format.md, section 4); this writes it
 * from the traces of BINARY and BINARY's symbol table.
 *
 * Which pages count is decided exactly as --fill decides it (fill.c,
 * fill_select: the blocks of BINARY's build, --merge and --min-share).
 * The names are the functions (STT_FUNC) and objects (STT_OBJECT) defined
 * in allocated, non-writable sections, and objects in .data.rel.ro
 * (written only by relocation: vtables, tables of pointers): code and
 * read-only data, what a link can move and what a start pages in from
 * the file.  A symbol is on
 * a page when any of its bytes [st_value, st_value + st_size) lies there,
 * through the PT_LOAD that maps it; a symbol of size 0 by its address.
 * They are written in three steps, each address once:
 *
 *  1. when the traces have 'calls' (file offsets of function entries, in
 *     first-call order), the functions that start there, the merge rule
 *     keeping a function as it keeps a page;
 *  2. the symbols on the pages of 'order' (first-touch order), page by
 *     page, in address order within a page;
 *  3. the symbols on the other selected pages: those of at most two
 *     pages in address order, then the larger ones, the densest first
 *     (see place_pages).
 *
 * With 'calls', steps 2 and 3 write only symbols of sections that are not
 * executable: step 1 has said which code the start ran, and the other
 * functions on its pages are exactly what 'calls' leaves out.  'calls'
 * counts only when every trace has it; a mix orders the code by pages,
 * with a warning.
 *
 * Several traces list an offset or page at different positions.  Each is
 * ranked by its mean position over the traces that list it (ties: the
 * lower offset or page).  The mean, not the minimum: with the minimum, one
 * odd run (an error path, a rare mode) would pull everything it touched
 * early ahead of what every other start needs first; the mean puts a
 * function where starts typically need it.  It is compared exactly
 * (quotient, then remainder), so the same traces give the same file.
 *
 * Several names at one address (aliases) are one symbol to place; the
 * name written is the first of them in the order STB_GLOBAL (and
 * STB_GNU_UNIQUE), STB_WEAK, STB_LOCAL, then symbol table order.  A
 * global name is one definition in the link; a local one may name several
 * objects' symbols, of which the linker side places what it matches.
 * Names the format cannot hold (a space or control byte, a leading '#',
 * a line too long) are left out, counted in one warning.
 *
 * A stripped BINARY has no .symtab; its symbols then come from its
 * separate debug file, at /usr/lib/debug/.build-id/XX/REST.debug for
 * build-id XXREST or given with --debug-file, which must carry the same
 * build-id.  Only the symbol table and section flags are read from it;
 * the addresses map to file pages through BINARY's own PT_LOADs.
 *
 * The order file is written to a temporary file beside it and renamed
 * over it: a failure at any point leaves no file, or the old one.
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfpatch.h"
#include "pbitmap-order.h"

#define DEBUG_DIR "/usr/lib/debug/.build-id/"

/* One address of BINARY that holds named code or read-only data.  */
struct entry
{
  uint64_t addr;
  uint64_t first_page, last_page;       /* of the file */
  uint64_t offset;                      /* of ADDR in the file */
  uint64_t size;                        /* the largest st_size at ADDR */
  const char *name;                     /* null: none can be written */
  int func;                             /* one of its symbols is STT_FUNC */
  int exec;                             /* in an executable section */
};

/* A symbol as read, before aliases are merged.  */
struct sym
{
  uint64_t addr, size;
  const char *name;
  size_t index;
  int binding;                  /* 0 global, 1 weak, 2 local */
  int func, exec;
};

/* A number that traces list (an offset of 'calls', a page of 'order')
   at position POS, or, once merged, in COUNT traces at positions that
   add up to POS.  */
struct listed
{
  uint64_t value;
  uint64_t pos;
  uint64_t count;
};

struct listing
{
  struct listed *v;
  size_t n, alloc;
  size_t traces;                /* that have the list */
};

/* What the traces say beyond their pages.  */
struct lists
{
  struct listing calls, order;
  size_t traces;
};

/* ---- symbols ---------------------------------------------------------- */

static int
binding_rank (unsigned char info)
{
  switch (GELF_ST_BIND (info))
    {
    case STB_GLOBAL:
    case STB_GNU_UNIQUE:
      return 0;
    case STB_WEAK:
      return 1;
    default:
      return 2;
    }
}

/* Whether NAME fits on a line of an order file as a name.  */
static int
name_writable (const char *name)
{
  size_t len = 0;
  if (name[0] == '#')
    return 0;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++, len++)
    if (!pbitmap_order_name_byte (*p))
      return 0;
  return len + 1 <= PBITMAP_ORDER_LINE_MAX;
}

static Elf_Scn *
find_symtab (Elf *elf, GElf_Shdr *shdr)
{
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    if (gelf_getshdr (scn, shdr) != NULL && shdr->sh_type == SHT_SYMTAB)
      return scn;
  return NULL;
}

/* The flags of section SHNDX of ELF, 0 when there is none, without
   SHF_WRITE for .data.rel.ro and .data.rel.ro.*: data that is written
   only by relocation, before the program runs (RELRO), and read from the
   file like read-only data (C++ vtables and typeinfo, tables of
   pointers).  */
static GElf_Xword
section_flags (Elf *elf, size_t shndx)
{
  GElf_Shdr sh;
  Elf_Scn *scn = shndx != SHN_UNDEF ? elf_getscn (elf, shndx) : NULL;
  size_t shstrndx;
  const char *name;
  if (scn == NULL || gelf_getshdr (scn, &sh) == NULL)
    return 0;
  if ((sh.sh_flags & SHF_WRITE) && elf_getshdrstrndx (elf, &shstrndx) == 0
      && (name = elf_strptr (elf, shstrndx, sh.sh_name)) != NULL
      && strncmp (name, ".data.rel.ro", 12) == 0
      && (name[12] == '\0' || name[12] == '.'))
    return sh.sh_flags & ~(GElf_Xword) SHF_WRITE;
  return sh.sh_flags;
}

/* The symbols of ELF's symbol table that name code or read-only data,
   into *OUT.  Returns their number, or -1 after a message naming
   PATH.  */
static long
read_symbols (Elf *elf, const char *path, struct sym **out)
{
  GElf_Shdr shdr;
  Elf_Scn *scn = find_symtab (elf, &shdr);
  Elf_Data *data = scn != NULL ? elf_getdata (scn, NULL) : NULL;
  size_t n = 0, alloc = 0;
  *out = NULL;
  if (data == NULL || shdr.sh_entsize == 0)
    {
      error (0, 0, "error: %s: %s", path, scn == NULL ? "no symbol table"
             : elf_errmsg (-1));
      return -1;
    }
  for (size_t i = 1; i < shdr.sh_size / shdr.sh_entsize; i++)
    {
      GElf_Sym s;
      if (gelf_getsym (data, (int) i, &s) == NULL)
        break;
      int type = GELF_ST_TYPE (s.st_info);
      GElf_Xword flags = s.st_shndx < SHN_LORESERVE
                         ? section_flags (elf, s.st_shndx) : 0;
      const char *name = elf_strptr (elf, shdr.sh_link, s.st_name);
      if ((type != STT_FUNC && type != STT_OBJECT)
          || !(flags & SHF_ALLOC) || (flags & SHF_WRITE)
          || name == NULL || name[0] == '\0')
        continue;
      if (array_reserve ((void **) out, &alloc, n, sizeof **out) != 0)
        {
          error (0, errno, "error: %s", path);
          free (*out);
          *out = NULL;
          return -1;
        }
      (*out)[n++] = (struct sym) {
        .addr = s.st_value, .size = s.st_size, .name = name, .index = i,
        .binding = binding_rank (s.st_info), .func = type == STT_FUNC,
        .exec = (flags & SHF_EXECINSTR) != 0 };
    }
  return (long) n;
}

/* By address, then the name preferred at it first.  */
static int
sym_cmp (const void *a, const void *b)
{
  const struct sym *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  if (x->binding != y->binding)
    return x->binding < y->binding ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Sets E's file place from BINARY's PT_LOADs; 0 when it has none.  */
static int
entry_place (Elf *binary, struct entry *e)
{
  uint64_t last;
  if (vaddr_offset (binary, e->addr, &e->offset) != 0)
    return 0;
  if (e->size == 0 || vaddr_offset (binary, e->addr + e->size - 1, &last) != 0
      || last < e->offset)
    last = e->offset;
  e->first_page = e->offset >> PBITMAP_PAGE_SHIFT;
  e->last_page = last >> PBITMAP_PAGE_SHIFT;
  return 1;
}

/* Merges the symbols S (sorted) into one entry per address that
   BINARY's file holds.  Returns their number, or -1 (errno set).  */
static long
make_entries (Elf *binary, const struct sym *s, size_t n, struct entry **out)
{
  size_t count = 0;
  *out = malloc ((n + 1) * sizeof **out);
  if (*out == NULL)
    return -1;
  for (size_t i = 0, j; i < n; i = j)
    {
      struct entry e = { .addr = s[i].addr };
      for (j = i; j < n && s[j].addr == s[i].addr; j++)
        {
          if (s[j].size > e.size)
            e.size = s[j].size;
          e.func |= s[j].func;
          e.exec |= s[j].exec;
          if (e.name == NULL && name_writable (s[j].name))
            e.name = s[j].name;
        }
      if (entry_place (binary, &e))
        (*out)[count++] = e;
    }
  return (long) count;
}

/* ---- where the symbols come from -------------------------------------- */

/* A separate debug file, open.  */
struct debug_file
{
  char *path;
  int fd;
  Elf *elf;
};

static void
debug_file_close (struct debug_file *d)
{
  if (d->elf != NULL)
    elf_end (d->elf);
  if (d->fd >= 0)
    close (d->fd);
  free (d->path);
}

static int
has_symtab (Elf *elf)
{
  GElf_Shdr shdr;
  return find_symtab (elf, &shdr) != NULL;
}

/* The build-id of ID in hex, or "none".  */
static void
build_id_text (const struct identity *id, char *buf, size_t size)
{
  if (id->build_id_len == 0)
    snprintf (buf, size, "none");
  else
    {
      char text[IDENTITY_TEXT_MAX];
      identity_format (id, text, sizeof text);
      snprintf (buf, size, "%s", text + strlen ("build-id "));
    }
}

/* The debug file of IMG: GIVEN, or the one under DEBUG_DIR its build-id
   names; open, checked to carry the same build-id.  */
static int
debug_file_open (const struct image *img, const char *given,
                 struct debug_file *d)
{
  char want[IDENTITY_TEXT_MAX], have[IDENTITY_TEXT_MAX];
  build_id_text (&img->id, want, sizeof want);
  if (given != NULL)
    d->path = strdup (given);
  else if (img->id.build_id_len == 0)
    {
      error (0, 0, "error: %s: no symbol table and no build-id to find its "
             "debug file by (name it with --debug-file)", img->path);
      return -1;
    }
  else if (asprintf (&d->path, DEBUG_DIR "%.2s/%s.debug", want,
                     want + 2) < 0)
    d->path = NULL;
  if (d->path == NULL)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  d->fd = open (d->path, O_RDONLY | O_CLOEXEC);
  if (d->fd < 0 && given == NULL && errno == ENOENT)
    {
      error (0, 0, "error: %s: no symbol table and no debug file (looked "
             "for %s)", img->path, d->path);
      return -1;
    }
  struct stat st;
  if (d->fd < 0 || fstat (d->fd, &st) != 0)
    {
      error (0, errno, "error: %s", d->path);
      return -1;
    }
  d->elf = elf_begin (d->fd, ELF_C_READ_MMAP, NULL);
  if (d->elf == NULL || elf_kind (d->elf) != ELF_K_ELF)
    {
      error (0, 0, "error: %s: not an ELF file", d->path);
      return -1;
    }
  struct identity id;
  if (identity_compute (d->path, d->elf, NULL, d->fd, (uint64_t) st.st_size,
                        &id) != 0)
    return -1;
  build_id_text (&id, have, sizeof have);
  if (id.build_id_len == 0 || !identity_equal (&id, &img->id))
    {
      error (0, 0, "error: %s: build-id %s does not match %s's build-id %s",
             d->path, have, img->path, want);
      return -1;
    }
  return 0;
}

/* The entries of IMG, from its symbol table or, through D, from its
   debug file's (DEBUG_PATH or found by build-id), whose names stay valid
   while D is open.  Returns their number, or -1 after a message.  */
static long
binary_entries (const struct image *img, const char *debug_path,
                struct debug_file *d, struct entry **out)
{
  Elf *elf = img->elf;
  const char *path = img->path;
  struct sym *syms = NULL;
  *out = NULL;
  if (!has_symtab (img->elf))
    {
      if (debug_file_open (img, debug_path, d) != 0)
        return -1;
      elf = d->elf;
      path = d->path;
      elfpatch_note ("%s: symbols from %s", img->path, d->path);
    }
  long n = read_symbols (elf, path, &syms);
  if (n >= 0)
    {
      if (n > 1)
        qsort (syms, (size_t) n, sizeof *syms, sym_cmp);
      n = make_entries (img->elf, syms, (size_t) n, out);
      if (n < 0)
        error (0, errno, "error: %s", img->path);
    }
  free (syms);
  return n;
}

/* ---- what the traces list --------------------------------------------- */

static int
listing_add (struct listing *l, const uint64_t *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      if (array_reserve ((void **) &l->v, &l->alloc, l->n, sizeof *l->v) != 0)
        return -1;
      l->v[l->n++] = (struct listed) { .value = v[i], .pos = i, .count = 1 };
    }
  l->traces++;
  return 0;
}

/* trace_visit_fn: the 'calls' and the 'order' of one trace, each from
   the first block of the build that has it (doc/format.md).  */
static int
collect_lists (const char *path, const struct trace *t, void *arg)
{
  struct lists *l = arg;
  const struct trace_block *calls = NULL, *order = NULL;
  for (size_t i = 0; i < t->n_blocks; i++)
    {
      if (calls == NULL && t->blocks[i].n_calls > 0)
        calls = &t->blocks[i];
      if (order == NULL && t->blocks[i].n_order > 0)
        order = &t->blocks[i];
    }
  l->traces++;
  if ((calls != NULL
       && listing_add (&l->calls, calls->calls, calls->n_calls) != 0)
      || (order != NULL
          && listing_add (&l->order, order->order, order->n_order) != 0))
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  return 0;
}

static int
listed_value_cmp (const void *a, const void *b)
{
  const struct listed *x = a, *y = b;
  return x->value < y->value ? -1 : x->value > y->value;
}

/* By mean position, exactly: the quotients, then the remainders (each
   below its count, which is at most the number of traces, so their
   cross products fit); then by value.  */
static int
listed_mean_cmp (const void *a, const void *b)
{
  const struct listed *x = a, *y = b;
  uint64_t qx = x->pos / x->count, qy = y->pos / y->count;
  if (qx != qy)
    return qx < qy ? -1 : 1;
  uint64_t rx = x->pos % x->count * y->count;
  uint64_t ry = y->pos % y->count * x->count;
  if (rx != ry)
    return rx < ry ? -1 : 1;
  return listed_value_cmp (a, b);
}

/* Merges the positions of each value of L into one, keeps the values
   that policy P keeps of RUNS runs (or, when BITS is not null, those set
   in BITS of CAPACITY), and sorts them by mean position.  */
static void
listing_rank (struct listing *l, const struct fill_policy *p, uint64_t runs,
              const unsigned char *bits, uint64_t capacity)
{
  size_t n = 0;
  if (l->n > 1)
    qsort (l->v, l->n, sizeof *l->v, listed_value_cmp);
  for (size_t i = 0, j; i < l->n; i = j)
    {
      struct listed m = { .value = l->v[i].value };
      for (j = i; j < l->n && l->v[j].value == m.value; j++)
        {
          m.pos += l->v[j].pos;
          m.count++;
        }
      if (bits != NULL ? m.value < capacity && pbitmap_test (bits, m.value)
                       : fill_kept (p, m.count, runs))
        l->v[n++] = m;
    }
  l->n = n;
  if (n > 1)
    qsort (l->v, n, sizeof *l->v, listed_mean_cmp);
}

/* ---- the order -------------------------------------------------------- */

/* The names in the making.  */
struct composer
{
  const struct entry *e;        /* by address */
  size_t n;
  unsigned char *done;          /* per entry */
  size_t *list;                 /* entries, in order */
  size_t n_list;
  size_t unwritable;            /* entries placed without a name */
  int by_calls;                 /* step 1 placed the code */
  struct indexed *pages;        /* the entries steps 2 and 3 may place,
                                   by page (value) and entry (index); an
                                   entry spanning several pages is on
                                   each */
  size_t n_pages;
};

static void
take (struct composer *c, size_t i)
{
  if (c->done[i])
    return;
  c->done[i] = 1;
  if (c->e[i].name == NULL)
    c->unwritable++;
  else
    c->list[c->n_list++] = i;
}

static int
func_offset_cmp (const void *a, const void *b, void *arg)
{
  const struct entry *e = arg;
  uint64_t x = e[*(const size_t *) a].offset, y = e[*(const size_t *) b].offset;
  return x < y ? -1 : x > y;
}

/* Step 1: the functions that start at the offsets of CALLS.  */
static int
place_calls (struct composer *c, const struct listing *calls,
             const char *binary)
{
  size_t *funcs = malloc ((c->n + 1) * sizeof *funcs), n = 0, missed = 0;
  if (funcs == NULL)
    return -1;
  for (size_t i = 0; i < c->n; i++)
    if (c->e[i].func)
      funcs[n++] = i;
  qsort_r (funcs, n, sizeof *funcs, func_offset_cmp, (void *) c->e);
  for (size_t k = 0; k < calls->n; k++)
    {
      uint64_t want = calls->v[k].value;
      size_t lo = 0, hi = n;
      while (lo < hi)
        {
          size_t mid = lo + (hi - lo) / 2;
          if (c->e[funcs[mid]].offset < want)
            lo = mid + 1;
          else
            hi = mid;
        }
      if (lo < n && c->e[funcs[lo]].offset == want)
        take (c, funcs[lo]);
      else
        missed++;
    }
  if (missed > 0)
    elfpatch_note ("%s: %zu called offset%s no function's start in the "
                   "symbol table", binary, missed,
                   missed == 1 ? " is" : "s are");
  free (funcs);
  return 0;
}

/* Lists the entries steps 2 and 3 may place on each of their pages:
   with calls, only those outside executable sections.  */
static int
index_pages (struct composer *c)
{
  size_t alloc = 0;
  for (size_t i = 0; i < c->n; i++)
    if (!(c->by_calls && c->e[i].exec))
      for (uint64_t p = c->e[i].first_page; p <= c->e[i].last_page; p++)
        {
          if (array_reserve ((void **) &c->pages, &alloc, c->n_pages,
                             sizeof *c->pages) != 0)
            return -1;
          c->pages[c->n_pages++] = (struct indexed) { p, i };
        }
  if (c->n_pages > 1)
    qsort (c->pages, c->n_pages, sizeof *c->pages, indexed_cmp);
  return 0;
}

/* Step 2: the entries on the pages of ORDER, page by page.  */
static void
place_order (struct composer *c, const struct listing *order)
{
  for (size_t k = 0; k < order->n; k++)
    {
      uint64_t page = order->v[k].value;
      size_t lo = 0, hi = c->n_pages;
      while (lo < hi)
        {
          size_t mid = lo + (hi - lo) / 2;
          if (c->pages[mid].value < page)
            lo = mid + 1;
          else
            hi = mid;
        }
      for (; lo < c->n_pages && c->pages[lo].value == page; lo++)
        take (c, c->pages[lo].index);
    }
}

/* Entries of at most this many pages are small, for step 3.  */
#define SMALL_PAGES 2

/* A candidate of step 3: entry ENTRY spans SPAN pages, HOT of them set.  */
struct candidate
{
  size_t entry;
  uint64_t span, hot;
};

/* Small ones first, by address; then the densest first, by address.  */
static int
candidate_cmp (const void *a, const void *b)
{
  const struct candidate *x = a, *y = b;
  int xs = x->span <= SMALL_PAGES, ys = y->span <= SMALL_PAGES;
  if (xs != ys)
    return xs ? -1 : 1;
  if (!xs && x->hot * y->span != y->hot * x->span)
    return x->hot * y->span > y->hot * x->span ? -1 : 1;
  return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Step 3: the entries on the other pages set in BITS.  Those of at most
   SMALL_PAGES pages come first, in address order: most functions and
   read-only objects are that small, and packed together the hot ones
   fill whole pages.  Then the larger ones, the densest first (the share
   of their pages set in BITS): a large table of which a start reads a
   few pages costs those reads wherever it lies, but placed among the
   small symbols it would spread them over its whole size.  */
static int
place_pages (struct composer *c, const unsigned char *bits,
             uint64_t capacity)
{
  struct candidate *cand = malloc ((c->n + 1) * sizeof *cand);
  unsigned char *seen = calloc (c->n + 1, 1);
  size_t n = 0;
  if (cand == NULL || seen == NULL)
    {
      free (cand);
      free (seen);
      return -1;
    }
  for (size_t k = 0; k < c->n_pages; k++)
    {
      size_t i = c->pages[k].index;
      if (c->done[i] || seen[i] || c->pages[k].value >= capacity
          || !pbitmap_test (bits, c->pages[k].value))
        continue;
      seen[i] = 1;
      cand[n] = (struct candidate) {
        .entry = i, .span = c->e[i].last_page - c->e[i].first_page + 1 };
      for (uint64_t p = c->e[i].first_page; p <= c->e[i].last_page; p++)
        cand[n].hot += p < capacity && pbitmap_test (bits, p);
      n++;
    }
  if (n > 1)
    qsort (cand, n, sizeof *cand, candidate_cmp);
  for (size_t k = 0; k < n; k++)
    take (c, cand[k].entry);
  free (cand);
  free (seen);
  return 0;
}

/* Writes the names of C to OUTPUT through a temporary file beside it.  */
static int
write_order (const char *output, const struct composer *c)
{
  struct new_file nf;
  FILE *f = new_file_begin (&nf, output);
  if (f == NULL)
    return -1;
  fputs (PBITMAP_ORDER_HEADER "\n", f);
  for (size_t i = 0; i < c->n_list; i++)
    fprintf (f, "%s\n", c->e[c->list[i]].name);
  return new_file_commit (&nf, f);
}

/* Whether 'calls' orders the code: every trace has it.  */
static int
code_by_calls (const struct lists *l, const char *binary)
{
  if (l->calls.traces > 0 && l->calls.traces < l->traces)
    elfpatch_warn ("%s: %zu of %zu traces have no 'calls'; the code is "
                   "ordered by its pages", binary,
                   l->traces - l->calls.traces, l->traces);
  return l->traces > 0 && l->calls.traces == l->traces;
}

/* The three steps, into C.  */
static int
compose (struct composer *c, struct lists *l, const struct fill_policy *p,
         const unsigned char *bits, uint64_t capacity, const char *binary)
{
  c->done = calloc (c->n + 1, 1);
  c->list = malloc ((c->n + 1) * sizeof *c->list);
  if (c->done == NULL || c->list == NULL)
    return -1;
  c->by_calls = code_by_calls (l, binary);
  if (c->by_calls)
    {
      listing_rank (&l->calls, p, l->traces, NULL, 0);
      if (place_calls (c, &l->calls, binary) != 0)
        return -1;
    }
  listing_rank (&l->order, p, l->traces, bits, capacity);
  if (index_pages (c) != 0)
    return -1;
  place_order (c, &l->order);
  return place_pages (c, bits, capacity);
}

/* Tenths of a KiB, rounded.  */
static uint64_t
kib10 (uint64_t bytes)
{
  return (bytes * 10 + 512) / 1024;
}

static void
summary (const struct composer *c, const char *binary, size_t n_traces)
{
  uint64_t code = 0, data = 0;
  for (size_t i = 0; i < c->n_list; i++)
    *(c->e[c->list[i]].exec ? &code : &data) += c->e[c->list[i]].size;
  if (c->unwritable > 0)
    elfpatch_warn ("%s: %zu symbol%s left out: no name an order file can "
                   "hold (a space, a control byte, a leading '#')", binary,
                   c->unwritable, c->unwritable == 1 ? "" : "s");
  elfpatch_note ("%s: %zu symbols (%" PRIu64 ".%" PRIu64 " KiB of code, %"
                 PRIu64 ".%" PRIu64 " KiB of data) from %zu trace%s",
                 binary, c->n_list, kib10 (code) / 10, kib10 (code) % 10,
                 kib10 (data) / 10, kib10 (data) % 10, n_traces,
                 n_traces == 1 ? "" : "s");
}

int
order_command (char **traces, size_t n_traces, const char *binary,
               const struct fill_policy *policy, const char *debug_path,
               const char *output)
{
  struct image img;
  struct debug_file d = { .fd = -1 };
  struct lists l = { 0 };
  struct entry *e = NULL;
  struct composer c = { 0 };
  unsigned char *bits = NULL;
  int status = 1;

  if (image_open (binary, IMAGE_ANY_REGION, &img) != 0)
    goto out;
  if (img.debug_file)
    {
      error (0, 0, "error: %s: a separate debug file; name the program, "
             "and this file with --debug-file", binary);
      goto out;
    }
  long n = binary_entries (&img, debug_path, &d, &e);
  if (n < 0)
    goto out;
  uint64_t capacity = img.region.hdr.capacity;
  bits = calloc ((size_t) pbitmap_bits_size (capacity) + 1, 1);
  if (bits == NULL)
    {
      error (0, errno, "error: %s", binary);
      goto out;
    }
  if (fill_select (&img, traces, n_traces, policy, bits, collect_lists, &l)
      != 0)
    goto out;
  c.e = e;
  c.n = (size_t) n;
  if (compose (&c, &l, policy, bits, capacity, binary) != 0)
    {
      error (0, errno, "error: %s", binary);
      goto out;
    }
  if (write_order (output, &c) != 0)
    goto out;
  summary (&c, binary, n_traces);
  status = 0;

out:
  free (c.done);
  free (c.list);
  free (c.pages);
  free (bits);
  free (l.calls.v);
  free (l.order.v);
  free (e);
  debug_file_close (&d);
  image_close (&img);
  return status;
}
