/* audit.c: pbitmap-audit.so, an LD_AUDIT module that prefetches every
 * object the dynamic linker maps, for programs that were not linked with
 * pbitmap.
 *
 * The GNU dynamic linker calls an audit module's la_objopen when it has
 * mapped an object and before it relocates it or runs any of its code:
 * for the executable first, then for every library, at start-up and in
 * dlopen.  That is as early as code of ours can run in the process, and
 * it sees the objects the runtime of a relinked program would see, plus
 * the executable and the libraries of a program that was never relinked.
 *
 * The protocol, per object:
 *
 *  1. Environment.  Read once, from the initial stack the kernel built
 *     (__libc_stack_end, exported by ld.so, points at argc; argv, the
 *     environment and the auxiliary vector follow).  A process with
 *     AT_SECURE, or whose vector is not found, gets nothing done at all.
 *     PBITMAP=off (or 0, or empty) turns the module off; PBITMAP_DEBUG
 *     makes it write one line per object to standard error;
 *     PBITMAP_STORE names the store, otherwise the user's store and then
 *     the system's are read (doc/format.md, section 5).
 *
 *  2. Headers.  The executable's program headers are where AT_PHDR says;
 *     a library's ELF header is at its load address (its first PT_LOAD is
 *     at address 0), faulted in with MADV_POPULATE_READ first, which fails
 *     where nothing is mapped, and its program headers must lie in that
 *     page.  The object's PT_DYNAMIC must be the dynamic linker's l_ld.
 *
 *  3. Bitmap.  The object's own region (PT_PRESENT_BITMAP, checked as
 *     doc/format.md section 2 says) when it is filled and sets a page;
 *     otherwise the store's entry of its build-id (the first
 *     NT_GNU_BUILD_ID note of its PT_NOTEs, read from memory): one open
 *     of a name computed from the build-id, one read, one close, so the
 *     cost does not grow with the store and no file is hashed.  An entry
 *     is used only when it is valid (include/pbitmap-store.h) and the
 *     build-id in it is the object's.  An object without a build-id is
 *     not looked up (hashing it at every start would cost more than
 *     demand paging).  Anything missing or wrong: nothing is done, and
 *     only PBITMAP_DEBUG says so.
 *
 *  4. Plan.  As the runtime plans (include/pbitmap-plan.h): the set pages
 *     inside each PT_LOAD's file range, each page once, in runs, cut into
 *     reads of at most 512 KiB that start and end at set pages and read
 *     through gaps of up to max_gap pages inside one PT_LOAD.  max_gap is
 *     the bitmap's, or with PBITMAP_F_GAP_AUTO the gap of the class of
 *     the device the object's file is on (sysfs, as the runtime tells
 *     it), looked up only when the reads are issued.
 *
 *  5. Residency.  Until the process has taken a major fault (getrusage;
 *     then every later object is issued too), the object's file is
 *     opened by its name and a one-byte preadv2 with RWF_NOWAIT of up to
 *     four planned pages (the last of reads spread over the plan: the
 *     first page of a file is read by exec or ld.so anyway) asks whether they are in the page cache; when
 *     all are, nothing is issued ("cached").  A warm start costs per
 *     object with a bitmap one getrusage, an open, four reads and a close
 *     on top of the store's open, read and close.
 *
 *  6. Issue.  Each read is one madvise (MADV_WILLNEED) of the object's
 *     mapping: the pages arrive while the dynamic linker maps the next
 *     objects and relocates.  The debug line's us= is the time the module
 *     took for the object, from la_objopen to its last call.
 *
 *  7. Done marks.  An object linked with pbitmap has its own runtime,
 *     which would prefetch it again (a residency sample cannot tell:
 *     right after WILLNEED the pages are not yet read).  The runtime must
 *     learn that this module did the work, before it runs, without a
 *     symbol it could look up (it calls no library) and without a name
 *     (LD_AUDIT may name a module that failed to load, or another copy).
 *     So the module writes, at la_objopen, into the object itself, where
 *     the linker plugin already told readers the runtime's data is
 *     (doc/format.md, Entry and Mark): a library's mark, "pbm-todo",
 *     becomes "pbm-done", and the executable's walk record, 0 until its
 *     runtime walks the libraries, becomes the address of the
 *     executable's own link_map entry.  A library's runtime that finds
 *     "pbm-done" in its own mark does nothing; the executable's runtime
 *     that finds its walk record already set does nothing, and the
 *     libraries' runtimes see a walk that ended at the executable (so
 *     each reads its own mark).  Each word is written only after it was
 *     checked to hold what the plugin put there, inside a writable
 *     PT_LOAD's file range (the mark) or memory (the record), before
 *     the object is relocated, so nothing the program computes is
 *     overwritten.  An object this module does nothing for keeps its
 *     words, and its runtime works as without the module.
 *
 * Like the runtime, this module is freestanding: it makes raw system
 * calls (runtime/sys.h) and allocates nothing, so that loading it costs
 * the dynamic linker one small object and no second C library, and it
 * never touches errno.  ld.so serializes la_objopen (it holds its load
 * lock), so the static state needs no locking.  x86-64 only, like the
 * runtime's system calls.
 */

