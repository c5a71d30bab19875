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
 * It calls la_activity (LA_ACT_CONSISTENT) once the start-up's objects
 * are all mapped and relocated, before any of their code runs.
 *
 * The module is the runtime's core (runtime/: headers, plan, residency
 * sample, device class, debug line) behind another entry; what is its
 * own is where bitmaps come from, when to look, and the done marks.
 *
 * The protocol:
 *
 *  1. Environment.  Read once, from the initial stack the kernel built
 *     (__libc_stack_end, which ld.so exports, points at argc; it is looked
 *     up in the objects after the executable in the dynamic linker's
 *     list, where ld.so is, through their DT_GNU_HASH), as the runtime
 *     reads it (PBITMAP, PBITMAP_DEBUG; runtime/options.c), plus
 *     PBITMAP_STORE, HOME and XDG_CACHE_HOME for the store (doc/format.md,
 *     section 5).  A process with AT_SECURE, or whose vector is not
 *     found, gets nothing done at all; PBITMAP=off turns the module off.
 *
 *  2. Headers.  The executable's program headers are where AT_PHDR says;
 *     a library's are found from its link_map as the executable's runtime
 *     finds them (rt_object_loaded): no system call when the dynamic
 *     linker has read the page already.
 *
 *  3. Warm or cold.  A warm start must cost next to nothing, and each
 *     system call costs a microsecond or two, so nothing is looked up per
 *     object until the start is known to need it.  The start is cold once
 *     the process has waited for the disk: getrusage counts a major fault
 *     or a block read (exec reading the executable, the dynamic linker
 *     reading a library's first page, relocation faulting one in).  It is
 *     asked at the executable, at each object of AUDIT_PROBE_BYTES or more
 *     of file, and once at LA_ACT_CONSISTENT.
 *     - Cold: every object is prefetched when it is opened, without a
 *       residency sample; objects put off before are prefetched then.
 *     - Not cold yet, and the object is that big: its bitmap is looked up
 *       and AUDIT_PROBES of its planned pages are sampled (preadv2 with
 *       RWF_NOWAIT, as the runtime samples); when one is not cached, the
 *       start counts as cold from then on.
 *     - Not cold yet, and the object is smaller: it is put off (told
 *       without reading its headers when its dynamic section lies within
 *       AUDIT_PROBE_BYTES of its start; past AUDIT_DEFERRED_MAX objects
 *       put off, it is sampled instead).  At LA_ACT_CONSISTENT, if the
 *       start turned out cold, the objects put off are prefetched;
 *       otherwise they are left alone (the debug line says "warm
 *       start").
 *     Objects opened after the start (dlopen) are each sampled.  With
 *     PBITMAP=MODE-nocheck every object is prefetched when it is opened.
 *
 *  4. Bitmap.  The object's own region (PT_PRESENT_BITMAP or its note, as
 *     the runtime checks it) when it is filled and sets a page; otherwise
 *     the store's entry of its build-id (the first NT_GNU_BUILD_ID note of
 *     its PT_NOTEs, read from memory): one open of a name computed from
 *     the build-id, one read, one close, so the cost does not grow with
 *     the store and no file is hashed.  An entry is used only when it is
 *     valid (include/pbitmap-store.h) and the build-id in it is the
 *     object's.  An object without a build-id is not looked up (hashing
 *     it at every start would cost more than demand paging).  Anything
 *     missing or wrong: nothing is done, and only PBITMAP_DEBUG says so.
 *
 *  5. Plan and issue.  As the runtime does (rt_plan_prefetch): each read
 *     one madvise of the object's mapping, at the bitmap's gap or the one
 *     of the class of the device the object's file is on.  The pages
 *     arrive while the dynamic linker maps the next objects and
 *     relocates.
 *
 *  6. Done marks.  An object linked with pbitmap has its own runtime,
 *     which would prefetch it again (a residency sample cannot tell:
 *     right after WILLNEED the pages are not yet read).  The runtime must
 *     learn that this module did the work, before it runs, without a
 *     symbol it could look up (it calls no library) and without a name
 *     (LD_AUDIT may name a module that failed to load, or another copy).
 *     So the module writes into the object itself, where the linker
 *     plugin already told readers the runtime's data is (doc/format.md,
 *     Entry and Mark): a library's mark, "pbm-todo", becomes "pbm-done",
 *     and the executable's walk record, 0 until its runtime walks the
 *     libraries, becomes the address of the executable's own link_map
 *     entry.  A library's runtime that finds "pbm-done" in its own mark
 *     does nothing; the executable's runtime that finds its walk record
 *     already set does nothing, and the libraries' runtimes see a walk
 *     that ended at the executable (so each reads its own mark).  Each
 *     word is written only after it was checked to hold what the plugin
 *     put there, inside a writable PT_LOAD's file range (the mark) or
 *     memory (the record), outside PT_GNU_RELRO, before any of the
 *     object's code runs.  An object this module leaves alone (a warm
 *     start) keeps its words, and its runtime works as without the
 *     module.
 *
 * Like the runtime, this module is freestanding: it makes raw system
 * calls (runtime/sys.h) and allocates nothing but, at the first store
 * entry it reads, one anonymous mapping to read entries into, so that
 * loading it costs the dynamic linker one small object and no second C
 * library, and it never touches errno.  It has no DT_NEEDED, not even
 * ld.so: the dynamic linker would search each program's library path
 * for itself on every start, which costs more than all the rest of a
 * warm start's work.  ld.so serializes la_objopen (it holds its load
 * lock), so the static state needs no locking.  x86-64 only, like the
 * runtime's system calls.
 */

