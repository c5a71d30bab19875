/* order.c: the order file on the linker side, and what the link made of it.
 *
 * An order file (doc/format.md, section 4) lists symbol names, one a
 * line, in the order the link should place the input sections that define
 * them, so that the code and read-only data a start needs end up next to
 * each other.  Every link route reads it here, with the same checks and
 * the same "FILE:LINE: ..." errors: the plugin (ld.bfd and gold) when it
 * is loaded, pbitmap-ld (lld, mold) before it runs the linker.  A file
 * that breaks a rule fails the link before any output is written.
 *
 * Names are kept in file order, each once (the first line counts), with
 * a hash table for the linker side's lookups of input symbols.
 *
 * After the link, order_report reads the output's own symbol table and
 * says, in one line that is the same on every route, how much of the
 * list the output holds in list order:
 *
 *   placed X of Y MiB in order (N of M symbols)
 *
 * M is the number of names in the file; Y the bytes of those the output
 * defines (st_size, aliases at one address counted once).  N and X are
 * the longest sequence of listed names, in list order, whose addresses do
 * not decrease: the names that are where the order put them, whatever
 * the linker was asked to do.  Functions, read-only data and RELRO data
 * are counted apart, as linkers keep them in different sections, in any
 * order.
 * Names the output does not define at all make one warning with their
 * count and the first few of them.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "pbitmap-order.h"
#include "plugin.h"

#define ORDER_SHOWN 3           /* missing names a warning spells out */

/* ---- reading --------------------------------------------------------- */

static void __attribute__ ((format (printf, 3, 4)))
line_error (const struct order *o, size_t line, const char *fmt, ...)
{
  char text[256];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);
  plugin_message (LDPL_FATAL, "%s:%zu: %s", o->path, line, text);
}

/* The whole file at PATH, NUL-terminated; *SIZE without the NUL. */
static char *
read_file (const char *path, size_t *size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  char *text = NULL;
  size_t have = 0;

  if (fd < 0 || fstat (fd, &st) != 0)
    goto fail;
  if (!S_ISREG (st.st_mode))
    {
      errno = EINVAL;
      goto fail;
    }
  text = malloc ((size_t) st.st_size + 1);
  if (text == NULL)
    goto fail;
  while (have < (size_t) st.st_size)
    {
      ssize_t n = read (fd, text + have, (size_t) st.st_size - have);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = EIO;        /* it shrank under us */
          goto fail;
        }
      have += n;
    }
  close (fd);
  text[have] = '\0';
  *size = have;
  return text;

 fail:
  plugin_message (LDPL_FATAL, "%s: %s", path,
                  errno == EINVAL ? "not a regular file" : strerror (errno));
  if (fd >= 0)
    close (fd);
  free (text);
  return NULL;
}

/* Checks the first line, PBITMAP_ORDER_HEADER. */
static bool
check_header (const struct order *o, const char *line)
{
  const char *v = line + strlen (PBITMAP_ORDER_MAGIC);
  char *end;
  unsigned long version;

  if (strcmp (line, PBITMAP_ORDER_HEADER) == 0)
    return true;
  if (strncmp (line, PBITMAP_ORDER_MAGIC, strlen (PBITMAP_ORDER_MAGIC)) == 0
      && *v >= '0' && *v <= '9')
    {
      errno = 0;
      version = strtoul (v, &end, 10);
      if (*end == '\0' && errno == 0 && version != PBITMAP_ORDER_VERSION)
        {
          line_error (o, 1, "unsupported order file version %lu", version);
          return false;
        }
    }
  line_error (o, 1, "not a pbitmap order file (expected '" PBITMAP_ORDER_MAGIC
              "%d')", PBITMAP_ORDER_VERSION);
  return false;
}

/* Checks a name line: only bytes pbitmap_order_name_byte takes. */
static bool
check_name (const struct order *o, size_t line, const char *name)
{
  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    {
      if (pbitmap_order_name_byte (*p))
        continue;
      else if (*p == ' ')
        line_error (o, line, "a name may not contain a space");
      else if (*p == '\t')
        line_error (o, line, "a name may not contain a tab");
      else
        line_error (o, line, "a name may not contain the control byte "
                    "0x%02x", *p);
      return false;
    }
  return true;
}