/* Lmid_t, LM_ID_BASE and LAV_CURRENT.  */
#define _GNU_SOURCE 1

#include <stddef.h>
#include <stdint.h>
#include <elf.h>
#include <link.h>

#include "pbitmap-format.h"
#include "pbitmap-plan.h"
#include "pbitmap-store.h"
#include "sys.h"

#define EXPORT __attribute__ ((visibility ("default")))

/* Set by ld.so to the initial stack pointer, where argc is.  */
extern void *__libc_stack_end;

#define AUDIT_PAGE PBITMAP_PAGE_SIZE
#define AUDIT_PHNUM_MAX (AUDIT_PAGE / sizeof (Elf64_Phdr))
#define AUDIT_SAMPLES 4u
#define AUDIT_NAME_MAX 4096u
#define AUDIT_ENV_HOLES_MAX 4096u
#define AUDIT_AUXV_MAX 128u

/* ---- the process ---------------------------------------------------- */

enum { ST_UNSEEN, ST_ON, ST_OFF };

static struct
{
  int state;
  int debug;
  int cold;                     /* a major fault was seen */
  int exe_seen;
  const char *execfn;
  const Elf64_Phdr *at_phdr;
  unsigned long at_phnum;
  unsigned long euid;
  const char *store_env, *home, *xdg;
  unsigned long last_dev;       /* the device whose class is known */
  enum pbitmap_device last_class;
  int have_class;
} audit;

/* An entry is read whole into this buffer: .bss costs nothing until a
   page of it is used.  */
static unsigned char entry_buf[PBITMAP_STORE_ENTRY_MAX];

/* If S is NAME=VALUE, VALUE; else null.  */
static const char *
env_value (const char *s, const char *name)
{
  while (*name != '\0')
    if (*s++ != *name++)
      return NULL;
  return *s == '=' ? s + 1 : NULL;
}

static int
env_off (const char *v)
{
  return v[0] == '\0' || (v[0] == '0' && v[1] == '\0')
         || (v[0] == 'o' && v[1] == 'f' && v[2] == 'f' && v[3] == '\0');
}

/* Reads the environment and the auxiliary vector from the initial
   stack.  */
static void
audit_init (void)
{
  long *sp = __libc_stack_end;
  audit.state = ST_OFF;
  if (sp == NULL || (uintptr_t) sp % 8 != 0 || sp[0] < 0)
    return;
  char **argv = (char **) (sp + 1), **envp = argv + sp[0] + 1;
  if (argv[sp[0]] != NULL)
    return;
  int off = 0;
  char **p = envp;
  for (; *p != NULL; p++)
    {
      const char *v;
      if ((v = env_value (*p, "PBITMAP")) != NULL)
        off = env_off (v);
      else if ((v = env_value (*p, "PBITMAP_DEBUG")) != NULL)
        audit.debug = !env_off (v);
      else if ((v = env_value (*p, "PBITMAP_STORE")) != NULL)
        audit.store_env = *v != '\0' ? v : NULL;
      else if ((v = env_value (*p, "HOME")) != NULL)
        audit.home = v;
      else if ((v = env_value (*p, "XDG_CACHE_HOME")) != NULL)
        audit.xdg = v;
    }
  /* ld.so removes variables from a secure process's environment, leaving
     nulls before the vector.  */
  for (unsigned holes = 0; *p == NULL; p++)
    if (++holes > AUDIT_ENV_HOLES_MAX)
      return;
  int secure = -1;
  const unsigned long *av = (const unsigned long *) p;
  for (unsigned i = 0; i < AUDIT_AUXV_MAX && av[0] != AT_NULL; i++, av += 2)
    switch (av[0])
      {
      case AT_SECURE: secure = av[1] != 0; break;
      case AT_EXECFN: audit.execfn = (const char *) av[1]; break;
      case AT_PHDR: audit.at_phdr = (const Elf64_Phdr *) av[1]; break;
      case AT_PHNUM: audit.at_phnum = av[1]; break;
      case AT_EUID: audit.euid = av[1]; break;
      }
  if (secure != 0 || off)
    return;
  audit.state = ST_ON;
}

