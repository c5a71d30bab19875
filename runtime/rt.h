/* rt.h: what the files of the pbitmap runtime share.
 *
 * The runtime is split by concern; runtime/prefetch.c states the
 * protocol, step by step, and each file does some of its steps:
 *
 *   options.c    step 1: the environment, the auxiliary vector
 *   object.c     step 2: an object's ELF and program headers, as mapped
 *   region.c     steps 2-3: its region, and whether it is this object's
 *   dynamic.c    an object's dynamic section, its DT_SONAME, and the
 *                dynamic linker's list of loaded objects
 *   plan.c       step 4: the bits of each PT_LOAD turned into reads
 *   residency.c  step 5: whether the planned pages are cached already
 *   device.c     step 6: the class of the device a file is on
 *   prefetch.c   steps 3-7 for one object: the core
 *   report.c     the debug line
 *   walk.c       step 8 in the executable: the loaded libraries
 *   self.c       this object's own headers: the executable's through
 *                AT_PHDR, a library's through the dynamic linker's list
 *   entry.c      the hooks, and step 9
 *   entry.S      the entry point of a static executable
 *
 * Every function named here is hidden, and the build makes it local to
 * the runtime object (Makefile.am), so that no name of the runtime but
 * its own __pbitmap_* symbols can meet a name of the program.  None of
 * them but the hooks' files (entry.c, self.c, walk.c) depends on how the
 * process started or on a symbol of the link (__pbitmap_region): the
 * core takes an object's headers and the options, so that another
 * reader can call it with headers it found itself.
 *
 * The rules of the whole runtime hold in each file: raw system calls
 * only (sys.h), nothing allocated, no memory written but the runtime's
 * own, bounded work, and on anything unexpected less is done, never the
 * program stopped.
 */
#ifndef PBITMAP_RT_H
#define PBITMAP_RT_H

#include <stddef.h>
#include <stdint.h>
#include <elf.h>

#include "pbitmap-format.h"
#include "pbitmap-plan.h"

typedef Elf64_Ehdr rt_ehdr;
typedef Elf64_Phdr rt_phdr;
typedef Elf64_Dyn rt_dyn;

#define RT_HIDDEN __attribute__ ((visibility ("hidden")))

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

/* Pages sampled before any madvise, and objects the runtime looks at in
   the dynamic linker's list: more of either is unexpected, and then
   nothing is done (so with more PT_LOADs than PBITMAP_LOADS_MAX).  */
#define RT_SAMPLES 16u
#define RT_OBJECTS_MAX 4096u

/* Words of the auxiliary vector looked at, and null words skipped
   between the environment and it (unsetenv shifts the environment array
   down in place, leaving a null behind for each variable it removed).  */
#define RT_AUXV_WORDS (2u * 64u)
#define RT_ENV_HOLES_MAX 4096u

/* ---- options.c: the environment and the process ----------------------- */

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

/* The options the environment ENVP sets.  */
RT_HIDDEN unsigned rt_env_options (char *const *envp);

/* The value of auxiliary vector entry TYPE, or 0.  */
RT_HIDDEN unsigned long rt_auxv_value (const struct proc *pr,
                                       unsigned long type);

/* Whether AT_SECURE is set; a process whose vector was not found counts
   as secure.  */
RT_HIDDEN int rt_proc_secure (const struct proc *pr);

/* PR from a hook's arguments: the options in effect (none under
   AT_SECURE).  */
RT_HIDDEN void rt_proc_init (struct proc *pr, int argc, char **argv,
                             char **envp);

/* Whether the process has had to wait for the disk in a page fault.  */
RT_HIDDEN int rt_proc_cold (struct proc *pr);

/* ---- object.c, region.c: an object's headers and region --------------- */

/* The headers of a loaded object as mapped in memory, its load bias, and
   whether its memory must be faulted in before it is read (a library's
   own image, step 2).  */
struct rt_object
{
  const unsigned char *ehdr;
  const unsigned char *phdr;
  size_t phnum;
  size_t phentsize;
  uintptr_t bias;
  int check;
};

/* Whether [ADDR, ADDR + LEN) of IM may be read: always, or for an object
   that must be checked, once MADV_POPULATE_READ has faulted it in.  */