/* FNV-1a: names are short and many. */
static uint32_t
hash_name (const char *name)
{
  uint32_t h = 2166136261u;

  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h;
}

/* The slot NAME is in, or the empty slot where it would go. */
static size_t
find_slot (const struct order *o, const char *name)
{
  size_t i = hash_name (name) & o->mask;

  while (o->slots[i] != 0 && strcmp (o->names[o->slots[i] - 1], name) != 0)
    i = (i + 1) & o->mask;
  return i;
}

size_t
order_find (const struct order *o, const char *name)
{
  size_t i;

  if (o->count == 0)
    return ORDER_NONE;
  i = find_slot (o, name);
  return o->slots[i] != 0 ? o->slots[i] - 1 : ORDER_NONE;
}

/* Adds NAME unless it is there already. */
static void
add_name (struct order *o, const char *name)
{
  size_t i = find_slot (o, name);

  if (o->slots[i] != 0)
    return;
  o->names[o->count++] = name;
  o->slots[i] = (uint32_t) o->count;
}

/* Splits the text into lines (in place), checks each and collects the
 * names; LINES is an upper bound of their number. */
static bool
parse (struct order *o, char *text, size_t size, size_t lines)
{
  size_t nslots = 16;
  char *p = text, *end = text + size;

  while (nslots < 2 * lines)
    nslots *= 2;
  o->names = malloc (lines * sizeof *o->names);
  o->slots = calloc (nslots, sizeof *o->slots);
  o->mask = nslots - 1;
  if (o->names == NULL || o->slots == NULL)
    {
      plugin_message (LDPL_FATAL, "%s: out of memory", o->path);
      return false;
    }
  for (size_t line = 1; line == 1 || p < end; line++)
    {
      char *nl = memchr (p, '\n', end - p);
      size_t len = (nl != NULL ? nl : end) - p;

      if (len + 1 > PBITMAP_ORDER_LINE_MAX)
        line_error (o, line, "a line may be at most %d bytes, its newline "
                    "included", PBITMAP_ORDER_LINE_MAX);
      else if (memchr (p, '\0', len) != NULL)
        line_error (o, line, "a line may not contain a NUL byte");
      else if (memchr (p, '\r', len) != NULL)
        line_error (o, line, "a line may not contain a carriage return");
      else if (nl == NULL && (line > 1 || len > 0))
        line_error (o, line, "the last line has no newline (is the file "
                    "cut short?)");
      else
        goto good;
      return false;
    good:
      p[len] = '\0';
      if (line == 1 ? !check_header (o, p)
          : (*p != '\0' && *p != '#' && !check_name (o, line, p)))
        return false;
      if (line > 1 && *p != '\0' && *p != '#')
        add_name (o, p);
      p += len + 1;
    }
  return true;
}

int
order_read (const char *path, struct order *o)
{
  size_t size, lines = 1;

  memset (o, 0, sizeof *o);
  o->path = path;
  o->text = read_file (path, &size);
  if (o->text == NULL)
    return -1;
  for (const char *p = o->text; (p = memchr (p, '\n', o->text + size - p));
       p++)
    lines++;
  if (!parse (o, o->text, size, lines))
    {
      order_free (o);
      return -1;
    }
  return 0;
}

void
order_free (struct order *o)
{
  free (o->text);
  free (o->names);
  free (o->slots);
  memset (o, 0, sizeof *o);
}

int
order_write_names (const struct order *o, int fd, const char *path)
{
  FILE *f = fdopen (dup (fd), "w");
  int status = 0;

  if (f == NULL)
    status = -1;
  for (size_t i = 0; f != NULL && i < o->count; i++)
    /* lld's reader cuts a line at '#'; such a name cannot be given. */
    if (strchr (o->names[i], '#') == NULL)
      fprintf (f, "%s\n", o->names[i]);
  if (f != NULL && fclose (f) != 0)
    status = -1;
  if (status != 0)
    plugin_message (LDPL_FATAL, "%s: %s", path, strerror (errno));
  return status;
}

/* ---- what the output holds -------------------------------------------- */