/* ---- the debug line ---------------------------------------------------- */

struct line
{
  char buf[512];
  size_t len;
};

static void
line_str (struct line *l, const char *s)
{
  while (*s != '\0' && l->len < sizeof l->buf - 1)
    l->buf[l->len++] = *s++;
}

static void
line_num (struct line *l, const char *label, uint64_t v)
{
  char digits[24];
  unsigned n = 0;
  line_str (l, label);
  do
    digits[n++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0 && l->len < sizeof l->buf - 1)
    l->buf[l->len++] = digits[--n];
}

static void
line_emit (struct line *l)
{
  l->buf[l->len++] = '\n';
  rt_write (2, l->buf, l->len);
}

/* Starts L as "pbitmap-audit: NAME: WHAT".  */
static void
line_head (struct line *l, const char *name, const char *what)
{
  l->len = 0;
  line_str (l, "pbitmap-audit: ");
  line_str (l, name);
  line_str (l, ": ");
  line_str (l, what);
}

static void
say (const char *name, const char *what, const char *detail)
{
  struct line l;
  if (!audit.debug)
    return;
  line_head (&l, name, what);
  if (detail != NULL)
    line_str (&l, detail);
  line_emit (&l);
}

/* ---- the object ----------------------------------------------------------- */

struct object
{
  const char *name;
  uintptr_t bias;
  const Elf64_Phdr *ph;
  unsigned phnum;
};

/* The program headers of the library MAP, from its ELF header at its
   load address.  */
static int
library_headers (const struct link_map *map, struct object *o)
{
  uintptr_t eh = map->l_addr;
  if (eh == 0 || eh % AUDIT_PAGE != 0)
    return -1;
  long populated = rt_populate (eh, AUDIT_PAGE);
  if (populated != 0 && populated != -RT_EINVAL)
    return -1;
  const Elf64_Ehdr *e = (const Elf64_Ehdr *) eh;
  if (e->e_ident[EI_MAG0] != ELFMAG0 || e->e_ident[EI_MAG1] != ELFMAG1
      || e->e_ident[EI_MAG2] != ELFMAG2 || e->e_ident[EI_MAG3] != ELFMAG3
      || e->e_ident[EI_CLASS] != ELFCLASS64
      || e->e_phentsize != sizeof (Elf64_Phdr) || e->e_phoff % 8 != 0
      || e->e_phnum > AUDIT_PHNUM_MAX
      || e->e_phoff > AUDIT_PAGE - e->e_phnum * sizeof (Elf64_Phdr))
    return -1;
  o->ph = (const Elf64_Phdr *) (eh + e->e_phoff);
  o->phnum = e->e_phnum;
  return 0;
}

/* The object MAP as O: headers found, and its PT_DYNAMIC is l_ld.  */
static int
object_of (const struct link_map *map, int exe, struct object *o)
{
  o->bias = map->l_addr;
  o->name = map->l_name;
  if (exe)
    {
      o->ph = audit.at_phdr;
      o->phnum = (unsigned) audit.at_phnum;
      o->name = audit.execfn;
      if (o->ph == NULL || o->phnum > AUDIT_PHNUM_MAX
          || (uintptr_t) o->ph % 8 != 0)
        return -1;
    }
  else if (library_headers (map, o) != 0)
    return -1;
  for (unsigned i = 0; i < o->phnum; i++)
    if (o->ph[i].p_type == PT_DYNAMIC)
      return (uintptr_t) map->l_ld == o->bias + o->ph[i].p_vaddr ? 0 : -1;
  return -1;
}

/* Whether [OFFSET, OFFSET + SIZE) of the file lies in the file range of
   one PT_LOAD with FLAGS; its address into *ADDR.  With MEM, the range is
   of addresses and may reach into the PT_LOAD's p_memsz.  */
