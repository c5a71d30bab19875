/* prefetch.c: the pbitmap runtime.  At program start it reads the
 * program's own pbitmap region and asks the kernel to read the pages the
 * bitmap marks, before anything else faults them in one by one.
 *
 * The protocol, step by step:
 *
 *  1. Environment.  PBITMAP=0 (or "off") turns the prefetch off;
 *     PBITMAP_DEBUG (any value but "", "0" and "off") makes the runtime
 *     print one line to standard error.  When a PBITMAP variable is
 *     present the runtime also reads AT_SECURE from the auxiliary vector:
 *     a setuid, setgid or file-capability program ignores all PBITMAP
 *     variables, and so does a program whose AT_SECURE cannot be read.
 *
 *  2. Program headers.  The region object defines the hidden symbol
 *     __pbitmap_region at the region.  The plugin places the region in the
 *     first PT_LOAD, in the first two pages of the file, so the ELF header
 *     is at the page boundary at or one page below it: the first candidate
 *     shares the region's page, the second is used only if the kernel says
 *     it is readable.  A candidate is the header when it has ELF magic,
 *     its program headers lie in its first page, and its one
 *     PT_PRESENT_BITMAP maps exactly to __pbitmap_region.  The load bias
 *     is the address of the ELF header minus the p_vaddr of the PT_LOAD
 *     with p_offset 0, and must agree with PT_PHDR when there is one.
 *
 *  3. Region.  Exactly one PT_PRESENT_BITMAP, inside the file range of one
 *     readable PT_LOAD at the matching address, holding a note and header
 *     exactly as include/pbitmap-format.h says.  Anything else: no valid
 *     bitmap, nothing is done.  A region without PBITMAP_F_FILLED or with
 *     pages_set 0 is an empty bitmap: nothing to do either.
 *
 *  4. Prefetch.  The PT_LOADs are visited in ascending address order; for
 *     each, the bits of the file pages it maps are scanned a 64-bit word at
 *     a time, skipping zero words.  A set page already mapped by an earlier
 *     PT_LOAD is skipped, so every file page is advised once.  Pages
 *     adjacent in memory join one run, and runs up to max_gap pages apart
 *     are joined too when the memory between them is mapped from the file
 *     (reading through a small gap costs less than another I/O).  Each
 *     run goes to madvise(MADV_WILLNEED) in calls of at most 512 KiB,
 *     because the kernel silently cuts one long call to its read-ahead
 *     window.  The debug line counts the pages advised (gaps included),
 *     the runs and the calls.
 *
 * The work is bounded by the region's size and the number of PT_LOADs.
 * Only raw system calls are made, nothing is allocated or written but the
 * debug line, and errno is never touched.  Pages outside every PT_LOAD
 * (section headers, debug information) are never read.
 */

#include <stddef.h>
#include <stdint.h>
#include <elf.h>

#include "pbitmap-format.h"
#include "prefetch.h"
#include "sys.h"

typedef Elf64_Ehdr rt_ehdr;
typedef Elf64_Phdr rt_phdr;
typedef Elf64_Dyn rt_dyn;

/* The program headers are read only when they lie in the first page of
   the file, which the PT_LOAD at offset 0 maps whole; that bounds their
   number as well.  */
#define RT_PAGE PBITMAP_PAGE_SIZE
#define RT_FIRST_PAGE_BYTES 4096u
#define RT_PHNUM_MAX (RT_FIRST_PAGE_BYTES / sizeof (rt_phdr))

/* Largest madvise call: one call over a longer range is silently cut to
   max (read_ahead_kb, max_sectors_kb).  */
#define RT_CALL_BYTES (512u * 1024u)

/* Longest NAME copied into the debug line.  */
#define RT_NAME_MAX 200u

/* The first byte of this object's region: the object the linker plugin
   adds to every link defines it, hidden, so its address is PC-relative
   (no GOT entry, no dynamic relocation, usable before a static PIE has
   relocated itself).  A link without that object fails.  */