/* Lmid_t, LM_ID_BASE, LAV_CURRENT and LA_ACT_CONSISTENT.  */
#define _GNU_SOURCE 1

#include <stddef.h>
#include <stdint.h>
#include <elf.h>
#include <link.h>

#include "pbitmap-store.h"
#include "rt.h"
#include "sys.h"

#define EXPORT __attribute__ ((visibility ("default")))

#define AUDIT_TOOL "pbitmap-audit"
/* Pages sampled of an object that is, before the start is known cold.  */
#define AUDIT_PROBES 4u
/* Objects with this much of their file in PT_LOADs are sampled before
   the start is known cold: a bigger object's start-up pages are worth a
   sample's ten system calls, and the C library (2 MiB) is not.  */
#define AUDIT_PROBE_BYTES (4u << 20)
/* Objects put off at start-up; more are each sampled.  */
#define AUDIT_DEFERRED_MAX 256u
#define AUDIT_NAME_MAX 4096u

/* ---- the process ---------------------------------------------------- */

enum { AUDIT_UNSEEN, AUDIT_ON, AUDIT_OFF };

struct deferred
{
  struct link_map *map;
  int exe;
};

static struct
{
  int state;
  struct proc pr;
  int debug;
  int cold;                     /* the start has waited for the disk */
  int started;                  /* the start-up's objects are all open */
  int exe_seen;
  unsigned long euid;
  const char *store_env, *home, *xdg;
  struct deferred deferred[AUDIT_DEFERRED_MAX];
  unsigned ndeferred;
} audit;

/* An entry is read whole into this buffer, mapped at the first entry
   read (a cold start): as .bss, its size would cost every start the
   dynamic linker's mapping of it, and more than the rest of a warm
   start's work.  */
static unsigned char *entry_buf;

/* If S is NAME=VALUE, VALUE; else null.  */
static const char *
env_value (const char *s, const char *name)
{
  while (*name != '\0')
    if (*s++ != *name++)
      return NULL;
  return *s == '=' ? s + 1 : NULL;
}

/* The address of IM's dynamic symbol NAME, found through its
   DT_GNU_HASH, or null.  Every table is checked to lie in IM's file data;
   d_ptr values are addresses or, where the dynamic linker left them,
   addresses less the load bias.  */
