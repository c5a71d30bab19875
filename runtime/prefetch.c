/* prefetch.c: the pbitmap runtime.  At program start it reads the
 * program's own pbitmap region and asks the kernel to read the pages the
 * bitmap marks, before anything else faults them in one by one.
 *
 * The protocol, step by step:
 *
 *  1. Environment.  PBITMAP chooses the mode: off (or 0, or empty), the
 *     default willneed, populate or full; any of the last three may end
 *     in "-nocheck", which skips step 5's residency sample; an unknown
 *     value is the default.  PBITMAP_DEBUG (any value but "", "0" and
 *     "off") makes the runtime print one line per object to standard
 *     error.  AT_SECURE, AT_EXECFN and AT_PHDR come from the auxiliary
 *     vector on the initial stack, found after the environment array that
 *     follows ARGV there (glibc passes the initial ARGV to every hook,
 *     dlopen included): a setuid, setgid or file-capability program
 *     ignores all PBITMAP variables, and so does a program whose
 *     auxiliary vector is not found.
 *
 *  2. Program headers.  Nothing is searched for.  The executable's
 *     program headers are where AT_PHDR says, its ELF header at the start
 *     of their page.  A library's ELF header is at its load address,
 *     which the dynamic linker's list gives (step 8): the entry with the
 *     highest load address at or below __pbitmap_region, the region the
 *     plugin's region object defines.  (The linker's __ehdr_start would
 *     say it too, but eu-elflint reports that symbol, which lies in no
 *     section.)  The header's program headers must lie in its first page,
 *     no unreadable PT_LOAD may share a page with another, and its region
 *     (below) must map exactly to __pbitmap_region.  The load bias is the
 *     address of the ELF header minus the p_vaddr of the PT_LOAD with
 *     p_offset 0, and must agree with PT_PHDR when there is one.
 *     A tool that moved the note (patchelf) leaves the program header
 *     pointing at __pbitmap_region, where other bytes are now, and step 3
 *     finds them no valid region; once elfpatch --resync has pointed it
 *     at the note's new place, the header is also accepted when
 *     __pbitmap_region lies in the file range of one of its PT_LOADs.
 *     Memory is read where these headers say the file is mapped
 *     readable.  The executable's runtime runs before any constructor and
 *     reads the pages as the kernel and the dynamic linker mapped them.
 *     A library's runtime runs after the constructors of the libraries it
 *     depends on, which may have unmapped or protected its pages, so it
 *     reads a range of its own image only once MADV_POPULATE_READ has
 *     faulted it in, which fails where a read would fault.
 *
 *  3. Region.  Exactly one PT_PRESENT_BITMAP, or, when there is none (a
 *     linker that merges all notes into one PT_NOTE), exactly one pbitmap
 *     note among the notes of the PT_NOTEs; inside the file range of one
 *     readable PT_LOAD at the matching address, holding a note and header
 *     exactly as include/pbitmap-format.h says.  Anything else: no valid
 *     bitmap, nothing is done.  A region without PBITMAP_F_FILLED or with
 *     pages_set 0 is an empty bitmap: nothing to do either.
 *
 *  4. Plan.  The PT_LOADs are visited in ascending address order; for
 *     each, the bits of the file pages it maps are scanned a 64-bit word at
 *     a time, skipping zero words, taking runs of set bits whole.  A set
 *     page already mapped by an earlier PT_LOAD is skipped, so every file
 *     page is planned once.  The runs go to the chunker of
 *     include/pbitmap-plan.h, which elfpatch --run shares: reads of at
 *     most 512 KiB that start and end at set pages, reading through gaps
 *     of up to max_gap pages (reading a small gap costs less than another
 *     I/O), here only where the memory between is mapped from the file.
 *     Mode full ignores the bits (it still needs a valid region) and plans
 *     every page of every PT_LOAD's file range.
 *
 *  5. Residency sample.  Unless "-nocheck", the plan is first only
 *     counted, keeping up to 16 of its pages evenly spread over it.  If
 *     the process has taken a major fault already (getrusage), the start
 *     is cold and the plan is issued.  Otherwise the object's file is
 *     opened read-only and non-blocking by the name the process knows it
 *     by (AT_EXECFN, or the dynamic linker's name for a library; never in
 *     a secure process), its ELF and program headers are compared with
 *     the mapped ones, and a one-byte preadv2 with RWF_NOWAIT of each
 *     sampled page asks whether it is in the page cache; if all are,
 *     nothing is issued ("cached").  No name, another file or any page
 *     not cached: the plan is issued.
 *
 *  6. Gap.  A region filled with --device or --max-gap pins its max_gap.
 *     One that leaves it to the reader (PBITMAP_F_GAP_AUTO) is read with
 *     the gap of the class of the device the object's file is on, looked
 *     up only now that the plan is to be issued: newfstatat of its name
 *     (none in a secure process: the unknown device's gap), then, unless
 *     the device is anonymous (tmpfs, overlayfs), readlinkat of its sysfs
 *     entry and maybe a read of its queue/rotational
 *     (include/pbitmap-plan.h).  The last device's class is kept, so the
 *     objects of one device cost one lookup.  A warm start makes none of
 *     these calls.
 *
 *  7. Issue.  Each chunk is one madvise call: MADV_WILLNEED, or
 *     MADV_POPULATE_READ in mode populate (then WILLNEED if the kernel
 *     does not know it).  The debug line counts the pages planned (gaps
 *     included), the runs of set pages among them (the chunker counts
 *     them, as --show and elfpatch --run -v do) and the calls, and, when
 *     the runtime chose the gap, the gap and the device class ("gap=10
 *     (cloud)").
 *
 *  8. Libraries.  In glibc the dynamic linker runs the executable's
 *     .preinit_array before the initializers of the libraries it loaded
 *     with it, so the executable's hook then walks the dynamic linker's
 *     list of loaded objects (struct r_debug, found through the
 *     executable's DT_DEBUG) and does steps 3 to 7 for every one whose
 *     headers and region check out, each line ending in "via PROGRAM".
 *     It then records, in its own data, the last object of the list it
 *     walked.  A library linked with pbitmap has its own copy of this
 *     runtime, in its .init_array; that copy finds the executable's
 *     program headers through AT_PHDR, the record through the
 *     executable's region (its entry field leads to the entry slot, whose
 *     third word leads to the record, doc/format.md), and its own place
 *     in the list as in step 2: at or before the recorded object, the
 *     executable's runtime did its work and it does nothing.  A library
 *     loaded later by dlopen, or into a program without the runtime, is
 *     not in the walked part of the list and prefetches itself.  Nothing
 *     is written into another object.  (A residency sample cannot tell
 *     the copy: right after WILLNEED the pages are in the page cache but
 *     not yet read.)  pbitmap's audit module (audit/audit.c), when it is
 *     loaded, does all of this before any runtime runs and says so in
 *     the objects' own words: the executable's walk record set before
 *     its hook runs, a library's mark "pbm-done"; a runtime that finds
 *     either does nothing, and prints nothing.
 *
 *  9. Start-up.  When a static executable's entry stub has issued reads,
 *     its segments are MADV_RANDOM until the runtime's .preinit_array
 *     entry sets them back to MADV_NORMAL, so that the C library's
 *     start-up faults read only their own page (__pbitmap_entry_run).
 *
 * The work is bounded by the regions' sizes, the number of PT_LOADs and
 * of loaded objects.  Only raw system calls are made, and only ones that
 * systemd's @system-service filter and Docker's default seccomp profile
 * allow; one that fails makes the runtime do less, never stop the
 * program.  Nothing is allocated, no memory is written but this
 * runtime's own, nothing but the debug lines is written to a file, and
 * errno is never touched.  Pages outside every PT_LOAD (section headers,
 * debug information) are never read.
 */