/* Where the output defines one listed name: its lowest address in an
 * allocated section. */
struct where
{
  GElf_Addr addr;
  GElf_Xword size;
  bool defined;
  unsigned kind;                /* code, read-only data, other data */
};

/* The section flags of every section of ELF, indexed by section number;
 * *N is their count. */
static GElf_Xword *
section_flags (Elf *elf, size_t *n)
{
  GElf_Xword *flags;

  if (elf_getshdrnum (elf, n) != 0)
    return NULL;
  flags = calloc (*n + 1, sizeof *flags);
  for (size_t i = 0; flags != NULL && i < *n; i++)
    {
      GElf_Shdr shdr;
      Elf_Scn *scn = elf_getscn (elf, i);

      if (scn != NULL && gelf_getshdr (scn, &shdr) != NULL)
        flags[i] = shdr.sh_flags;
    }
  return flags;
}

/* The first symbol table of ELF and its header, and the data of its
 * SHT_SYMTAB_SHNDX (*XNDX, or NULL); NULL when there is none. */
static Elf_Scn *
symtab_of (Elf *elf, GElf_Shdr *shdr, Elf_Data **xndx)
{
  Elf_Scn *scn = NULL, *symtab = NULL;

  memset (shdr, 0, sizeof *shdr);
  *xndx = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr s;

      if (gelf_getshdr (scn, &s) == NULL)
        continue;
      if (s.sh_type == SHT_SYMTAB && symtab == NULL)
        {
          symtab = scn;
          *shdr = s;
        }
      else if (s.sh_type == SHT_SYMTAB_SHNDX)
        *xndx = elf_getdata (scn, NULL);
    }
  return symtab;
}

bool
order_symbols (const struct order *o, Elf *elf, order_symbol_fn *fn,
               void *arg)
{
  GElf_Shdr shdr;
  Elf_Data *xndx, *data;
  Elf_Scn *symtab = symtab_of (elf, &shdr, &xndx);

  if (symtab == NULL || shdr.sh_entsize == 0
      || (data = elf_getdata (symtab, NULL)) == NULL)
    return false;
  for (size_t i = 1; i < shdr.sh_size / shdr.sh_entsize; i++)
    {
      GElf_Sym sym;
      Elf32_Word shndx;
      int type;
      const char *name;
      size_t k;

      if (gelf_getsymshndx (data, xndx, i, &sym, &shndx) == NULL)
        break;
      type = GELF_ST_TYPE (sym.st_info);
      if (sym.st_shndx != SHN_XINDEX)
        shndx = sym.st_shndx < SHN_LORESERVE ? sym.st_shndx : SHN_UNDEF;
      if ((type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT)
          && shndx != SHN_UNDEF
          && (name = elf_strptr (elf, shdr.sh_link, sym.st_name)) != NULL
          && (k = order_find (o, name)) != ORDER_NONE)
        fn (&sym, shndx, k, name, arg);
    }
  return true;
}

/* What locate gathers. */
struct located
{
  struct where *w;
  GElf_Xword *flags;            /* per section */
  size_t nsec;
};

static void
locate_symbol (const GElf_Sym *sym, size_t shndx, size_t k,
               const char *name, void *arg)
{
  struct located *l = arg;
  struct where *w = &l->w[k];

  (void) name;
  if (shndx >= l->nsec || !(l->flags[shndx] & SHF_ALLOC)
      || (w->defined && w->addr <= sym->st_value))
    return;
  w->addr = sym->st_value;
  w->size = sym->st_size;
  w->defined = true;
  w->kind = (l->flags[shndx] & SHF_EXECINSTR ? 0
             : l->flags[shndx] & SHF_WRITE ? 2 : 1);
}

/* Fills W (one entry per listed name) from the symbol table of ELF.
 * Returns false when there is none. */
static bool
locate (const struct order *o, Elf *elf, struct where *w)
{
  struct located l = { w, NULL, 0 };
  bool found;

  if ((l.flags = section_flags (elf, &l.nsec)) == NULL)
    return false;
  found = order_symbols (o, elf, locate_symbol, &l);
  free (l.flags);
  return found;
}