static const void *
object_symbol (const struct rt_object *im, const char *name)
{
  uint64_t v[3];
  static const int64_t tags[3] = { DT_GNU_HASH, DT_SYMTAB, DT_STRTAB };
  uintptr_t at[3];
  size_t avail;
  for (int i = 0; i < 3; i++)
    {
      if (rt_dyn_value (im, tags[i], &v[i]) != 0)
        return NULL;
      at[i] = rt_object_readable (im, v[i], 16, &avail) ? v[i]
              : v[i] + im->bias;
      if (at[i] % 4 != 0 || !rt_object_readable (im, at[i], 16, &avail))
        return NULL;
    }
  const uint32_t *gnu = (const uint32_t *) at[0];
  uint32_t nbuckets = gnu[0], symoffset = gnu[1], nbloom = gnu[2];
  uint64_t head = 16 + (uint64_t) nbloom * 8;
  if (nbuckets == 0
      || !rt_object_readable (im, at[0], head + (uint64_t) nbuckets * 4,
                              &avail))
    return NULL;
  uint32_t h = 5381;
  for (const char *c = name; *c != '\0'; c++)
    h = h * 33 + (unsigned char) *c;
  const uint32_t *buckets = (const uint32_t *) (at[0] + head);
  const uint32_t *chain = buckets + nbuckets;
  const Elf64_Sym *syms = (const Elf64_Sym *) at[1];
  for (uint32_t i = buckets[h % nbuckets]; i >= symoffset && i != 0; i++)
    {
      uintptr_t link = (uintptr_t) (chain + (i - symoffset));
      if (!rt_object_readable (im, link, 4, &avail)
          || !rt_object_readable (im, (uintptr_t) (syms + i), sizeof *syms,
                                  &avail))
        return NULL;
      const Elf64_Sym *sym = syms + i;
      uint32_t hv = *(const uint32_t *) link;
      if ((hv | 1) == (h | 1) && sym->st_shndx != SHN_UNDEF
          && rt_object_readable (im, at[2] + sym->st_name, 1, &avail))
        {
          const char *s = (const char *) (at[2] + sym->st_name);
          size_t k = 0;
          while (k < avail && name[k] != '\0' && s[k] == name[k])
            k++;
          if (k < avail && name[k] == '\0' && s[k] == '\0')
            return (const void *) (im->bias + sym->st_value);
        }
      if (hv & 1)
        break;
    }
  return NULL;
}

/* The initial stack pointer, where argc is: the dynamic linker's
   __libc_stack_end, found in the objects listed after MAP (the
   executable, which the dynamic linker itself follows).  */
static long *
initial_stack (const struct link_map *map)
{
  for (const struct link_map *m = map->l_next; m != NULL; m = m->l_next)
    {
      struct rt_object im;
      const void *sym;
      if (rt_object_loaded ((const struct rt_link_map *) m, &im) == 0
          && (sym = object_symbol (&im, "__libc_stack_end")) != NULL
          && (uintptr_t) sym % 8 == 0
          && rt_object_holds (&im, (uintptr_t) sym, 8, PF_R | PF_W, 1))
        return *(long *const *) sym;
    }
  return NULL;
}

/* Reads the options, the store's variables and the auxiliary vector
   from the initial stack (step 1); MAP is the first object opened.  */
static void
audit_init (const struct link_map *map)
{
  long *sp = initial_stack (map);
  audit.state = AUDIT_OFF;
  if (sp == NULL || (uintptr_t) sp % 8 != 0 || sp[0] < 0 || sp[0] > 1 << 20)
    return;
  int argc = (int) sp[0];
  char **argv = (char **) (sp + 1), **envp = argv + argc + 1;
  rt_proc_init (&audit.pr, argc, argv, envp);
  if (rt_proc_secure (&audit.pr)
      || (audit.pr.opts & OPT_MODE) == MODE_OFF)
    return;
  for (char **p = envp; *p != NULL; p++)
    {
      const char *v;
      if ((v = env_value (*p, "PBITMAP_STORE")) != NULL)
        audit.store_env = *v != '\0' ? v : NULL;
      else if ((v = env_value (*p, "HOME")) != NULL)
        audit.home = v;
      else if ((v = env_value (*p, "XDG_CACHE_HOME")) != NULL)
        audit.xdg = v;
    }
  audit.euid = rt_auxv_value (&audit.pr, AT_EUID);
  audit.debug = (audit.pr.opts & OPT_DEBUG) != 0;
  audit.state = AUDIT_ON;
}