#include <stddef.h>
#include <stdint.h>
#include <elf.h>

#include "pbitmap-format.h"
#include "pbitmap-plan.h"
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


/* Most of a dynamic section read: its entries end with DT_NULL long
   before (a few dozen in a large program).  */
#define RT_DYN_BYTES_MAX 4096u

/* Longest NAME copied into the debug line.  */
#define RT_NAME_MAX 200u

/* Pages sampled before any madvise, PT_LOADs an object may have, and
   objects the runtime looks at in the dynamic linker's list: more of
   either is unexpected, and then nothing is done.  */
#define RT_SAMPLES 16u
#define RT_LOADS_MAX 16u
#define RT_OBJECTS_MAX 4096u

/* Words of the auxiliary vector looked at, and null words skipped
   between the environment and it (unsetenv shifts the environment array
   down in place, leaving a null behind for each variable it removed).  */
#define RT_AUXV_WORDS (2u * 64u)
#define RT_ENV_HOLES_MAX 4096u

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

/* The options: a mode in the low bits, then flags.  0 is the default:
   willneed, with the residency sample, quiet.  */
enum
{
  MODE_WILLNEED = 0,
  MODE_OFF = 1,
  MODE_POPULATE = 2,
  MODE_FULL = 3,
  OPT_MODE = 3,                 /* mask of the mode */
  OPT_NOCHECK = 4,              /* PBITMAP=MODE-nocheck: no sample */
  OPT_DEBUG = 8,                /* PBITMAP_DEBUG set */
  OPT_SEEN = 16                 /* some PBITMAP variable present */
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

/* The mode bits PBITMAP=V asks for: off, willneed, populate or full,
   each of the last three optionally followed by "-nocheck"; anything
   else is the default.  No table of strings: it would need relocations,
   and this may run before a static PIE has relocated itself.  */
static unsigned
mode_option (const char *v)
{
  const char *rest;
  unsigned mode;
  if (value_is_off (v))
    return MODE_OFF;
  if ((rest = skip_prefix (v, "willneed")) != NULL)
    mode = MODE_WILLNEED;
  else if ((rest = skip_prefix (v, "populate")) != NULL)
    mode = MODE_POPULATE;
  else if ((rest = skip_prefix (v, "full")) != NULL)
    mode = MODE_FULL;
  else
    return MODE_WILLNEED;
  if (*rest == '\0')
    return mode;
  if (str_equal (rest, "-nocheck"))
    return mode | OPT_NOCHECK;
  return MODE_WILLNEED;
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
        opts = (opts & ~(unsigned) (OPT_MODE | OPT_NOCHECK))
               | mode_option (w) | OPT_SEEN;
      else if ((w = skip_prefix (v, "_DEBUG=")) != NULL)
        {
          opts |= OPT_SEEN;
          opts = value_is_off (w) ? opts & ~OPT_DEBUG : opts | OPT_DEBUG;
        }
    }
  return opts;
}

/* What a hook knows of its process: the options in effect, the auxiliary
   vector, and whether the process has taken a major fault (-1: not asked
   yet).  */
struct proc
{
  unsigned opts;
  const unsigned long *auxv;    /* null when not found */
  int majflt;
  /* The last file device looked up (step 6; 0, which no file is on,
     before) and its class: objects on one device cost one lookup.  */
  unsigned long dev;
  enum pbitmap_device dev_class;
};

/* The value of auxiliary vector entry TYPE, or 0.  */
static unsigned long
auxv_value (const struct proc *pr, unsigned long type)
{
  const unsigned long *a = pr->auxv;
  for (size_t i = 0; a != NULL && i + 1 < RT_AUXV_WORDS && a[i] != AT_NULL;
       i += 2)
    if (a[i] == type)
      return a[i + 1];
  return 0;
}

/* The auxiliary vector on the initial stack: after ARGV's null, the
   environment array the kernel put there and its null, and, when unsetenv
   has removed variables from that array, the nulls it left behind.  The
   kernel always gives AT_PAGESZ; a vector without it was not found.  */
static const unsigned long *
auxv_find (int argc, char **argv)
{
  if (argc < 0 || argv == NULL || argv[argc] != NULL)
    return NULL;
  char **p = argv + argc + 1;
  while (*p != NULL)
    p++;
  for (unsigned holes = 0; *p == NULL; p++)
    if (++holes > RT_ENV_HOLES_MAX)
      return NULL;
  struct proc pr = { 0, (const unsigned long *) p, -1, 0, 0 };
  return auxv_value (&pr, AT_PAGESZ) == RT_PAGE ? pr.auxv : NULL;
}

/* Whether AT_SECURE is set; a process whose vector was not found counts
   as secure.  */
static int
proc_secure (const struct proc *pr)
{
  return pr->auxv == NULL || auxv_value (pr, AT_SECURE) != 0;
}

/* The options in effect (none under AT_SECURE), from the hook's
   arguments.  */
static void
proc_init (struct proc *pr, int argc, char **argv, char **envp)
{
  pr->auxv = auxv_find (argc, argv);
  pr->majflt = -1;
  pr->dev = 0;
  pr->opts = env_options (envp);
  if (pr->opts != 0 && proc_secure (pr))
    pr->opts = 0;
}

/* Whether the process has had to wait for the disk in a page fault yet:
   then the start is cold, and a residency sample would only cost.  A
   getrusage the kernel refuses counts as cold.  */
static int
proc_cold (struct proc *pr)
{
  if (pr->majflt < 0)
    {
      struct rt_rusage ru;
      pr->majflt = rt_getrusage (RT_RUSAGE_SELF, &ru) != 0 || ru.ru_majflt != 0;
    }
  return pr->majflt;
}

/* ---- program headers -------------------------------------------------- */

/* The headers of an object, its load bias, and whether its memory must
   be faulted in before it is read (a library's own image, step 2).  */
struct image
{
  const unsigned char *ehdr;
  const unsigned char *phdr;
  size_t phnum;
  size_t phentsize;
  uintptr_t bias;
  int check;
};

/* Whether [ADDR, ADDR + LEN) of IM may be read: always, or for an image
   that must be checked, once MADV_POPULATE_READ has faulted it in.  */
static int
memory_readable (const struct image *im, uintptr_t addr, size_t len)
{
  if (addr == 0 || len == 0 || addr > UINTPTR_MAX - len)
    return 0;
  if (!im->check)
    return 1;
  uintptr_t start = addr & ~(uintptr_t) (RT_PAGE - 1);
  return rt_populate (start, addr + len - start) == 0;
}

