/* runtime-region.c: libFuzzer harness for the runtime's checks of its own
 * headers and bitmap.
 *
 * The runtime trusts nothing in the program it is linked into: a bitmap
 * filled by a buggy tool, a file edited by hand, a file damaged on disk
 * must all leave the program running as if there were no bitmap.  It
 * cannot be tested with ASan in place (it runs before the C library, with
 * raw system calls), so this harness links the runtime's own files
 * (compiled with PBITMAP_SYS_EXTERN, which leaves its system calls to be
 * defined here, runtime/sys.h) into the fuzzer and calls the core on a
 * fuzzed file, mapped as the kernel or ld.so would map it:
 *
 *  - the input is an ELF file; if its PT_LOADs could be mapped (each
 *    inside the file, offset and address congruent modulo the page, all
 *    of them within 64 MiB of addresses), they are copied into an
 *    anonymous reservation that is PROT_NONE everywhere else, with each
 *    segment's protection: any read the runtime makes outside what the
 *    kernel would have mapped is a SIGSEGV that the fuzzer reports;
 *  - the runtime then reads its headers from the mapped ELF header (where
 *    AT_PHDR's page or the dynamic linker's list would put it) and accepts
 *    them when their region maps to the address of the region (as
 *    __pbitmap_region would be: where the file's first pbitmap note is
 *    mapped, or else where its PT_PRESENT_BITMAP points); when they do it
 *    runs the prefetch in every mode, the debug line and the DT_SONAME
 *    lookup, as an executable's runtime (memory read as mapped) and as a
 *    library's (memory read only once MADV_POPULATE_READ, here the real
 *    one on the harness's own mapping, says it can be);
 *  - its system calls that act on address ranges (madvise) are checked
 *    here against the rule the runtime promises, stated from the mapping
 *    itself and not from the headers the runtime found: every page
 *    advised is mapped from the file, and a WILLNEED call spans at most
 *    PBITMAP_CHUNK_PAGES file pages (more memory where it spans a file
 *    page's second mapping).  A page is what the last PT_LOAD of
 *    the file (in header order, as the kernel maps them) that spans it
 *    made it: file-backed below the end of that PT_LOAD's file bytes,
 *    zero-filled above.  The residency sample's calls (getrusage, openat,
 *    preadv2, close) are checked too: the input's last byte says whether
 *    the process has taken a major fault and whether the pages are
 *    cached, and preadv2 reads the input itself at offsets that must lie
 *    in the file.
 *
 * The debug line is built but not written; the replay (fuzz/replay.c)
 * writes it to standard error.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rt.h"
#include "sys.h"

#if !defined PBITMAP_SYS_EXTERN
# error "the runtime's files must be compiled with -DPBITMAP_SYS_EXTERN"
#endif

/* The harness gives the core its object's headers (rt_run's IM): the
   runtime's own way to them (self.c) needs a real process.  */
int
rt_self_find (const struct proc *pr, struct rt_object *im)
{
  (void) pr;
  (void) im;
  abort ();
}

#define MAP_SPAN_MAX (64u << 20)
#define GUARD (16u * RT_PAGE)

/* The mapped object: the reservation, and what each PT_LOAD of the file
   mapped, in header order: the pages [start, end), of which those below
   file_end hold the file's bytes.  */
static struct
{
  unsigned char *reserve;
  size_t reserve_size;
  uintptr_t start[RT_PHNUM_MAX];
  uintptr_t file_end[RT_PHNUM_MAX];
  uintptr_t end[RT_PHNUM_MAX];
  uintptr_t delta[RT_PHNUM_MAX];        /* address less file offset */
  size_t nload;
  int cold;                     /* what getrusage says */
  int resident;                 /* what preadv2 with RWF_NOWAIT says */
  const uint8_t *data;          /* the file preadv2 reads */
  size_t size;
  int open;                     /* the descriptor is open */
} mapped;

#define FUZZ_FD 1000

static uintptr_t
page_down (uintptr_t a)
{
  return a & ~(uintptr_t) (RT_PAGE - 1);
}