extern const unsigned char __pbitmap_region[]
  __attribute__ ((visibility ("hidden")));

/* Word-sized loads from the bitmap, which other code only sees as
   bytes.  */
typedef uint64_t __attribute__ ((may_alias)) rt_word;

/* ---- environment ------------------------------------------------------ */

enum
{
  OPT_OFF = 1,                  /* PBITMAP=0 or off */
  OPT_DEBUG = 2,                /* PBITMAP_DEBUG set */
  OPT_SEEN = 4                  /* some PBITMAP variable present */
};

/* If S starts with PREFIX, the rest of S; else null.  */
static const char *
skip_prefix (const char *s, const char *prefix)
{
  for (; *prefix != '\0'; s++, prefix++)
    if (*s != *prefix)
      return NULL;
  return s;
}

static int
str_equal (const char *a, const char *b)
{
  for (; *a == *b; a++, b++)
    if (*a == '\0')
      return 1;
  return 0;
}

/* "", "0" and "off" mean no.  */
static int
value_is_off (const char *v)
{
  return *v == '\0' || str_equal (v, "0") || str_equal (v, "off");
}

static unsigned
env_options (char *const *envp)
{
  unsigned opts = 0;
  if (envp == NULL)
    return 0;
  for (; *envp != NULL; envp++)
    {
      const char *v = skip_prefix (*envp, "PBITMAP");
      if (v == NULL)
        continue;
      const char *w;
      if ((w = skip_prefix (v, "=")) != NULL)
        {
          opts |= OPT_SEEN;
          opts = value_is_off (w) ? opts | OPT_OFF : opts & ~OPT_OFF;
        }
      else if ((w = skip_prefix (v, "_DEBUG=")) != NULL)
        {
          opts |= OPT_SEEN;
          opts = value_is_off (w) ? opts & ~OPT_DEBUG : opts | OPT_DEBUG;
        }
    }
  return opts;
}

/* AT_SECURE from the auxiliary vector at AUXV, N words long (N even);
   -1 if it is not there.  */
static int
auxv_secure (const unsigned long *auxv, size_t n)
{
  for (size_t i = 0; i + 1 < n && auxv[i] != AT_NULL; i += 2)
    if (auxv[i] == AT_SECURE)
      return auxv[i + 1] != 0;
  return -1;
}

#if defined PBITMAP_HOOK_EXEC
/* An executable's initial stack holds the auxiliary vector right after
   the environment's terminating null.  The dynamic linker only ever
   shortens the environment in place (unsetenv, in secure mode), which
   leaves a null right after the first one: then AT_SECURE is not found
   and the program counts as secure, which it is.  */
static int
process_secure (char *const *envp)
{
  if (envp == NULL)
    return 1;
  while (*envp != NULL)
    envp++;
  int s = auxv_secure ((const unsigned long *) (envp + 1), 2 * 64);
  return s != 0;
}
#else
/* A library cannot trust that the array it is given is still the one on
   the initial stack (setenv may have moved it), so it reads the kernel's
   copy.  Anything unexpected counts as secure.  */
static int
process_secure (char *const *envp)
{
  (void) envp;
  unsigned long auxv[128];
  long fd = rt_openat (RT_AT_FDCWD, "/proc/self/auxv",
                       RT_O_RDONLY | RT_O_CLOEXEC);
  if (fd < 0)
    return 1;
  size_t have = 0;
  while (have < sizeof auxv)
    {
      long n = rt_read ((int) fd, (char *) auxv + have, sizeof auxv - have);
      if (n <= 0)
        break;
      have += (size_t) n;
    }
  rt_close ((int) fd);
  int s = auxv_secure (auxv, have / sizeof auxv[0]);
  return s != 0;
}
#endif