static int
object_holds (const struct object *o, uint64_t offset, uint64_t size,
              unsigned flags, uintptr_t *addr)
{
  for (unsigned i = 0; i < o->phnum; i++)
    {
      const Elf64_Phdr *ph = &o->ph[i];
      if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags
          && offset >= ph->p_offset && offset - ph->p_offset <= ph->p_filesz
          && size <= ph->p_filesz - (offset - ph->p_offset))
        {
          *addr = o->bias + ph->p_vaddr + (offset - ph->p_offset);
          return 1;
        }
    }
  return 0;
}

/* Whether the LEN bytes at address ADDR lie in the memory of a PT_LOAD
   with FLAGS.  */
static int
memory_holds (const struct object *o, uintptr_t addr, uint64_t len,
              unsigned flags, int mem)
{
  for (unsigned i = 0; i < o->phnum; i++)
    {
      const Elf64_Phdr *ph = &o->ph[i];
      uint64_t size = mem ? ph->p_memsz : ph->p_filesz;
      uintptr_t start = o->bias + ph->p_vaddr;
      if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags
          && addr >= start && addr - start <= size
          && len <= size - (addr - start))
        return 1;
    }
  return 0;
}

/* The object's valid region, in memory, or null.  */
static const unsigned char *
object_region (const struct object *o)
{
  const Elf64_Phdr *reg = NULL;
  for (unsigned i = 0; i < o->phnum; i++)
    if (o->ph[i].p_type == PT_PRESENT_BITMAP)
      {
        if (reg != NULL)
          return NULL;
        reg = &o->ph[i];
      }
  uintptr_t at;
  if (reg == NULL || reg->p_offset % PBITMAP_READ_ALIGN != 0
      || reg->p_filesz < PBITMAP_HEADER_SIZE
      || !object_holds (o, reg->p_offset, reg->p_filesz, PF_R, &at)
      || at != o->bias + reg->p_vaddr
      || pbitmap_header_check ((const struct pbitmap_header *) at,
                               reg->p_filesz) != PBITMAP_HEADER_OK)
    return NULL;
  return (const unsigned char *) at;
}

/* The first NT_GNU_BUILD_ID of the object's PT_NOTEs: its length (0:
   none) and bytes at *ID.  */
static unsigned
object_build_id (const struct object *o, const unsigned char **id)
{
  for (unsigned i = 0; i < o->phnum; i++)
    {
      const Elf64_Phdr *ph = &o->ph[i];
      uintptr_t at;
      if (ph->p_type != PT_NOTE
          || !object_holds (o, ph->p_offset, ph->p_filesz, PF_R, &at))
        continue;
      uint64_t align = ph->p_align == 8 ? 8 : 4;
      for (uint64_t pos = 0; ph->p_filesz - pos >= 12;)
        {
          const uint32_t *n = (const uint32_t *) (at + pos);
          uint64_t name = (n[0] + align - 1) & ~(align - 1);
          uint64_t desc = (n[1] + align - 1) & ~(align - 1);
          if (name > ph->p_filesz || desc > ph->p_filesz
              || 12 + name + desc > ph->p_filesz - pos)
            break;
          const char *owner = (const char *) (n + 3);
          if (n[2] == NT_GNU_BUILD_ID && n[0] == 4 && owner[0] == 'G'
              && owner[1] == 'N' && owner[2] == 'U' && owner[3] == '\0'
              && n[1] > 0 && n[1] <= 256)
            {
              *id = (const unsigned char *) owner + name;
              return n[1];
            }
          pos += 12 + name + desc;
        }
    }
  return 0;
}

/* ---- the store -------------------------------------------------------------- */

static char *
put (char *p, char *end, const char *s)
{
  while (*s != '\0' && p < end)
    *p++ = *s++;
  return p;
}

/* The path of store N (0, 1, ...) into BUF, NAME appended; 0, or -1
   when there is no store N.  */
static int
store_path (unsigned n, const char *name, char *buf, size_t size)
{
  const char *dirs[3], *tail[3];
  unsigned k = 0;
  if (audit.store_env != NULL)
    dirs[k] = audit.store_env, tail[k++] = "";
  else
    {
      if (audit.euid != 0 && audit.xdg != NULL && audit.xdg[0] == '/')
        dirs[k] = audit.xdg, tail[k++] = "/pbitmap";
      else if (audit.euid != 0 && audit.home != NULL && audit.home[0] != '\0')
        dirs[k] = audit.home, tail[k++] = "/.cache/pbitmap";
      dirs[k] = PBITMAP_STORE_SYSTEM_DIR, tail[k++] = "";
    }
  if (n >= k)
    return -1;
  char *p = buf, *end = buf + size - 1;
  p = put (p, end, dirs[n]);
  p = put (p, end, tail[n]);
  p = put (p, end, "/");
  p = put (p, end, name);
  if (p == end)
    return -1;
  *p = '\0';
  return 0;
}