RT_HIDDEN int rt_memory_readable (const struct rt_object *im, uintptr_t addr,
                                  size_t len);

/* Program header I of IM.  */
RT_HIDDEN const rt_phdr *rt_object_phdr (const struct rt_object *im,
                                         size_t i);

/* IM from the ELF header at EH, read as CHECK says: 0, or -1 when
   anything is unexpected.  */
RT_HIDDEN int rt_object_from_ehdr (const rt_ehdr *eh, int check,
                                   struct rt_object *im);

/* Whether [OFFSET, OFFSET + SIZE) of the file lies in the file range of
   a readable PT_LOAD that maps it at VADDR.  */
/* Whether [ADDR, ADDR + LEN) lies in one PT_LOAD of IM with FLAGS, in
   its file-backed part, or with MEM anywhere in its memory.  */
RT_HIDDEN int rt_object_holds (const struct rt_object *im, uintptr_t addr,
                               size_t len, unsigned flags, int mem);

RT_HIDDEN int rt_object_maps (const struct rt_object *im, uint64_t offset,
                              uint64_t vaddr, uint64_t size);

/* IM's region as a program header would describe it, in *REG: 0 when
   there is exactly one and it lies where it may be read.  */
RT_HIDDEN int rt_region_phdr (const struct rt_object *im, rt_phdr *reg);

/* IM from the ELF header at EH, read as CHECK says, when its region is
   at REGION (step 2): 0, or -1.  */
RT_HIDDEN int rt_object_find_at (const rt_ehdr *eh, uintptr_t region,
                                 int check, struct rt_object *im);

/* The checked header of IM's region, or null.  */
RT_HIDDEN const struct pbitmap_header *
rt_region_header (const struct rt_object *im);

/* Whether the checked region H marks nothing.  */
RT_HIDDEN int rt_region_empty (const struct pbitmap_header *h);

/* ---- dynamic.c: the dynamic section, the loaded objects --------------- */

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

/* Whether [ADDR, ADDR + LEN) lies inside the file-backed part of one
   readable PT_LOAD of IM; if so, *AVAIL is how many bytes from ADDR do.  */
RT_HIDDEN int rt_object_readable (const struct rt_object *im, uintptr_t addr,
                                  size_t len, size_t *avail);

/* IM's dynamic section and its number of entries, or null.  */
RT_HIDDEN const rt_dyn *rt_object_dynamic (const struct rt_object *im,
                                           size_t *ndyn);

/* The d_un of IM's first dynamic entry TAG, in *VAL; 0 if there is one.  */
RT_HIDDEN int rt_dyn_value (const struct rt_object *im, int64_t tag,
                            uint64_t *val);

/* The name of the object IM (null: its headers were not found) for the
   debug line: its DT_SONAME, else PATH, the name the dynamic linker
   knows it by, when not null or empty, else "lib".  *MAX is cut to the
   bytes a DT_SONAME may span.  */
RT_HIDDEN const char *rt_object_name (const struct rt_object *im,
                                      const char *path, size_t *max);

/* The dynamic linker's list of loaded objects, through the executable
   EXE's DT_DEBUG, or null; the entry after M, or null.  */
RT_HIDDEN const struct rt_link_map *
rt_loaded_objects (const struct rt_object *exe);
/* The headers of the loaded object M, into IM: 0, or -1.  */
RT_HIDDEN int rt_object_loaded (const struct rt_link_map *m,
                                struct rt_object *im);
RT_HIDDEN const struct rt_link_map *
rt_next_object (const struct rt_link_map *m);

/* ---- plan.c, residency.c, device.c: from bits to reads ---------------- */

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
  uint64_t reads;
};

/* The gap a plan was issued with, and the device class it is that of
   (GAP_PINNED: the region's own max_gap; GAP_OPEN: the region leaves
   the gap to the reader, and no chunk depended on it, so the class was
   not looked up).  */
#define GAP_PINNED (-1)
#define GAP_OPEN (-2)
struct gap
{
  uint32_t pages;
  int device;
};

/* A plan is built twice with the same steps: first only counted and
   sampled (ADVICE 0), then, unless the sample says the pages are all
   resident, issued with ADVICE.  The chunker (pbitmap-plan.h) turns the
   runs of set pages, in page numbers of the address space, into reads,
   and counts the runs; SEG is the segment of the last page added, SCAN
   the segment being scanned, from BITS (NBYTES bytes; null in full
   mode).  */