static const rt_phdr *
image_phdr (const struct image *im, size_t i)
{
  return (const rt_phdr *) (im->phdr + i * im->phentsize);
}

/* The pages [*FIRST, *LAST] of memory the PT_LOAD PH maps.  */
static void
load_pages (const rt_phdr *ph, uintptr_t bias, uintptr_t *first,
            uintptr_t *last)
{
  *first = (bias + ph->p_vaddr) / RT_PAGE;
  *last = (bias + ph->p_vaddr + (ph->p_memsz ? ph->p_memsz - 1 : 0)) / RT_PAGE;
}

/* Whether two PT_LOADs of IM map the same page of memory and one of them
   cannot be read: the later one's mapping replaces the earlier one's
   there, so a page one of them says is readable may not be.  (Two
   readable ones may share a page: the linker makes that when a segment
   ends one byte into the next one's first page.)  */
static int
loads_overlap (const struct image *im)
{
  for (size_t i = 0; i < im->phnum; i++)
    for (size_t j = i + 1; j < im->phnum; j++)
      {
        const rt_phdr *a = image_phdr (im, i), *b = image_phdr (im, j);
        uintptr_t a0, a1, b0, b1;
        if (a->p_type != PT_LOAD || b->p_type != PT_LOAD)
          continue;
        load_pages (a, im->bias, &a0, &a1);
        load_pages (b, im->bias, &b0, &b1);
        if (a0 <= b1 && b0 <= a1
            && ((a->p_flags & PF_R) == 0 || (b->p_flags & PF_R) == 0))
          return 1;
      }
  return 0;
}

/* Fills IM from the ELF header at EH, which CHECK says how to read.
   Returns 0, or -1 when anything is unexpected.  */
static int
image_from_ehdr (const rt_ehdr *eh, int check, struct image *im)
{
  im->check = check;
  if (eh == NULL || (uintptr_t) eh % RT_PAGE != 0
      || !memory_readable (im, (uintptr_t) eh, RT_FIRST_PAGE_BYTES)
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

  im->ehdr = (const unsigned char *) eh;
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
  if (!have_bias || loads_overlap (im))
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

/* Whether [OFFSET, OFFSET + SIZE) of the file lies in the file range of
   a readable PT_LOAD that maps it at VADDR: the bytes may be read at
   bias + VADDR.  */
static int
image_maps (const struct image *im, uint64_t offset, uint64_t vaddr,
            uint64_t size)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ld = image_phdr (im, i);
      if (ld->p_type != PT_LOAD || !(ld->p_flags & PF_R)
          || offset < ld->p_offset
          || offset - ld->p_offset > ld->p_filesz
          || size > ld->p_filesz - (offset - ld->p_offset))
        continue;
      return vaddr - ld->p_vaddr == offset - ld->p_offset;
    }
  return 0;
}

/* The pbitmap notes in the PT_NOTE NOTE: the first, as a program header
   of its own would describe it, into *OUT.  Returns how many there are,
   or -1 when the notes cannot be walked.  */
static int
note_region (const struct image *im, const rt_phdr *note, rt_phdr *out)
{
  if (note->p_vaddr % 4 != 0
      || !image_maps (im, note->p_offset, note->p_vaddr, note->p_filesz)
      || !memory_readable (im, im->bias + note->p_vaddr, note->p_filesz))
    return -1;
  const unsigned char *p = (const unsigned char *) (im->bias + note->p_vaddr);
  uint64_t align = note->p_align == 8 ? 8 : 4, size = note->p_filesz;
  uint64_t at = 0;
  int found = 0;
  while (size - at >= 12)
    {
      const uint32_t *n = (const uint32_t *) (p + at);
      uint64_t name = (n[0] + align - 1) & ~(align - 1);
      uint64_t desc = (n[1] + align - 1) & ~(align - 1);
      if (name > size - at - 12 || desc > size - at - 12 - name)
        return -1;
      const char *owner = (const char *) (p + at + 12);
      if (n[0] == PBITMAP_NOTE_NAMESZ && n[2] == PBITMAP_NT_BITMAP
          && owner[0] == 'p' && owner[1] == 'b' && owner[2] == 'i'
          && owner[3] == 't' && owner[4] == 'm' && owner[5] == 'a'
          && owner[6] == 'p' && owner[7] == '\0' && found++ == 0)
        {
          *out = *note;
          out->p_type = PT_PRESENT_BITMAP;
          out->p_offset = note->p_offset + at;
          out->p_vaddr = note->p_vaddr + at;
          out->p_paddr = note->p_paddr + at;
          out->p_filesz = out->p_memsz = 12 + name + (uint64_t) n[1];
        }
      at += 12 + name + desc;
    }
  return at == size ? found : -1;
}

/* The region's place, as its program header says: the one
   PT_PRESENT_BITMAP, or without one (a linker that merges all notes into
   one PT_NOTE, doc/format.md) the one pbitmap note of the PT_NOTEs.
   Returns 0 when it lies where it may be read.  */
static int
region_phdr (const struct image *im, rt_phdr *reg)
{
  int found = 0;
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      if (ph->p_type != PT_PRESENT_BITMAP)
        continue;
      if (found++)
        return -1;
      *reg = *ph;
    }
  int have_phdr = found != 0;
  for (size_t i = 0; i < im->phnum && !have_phdr; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      rt_phdr in_note;
      /* A PT_NOTE whose notes cannot be walked holds no region.  */
      int n = ph->p_type == PT_NOTE ? note_region (im, ph, &in_note) : 0;
      if (n > 0 && found == 0)
        *reg = in_note;
      if (n > 0)
        found += n;
    }
  if (found != 1 || reg->p_offset % PBITMAP_READ_ALIGN != 0
      || reg->p_filesz < PBITMAP_HEADER_SIZE
      || !image_maps (im, reg->p_offset, reg->p_vaddr, reg->p_filesz))
    return -1;
  return 0;
}

/* Whether the PT_PRESENT_BITMAP of IM, which is not at ADDR, points at a
   re-synced region: ADDR, where the linker put the region, lies in the
   file range of one of IM's PT_LOADs (step 2).  */
static int
region_moved (const struct image *im, uintptr_t addr)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ld = image_phdr (im, i);
      uintptr_t start = im->bias + ld->p_vaddr;
      if (ld->p_type == PT_LOAD && addr >= start
          && addr - start < ld->p_filesz)
        return 1;
    }
  return 0;
}

/* Reads the object's headers from the ELF header EH, as CHECK says, and
   accepts them when its region is at REGION (step 2).  A function of its
   own so that the fuzz harness can call it on the objects it maps.  */
static int
image_find_at (const rt_ehdr *eh, uintptr_t region, int check,
               struct image *im)
{
  rt_phdr reg;
  if (image_from_ehdr (eh, check, im) != 0 || region_phdr (im, &reg) != 0)
    return -1;
  return im->bias + reg.p_vaddr == region || region_moved (im, region)
         ? 0 : -1;
}