/* Reads the entry of build-id ID (LEN bytes) from the first store that
   has one; its region, or null.  FROM gets the entry's path.  */
static const unsigned char *
store_region (const char *objname, const unsigned char *id, unsigned len,
              char *from, size_t fromsize)
{
  char name[PBITMAP_STORE_NAME_MAX];
  pbitmap_store_name_build_id (name, id, len);
  for (unsigned n = 0; store_path (n, name, from, fromsize) == 0; n++)
    {
      long fd = rt_openat (RT_AT_FDCWD, from,
                           RT_O_RDONLY | RT_O_CLOEXEC | RT_O_NONBLOCK);
      if (fd < 0)
        continue;
      long got = rt_preadv2 ((int) fd, entry_buf, sizeof entry_buf, 0, 0);
      rt_close ((int) fd);
      const unsigned char *e = entry_buf;
      if (got < 0 || (unsigned long) got == sizeof entry_buf
          || pbitmap_store_check (e, (uint64_t) got) != PBITMAP_STORE_OK)
        {
          say (objname, "bad store entry ", from);
          return NULL;
        }
      if (pbitmap_store_u32 (e + PBITMAP_STORE_OFF_ID_LEN) != len)
        goto other;
      for (unsigned i = 0; i < len; i++)
        if (e[PBITMAP_STORE_HEADER_SIZE + i] != id[i])
          goto other;
      return e + pbitmap_store_u32 (e + PBITMAP_STORE_OFF_REGION_OFFSET);
    other:
      say (objname, "another build's store entry ", from);
      return NULL;
    }
  return NULL;
}

/* ---- the plan ------------------------------------------------------------ */

enum plan_mode { PLAN_COUNT, PLAN_SAMPLE, PLAN_ISSUE };

struct plan
{
  enum plan_mode mode;
  uintptr_t delta;              /* address of file page 0 in this load */
  uint64_t pages, runs, reads, last_end;
  uint64_t sample_every, sample_next;
  uint64_t samples[AUDIT_SAMPLES];
  unsigned nsamples;
};

static void
plan_chunk (void *ctx, uint64_t first, uint64_t npages)
{
  struct plan *p = ctx;
  if (p->mode == PLAN_ISSUE)
    rt_madvise (p->delta + first * AUDIT_PAGE, npages * AUDIT_PAGE,
                RT_MADV_WILLNEED);
  else if (p->mode == PLAN_SAMPLE && p->reads == p->sample_next
           && p->nsamples < AUDIT_SAMPLES)
    {
      p->samples[p->nsamples++] = first + npages - 1;
      p->sample_next += p->sample_every;
    }
  if (p->reads == 0 || first != p->last_end)
    p->runs++;
  p->reads++;
  p->pages += npages;
  p->last_end = first + npages;
}

/* Feeds the set pages of BITS (CAPACITY pages) in each PT_LOAD's file
   range of O to a chunker at GAP, each page once.  */
static void
plan_run (const struct object *o, const unsigned char *bits,
          uint64_t capacity, uint32_t gap, struct plan *p)
{
  struct pbitmap_chunker c;
  uint64_t done = 0;            /* pages below are planned */
  p->pages = p->runs = p->reads = p->last_end = 0;
  p->nsamples = 0;
  p->sample_next = 0;
  for (unsigned i = 0; i < o->phnum; i++)
    {
      const Elf64_Phdr *ph = &o->ph[i];
      if (ph->p_type != PT_LOAD || ph->p_filesz == 0
          || (ph->p_vaddr - ph->p_offset) % AUDIT_PAGE != 0)
        continue;
      uint64_t first = ph->p_offset / AUDIT_PAGE;
      uint64_t last = (ph->p_offset + ph->p_filesz - 1) / AUDIT_PAGE;
      if (first < done)
        first = done;
      if (last >= capacity)
        last = capacity - 1;
      if (capacity == 0 || first > last)
        continue;
      p->delta = o->bias + ph->p_vaddr - ph->p_offset;
      pbitmap_chunker_init (&c, gap, plan_chunk, p);
      int in_load = 0;
      for (uint64_t page = first; page <= last; page++)
        if ((page & 7) == 0 && bits[page >> 3] == 0 && last - page >= 7)
          page += 7;
        else if (pbitmap_test (bits, page))
          {
            pbitmap_chunker_add (&c, page, 1, in_load);
            in_load = 1;
          }
      pbitmap_chunker_flush (&c);
      done = last + 1;
    }
}