static uintptr_t
page_up (uintptr_t a)
{
  return page_down (a + RT_PAGE - 1);
}

/* The PT_LOAD whose mapping holds the page at ADDR, the last that spans
   it (as the kernel maps them), or -1.  */
static long
load_at (uintptr_t addr)
{
  for (size_t i = mapped.nload; i-- > 0;)
    if (addr >= mapped.start[i] && addr < mapped.end[i])
      return (long) i;
  return -1;
}

/* Whether the page at ADDR is mapped from the file.  */
static int
page_from_file (uintptr_t addr)
{
  long i = load_at (addr);
  return i >= 0 && addr < mapped.file_end[i];
}

/* Whether [ADDR, ADDR + LEN), all file-backed, maps at most
   PBITMAP_CHUNK_PAGES distinct file pages: the most a WILLNEED call
   reads.  Its memory may be longer, where it spans a file page's second
   mapping (include/pbitmap-plan.h).  */
static int
chunk_fits (uintptr_t addr, uintptr_t len)
{
  uintptr_t seen[PBITMAP_CHUNK_PAGES];
  size_t n = 0;
  for (uintptr_t at = page_down (addr); at < addr + len; at += RT_PAGE)
    {
      uintptr_t page = (at - mapped.delta[load_at (at)]) / RT_PAGE;
      size_t i = 0;
      while (i < n && seen[i] != page)
        i++;
      if (i < n)
        continue;
      if (n == PBITMAP_CHUNK_PAGES)
        return 0;
      seen[n++] = page;
    }
  return 1;
}

/* Whether [ADDR, ADDR + LEN) is all file-backed memory of the object.  */
static int
file_backed (uintptr_t addr, uintptr_t len)
{
  for (uintptr_t at = page_down (addr); at < addr + len; at += RT_PAGE)
    if (!page_from_file (at))
      return 0;
  return 1;
}

long
rt_madvise (unsigned long addr, unsigned long len, int advice)
{
  if (len == 0 || addr % RT_PAGE != 0 || !file_backed (addr, len))
    {
      fprintf (stderr, "runtime advised [0x%lx, +0x%lx) outside the "
               "file-backed pages of its PT_LOADs\n", addr, len);
      abort ();
    }
  if (advice == RT_MADV_WILLNEED && !chunk_fits (addr, len))
    {
      fprintf (stderr, "runtime advised [0x%lx, +0x%lx), more than %u "
               "file pages, in one call\n", addr, len, PBITMAP_CHUNK_PAGES);
      abort ();
    }
  return 0;
}

/* The real MADV_POPULATE_READ, on memory of the reservation only: the
   runtime checks its own pages with it.  */
long
rt_populate (unsigned long addr, unsigned long len)
{
  uintptr_t start = (uintptr_t) mapped.reserve;
  if (addr % RT_PAGE != 0 || len == 0 || addr < start
      || addr - start > mapped.reserve_size
      || len > mapped.reserve_size - (addr - start))
    {
      fprintf (stderr, "runtime checked [0x%lx, +0x%lx) outside its "
               "object\n", addr, len);
      abort ();
    }
  return madvise ((void *) addr, page_up (len), MADV_POPULATE_READ) == 0
         ? 0 : -RT_EINVAL;
}

long
rt_getrusage (int who, struct rt_rusage *ru)
{
  (void) who;
  memset (ru, 0, sizeof *ru);
  ru->ru_majflt = mapped.cold;
  return 0;
}

long
rt_openat (int dirfd, const char *path, int flags)
{
  (void) dirfd;
  (void) flags;
  if (mapped.open || strcmp (path, "fuzz") != 0)
    abort ();
  mapped.open = 1;
  return FUZZ_FD;
}

/* The input read as the file: the first page is always cached, the
   others as the input says.  */