/* Whether the start has waited for the disk yet (step 3).  A getrusage
   the kernel refuses counts as cold.  */
static int
start_cold (void)
{
  struct rt_rusage ru;
  if (!audit.cold
      && (rt_getrusage (RT_RUSAGE_SELF, &ru) != 0 || ru.ru_majflt != 0
          || ru.ru_inblock != 0))
    audit.cold = 1;
  /* The runtime's own question (rt_proc_cold) has the same answer.  */
  audit.pr.majflt = audit.cold;
  return audit.cold;
}

static void
say (const char *name, const char *what, const char *detail)
{
  if (audit.debug)
    rt_say (AUDIT_TOOL, name, what, detail);
}

/* ---- the object ----------------------------------------------------------- */

/* The headers of MAP (step 2), and the name of its file into *PATH.  */
static int
object_of (const struct link_map *map, int exe, struct rt_object *im,
           const char **path)
{
  size_t ndyn;
  if (!exe)
    {
      *path = map->l_name;
      return rt_object_loaded ((const struct rt_link_map *) map, im);
    }
  uintptr_t phdr = rt_auxv_value (&audit.pr, AT_PHDR);
  *path = (const char *) rt_auxv_value (&audit.pr, AT_EXECFN);
  const rt_ehdr *eh = (const rt_ehdr *) (phdr & ~(uintptr_t) (RT_PAGE - 1));
  if (phdr == 0 || rt_object_from_ehdr (eh, 0, im) != 0
      || (uintptr_t) im->phdr != phdr
      || rt_object_dynamic (im, &ndyn) != (const rt_dyn *) map->l_ld)
    return -1;
  return 0;
}

/* The bytes of IM's file its PT_LOADs map.  */
static uint64_t
object_file_bytes (const struct rt_object *im)
{
  uint64_t end = 0;
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end
          && ph->p_filesz <= UINT64_MAX - ph->p_offset)
        end = ph->p_offset + ph->p_filesz;
    }
  return end;
}

/* The first NT_GNU_BUILD_ID of IM's PT_NOTEs: its length (0: none) and
   bytes at *ID.  */
static unsigned
object_build_id (const struct rt_object *im, const unsigned char **id)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type != PT_NOTE
          || !rt_object_maps (im, ph->p_offset, ph->p_vaddr, ph->p_filesz))
        continue;
      uintptr_t at = im->bias + ph->p_vaddr;
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
   has one; its region's header, or null.  FROM gets the entry's path.  */
static const struct pbitmap_header *
store_region (const char *objname, const unsigned char *id, unsigned len,
              char *from, size_t fromsize)
{
  char name[PBITMAP_STORE_NAME_MAX];
  if (entry_buf == NULL)
    {
      long at = rt_map_anonymous (PBITMAP_STORE_ENTRY_MAX);
      if (at < 0 && at > -4096)
        return NULL;
      entry_buf = (unsigned char *) at;
    }
  pbitmap_store_name_build_id (name, id, len);
  for (unsigned n = 0; store_path (n, name, from, fromsize) == 0; n++)
    {
      long fd = rt_openat (RT_AT_FDCWD, from,
                           RT_O_RDONLY | RT_O_CLOEXEC | RT_O_NONBLOCK);
      if (fd < 0)
        continue;
      long got = rt_preadv2 ((int) fd, entry_buf, PBITMAP_STORE_ENTRY_MAX,
                             0, 0);
      rt_close ((int) fd);
      const unsigned char *e = entry_buf;
      if (got < 0 || (unsigned long) got == PBITMAP_STORE_ENTRY_MAX
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
      return (const struct pbitmap_header *)
             (e + pbitmap_store_u32 (e + PBITMAP_STORE_OFF_REGION_OFFSET));
    other:
      say (objname, "another build's store entry ", from);
      return NULL;
    }
  return NULL;
}

/* ---- done marks -------------------------------------------------------------- */

/* Whether ADDR lies in IM's PT_GNU_RELRO, which the dynamic linker makes
   read-only after relocation: a mark is never there.  */
static int
in_relro (const struct rt_object *im, uintptr_t addr)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type == PT_GNU_RELRO && addr >= im->bias + ph->p_vaddr
          && addr - (im->bias + ph->p_vaddr) < ph->p_memsz)
        return 1;
    }
  return 0;
}