/* ---- residency and the device ------------------------------------------- */

/* Whether every sampled page of the file NAME is in the page cache.  */
static int
samples_cached (const char *name, const struct plan *p)
{
  if (name == NULL || *name == '\0' || p->nsamples == 0)
    return 0;
  long fd = rt_openat (RT_AT_FDCWD, name,
                       RT_O_RDONLY | RT_O_CLOEXEC | RT_O_NONBLOCK);
  if (fd < 0)
    return 0;
  int cached = 1;
  char byte;
  for (unsigned i = 0; i < p->nsamples && cached; i++)
    cached = rt_preadv2 ((int) fd, &byte, 1,
                         (long) (p->samples[i] * AUDIT_PAGE),
                         RT_RWF_NOWAIT) == 1;
  rt_close ((int) fd);
  return cached;
}

/* The class of the device the file NAME is on; the last one is kept.  */
static enum pbitmap_device
device_of (const char *name)
{
  struct rt_stat st;
  static const struct pbitmap_sysfs sys = { rt_sysfs_readlink,
                                            rt_sysfs_first_byte, NULL };
  if (name == NULL || rt_newfstatat (RT_AT_FDCWD, name, &st, 0) != 0)
    return PBITMAP_DEVICE_UNKNOWN;
  if (!audit.have_class || st.st_dev != audit.last_dev)
    {
      audit.last_class = pbitmap_device_classify (rt_major (st.st_dev),
                                                  rt_minor (st.st_dev), &sys);
      audit.last_dev = st.st_dev;
      audit.have_class = 1;
    }
  return audit.last_class;
}

/* ---- done marks -------------------------------------------------------------- */

/* Whether ADDR lies in O's PT_GNU_RELRO, which the dynamic linker makes
   read-only after relocation: a mark is never there.  */
static int
in_relro (const struct object *o, uintptr_t addr)
{
  for (unsigned i = 0; i < o->phnum; i++)
    if (o->ph[i].p_type == PT_GNU_RELRO
        && addr >= o->bias + o->ph[i].p_vaddr
        && addr - (o->bias + o->ph[i].p_vaddr) < o->ph[i].p_memsz)
      return 1;
  return 0;
}

/* Tells the runtime of O, whose region is at REGION, that its work is
   done (step 7): the executable's walk record gets MAP, a library's mark
   "pbm-done".  */
static void
mark_done (const struct object *o, const unsigned char *region, int exe,
           const struct link_map *map)
{
  const struct pbitmap_header *h = (const struct pbitmap_header *) region;
  if (exe && h->entry != 0)
    {
      uintptr_t field = (uintptr_t) region + PBITMAP_OFF_ENTRY;
      uintptr_t slot = field + (uintptr_t) h->entry;
      if (slot % 8 != 0
          || !memory_holds (o, slot, PBITMAP_SLOT_SIZE, PF_R, 0))
        return;
      const uint64_t *words = (const uint64_t *) slot;
      uintptr_t record = slot + (uintptr_t) words[PBITMAP_SLOT_WALKED / 8];
      if (words[PBITMAP_SLOT_MAGIC / 8] == PBITMAP_SLOT_MAGIC_VALUE
          && record % 8 == 0
          && memory_holds (o, record, 8, PF_R | PF_W, 1)
          && *(volatile uintptr_t *) record == 0)
        *(volatile uintptr_t *) record = (uintptr_t) map;
    }
  else if (!exe && h->mark != 0)
    {
      uintptr_t mark = (uintptr_t) region + PBITMAP_OFF_MARK
                       + (uintptr_t) h->mark;
      if (mark % 8 == 0 && memory_holds (o, mark, 8, PF_R | PF_W, 0)
          && !in_relro (o, mark)
          && *(volatile uint64_t *) mark == PBITMAP_MARK_TODO)
        *(volatile uint64_t *) mark = PBITMAP_MARK_DONE;
    }
}