long
rt_preadv2 (int fd, void *buf, unsigned long len, long off, int flags)
{
  if (fd != FUZZ_FD || !mapped.open || flags != RT_RWF_NOWAIT || off < 0
      || len == 0)
    abort ();
  if ((unsigned long) off >= mapped.size)
    {
      fprintf (stderr, "runtime sampled offset 0x%lx past the end of the "
               "file (0x%zx)\n", off, mapped.size);
      abort ();
    }
  if (!mapped.resident && off >= (long) RT_PAGE)
    return -11;
  size_t n = mapped.size - (size_t) off < len ? mapped.size - (size_t) off
                                                : len;
  memcpy (buf, mapped.data + off, n);
  return (long) n;
}

long
rt_close (int fd)
{
  if (fd != FUZZ_FD || !mapped.open)
    abort ();
  mapped.open = 0;
  return 0;
}

/* The input's file is on no block device (device 0:0): the gap of a
   bitmap that leaves it to the reader is the unknown device's, with no
   sysfs call.  */
long
rt_newfstatat (int dirfd, const char *path, struct rt_stat *st, int flags)
{
  (void) dirfd;
  (void) flags;
  if (strcmp (path, "fuzz") != 0)
    abort ();
  memset (st, 0, sizeof *st);
  return 0;
}

/* The debug lines: the replay (FUZZ_REPLAY) prints them on standard
   error, for test/fuzz/ to check what the runtime planned.  */
long
rt_write (int fd, const void *buf, unsigned long len)
{
  (void) fd;
#ifdef FUZZ_REPLAY
  fwrite (buf, 1, len, stderr);
#else
  (void) buf;
#endif
  return (long) len;
}

/* The system calls the runtime's core never makes here: the device of
   "fuzz" is 0:0, which has no sysfs entry to read, and the debug line's
   time is taken, not checked.  */
long
rt_readlinkat (int dirfd, const char *path, char *buf, unsigned long size)
{
  (void) dirfd;
  (void) path;
  (void) buf;
  (void) size;
  abort ();
}

long
rt_clock_gettime (int clock, struct rt_timespec *ts)
{
  (void) clock;
  ts->tv_sec = ts->tv_nsec = 0;
  return 0;
}

/* Maps DATA as its PT_LOADs say; returns the load bias, or 0 when the
   kernel would not have loaded the file.  */