/* Tells the runtime of IM, whose region's header is H, that its work is
   done (step 6): the executable's walk record gets MAP, a library's mark
   "pbm-done".  */
static void
mark_done (const struct rt_object *im, const struct pbitmap_header *h,
           int exe, const struct link_map *map)
{
  if (exe && h->entry != 0)
    {
      uintptr_t field = (uintptr_t) h + PBITMAP_OFF_ENTRY;
      uintptr_t slot = field + (uintptr_t) h->entry;
      if (slot % 8 != 0
          || !rt_object_holds (im, slot, PBITMAP_SLOT_SIZE, PF_R, 0))
        return;
      const uint64_t *words = (const uint64_t *) slot;
      uintptr_t record = slot + (uintptr_t) words[PBITMAP_SLOT_WALKED / 8];
      if (words[PBITMAP_SLOT_MAGIC / 8] == PBITMAP_SLOT_MAGIC_VALUE
          && record % 8 == 0
          && rt_object_holds (im, record, 8, PF_R | PF_W, 1)
          && *(volatile uintptr_t *) record == 0)
        *(volatile uintptr_t *) record = (uintptr_t) map;
    }
  else if (!exe && h->mark != 0)
    {
      uintptr_t mark = (uintptr_t) h + PBITMAP_OFF_MARK + (uintptr_t) h->mark;
      if (mark % 8 == 0 && rt_object_holds (im, mark, 8, PF_R | PF_W, 0)
          && !in_relro (im, mark)
          && *(volatile uint64_t *) mark == PBITMAP_MARK_TODO)
        *(volatile uint64_t *) mark = PBITMAP_MARK_DONE;
    }
}

/* ---- prefetching one object ------------------------------------------------ */

/* Looks up the bitmap of the object MAP, whose headers are IM and file
   PATH, and prefetches it (steps 4 to 6), asking PROBES sampled pages
   first (0: none).  Returns what was done.  */
static enum status
object_prefetch (struct link_map *map, int exe, const struct rt_object *im,
                 const char *path, unsigned probes)
{
  char from[AUDIT_NAME_MAX + PBITMAP_STORE_NAME_MAX];
  const char *name = path != NULL && *path != '\0' ? path : "?";
  uint64_t t0 = audit.debug ? rt_now_ns () : 0;
  const struct pbitmap_header *own = rt_region_header (im), *h = own;
  if (h == NULL || rt_region_empty (h))
    {
      const unsigned char *id;
      unsigned len = object_build_id (im, &id);
      h = NULL;
      if (len == 0)
        say (name, "no build-id", NULL);
      else if ((h = store_region (name, id, len, from, sizeof from)) == NULL)
        say (name, "no bitmap", NULL);
      if (h == NULL)
        return ST_INVALID;
    }
  else
    *put (from, from + sizeof from - 1, "region") = '\0';

  struct outcome o = { .st = ST_OFF };
  unsigned opts = audit.pr.opts | (probes == 0 ? OPT_NOCHECK : 0);
  o.st = rt_plan_prefetch (im, h, opts, &audit.pr, path, probes, &o.n,
                           &o.gap);
  if (o.st == ST_EMPTY)
    say (name, "empty bitmap ", from);
  if (o.st == ST_INVALID || o.st == ST_EMPTY)
    return o.st;
  if (own != NULL)
    mark_done (im, own, exe, map);
  if (audit.debug)
    {
      rt_report_finish (&audit.pr, path, t0, &o);
      rt_report (AUDIT_TOOL, name, AUDIT_NAME_MAX, &o, "from", from);
    }
  return o.st;
}

/* Prefetches the objects put off (step 3), now that the start is
   cold.  */