/* The options in effect: none under AT_SECURE.  */
static unsigned
options (char *const *envp)
{
  unsigned opts = env_options (envp);
  if (opts != 0 && process_secure (envp))
    return 0;
  return opts;
}

/* ---- program headers -------------------------------------------------- */

/* The program headers of this object and its load bias.  */
struct image
{
  const unsigned char *phdr;
  size_t phnum;
  size_t phentsize;
  uintptr_t bias;
};

static const rt_phdr *
image_phdr (const struct image *im, size_t i)
{
  return (const rt_phdr *) (im->phdr + i * im->phentsize);
}

/* Fills IM from the ELF header at EH.  Returns 0, or -1 when anything is
   unexpected.  */
static int
image_from_ehdr (const rt_ehdr *eh, struct image *im)
{
  if (eh == NULL || (uintptr_t) eh % RT_PAGE != 0
      || eh->e_ident[EI_MAG0] != ELFMAG0 || eh->e_ident[EI_MAG1] != ELFMAG1
      || eh->e_ident[EI_MAG2] != ELFMAG2 || eh->e_ident[EI_MAG3] != ELFMAG3
      || eh->e_ident[EI_CLASS] != ELFCLASS64
      || eh->e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                  ? ELFDATA2LSB : ELFDATA2MSB))
    return -1;
  size_t phnum = eh->e_phnum, phentsize = eh->e_phentsize;
  if (phnum == 0 || phnum > RT_PHNUM_MAX || phentsize < sizeof (rt_phdr)
      || phentsize % 8 != 0 || eh->e_phoff % 8 != 0
      || eh->e_phoff > RT_FIRST_PAGE_BYTES
      || phnum * phentsize > RT_FIRST_PAGE_BYTES - eh->e_phoff)
    return -1;

  im->phdr = (const unsigned char *) eh + eh->e_phoff;
  im->phnum = phnum;
  im->phentsize = phentsize;

  int have_bias = 0;
  for (size_t i = 0; i < phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      if (ph->p_type == PT_LOAD && ph->p_offset == 0 && !have_bias)
        {
          im->bias = (uintptr_t) eh - ph->p_vaddr;
          have_bias = 1;
        }
    }
  if (!have_bias)
    return -1;
  for (size_t i = 0; i < phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      if (ph->p_type == PT_PHDR
          && (uintptr_t) im->phdr - ph->p_vaddr != im->bias)
        return -1;
    }
  return 0;
}

/* ---- the region ------------------------------------------------------- */

/* The one PT_PRESENT_BITMAP, if it lies where it may be read.  */
static const rt_phdr *
region_phdr (const struct image *im)
{
  const rt_phdr *reg = NULL;
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      if (ph->p_type != PT_PRESENT_BITMAP)
        continue;
      if (reg != NULL)
        return NULL;
      reg = ph;
    }
  if (reg == NULL || reg->p_offset % 16 != 0
      || reg->p_filesz < PBITMAP_HEADER_SIZE)
    return NULL;

  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ld = image_phdr (im, i);
      if (ld->p_type != PT_LOAD || !(ld->p_flags & PF_R)
          || reg->p_offset < ld->p_offset
          || reg->p_offset - ld->p_offset > ld->p_filesz
          || reg->p_filesz > ld->p_filesz - (reg->p_offset - ld->p_offset))
        continue;
      if (reg->p_vaddr - ld->p_vaddr != reg->p_offset - ld->p_offset)
        return NULL;
      return reg;
    }
  return NULL;
}

/* Finds this object's ELF header from its region (step 2).  */
static int
image_find (struct image *im)
{
  uintptr_t region = (uintptr_t) __pbitmap_region;
  uintptr_t page = region & ~(uintptr_t) (RT_PAGE - 1);
  for (int k = 0; k < 2; k++, page -= RT_PAGE)
    {
      if (k > 0 && (page == 0 || !rt_readable (page)))
        return -1;
      const rt_phdr *reg;
      if (image_from_ehdr ((const rt_ehdr *) page, im) == 0
          && (reg = region_phdr (im)) != NULL
          && im->bias + reg->p_vaddr == region)
        return 0;
    }
  return -1;
}