static uintptr_t
map_object (const uint8_t *data, size_t size)
{
  Elf64_Ehdr eh;
  if (size < sizeof eh)
    return 0;
  memcpy (&eh, data, sizeof eh);
  if (eh.e_phentsize != sizeof (Elf64_Phdr) || eh.e_phnum == 0
      || eh.e_phnum > RT_PHNUM_MAX || eh.e_phoff > size
      || eh.e_phnum * sizeof (Elf64_Phdr) > size - eh.e_phoff)
    return 0;
  Elf64_Phdr ph[RT_PHNUM_MAX];
  memcpy (ph, data + eh.e_phoff, eh.e_phnum * sizeof (Elf64_Phdr));

  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < eh.e_phnum; i++)
    {
      if (ph[i].p_type != PT_LOAD)
        continue;
      if ((ph[i].p_vaddr - ph[i].p_offset) % RT_PAGE != 0
          || ph[i].p_filesz > ph[i].p_memsz || ph[i].p_offset > size
          || ph[i].p_filesz > size - ph[i].p_offset
          || ph[i].p_memsz > MAP_SPAN_MAX
          || ph[i].p_vaddr > UINT64_MAX - ph[i].p_memsz - RT_PAGE)
        return 0;
      if (page_down (ph[i].p_vaddr) < lo)
        lo = page_down (ph[i].p_vaddr);
      if (page_up (ph[i].p_vaddr + ph[i].p_memsz) > hi)
        hi = page_up (ph[i].p_vaddr + ph[i].p_memsz);
    }
  if (lo >= hi || hi - lo > MAP_SPAN_MAX)
    return 0;

  mapped.reserve_size = (size_t) (hi - lo) + 2 * GUARD;
  mapped.reserve = mmap (NULL, mapped.reserve_size, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped.reserve == MAP_FAILED)
    abort ();
  uintptr_t bias = (uintptr_t) mapped.reserve + GUARD - lo;

  /* Every segment writable while copying, in header order as the kernel
     maps them (a later one overlapping an earlier one wins), then each
     its own protection, in the same order.  Each segment's pages are
     mapped afresh, anonymous and so zero, which undoes what an earlier
     segment copied there without touching them: only the pages the
     copy or the runtime touches cost a fault, not the up to 64 MiB a
     segment may span.  */
  mapped.nload = 0;
  for (size_t i = 0; i < eh.e_phnum; i++)
    if (ph[i].p_type == PT_LOAD)
      {
        uintptr_t start = page_down (bias + ph[i].p_vaddr);
        uintptr_t end = page_up (bias + ph[i].p_vaddr + ph[i].p_memsz);
        mapped.start[mapped.nload] = start;
        mapped.file_end[mapped.nload]
          = ph[i].p_filesz == 0 ? start
                                : page_up (bias + ph[i].p_vaddr
                                           + ph[i].p_filesz);
        mapped.delta[mapped.nload] = bias + ph[i].p_vaddr - ph[i].p_offset;
        mapped.end[mapped.nload++] = end;
        if (end > start
            && mmap ((void *) start, end - start, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                     -1, 0) == MAP_FAILED)
          abort ();
        uint64_t off = page_down (ph[i].p_offset);
        uint64_t file_end = page_up (ph[i].p_offset + ph[i].p_filesz);
        if (file_end > size)
          file_end = size;
        memcpy ((void *) start, data + off, (size_t) (file_end - off));
        if (ph[i].p_memsz > ph[i].p_filesz)
          memset ((void *) (bias + ph[i].p_vaddr + ph[i].p_filesz), 0,
                  (size_t) (page_up (bias + ph[i].p_vaddr + ph[i].p_filesz)
                            - (bias + ph[i].p_vaddr + ph[i].p_filesz)));
      }
  for (size_t i = 0; i < eh.e_phnum; i++)
    if (ph[i].p_type == PT_LOAD)
      {
        uintptr_t start = page_down (bias + ph[i].p_vaddr);
        uintptr_t end = page_up (bias + ph[i].p_vaddr + ph[i].p_memsz);
        int prot = (ph[i].p_flags & PF_R ? PROT_READ : 0)
                   | (ph[i].p_flags & PF_W ? PROT_WRITE : 0);
        if (end > start && mprotect ((void *) start, end - start, prot) != 0)
          abort ();
      }
  return bias;
}

/* Whether the page of the harness's mapping at ADDR can be read, by the
   kernel's MADV_POPULATE_READ.  */
static int
readable (uintptr_t addr)
{
  return madvise ((void *) page_down (addr), RT_PAGE, MADV_POPULATE_READ) == 0;
}

/* Whether the 16-aligned file offset AT holds a pbitmap note header.  */
static int
note_at (const uint8_t *data, size_t size, size_t at)
{
  static const uint8_t head[20] = { 8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                                    'p', 'b', 'i', 't', 'm', 'a', 'p', 0 };
  return size - at >= sizeof head && memcmp (data + at, head, 4) == 0
         && memcmp (data + at + 8, head + 8, 12) == 0;
}

/* The address the linker would have given __pbitmap_region: where the
   first pbitmap note of the file is mapped, whatever the program headers
   say of it (they are what the runtime checks), or, in a file without
   such a note, where the first PT_PRESENT_BITMAP says it is.  Only a
   mapped, readable address: the symbol always is one in a real object.  */
static uintptr_t
region_address (const uint8_t *data, size_t size, uintptr_t bias)
{
  Elf64_Ehdr eh;
  memcpy (&eh, data, sizeof eh);
  uintptr_t addr = 0;
  for (size_t at = 0; at < size && addr == 0; at += 16)
    {
      if (!note_at (data, size, at))
        continue;
      for (size_t i = 0; i < eh.e_phnum && addr == 0; i++)
        {
          Elf64_Phdr ph;
          memcpy (&ph, data + eh.e_phoff + i * sizeof ph, sizeof ph);
          if (ph.p_type == PT_LOAD && at >= ph.p_offset
              && at - ph.p_offset < ph.p_filesz)
            addr = bias + ph.p_vaddr + (at - ph.p_offset);
        }
    }
  for (size_t i = 0; i < eh.e_phnum && addr == 0; i++)
    {
      Elf64_Phdr ph;
      memcpy (&ph, data + eh.e_phoff + i * sizeof ph, sizeof ph);
      if (ph.p_type == PT_PRESENT_BITMAP)
        addr = bias + ph.p_vaddr;
    }
  if (addr == 0 || addr < (uintptr_t) mapped.reserve
      || addr - (uintptr_t) mapped.reserve >= mapped.reserve_size
      || !readable (addr))
    return 0;
  return addr;
}