static int
compare_addr (const void *a, const void *b)
{
  const struct where *x = a, *y = b;

  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Bytes of the defined names, each address once (the largest size). */
static uint64_t
defined_bytes (const struct where *w, size_t count)
{
  struct where *d = malloc ((count + 1) * sizeof *d);
  size_t n = 0;
  uint64_t bytes = 0;

  if (d == NULL)
    return 0;
  for (size_t i = 0; i < count; i++)
    if (w[i].defined)
      d[n++] = w[i];
  qsort (d, n, sizeof *d, compare_addr);
  for (size_t i = 0; i < n; i++)
    if (i + 1 == n || d[i + 1].addr != d[i].addr)
      bytes += d[i].size;
    else if (d[i + 1].size < d[i].size)
      d[i + 1].size = d[i].size;
  free (d);
  return bytes;
}

/* The longest sequence, in list order, of the defined names of KIND
 * whose addresses do not decrease (patience sorting); adds its length to
 * *NAMES and its bytes, each address once, to *BYTES. */
static void
in_order (const struct where *w, size_t count, unsigned kind, size_t *names,
          uint64_t *bytes)
{
  size_t *tail = malloc ((count + 1) * sizeof *tail);   /* name per length */
  size_t *prev = malloc ((count + 1) * sizeof *prev);   /* chain links */
  size_t len = 0;

  if (tail == NULL || prev == NULL)
    goto out;
  for (size_t i = 0; i < count; i++)
    {
      size_t lo = 0, hi = len;

      if (!w[i].defined || w[i].kind != kind)
        continue;
      while (lo < hi)           /* the first tail above this address */
        {
          size_t mid = (lo + hi) / 2;

          if (w[tail[mid]].addr <= w[i].addr)
            lo = mid + 1;
          else
            hi = mid;
        }
      prev[i] = lo > 0 ? tail[lo - 1] : ORDER_NONE;
      tail[lo] = i;
      if (lo == len)
        len++;
    }
  *names += len;
  for (size_t i = len > 0 ? tail[len - 1] : ORDER_NONE; i != ORDER_NONE;
       i = prev[i])
    if (prev[i] == ORDER_NONE || w[prev[i]].addr != w[i].addr)
      *bytes += w[i].size;
 out:
  free (tail);
  free (prev);
}

/* One warning for the names OUTPUT does not define. */
static void
report_missing (const struct order *o, const struct where *w,
                const char *output)
{
  char shown[512] = "";
  size_t missing = 0, len = 0;

  for (size_t i = 0; i < o->count; i++)
    {
      if (w[i].defined)
        continue;
      if (missing < ORDER_SHOWN && len < sizeof shown)
        len += snprintf (shown + len, sizeof shown - len, "%s%.100s",
                         missing > 0 ? ", " : "", o->names[i]);
      else if (missing == ORDER_SHOWN && len < sizeof shown)
        len += snprintf (shown + len, sizeof shown - len, ", ...");
      missing++;
    }
  if (missing > 0)
    plugin_message (LDPL_WARNING, "%s: %zu of %zu names are not defined in "
                    "%s: %s", o->path, missing, o->count, output, shown);
}

void
order_report (const struct order *o, const char *output)
{
  struct where *w = calloc (o->count + 1, sizeof *w);
  int fd = open (output, O_RDONLY | O_CLOEXEC);
  Elf *elf = fd >= 0 ? elf_begin (fd, ELF_C_READ_MMAP, NULL) : NULL;
  size_t names = 0;
  uint64_t bytes = 0;

  if (w == NULL || elf == NULL || !locate (o, elf, w))
    plugin_message (LDPL_INFO, "%s has no symbol table to say how much of "
                    "%s it holds in order", output, o->path);
  else
    {
      report_missing (o, w, output);
      for (unsigned kind = 0; kind < 3; kind++)
        in_order (w, o->count, kind, &names, &bytes);
      plugin_message (LDPL_INFO, "placed %.1f of %.1f MiB in order (%zu of "
                      "%zu symbols)", bytes / 1048576.0,
                      defined_bytes (w, o->count) / 1048576.0, names,
                      o->count);
    }
  elf_end (elf);
  if (fd >= 0)
    close (fd);
  free (w);
}