/* The checked header of the region, or null.  */
static const struct pbitmap_header *
region_header (const struct image *im)
{
  const rt_phdr *reg = region_phdr (im);
  if (reg == NULL)
    return NULL;
  const struct pbitmap_header *h
    = (const struct pbitmap_header *) (im->bias + reg->p_vaddr);
  if ((uintptr_t) h % 16 != 0)
    return NULL;

  const char *name = PBITMAP_NOTE_NAME;
  for (unsigned i = 0; i < PBITMAP_NOTE_NAMESZ; i++)
    if (h->n_name[i] != name[i])
      return NULL;
  if (h->n_namesz != PBITMAP_NOTE_NAMESZ || h->n_type != PBITMAP_NT_BITMAP
      || (uint64_t) h->n_descsz + 20 != reg->p_filesz
      || h->magic != PBITMAP_MAGIC || h->version != PBITMAP_VERSION
      || h->header_size != PBITMAP_HEADER_SIZE
      || h->page_shift != PBITMAP_PAGE_SHIFT
      || h->capacity / 8 + (h->capacity % 8 != 0)
         > reg->p_filesz - PBITMAP_HEADER_SIZE)
    return NULL;
  return h;
}

/* ---- runs ------------------------------------------------------------- */

/* One PT_LOAD as the scan sees it: the file pages it maps and the
   distance from a file offset to its address.  */
struct segment
{
  uint64_t first;
  uint64_t last;                /* inclusive */
  uintptr_t vaddr;
  uintptr_t delta;              /* address = delta + offset */
};

struct counts
{
  uint64_t pages;
  uint64_t runs;
  uint64_t calls;
};

/* The run being built, [start, end), and the segment its last page is
   in.  */
struct runner
{
  uintptr_t start;
  uintptr_t end;
  size_t seg;
  uint64_t max_gap;
  const struct segment *segs;
  struct counts n;
};

static void
run_flush (struct runner *r)
{
  if (r->end == r->start)
    return;
  for (uintptr_t a = r->start; a < r->end;)
    {
      uintptr_t len = r->end - a < RT_CALL_BYTES ? r->end - a : RT_CALL_BYTES;
      rt_madvise (a, len, RT_MADV_WILLNEED);
      r->n.calls++;
      a += len;
    }
  r->n.pages += (r->end - r->start) / RT_PAGE;
  r->n.runs++;
  r->start = r->end = 0;
}

/* Whether the memory between segments FROM and TO (sorted indices) is
   all mapped from the file: each one starts where the one before ends.
   Reading through a gap is only safe over mapped memory.  */
static int
segments_adjacent (const struct segment *segs, size_t from, size_t to)
{
  for (size_t j = from; j < to; j++)
    if (segs[j + 1].delta + segs[j + 1].first * RT_PAGE
        > segs[j].delta + (segs[j].last + 1) * RT_PAGE)
      return 0;
  return 1;
}

static void
run_add (struct runner *r, uintptr_t addr, size_t seg)
{
  if (r->end != r->start)
    {
      if (addr == r->end
          || (addr > r->end && (addr - r->end) / RT_PAGE <= r->max_gap
              && segments_adjacent (r->segs, r->seg, seg)))
        {
          r->end = addr + RT_PAGE;
          r->seg = seg;
          return;
        }
      run_flush (r);
    }
  r->start = addr;
  r->end = addr + RT_PAGE;
  r->seg = seg;
}

/* The PT_LOADs that map file pages, sorted by address, into SEGS (room
   for RT_PHNUM_MAX).  A segment whose address and offset disagree modulo
   the page size cannot have been mapped and is left out.  */