/* Where the file's ELF header is mapped (as the page of AT_PHDR or the
   load address in the dynamic linker's list would be: by the PT_LOAD at
   file offset 0), or 0.  */
static uintptr_t
ehdr_address (const uint8_t *data, uintptr_t bias)
{
  Elf64_Ehdr eh;
  memcpy (&eh, data, sizeof eh);
  for (size_t i = 0; i < eh.e_phnum; i++)
    {
      Elf64_Phdr ph;
      memcpy (&ph, data + eh.e_phoff + i * sizeof ph, sizeof ph);
      if (ph.p_type == PT_LOAD && ph.p_offset == 0)
        return readable (bias + ph.p_vaddr) ? bias + ph.p_vaddr : 0;
    }
  return 0;
}

/* The options of an environment made from the last bytes of the input,
   split at newlines, as a program's environment would give them.  */
static unsigned
fuzzed_options (const uint8_t *data, size_t size)
{
  char text[64];
  char *env[8];
  size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
  memcpy (text, data + size - n, n);
  text[n] = '\0';
  size_t k = 0;
  char *save = NULL;
  for (char *s = strtok_r (text, "\n", &save); s != NULL && k < 7;
       s = strtok_r (NULL, "\n", &save))
    env[k++] = s;
  env[k] = NULL;
  return rt_env_options (env);
}

/* Reads the name the debug line would print, all of it.  */
static void
touch_name (const struct rt_object *im)
{
  size_t max = RT_NAME_MAX;
  const char *name = rt_object_name (im, "fuzz", &max);
  volatile char sink = 0;
  for (size_t i = 0; i < max && name[i] != '\0'; i++)
    sink ^= name[i];
  (void) sink;
}

/* Every mode, the debug line and the name, on the headers IM the runtime
   accepted, in a process whose auxiliary vector says it is not secure.  */
static void
run_modes (const uint8_t *data, size_t size, const struct rt_object *im)
{
  static const unsigned long auxv[] = { AT_PAGESZ, RT_PAGE, AT_SECURE, 0,
                                        AT_NULL, 0 };
  const unsigned modes[] = {
    fuzzed_options (data, size),
    MODE_WILLNEED | OPT_DEBUG,
    MODE_POPULATE | OPT_NOCHECK | OPT_DEBUG,
    MODE_FULL | OPT_DEBUG,
  };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    {
      struct proc pr = { modes[i], auxv, -1, 0, 0 };
      struct outcome o;
      rt_run (&pr, im, "fuzz", &o);
      if (modes[i] & OPT_DEBUG)
        rt_report ("pbitmap", "fuzz", RT_NAME_MAX, &o, "via", "harness");
    }
  touch_name (im);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uintptr_t bias = map_object (data, size);
  if (bias == 0)
    return 0;
  uintptr_t region = region_address (data, size, bias);
  uintptr_t eh = ehdr_address (data, bias);
  mapped.data = data;
  mapped.size = size;
  mapped.resident = size > 0 && (data[size - 1] & 1);
  mapped.cold = size > 0 && (data[size - 1] & 2);
  /* As an executable's runtime, then as a library's.  */
  for (int check = 0; check < 2 && region != 0 && eh != 0; check++)
    {
      struct rt_object im;
      if (rt_object_find_at ((const rt_ehdr *) eh, region, check, &im) == 0)
        run_modes (data, size, &im);
    }
  munmap (mapped.reserve, mapped.reserve_size);
  return 0;
}