#if defined PBITMAP_HOOK_EXEC
/* The executable's own headers (step 2).  */
static int
image_find (const struct proc *pr, struct image *im)
{
  uintptr_t phdr = auxv_value (pr, AT_PHDR);
  const rt_ehdr *eh = (const rt_ehdr *) (phdr & ~(uintptr_t) (RT_PAGE - 1));
  if (phdr == 0 || image_find_at (eh, (uintptr_t) __pbitmap_region, 0, im) != 0
      || (uintptr_t) im->phdr != phdr)
    return -1;
  return 0;
}
#else
static int image_find (const struct proc *pr, struct image *im);
#endif

/* The checked header of the region, or null.  */
static const struct pbitmap_header *
region_header (const struct image *im)
{
  rt_phdr reg;
  if (region_phdr (im, &reg) != 0)
    return NULL;
  const struct pbitmap_header *h
    = (const struct pbitmap_header *) (im->bias + reg.p_vaddr);
  if ((uintptr_t) h % PBITMAP_READ_ALIGN != 0
      || !memory_readable (im, (uintptr_t) h, reg.p_filesz))
    return NULL;

  return pbitmap_header_check (h, reg.p_filesz) == PBITMAP_HEADER_OK
         ? h : NULL;
}

/* ---- planning and issuing --------------------------------------------- */

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

/* The gap a plan was issued with, and the device class it is that of
   (GAP_PINNED: the region's own max_gap).  */
#define GAP_PINNED (-1)
struct gap
{
  uint32_t pages;
  int device;
};

/* A plan is built twice with the same steps: first only counted and
   sampled (ADVICE 0), then, unless the sample says the pages are all
   resident, issued with ADVICE.  The chunker (pbitmap-plan.h) turns the
   runs of set pages, in page numbers of the address space, into reads,
   and counts the runs; SEG is the segment of the last page added.  */
struct plan
{
  struct pbitmap_chunker chunker;
  size_t seg;
  const struct segment *segs;
  int advice;
  struct counts n;
  /* Every STRIDE-th planned page (counted from 0), at most RT_SAMPLES of
     them: when the array is full, every other one is dropped and the
     stride doubles, so they stay evenly spread whatever the total.  */
  uintptr_t sample[RT_SAMPLES];
  unsigned nsample;
  uint64_t stride;
};

static void plan_chunk (void *ctx, uint64_t first, uint64_t npages);

static void
plan_init (struct plan *p, const struct segment *segs, uint64_t max_gap,
           int advice)
{
  pbitmap_chunker_init (&p->chunker, max_gap, plan_chunk, p);
  p->seg = 0;
  p->segs = segs;
  p->advice = advice;
  p->n.pages = p->n.runs = p->n.calls = 0;
  p->nsample = 0;
  p->stride = 1;
}

/* Samples the NPAGES pages at ADDR, whose first page is planned page
   number FIRST.  */
static void
plan_sample (struct plan *p, uintptr_t addr, uint64_t first, uint64_t npages)
{
  uint64_t idx = (first + p->stride - 1) / p->stride * p->stride;
  while (idx < first + npages)
    {
      if (p->nsample == RT_SAMPLES)
        {
          for (unsigned i = 0; i < RT_SAMPLES / 2; i++)
            p->sample[i] = p->sample[2 * i];
          p->nsample = RT_SAMPLES / 2;
          p->stride *= 2;
          if (idx % p->stride != 0)
            {
              idx += p->stride / 2;
              continue;
            }
        }
      p->sample[p->nsample++] = addr + (idx - first) * RT_PAGE;
      idx += p->stride;
    }
}

/* One chunk of the plan: madvise it, or count and sample it.  A kernel
   without MADV_POPULATE_READ (before 5.14) says EINVAL: then WILLNEED it
   is.  */