static size_t
segments_collect (const struct image *im, struct segment *segs)
{
  size_t n = 0;
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      if (ph->p_type != PT_LOAD || ph->p_filesz == 0
          || (ph->p_vaddr - ph->p_offset) % RT_PAGE != 0
          || ph->p_filesz > UINT64_MAX - ph->p_offset)
        continue;
      struct segment s;
      s.first = ph->p_offset / RT_PAGE;
      s.last = (ph->p_offset + ph->p_filesz - 1) / RT_PAGE;
      s.vaddr = ph->p_vaddr;
      s.delta = im->bias + ph->p_vaddr - ph->p_offset;
      size_t j = n++;
      for (; j > 0 && segs[j - 1].vaddr > s.vaddr; j--)
        segs[j] = segs[j - 1];
      segs[j] = s;
    }
  return n;
}

/* Whether PAGE is mapped by one of the first K segments.  */
static int
page_seen (const struct segment *segs, size_t k, uint64_t page)
{
  for (size_t j = 0; j < k; j++)
    if (segs[j].first <= page && page <= segs[j].last)
      return 1;
  return 0;
}

/* Word W of the bitmap BITS of NBYTES bytes; past the last whole word the
   bytes are read one by one so nothing beyond the bitmap is touched.  */
static uint64_t
bits_word (const unsigned char *bits, uint64_t nbytes, uint64_t w)
{
  if (w < nbytes / 8)
    {
      uint64_t v = ((const rt_word *) bits)[w];
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      v = __builtin_bswap64 (v);
#endif
      return v;
    }
  uint64_t v = 0;
  for (uint64_t i = w * 8; i < nbytes && i < w * 8 + 8; i++)
    v |= (uint64_t) bits[i] << (8 * (i - w * 8));
  return v;
}

/* Adds the set pages in [FIRST, LAST] of segment K to R.  */
static void
scan_segment (const unsigned char *bits, uint64_t nbytes,
              const struct segment *segs, size_t k, uint64_t first,
              uint64_t last, struct runner *r)
{
  for (uint64_t w = first / 64; w <= last / 64; w++)
    {
      uint64_t word = bits_word (bits, nbytes, w);
      if (word == 0)
        continue;
      if (w == first / 64)
        word &= ~(uint64_t) 0 << (first % 64);
      if (w == last / 64 && last % 64 != 63)
        word &= ((uint64_t) 1 << (last % 64 + 1)) - 1;
      while (word != 0)
        {
          uint64_t page = w * 64 + (uint64_t) __builtin_ctzll (word);
          word &= word - 1;
          if (!page_seen (segs, k, page))
            run_add (r, segs[k].delta + page * RT_PAGE, k);
        }
    }
}

/* ---- the core --------------------------------------------------------- */

enum status
{
  ST_WILLNEED,
  ST_EMPTY,
  ST_INVALID,
  ST_OFF
};

/* Finds IM's region and prefetches what it marks.  */
static enum status
prefetch (const struct image *im, struct counts *n)
{
  const struct pbitmap_header *h = region_header (im);
  if (h == NULL)
    return ST_INVALID;
  if (!(h->flags & PBITMAP_F_FILLED) || h->pages_set == 0
      || h->capacity == 0)
    return ST_EMPTY;

  const unsigned char *bits = (const unsigned char *) h + PBITMAP_HEADER_SIZE;
  uint64_t nbytes = h->capacity / 8 + (h->capacity % 8 != 0);
  struct segment segs[RT_PHNUM_MAX];
  size_t nsegs = segments_collect (im, segs);

  struct runner r;
  r.start = r.end = 0;
  r.seg = 0;
  r.max_gap = h->max_gap;
  r.segs = segs;
  r.n.pages = r.n.runs = r.n.calls = 0;
  for (size_t k = 0; k < nsegs; k++)
    if (segs[k].first < h->capacity)
      {
        uint64_t last = segs[k].last < h->capacity ? segs[k].last
                                                    : h->capacity - 1;
        scan_segment (bits, nbytes, segs, k, segs[k].first, last, &r);
      }
  run_flush (&r);
  *n = r.n;
  return ST_WILLNEED;
}