struct plan
{
  struct pbitmap_chunker chunker;
  size_t seg;
  size_t scan;
  const unsigned char *bits;
  uint64_t nbytes;
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

/* The PT_LOADs of IM that map file pages, sorted by address, into SEGS
   (room for PBITMAP_LOADS_MAX): their number, or -1 when IM is not to be
   planned from (include/pbitmap-plan.h, the PT_LOADs read from).  */
RT_HIDDEN long rt_segments_collect (const struct rt_object *im,
                                    struct segment *segs);

RT_HIDDEN void rt_plan_init (struct plan *p, const struct segment *segs,
                             uint64_t max_gap, int advice);

/* Builds the whole plan of the region H over NSEGS segments: in full
   mode every page of every segment, else the set bits in a segment, the
   chunks issued in the region's read order when ORDERED.  */
RT_HIDDEN void rt_plan_build (struct plan *p, const struct pbitmap_header *h,
                              size_t nsegs, int full, int ordered);

/* Whether PROBES of the sampled pages of the plan P of IM, evenly
   spread, are in the page cache (step 5).  PATH names IM's file, or is
   null.  */
RT_HIDDEN int rt_plan_resident (const struct plan *p, size_t nsegs,
                                const struct rt_object *im, struct proc *pr,
                                const char *path, unsigned probes);

/* The class of the device the file PATH is on (step 6).  */
RT_HIDDEN enum pbitmap_device rt_file_device (struct proc *pr,
                                              const char *path);

/* Sets GAP to that device's class and gap, and returns the gap: the
   chunker's answer when a chunk depends on it, or the debug line's when
   the plan left it open (GAP_OPEN).  */
RT_HIDDEN uint32_t rt_gap_look_up (struct proc *pr, const char *path,
                                   struct gap *gap);

/* ---- prefetch.c, report.c: the core and its line ---------------------- */

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

/* What one run did, for the debug line.  */
struct outcome
{
  enum status st;
  struct counts n;
  struct gap gap;
  uint64_t us;
  int have_image;
  struct rt_object im;
};

/* Plans the bitmap H over IM's PT_LOADs and issues it, as OPTS say,
   unless PROBES sampled pages say it is resident (steps 4 to 6).  H is
   IM's region or a copy of one (the audit module's store entry).  */
RT_HIDDEN enum status rt_plan_prefetch (const struct rt_object *im,
                                        const struct pbitmap_header *h,
                                        unsigned opts, struct proc *pr,
                                        const char *path, unsigned probes,
                                        struct counts *n, struct gap *gap);

/* Runs the core on the object IM (null: this object, rt_self_find), as
   PR's options say; PATH names the object's file for the residency
   sample, or is null.  */
RT_HIDDEN void rt_run (struct proc *pr, const struct rt_object *im,
                       const char *path, struct outcome *o);

/* Prints the one line for an object, with one write: "TOOL: NAME: " and
   the outcome.  NAME may be null.  When TAIL is not null, " LABEL TAIL"
   ends the line (the program whose runtime did the work, where the
   bitmap came from).  */
RT_HIDDEN void rt_report (const char *tool, const char *name,
                          size_t name_max, const struct outcome *o,
                          const char *label, const char *tail);

/* Prints "TOOL: NAME: WHAT" and DETAIL, when not null, as one line.  */
RT_HIDDEN void rt_say (const char *tool, const char *name, const char *what,
                       const char *detail);

RT_HIDDEN uint64_t rt_now_ns (void);

/* Completes O for its line: the microseconds since T0, and then, for a
   plan that left the gap open (GAP_OPEN), the class of the device PATH
   is on, looked up after the time is taken, so that us= is what a start
   without PBITMAP_DEBUG spends.  */
RT_HIDDEN void rt_report_finish (struct proc *pr, const char *path,
                                 uint64_t t0, struct outcome *o);

/* ---- self.c, walk.c: this object and the others ----------------------- */

/* This object's own headers (step 2): 0, or -1.  */
RT_HIDDEN int rt_self_find (const struct proc *pr, struct rt_object *im);

#endif /* PBITMAP_RT_H */