static void
plan_chunk (void *ctx, uint64_t first, uint64_t npages)
{
  struct plan *p = ctx;
  uintptr_t addr = (uintptr_t) first * RT_PAGE;
  uintptr_t len = (uintptr_t) npages * RT_PAGE;
  if (p->advice == 0)
    plan_sample (p, addr, p->n.pages, npages);
  else if (rt_madvise (addr, len, p->advice) == -RT_EINVAL
           && p->advice == RT_MADV_POPULATE_READ)
    {
      p->advice = RT_MADV_WILLNEED;
      rt_madvise (addr, len, p->advice);
    }
  p->n.calls++;
  p->n.pages += npages;
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

/* Adds NPAGES pages at ADDR, in segment SEG, to the plan.  Addresses
   only ascend.  */
static void
plan_add (struct plan *p, uintptr_t addr, uint64_t npages, size_t seg)
{
  int gap_readable = segments_adjacent (p->segs, p->seg, seg);
  pbitmap_chunker_add (&p->chunker, addr / RT_PAGE, npages, gap_readable);
  p->seg = seg;
}

/* Adds file pages [LO, HI] of segment K, leaving out the pages an earlier
   segment maps, so that every file page is planned once.  */
static void
plan_pages (struct plan *p, size_t k, uint64_t lo, uint64_t hi)
{
  const struct segment *segs = p->segs;
  while (lo <= hi)
    {
      size_t j = 0;
      while (j < k && !(segs[j].first <= lo && lo <= segs[j].last))
        j++;
      if (j < k)
        {
          if (segs[j].last >= hi)
            return;
          lo = segs[j].last + 1;
          continue;
        }
      uint64_t end = hi;
      for (j = 0; j < k; j++)
        if (segs[j].first > lo && segs[j].first <= end)
          end = segs[j].first - 1;
      plan_add (p, segs[k].delta + lo * RT_PAGE, end - lo + 1, k);
      if (end == hi)
        return;
      lo = end + 1;
    }
}

/* The PT_LOADs that map file pages, sorted by address, into SEGS (room
   for RT_LOADS_MAX).  A segment whose address and offset disagree modulo
   the page size cannot have been mapped and is left out.  Returns their
   number, or -1 when there are more than RT_LOADS_MAX.  */
static long
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
      if (n == RT_LOADS_MAX)
        return -1;
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
  return (long) n;
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

/* Plans the runs of set bits in [FIRST, LAST] of segment K.  */
static void
scan_segment (const unsigned char *bits, uint64_t nbytes, struct plan *p,
              size_t k, uint64_t first, uint64_t last)
{
  int open = 0;
  uint64_t lo = 0;
  for (uint64_t w = first / 64; w <= last / 64; w++)
    {
      uint64_t word = bits_word (bits, nbytes, w);
      if (w == first / 64)
        word &= ~(uint64_t) 0 << (first % 64);
      if (w == last / 64 && last % 64 != 63)
        word &= ((uint64_t) 1 << (last % 64 + 1)) - 1;
      unsigned pos = 0;
      while (pos < 64)
        {
          if (!open)
            {
              uint64_t rest = word >> pos;
              if (rest == 0)
                break;
              pos += (unsigned) __builtin_ctzll (rest);
              lo = w * 64 + pos;
              open = 1;
            }
          uint64_t zeros = ~(word >> pos);
          unsigned ones = zeros == 0 ? 64 - pos
                                     : (unsigned) __builtin_ctzll (zeros);
          if (ones > 64 - pos)
            ones = 64 - pos;
          pos += ones;
          if (pos < 64)
            {
              plan_pages (p, k, lo, w * 64 + pos - 1);
              open = 0;
            }
        }
    }
  if (open)
    plan_pages (p, k, lo, last);
}

/* Builds the whole plan: in full mode every page of every segment, else
   the set bits that fall in a segment.  */
static void
plan_build (struct plan *p, const struct pbitmap_header *h, size_t nsegs,
            int full)
{
  const unsigned char *bits = (const unsigned char *) h + PBITMAP_HEADER_SIZE;
  uint64_t nbytes = pbitmap_bits_size (h->capacity);
  const struct segment *segs = p->segs;
  for (size_t k = 0; k < nsegs; k++)
    if (full)
      plan_pages (p, k, segs[k].first, segs[k].last);
    else if (segs[k].first < h->capacity)
      {
        uint64_t last = segs[k].last < h->capacity ? segs[k].last
                                                    : h->capacity - 1;
        scan_segment (bits, nbytes, p, k, segs[k].first, last);
      }
  pbitmap_chunker_flush (&p->chunker);
  p->n.runs = p->chunker.runs;
}

/* The file offset of the planned page at ADDR: its segment's delta taken
   away.  Planned pages lie in a segment, gaps read through included.  */
static uint64_t
plan_offset (const struct plan *p, size_t nsegs, uintptr_t addr)
{
  for (size_t k = 0; k < nsegs; k++)
    if (addr >= p->segs[k].delta + p->segs[k].first * RT_PAGE
        && addr <= p->segs[k].delta + p->segs[k].last * RT_PAGE)
      return addr - p->segs[k].delta;
  return UINT64_MAX;
}

/* Whether the LEN bytes at file offset OFF of FD, read only from the page
   cache, equal the mapped bytes at MEM.  */
static int
file_matches (int fd, uint64_t off, const unsigned char *mem, size_t len)
{
  unsigned char buf[1024];
  for (size_t at = 0; at < len; at += sizeof buf)
    {
      size_t n = len - at < sizeof buf ? len - at : sizeof buf;
      if (rt_preadv2 (fd, buf, n, (long) (off + at), RT_RWF_NOWAIT)
          != (long) n)
        return 0;
      for (size_t i = 0; i < n; i++)
        if (buf[i] != mem[at + i])
          return 0;
    }
  return 1;
}

/* Whether every sampled page of the plan P of IM is in the page cache
   (step 5).  PATH names IM's file, or is null.  No sample (nothing
   planned) is not resident: there is nothing to skip.  */
static int
plan_resident (const struct plan *p, size_t nsegs, const struct image *im,
               struct proc *pr, const char *path)
{
  if (p->nsample == 0 || path == NULL || *path == '\0' || proc_secure (pr)
      || proc_cold (pr))
    return 0;
  long fd = rt_openat (RT_AT_FDCWD, path, RT_O_RDONLY | RT_O_NONBLOCK
                                          | RT_O_NOCTTY | RT_O_CLOEXEC);
  if (fd < 0)
    return 0;
  const rt_ehdr *eh = (const rt_ehdr *) im->ehdr;
  int resident = file_matches ((int) fd, 0, im->ehdr,
                               eh->e_phoff + im->phnum * im->phentsize);
  for (unsigned i = 0; i < p->nsample && resident; i++)
    {
      unsigned char byte;
      uint64_t off = plan_offset (p, nsegs, p->sample[i]);
      resident = off != UINT64_MAX
                 && rt_preadv2 ((int) fd, &byte, 1, (long) off,
                                RT_RWF_NOWAIT) == 1;
    }
  rt_close ((int) fd);
  return resident;
}

/* ---- the device ------------------------------------------------------- */

/* The sysfs calls of include/pbitmap-plan.h's classification, raw.  */
static long
sysfs_readlink (void *ctx, const char *path, char *buf, unsigned long size)
{
  (void) ctx;
  return rt_readlinkat (RT_AT_FDCWD, path, buf, size);
}

static int
sysfs_first_byte (void *ctx, const char *path, char *byte)
{
  (void) ctx;
  long fd = rt_openat (RT_AT_FDCWD, path, RT_O_RDONLY | RT_O_CLOEXEC);
  if (fd < 0)
    return -1;
  long got = rt_preadv2 ((int) fd, byte, 1, 0, 0);
  rt_close ((int) fd);
  return got == 1 ? 0 : -1;
}

/* The class of the device the file PATH is on (step 6), unknown without
   a name (PATH null, a secure process) or when a call fails.  */
static enum pbitmap_device
file_device (struct proc *pr, const char *path)
{
  struct rt_stat st;
  if (path == NULL || *path == '\0' || proc_secure (pr)
      || rt_newfstatat (RT_AT_FDCWD, path, &st, 0) != 0)
    return PBITMAP_DEVICE_UNKNOWN;
  if (pr->dev == 0 || pr->dev != st.st_dev)
    {
      struct pbitmap_sysfs sys = { sysfs_readlink, sysfs_first_byte, NULL };
      pr->dev_class = pbitmap_device_classify (rt_major (st.st_dev),
                                               rt_minor (st.st_dev), &sys);
      pr->dev = st.st_dev;
    }
  return pr->dev_class;
}

/* ---- the core --------------------------------------------------------- */

enum status
{
  ST_WILLNEED,
  ST_POPULATE,
  ST_FULL,
  ST_CACHED,
  ST_EMPTY,
  ST_INVALID,
  ST_OFF
};

/* Whether the checked region H marks nothing: never filled, or filled
   with no page.  */
static int
region_empty (const struct pbitmap_header *h)
{
  return !(h->flags & PBITMAP_F_FILLED) || h->pages_set == 0
         || h->capacity == 0;
}

/* Finds IM's region and prefetches what it marks, as OPTS say.  PATH
   names IM's file for the residency sample, or is null.  */
static enum status
prefetch (const struct image *im, unsigned opts, struct proc *pr,
          const char *path, struct counts *n, struct gap *gap)
{
  const struct pbitmap_header *h = region_header (im);
  if (h == NULL)
    return ST_INVALID;
  unsigned mode = opts & OPT_MODE;
  int full = mode == MODE_FULL;
  if (!full && region_empty (h))
    return ST_EMPTY;

  struct segment segs[RT_LOADS_MAX];
  long nsegs = segments_collect (im, segs);
  if (nsegs < 0)
    return ST_INVALID;

  struct plan p;
  if (!(opts & OPT_NOCHECK))
    {
      plan_init (&p, segs, h->max_gap, 0);
      plan_build (&p, h, (size_t) nsegs, full);
      *n = p.n;
      if (plan_resident (&p, (size_t) nsegs, im, pr, path))
        return ST_CACHED;
    }
  gap->pages = h->max_gap;
  gap->device = GAP_PINNED;
  if (h->flags & PBITMAP_F_GAP_AUTO)
    {
      enum pbitmap_device d = file_device (pr, path);
      gap->pages = pbitmap_device_gap (d);
      gap->device = (int) d;
    }
  plan_init (&p, segs, gap->pages,
             mode == MODE_POPULATE ? RT_MADV_POPULATE_READ : RT_MADV_WILLNEED);
  plan_build (&p, h, (size_t) nsegs, full);
  *n = p.n;
  if (full)
    return ST_FULL;
  return p.advice == RT_MADV_POPULATE_READ ? ST_POPULATE : ST_WILLNEED;
}

/* What one run did, for the debug line.  */
struct outcome
{
  enum status st;
  struct counts n;
  struct gap gap;
  uint64_t us;
  int have_image;
  struct image im;
};

/* ---- the debug line --------------------------------------------------- */

struct line
{
  char buf[2 * RT_NAME_MAX + 128];
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

static void
line_field (struct line *l, const char *key, uint64_t v)
{
  line_str (l, key, 16);
  line_u64 (l, v);
}

/* Prints the one line for an object, with one write.  NAME may be null.
   VIA, when not null, names the program whose runtime did the work for
   this object (a library prefetched by the executable).  */
static void
report (const char *name, size_t name_max, const struct outcome *o,
        const char *via)
{
  struct line l;
  l.len = 0;
  line_str (&l, "pbitmap: ", 16);
  line_str (&l, name != NULL ? name : "?", name_max);
  line_str (&l, ": ", 16);
  switch (o->st)
    {
    case ST_WILLNEED:
    case ST_POPULATE:
    case ST_FULL:
      line_str (&l, o->st == ST_WILLNEED ? "willneed"
                    : o->st == ST_POPULATE ? "populate" : "full", 16);
      line_field (&l, " pages=", o->n.pages);
      line_field (&l, " runs=", o->n.runs);
      line_field (&l, " calls=", o->n.calls);
      line_field (&l, " us=", o->us);
      if (o->gap.device != GAP_PINNED)
        {
          line_field (&l, " gap=", o->gap.pages);
          line_str (&l, " (", 16);
          line_str (&l, pbitmap_device_name ((enum pbitmap_device)
                                             o->gap.device), 16);
          line_str (&l, ")", 1);
        }
      break;
    case ST_CACHED:
      line_str (&l, "cached", 16);
      line_field (&l, " pages=", o->n.pages);
      line_field (&l, " runs=", o->n.runs);
      line_field (&l, " us=", o->us);
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
  if (via != NULL)
    {
      line_str (&l, " via ", 16);
      line_str (&l, via, RT_NAME_MAX);
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

static uint64_t
us_since (uint64_t t0)
{
  uint64_t t1 = now_ns ();
  return t1 > t0 ? (t1 - t0) / 1000 : 0;
}

/* ---- the dynamic section ---------------------------------------------- */

/* Whether [ADDR, ADDR + LEN) lies inside the file-backed part of one
   readable PT_LOAD of IM; if so, *AVAIL is how many bytes from ADDR do.  */
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

/* The address a DT_* d_ptr stands for: the dynamic linker may or may not
   have relocated it in place.  0 when neither lies in IM.  */
static uintptr_t
dyn_address (const struct image *im, uintptr_t d_ptr, size_t len)
{
  size_t avail;
  if (image_readable (im, d_ptr, len, &avail))
    return d_ptr;
  if (image_readable (im, d_ptr + im->bias, len, &avail))
    return d_ptr + im->bias;
  return 0;
}

/* IM's dynamic section, checked to lie in its mapped file bytes, and
   the number of entries that do; null without one.  */
static const rt_dyn *
image_dynamic (const struct image *im, size_t *ndyn)
{
  const rt_phdr *dyn_ph = NULL;
  for (size_t i = 0; i < im->phnum; i++)
    if (image_phdr (im, i)->p_type == PT_DYNAMIC)
      dyn_ph = image_phdr (im, i);
  size_t avail;
  uintptr_t dyn_addr = dyn_ph != NULL ? im->bias + dyn_ph->p_vaddr : 0;
  if (dyn_ph == NULL || dyn_addr % 8 != 0
      || !image_readable (im, dyn_addr, sizeof (rt_dyn), &avail))
    return NULL;
  if (avail > dyn_ph->p_filesz)
    avail = dyn_ph->p_filesz;
  if (avail > RT_DYN_BYTES_MAX)
    avail = RT_DYN_BYTES_MAX;
  /* The headers may not be the ones the kernel mapped (a crafted file
     can put a second ELF header where the runtime looks first): ask.  */
  if (!memory_readable (im, dyn_addr, avail))
    return NULL;
  *ndyn = avail / sizeof (rt_dyn);
  return (const rt_dyn *) dyn_addr;
}

/* The d_un of IM's first dynamic entry TAG, in *VAL; 0 if there is one.  */
static int
dyn_value (const struct image *im, int64_t tag, uint64_t *val)
{
  size_t ndyn = 0;
  const rt_dyn *dyn = image_dynamic (im, &ndyn);
  for (size_t i = 0; dyn != NULL && i < ndyn && dyn[i].d_tag != DT_NULL; i++)
    if (dyn[i].d_tag == tag)
      {
        *val = dyn[i].d_un.d_val;
        return 0;
      }
  return -1;
}

/* The string at offset OFF of IM's dynamic string table, with *MAX cut
   to the bytes it may span; null if anything is out of place.  */
static const char *
dyn_string (const struct image *im, uint64_t off, size_t *max)
{
  uint64_t strtab_ptr, strsz;
  size_t avail;
  if (dyn_value (im, DT_STRTAB, &strtab_ptr) != 0
      || dyn_value (im, DT_STRSZ, &strsz) != 0 || off >= strsz)
    return NULL;
  uintptr_t strtab = dyn_address (im, strtab_ptr, 1);
  if (strtab == 0 || !image_readable (im, strtab + off, 1, &avail))
    return NULL;
  if (avail > strsz - off)
    avail = strsz - off;
  if (*max > avail)
    *max = avail;
  if (!memory_readable (im, strtab + off, *max))
    return NULL;
  return (const char *) (strtab + off);
}

/* DT_SONAME of the object IM, or "lib".  */
static const char *
object_name (const struct image *im, size_t *max)
{
  uint64_t soname;
  const char *name = NULL;
  if (dyn_value (im, DT_SONAME, &soname) == 0)
    name = dyn_string (im, soname, max);
  return name != NULL ? name : "lib";
}

/* ---- the hooks -------------------------------------------------------- */

/* Runs the core on the object IM (null: this object), as PR's options
   say; PATH names the object's file for the residency sample, or is
   null.  */
static void
run (struct proc *pr, const struct image *im, const char *path,
     struct outcome *o)
{
  unsigned opts = pr->opts;
  uint64_t t0 = 0;
  o->n.pages = o->n.runs = o->n.calls = 0;
  o->gap.pages = 0;
  o->gap.device = GAP_PINNED;
  o->us = 0;
  o->have_image = 0;
  o->st = ST_OFF;
  if (opts & OPT_DEBUG)
    t0 = now_ns ();
  if ((opts & OPT_MODE) != MODE_OFF)
    {
      if (im != NULL)
        {
          o->im = *im;
          o->have_image = 1;
        }
      else
        o->have_image = image_find (pr, &o->im) == 0;
      o->st = o->have_image ? prefetch (&o->im, opts, pr, path, &o->n,
                                        &o->gap)
                            : ST_INVALID;
    }
  if (opts & OPT_DEBUG)
    o->us = us_since (t0);
}

/* The public heads of glibc's struct r_debug and struct link_map
   (<link.h>), which the dynamic linker keeps for debuggers.  */
struct rt_link_map
{
  uintptr_t l_addr;
  const char *l_name;
  const rt_dyn *l_ld;
  const struct rt_link_map *l_next;
  const struct rt_link_map *l_prev;
};

struct rt_r_debug
{
  int r_version;
  const struct rt_link_map *r_map;
};

/* The dynamic linker's list of loaded objects, through the DT_DEBUG of
   the executable EXE, which the dynamic linker sets; null in a static
   program or before it is set.  */
static const struct rt_link_map *
loaded_objects (const struct image *exe)
{
  uint64_t r_ptr;
  if (dyn_value (exe, DT_DEBUG, &r_ptr) != 0 || r_ptr == 0 || r_ptr % 8 != 0)
    return NULL;
  const struct rt_r_debug *r = (const struct rt_r_debug *) r_ptr;
  if (r->r_version < 1 || (uintptr_t) r->r_map % 8 != 0)
    return NULL;
  return r->r_map;
}

/* The next object of the list after M, or null at the end or at an entry
   that is not where one can be.  */
static const struct rt_link_map *
next_object (const struct rt_link_map *m)
{
  const struct rt_link_map *next = m->l_next;
  return (uintptr_t) next % 8 == 0 ? next : NULL;
}

#if defined PBITMAP_HOOK_EXEC

/* The last object of the dynamic linker's list that the executable's
   runtime has walked (step 8), null until it has.  Libraries find it
   through the executable's region and entry slot (entry.S), never
   through a symbol, and only read it.  */
PBITMAP_HIDDEN const struct rt_link_map *volatile __pbitmap_walked;

/* The headers of the loaded object M: the ELF header must be at l_addr
   (where a shared object's first PT_LOAD, at address 0, puts it), valid,
   and its PT_DYNAMIC must be M's l_ld.  The dynamic linker has mapped the
   object and nothing has run since that could have changed it, but l_addr
   is only the load bias: an object whose first PT_LOAD is not at address
   0 has no header there, and possibly no mapping.  So the page is faulted
   in first, which fails where it is not mapped; a kernel that does not
   know MADV_POPULATE_READ (before 5.14) says EINVAL, and then the page is
   read as ld.so left it.  */
static int
object_image (const struct rt_link_map *m, struct image *im)
{
  uintptr_t eh = m->l_addr;
  if (eh == 0 || eh % RT_PAGE != 0)
    return -1;
  long populated = rt_populate (eh, RT_PAGE);
  if ((populated != 0 && populated != -RT_EINVAL)
      || image_from_ehdr ((const rt_ehdr *) eh, 0, im) != 0 || im->bias != eh)
    return -1;
  size_t ndyn;
  if (image_dynamic (im, &ndyn) != m->l_ld)
    return -1;
  return 0;
}

/* Prefetches, as PR says, every object the dynamic linker has loaded
   with this executable (EXE) that has a valid bitmap with work in it,
   and records the last object it walked for their own runtimes.  The
   executable itself comes first in the list and is left out.  */
static void
walk_objects (struct proc *pr, const struct image *exe, const char *via)
{
  size_t ndyn;
  const rt_dyn *exe_dyn = image_dynamic (exe, &ndyn);
  const struct rt_link_map *m = loaded_objects (exe), *last = NULL;
  for (unsigned count = 0; m != NULL && count < RT_OBJECTS_MAX;
       count++, last = m, m = next_object (m))
    {
      struct image im;
      if (count == 0 || m->l_ld == exe_dyn || object_image (m, &im) != 0)
        continue;
      struct outcome o;
      run (pr, &im, m->l_name, &o);
      if (o.st == ST_EMPTY || o.st == ST_INVALID)
        continue;
      if (pr->opts & OPT_DEBUG)
        {
          size_t max = RT_NAME_MAX;
          const char *name = object_name (&im, &max);
          report (name, max, &o, via);
        }
    }
  __pbitmap_walked = last;
}

/* The executable's run, from the entry stub or from .preinit_array.  */
static void
exec_run (int argc, char **argv, char **envp, struct outcome *o)
{
  struct proc pr;
  /* Set before anything of the program ran: pbitmap's audit module has
     prefetched it and its libraries (audit/audit.c, step 7).  */
  if (__pbitmap_walked != NULL)
    {
      o->st = ST_OFF;
      o->have_image = 0;
      return;
    }
  proc_init (&pr, argc, argv, envp);
  const char *name = argc > 0 && argv != NULL ? argv[0] : NULL;
  run (&pr, NULL, (const char *) auxv_value (&pr, AT_EXECFN), o);
  if (pr.opts & OPT_DEBUG)
    report (name, RT_NAME_MAX, o, NULL);
  if (o->have_image)
    walk_objects (&pr, &o->im, name != NULL ? name : "?");
}

/* Start-up without read-around.  When the entry stub has issued the
   bitmap's reads, the C library's start-up still faults on pages before
   they have arrived, and on pages exec read with a read-ahead mark (the
   kernel reads the ELF header with read-ahead, which marks the page after
   it: the first fault there reads the next read_ahead_kb of the file, up
   to 8 MiB here, gaps and all).  Every page start-up needs is already on
   its way, so from the stub to the .preinit_array hook the segments are
   MADV_RANDOM: a fault reads its own page and no more, and a mark is not
   acted on.  The hook sets them back to MADV_NORMAL, before any
   constructor or main runs.  */
static int random_until_preinit;

static void
segments_advise (const struct image *im, int advice)
{
  struct segment segs[RT_LOADS_MAX];
  long n = segments_collect (im, segs);
  for (long k = 0; k < n; k++)
    rt_madvise (segs[k].delta + segs[k].first * RT_PAGE,
                (segs[k].last - segs[k].first + 1) * RT_PAGE, advice);
}

void
__pbitmap_entry_run (int argc, char **argv, char **envp)
{
  if (!__pbitmap_first_run ())
    return;
  struct outcome o;
  exec_run (argc, argv, envp, &o);
  if (o.st == ST_WILLNEED || o.st == ST_POPULATE)
    {
      segments_advise (&o.im, RT_MADV_RANDOM);
      random_until_preinit = 1;
    }
}

void
__pbitmap_preinit (int argc, char **argv, char **envp)
{
  /* A static executable may have run this from its entry stub already.  */
  if (!__pbitmap_first_run ())
    {
      struct image im;
      struct proc pr;
      proc_init (&pr, argc, argv, envp);
      if (random_until_preinit && image_find (&pr, &im) == 0)
        segments_advise (&im, RT_MADV_NORMAL);
      random_until_preinit = 0;
      return;
    }
  struct outcome o;
  exec_run (argc, argv, envp, &o);
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

/* The linker plugin has the linker store in this library's region header
   the distance from the header's mark field to this symbol, which holds
   "pbm-todo" (doc/format.md).  pbitmap's audit module, which prefetches
   every object the dynamic linker maps, makes it "pbm-done" when it has
   done this library's work, before the library is relocated
   (audit/audit.c, step 7); the runtime only reads it.  Whether the
   executable's runtime has done the work is read from the executable's
   own data (step 8).  */
PBITMAP_HIDDEN volatile uint64_t __pbitmap_mark = PBITMAP_MARK_TODO;

/* Whether [ADDR, ADDR + LEN) lies in one PT_LOAD of IM whose p_flags
   include FLAGS, inside its file-backed part (p_filesz) or, with MEM,
   anywhere in its memory (p_memsz).  */
static int
image_holds (const struct image *im, uintptr_t addr, size_t len,
             unsigned flags, int mem)
{
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = image_phdr (im, i);
      uint64_t size = mem ? ph->p_memsz : ph->p_filesz;
      uintptr_t start = im->bias + ph->p_vaddr;
      if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags
          && addr >= start && addr - start <= size
          && len <= size - (addr - start))
        return 1;
    }
  return 0;
}

/* The executable's program headers and load bias, from AT_PHDR, AT_PHENT
   and AT_PHNUM, into EXE: the kernel mapped them, and the bias is
   AT_PHDR minus PT_PHDR's p_vaddr (a program without PT_PHDR has no
   dynamic linker's list to be in).  */
static int
executable_image (const struct proc *pr, struct image *exe)
{
  uintptr_t phdr = auxv_value (pr, AT_PHDR);
  size_t phent = auxv_value (pr, AT_PHENT), phnum = auxv_value (pr, AT_PHNUM);
  if (phdr == 0 || phdr % 8 != 0 || phent < sizeof (rt_phdr)
      || phent % 8 != 0 || phnum == 0 || phnum > RT_PHNUM_MAX)
    return -1;
  exe->ehdr = NULL;
  exe->phdr = (const unsigned char *) phdr;
  exe->phnum = phnum;
  exe->phentsize = phent;
  exe->check = 0;
  for (size_t i = 0; i < phnum; i++)
    if (image_phdr (exe, i)->p_type == PT_PHDR)
      {
        exe->bias = phdr - image_phdr (exe, i)->p_vaddr;
        return 0;
      }
  return -1;
}

/* The executable's walk record (step 8): its region's entry field leads
   to the entry slot, 32 bytes in a readable PT_LOAD's file data whose
   fourth word is "pbm-walk", and the slot's third word to the record, 8
   aligned bytes of a writable PT_LOAD.  The last object the executable's
   runtime walked, or null when any of it is not so.  */
static const struct rt_link_map *
executable_walked (const struct image *exe)
{
  rt_phdr reg;
  if (region_phdr (exe, &reg) != 0)
    return NULL;
  uintptr_t field = exe->bias + reg.p_vaddr + PBITMAP_OFF_ENTRY;
  uintptr_t slot = field + (uintptr_t) *(const uint64_t *) field;
  if (slot % 8 != 0 || !image_holds (exe, slot, PBITMAP_SLOT_SIZE, PF_R, 0))
    return NULL;
  const uint64_t *words = (const uint64_t *) slot;
  uintptr_t record = slot + (uintptr_t) words[PBITMAP_SLOT_WALKED / 8];
  if (words[PBITMAP_SLOT_MAGIC / 8] != PBITMAP_SLOT_MAGIC_VALUE || record % 8 != 0
      || !image_holds (exe, record, 8, PF_R | PF_W, 1))
    return NULL;
  return *(const struct rt_link_map *const volatile *) record;
}

/* This library's entry in the dynamic linker's list, or null when the
   list is not found: the object with the highest load address (l_addr) at
   or below this library's region.  Objects do not overlap, and each one's
   mapping starts at its load address (a shared object's first PT_LOAD is
   at address 0, where its ELF header is), so no other one's load address
   lies between.  *WALKED says whether it comes in the list at or before
   the last object the executable's runtime walked: that runtime has
   already done this library's work (step 8).  */
static const struct rt_link_map *
library_entry (const struct proc *pr, int *walked)
{
  struct image exe;
  *walked = 0;
  if (executable_image (pr, &exe) != 0)
    return NULL;
  const struct rt_link_map *last = executable_walked (&exe), *self = NULL;
  int passed = last == NULL;
  uintptr_t here = (uintptr_t) __pbitmap_region;
  const struct rt_link_map *m = loaded_objects (&exe);
  for (unsigned count = 0; m != NULL && count < RT_OBJECTS_MAX;
       count++, m = next_object (m))
    {
      if (m->l_addr <= here && (self == NULL || m->l_addr > self->l_addr))
        {
          self = m;
          *walked = !passed;
        }
      if (m == last)
        passed = 1;
    }
  return self;
}

/* This library's own headers, from its load address in the dynamic
   linker's list; nothing of the image is read before it is faulted in
   (step 2).  */
static int
image_find (const struct proc *pr, struct image *im)
{
  int walked;
  const struct rt_link_map *self = library_entry (pr, &walked);
  if (self == NULL || self->l_addr % RT_PAGE != 0
      || image_find_at ((const rt_ehdr *) self->l_addr,
                        (uintptr_t) __pbitmap_region, 1, im) != 0
      || im->bias != self->l_addr)
    return -1;
  return 0;
}

/* For the debug line of a library the executable's runtime walked: what
   that runtime found, when it found no bitmap or an empty one (*O, and 0);
   -1 when it did the library's work.  */
static int
walked_status (const struct proc *pr, struct outcome *o)
{
  unsigned opts = pr->opts;
  o->n.pages = o->n.runs = o->n.calls = 0;
  o->gap.pages = 0;
  o->gap.device = GAP_PINNED;
  o->us = 0;
  o->have_image = image_find (pr, &o->im) == 0;
  const struct pbitmap_header *h = o->have_image ? region_header (&o->im)
                                                 : NULL;
  if (h == NULL)
    o->st = ST_INVALID;
  else if ((opts & OPT_MODE) != MODE_FULL && region_empty (h))
    o->st = ST_EMPTY;
  else
    return -1;
  return 0;
}

void
__pbitmap_init (int argc, char **argv, char **envp)
{
  struct proc pr;
  if (__pbitmap_mark == PBITMAP_MARK_DONE)
    return;
  proc_init (&pr, argc, argv, envp);
  int walked;
  const struct rt_link_map *self = library_entry (&pr, &walked);
  const char *path = self != NULL ? self->l_name : NULL;
  struct outcome o;
  if ((pr.opts & OPT_MODE) != MODE_OFF && walked)
    {
      /* The executable's line says what it did; one that found nothing
         to do has none, and this library says so itself.  */
      if (!(pr.opts & OPT_DEBUG) || walked_status (&pr, &o) != 0)
        return;
    }
  else
    run (&pr, NULL, path, &o);
  if (!(pr.opts & OPT_DEBUG))
    return;
  /* With the prefetch off the headers were not looked at yet.  */
  if (!o.have_image)
    o.have_image = image_find (&pr, &o.im) == 0;
  size_t max = RT_NAME_MAX;
  const char *name = o.have_image ? object_name (&o.im, &max) : "lib";
  report (name, max, &o, NULL);
}

/* glibc passes (argc, argv, envp) to .init_array entries too.  */
static void (*const pbitmap_init_entry) (int, char **, char **)
  __attribute__ ((section (".init_array"), aligned (sizeof (void *)),
                  used)) = __pbitmap_init;

#endif