/* What one run did, for the debug line.  */
struct outcome
{
  enum status st;
  struct counts n;
  uint64_t us;
  int have_image;
  struct image im;
};

/* ---- the debug line --------------------------------------------------- */

struct line
{
  char buf[RT_NAME_MAX + 120];
  size_t len;
};

/* Appends at most MAX bytes of the string S.  */
static void
line_str (struct line *l, const char *s, size_t max)
{
  for (size_t i = 0; i < max && s[i] != '\0' && l->len < sizeof l->buf; i++)
    l->buf[l->len++] = s[i];
}

static void
line_u64 (struct line *l, uint64_t v)
{
  char digits[20];
  size_t n = 0;
  do
    {
      digits[n++] = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v != 0);
  while (n > 0 && l->len < sizeof l->buf)
    l->buf[l->len++] = digits[--n];
}

/* Prints the one line, with one write.  NAME may be null.  */
static void
report (const char *name, size_t name_max, const struct outcome *o)
{
  struct line l;
  l.len = 0;
  line_str (&l, "pbitmap: ", 16);
  line_str (&l, name != NULL ? name : "?", name_max);
  line_str (&l, ": ", 16);
  switch (o->st)
    {
    case ST_WILLNEED:
      line_str (&l, "willneed pages=", 32);
      line_u64 (&l, o->n.pages);
      line_str (&l, " runs=", 16);
      line_u64 (&l, o->n.runs);
      line_str (&l, " calls=", 16);
      line_u64 (&l, o->n.calls);
      line_str (&l, " us=", 16);
      line_u64 (&l, o->us);
      break;
    case ST_EMPTY:
      line_str (&l, "empty bitmap", 32);
      break;
    case ST_INVALID:
      line_str (&l, "no valid bitmap", 32);
      break;
    case ST_OFF:
      line_str (&l, "off", 32);
      break;
    }
  if (l.len == sizeof l.buf)
    l.len--;
  l.buf[l.len++] = '\n';
  rt_write (2, l.buf, l.len);
}