/* Microseconds of the monotonic clock, for the debug line only.  */
static uint64_t
now_us (void)
{
  struct rt_timespec ts;
  if (!audit.debug || rt_clock_gettime (RT_CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* ---- la_objopen ------------------------------------------------------------ */

static void
report (const char *name, const char *what, const struct plan *p,
        uint32_t gap, int chosen, enum pbitmap_device d, const char *from,
        uint64_t start)
{
  struct line l;
  if (!audit.debug)
    return;
  line_head (&l, name, what);
  line_num (&l, " pages=", p->pages);
  line_num (&l, " runs=", p->runs);
  if (what[0] == 'w')
    line_num (&l, " calls=", p->reads);
  line_num (&l, " us=", now_us () - start);
  if (chosen)
    {
      line_num (&l, " gap=", gap);
      line_str (&l, " (");
      line_str (&l, pbitmap_device_name (d));
      line_str (&l, ")");
    }
  line_str (&l, " from ");
  line_str (&l, from);
  line_emit (&l);
}

static void
object_prefetch (struct link_map *map, int exe)
{
  struct object o;
  char from[AUDIT_NAME_MAX + PBITMAP_STORE_NAME_MAX];
  const char *name = map->l_name;
  uint64_t start = now_us ();
  if (object_of (map, exe, &o) != 0)
    {
      say (name[0] ? name : "?", "headers not found", NULL);
      return;
    }
  name = o.name != NULL && o.name[0] != '\0' ? o.name : "?";
  const unsigned char *own = object_region (&o), *region = own;
  const struct pbitmap_header *h = (const struct pbitmap_header *) own;
  if (h == NULL || !(h->flags & PBITMAP_F_FILLED) || h->pages_set == 0)
    {
      const unsigned char *id;
      unsigned len = object_build_id (&o, &id);
      region = NULL;
      if (len == 0)
        say (name, "no build-id", NULL);
      else if ((region = store_region (name, id, len, from, sizeof from))
               == NULL)
        say (name, "no bitmap", NULL);
    }
  else
    *put (from, from + sizeof from - 1, "region") = '\0';
  if (region == NULL)
    return;
  h = (const struct pbitmap_header *) region;
  if (!(h->flags & PBITMAP_F_FILLED) || h->pages_set == 0)
    {
      say (name, "empty bitmap ", from);
      return;
    }

  const unsigned char *bits = region + PBITMAP_HEADER_SIZE;
  struct plan p = { .mode = PLAN_COUNT };
  plan_run (&o, bits, h->capacity, h->max_gap, &p);
  if (p.reads == 0)
    {
      say (name, "no page in a PT_LOAD ", from);
      return;
    }
  struct rt_rusage ru;
  if (!audit.cold && rt_getrusage (RT_RUSAGE_SELF, &ru) == 0
      && ru.ru_majflt > 0)
    audit.cold = 1;
  if (!audit.cold)
    {
      p.mode = PLAN_SAMPLE;
      p.sample_every = p.reads / AUDIT_SAMPLES + 1;
      plan_run (&o, bits, h->capacity, h->max_gap, &p);
      if (samples_cached (exe ? audit.execfn : map->l_name, &p))
        {
          report (name, "cached", &p, 0, 0, PBITMAP_DEVICE_UNKNOWN, from,
                  start);
          if (own != NULL)
            mark_done (&o, own, exe, map);
          return;
        }
    }
  uint32_t gap = h->max_gap;
  enum pbitmap_device d = PBITMAP_DEVICE_UNKNOWN;
  int chosen = (h->flags & PBITMAP_F_GAP_AUTO) != 0;
  if (chosen)
    gap = pbitmap_device_gap (d = device_of (exe ? audit.execfn
                                                 : map->l_name));
  p.mode = PLAN_ISSUE;
  plan_run (&o, bits, h->capacity, gap, &p);
  if (own != NULL)
    mark_done (&o, own, exe, map);
  report (name, "willneed", &p, gap, chosen, d, from, start);
}

EXPORT unsigned int
la_version (unsigned int version)
{
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

EXPORT unsigned int
la_objopen (struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
  (void) cookie;
  if (audit.state == ST_UNSEEN)
    audit_init ();
  int exe = lmid == LM_ID_BASE && !audit.exe_seen && map->l_name[0] == '\0';
  if (lmid == LM_ID_BASE)
    audit.exe_seen = 1;
  if (audit.state == ST_ON)
    object_prefetch (map, exe);
  return 0;
}