static void
deferred_flush (void)
{
  for (unsigned i = 0; i < audit.ndeferred; i++)
    {
      struct rt_object im;
      const char *path;
      struct deferred *d = &audit.deferred[i];
      if (object_of (d->map, d->exe, &im, &path) == 0)
        object_prefetch (d->map, d->exe, &im, path, 0);
    }
  audit.ndeferred = 0;
}

/* Puts MAP off (step 3): 0, or -1 when there is no room left.  */
static int
defer (struct link_map *map, int exe)
{
  if (audit.ndeferred == AUDIT_DEFERRED_MAX)
    return -1;
  audit.deferred[audit.ndeferred].map = map;
  audit.deferred[audit.ndeferred++].exe = exe;
  return 0;
}

/* Step 3 for an object opened at start-up.  Objects are laid out text
   first and their dynamic section after it, so one whose dynamic section
   lies less than AUDIT_PROBE_BYTES from its start is small: it is put
   off without reading its headers.  */
static void
startup_object (struct link_map *map, int exe)
{
  struct rt_object im;
  const char *path;
  if (exe)
    start_cold ();
  int nocheck = (audit.pr.opts & OPT_NOCHECK) != 0;
  if (!audit.cold && !nocheck && map->l_addr != 0
      && (uintptr_t) map->l_ld - map->l_addr < AUDIT_PROBE_BYTES
      && defer (map, exe) == 0)
    return;
  if (object_of (map, exe, &im, &path) != 0)
    {
      say (map->l_name[0] != '\0' ? map->l_name : "?", "headers not found",
           NULL);
      return;
    }
  if (audit.cold || nocheck)
    object_prefetch (map, exe, &im, path, 0);
  else if (object_file_bytes (&im) >= AUDIT_PROBE_BYTES)
    {
      if (start_cold ())
        {
          deferred_flush ();
          object_prefetch (map, exe, &im, path, 0);
        }
      else
        {
          enum status st = object_prefetch (map, exe, &im, path,
                                            AUDIT_PROBES);
          if (st != ST_CACHED && st != ST_INVALID && st != ST_EMPTY)
            {
              audit.cold = 1;
              deferred_flush ();
            }
        }
    }
  else if (defer (map, exe) != 0)
    object_prefetch (map, exe, &im, path, AUDIT_PROBES);
}

/* ---- the interface ---------------------------------------------------------- */

EXPORT unsigned int
la_version (unsigned int version)
{
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

EXPORT unsigned int
la_objopen (struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
  (void) cookie;
  if (audit.state == AUDIT_UNSEEN)
    audit_init (map);
  int exe = lmid == LM_ID_BASE && !audit.exe_seen && map->l_name[0] == '\0';
  if (lmid == LM_ID_BASE)
    audit.exe_seen = 1;
  if (audit.state != AUDIT_ON)
    return 0;
  if (!audit.started)
    startup_object (map, exe);
  else
    {
      struct rt_object im;
      const char *path;
      if (object_of (map, 0, &im, &path) != 0)
        say (map->l_name, "headers not found", NULL);
      else
        object_prefetch (map, 0, &im, path,
                         audit.pr.opts & OPT_NOCHECK ? 0 : AUDIT_PROBES);
    }
  return 0;
}

/* The start-up's objects are all open: those put off are prefetched if
   the start turned out cold, and left alone otherwise (step 3).  */
EXPORT void
la_activity (uintptr_t *cookie, unsigned int flag)
{
  (void) cookie;
  if (flag != LA_ACT_CONSISTENT || audit.state != AUDIT_ON || audit.started)
    return;
  audit.started = 1;
  if (audit.ndeferred == 0)
    return;
  if (start_cold ())
    deferred_flush ();
  else
    {
      for (unsigned i = 0; i < audit.ndeferred; i++)
        {
          const struct deferred *d = &audit.deferred[i];
          const char *name = d->exe ? (const char *) rt_auxv_value (&audit.pr,
                                                                   AT_EXECFN)
                                    : d->map->l_name;
          say (name != NULL && *name != '\0' ? name : "?",
               "warm start, left alone", NULL);
        }
      audit.ndeferred = 0;
    }
}