static uint64_t
now_ns (void)
{
  struct rt_timespec ts;
  if (rt_clock_gettime (RT_CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* ---- the hooks -------------------------------------------------------- */

/* Runs the core on this object, as OPTS say.  */
static void
run (unsigned opts, struct outcome *o)
{
  uint64_t t0 = 0;
  o->n.pages = o->n.runs = o->n.calls = 0;
  o->us = 0;
  o->have_image = 0;
  o->st = ST_OFF;
  if (opts & OPT_DEBUG)
    t0 = now_ns ();
  if (!(opts & OPT_OFF))
    {
      o->have_image = image_find (&o->im) == 0;
      o->st = o->have_image ? prefetch (&o->im, &o->n) : ST_INVALID;
    }
  if (opts & OPT_DEBUG)
    {
      uint64_t t1 = now_ns ();
      o->us = t1 > t0 ? (t1 - t0) / 1000 : 0;
    }
}

#if defined PBITMAP_HOOK_EXEC

void
__pbitmap_preinit (int argc, char **argv, char **envp)
{
  /* A static executable may have run this from its entry stub already.  */
  if (!__pbitmap_first_run ())
    return;
  unsigned opts = options (envp);
  struct outcome o;
  run (opts, &o);
  if (opts & OPT_DEBUG)
    report (argc > 0 && argv != NULL ? argv[0] : NULL, RT_NAME_MAX, &o);
}

/* glibc runs .preinit_array entries, in executables only, before any
   constructor, with (argc, argv, envp).  In a dynamic executable this is
   the earliest hook: the dynamic linker runs it before the initializers
   of the libraries, and jumps to the entry point only after them.  In a
   static one the plugin makes the entry stub (entry.S) the entry point,
   and this entry is the fallback.  */
static void (*const pbitmap_preinit_entry) (int, char **, char **)
  __attribute__ ((section (".preinit_array"), aligned (sizeof (void *)),
                  used)) = __pbitmap_preinit;

#else /* PBITMAP_HOOK_SHARED */

/* Whether [ADDR, ADDR + LEN) lies inside the file-backed part of one
   readable PT_LOAD; if so, *AVAIL is how many bytes from ADDR do.  */
static int
image_readable (const struct image *im, uintptr_t addr, size_t len,
                size_t *avail)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
        continue;
      uintptr_t start = im->bias + ph->p_vaddr;
      if (addr < start || addr - start > ph->p_filesz
          || len > ph->p_filesz - (addr - start))
        continue;
      *avail = ph->p_filesz - (addr - start);
      return 1;
    }
  return 0;
}

/* The address of the string table from DT_STRTAB's d_ptr, which the
   dynamic linker may or may not have relocated in place.  */
static uintptr_t
strtab_address (const struct image *im, uintptr_t d_ptr)
{
  size_t avail;
  if (image_readable (im, d_ptr, 1, &avail))
    return d_ptr;
  if (image_readable (im, d_ptr + im->bias, 1, &avail))
    return d_ptr + im->bias;
  return 0;
}

/* DT_SONAME of this library, read without trusting anything: every
   address is checked to lie in the library's own mapped file bytes.  */
static const char *
lib_name (const struct image *im, size_t *max)
{
  const char *fallback = "lib";
  const rt_phdr *dyn_ph = NULL;
  for (size_t i = 0; i < im->phnum; i++)
    if (image_phdr (im, i)->p_type == PT_DYNAMIC)
      dyn_ph = image_phdr (im, i);
  size_t avail;
  uintptr_t dyn_addr = dyn_ph != NULL ? im->bias + dyn_ph->p_vaddr : 0;
  if (dyn_ph == NULL || dyn_addr % 8 != 0
      || !image_readable (im, dyn_addr, sizeof (rt_dyn), &avail))
    return fallback;

  const rt_dyn *dyn = (const rt_dyn *) dyn_addr;
  if (avail > dyn_ph->p_filesz)
    avail = dyn_ph->p_filesz;
  size_t ndyn = avail / sizeof (rt_dyn);
  uint64_t soname = 0, strsz = 0;
  uintptr_t strtab = 0;
  int have_soname = 0;
  for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
    switch (dyn[i].d_tag)
      {
      case DT_SONAME:
        soname = dyn[i].d_un.d_val;
        have_soname = 1;
        break;
      case DT_STRTAB:
        strtab = strtab_address (im, dyn[i].d_un.d_ptr);
        break;
      case DT_STRSZ:
        strsz = dyn[i].d_un.d_val;
        break;
      }
  if (!have_soname || strtab == 0 || soname >= strsz
      || !image_readable (im, strtab + soname, 1, &avail))
    return fallback;
  if (avail > strsz - soname)
    avail = strsz - soname;
  if (*max > avail)
    *max = avail;
  return (const char *) (strtab + soname);
}

void
__pbitmap_init (int argc, char **argv, char **envp)
{
  (void) argc;
  (void) argv;
  unsigned opts = options (envp);
  struct outcome o;
  run (opts, &o);
  if (!(opts & OPT_DEBUG))
    return;
  /* With the prefetch off the headers were not looked at yet.  */
  if (!o.have_image)
    o.have_image = image_find (&o.im) == 0;
  size_t max = RT_NAME_MAX;
  const char *name = o.have_image ? lib_name (&o.im, &max) : "lib";
  report (name, max, &o);
}

/* glibc passes (argc, argv, envp) to .init_array entries too.  */
static void (*const pbitmap_init_entry) (int, char **, char **)
  __attribute__ ((section (".init_array"), aligned (sizeof (void *)),
                  used)) = __pbitmap_init;

#endif
