/* elfpatch.h: what the parts of elfpatch share.
 *
 * elfpatch is a pipeline of small steps: an image (image.c) is one ELF
 * file read into memory, with its pbitmap region found and checked
 * (region.c) and its identity computed (identity.c); a trace (trace.c)
 * is the parsed form of a trace file; ehframe.c lists a file's function
 * starts from its unwind table; record.c makes traces, fill.c turns
 * traces into the bits of an image (with the max_gap device.c chooses),
 * order.c into an order file for the next link, show.c prints an image,
 * and update.c writes a modified image back atomically.  run.c is the
 * launcher: it prefetches a program's bitmaps and those of the libraries
 * ldpath.c finds, then execs it.  Every function that can fail prints its
 * own one-line message (elfpatch: error: FILE: ...) and returns -1, so
 * callers only pass failure up.
 */
#ifndef ELFPATCH_H
#define ELFPATCH_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/user.h>
#include <gelf.h>

#include "pbitmap-format.h"
#include "pbitmap-plan.h"
#include "region.h"

/* -v and -q.  verbose > 0 prints what is done, quiet suppresses
   warnings.  */
extern int elfpatch_verbose;
extern int elfpatch_quiet;

void elfpatch_warn (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));
void elfpatch_note (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/* The first bytes, up to SIZE, of PATH into BUF: how many, or -1 when
   PATH is no regular file that can be read (a FIFO is not opened for
   good, so it cannot block).  */
ssize_t read_head (const char *path, char *buf, size_t size);
/* Whether the file at PATH starts with PREFIX (of LEN bytes, at most
   16); -1 when it is no regular file that can be read.  */
int starts_with (const char *path, const char *prefix, size_t len);
/* Reads LEN bytes at OFFSET from BUF or, when BUF is null, from FD.
   Returns 0, or -1 with errno set.  */
int read_at (const unsigned char *buf, int fd, uint64_t offset, void *out,
             size_t len);

/* The notes of program header I of ELF, a file of FILE_SIZE bytes, for
   gelf_getnote (note headers converted, laid out as its p_align says);
   null unless it is a PT_NOTE inside the file.  *PH is the header.  */
Elf_Data *pt_note_data (Elf *elf, size_t i, uint64_t file_size,
                        GElf_Phdr *ph);

/* Reading and writing fields in the byte order of the file: MSB is
   nonzero for ELFDATA2MSB, as elf_msb (ELF) says.  */
int elf_msb (Elf *elf);
uint16_t get_u16 (const unsigned char *p, int msb);
uint32_t get_u32 (const unsigned char *p, int msb);
uint64_t get_u64 (const unsigned char *p, int msb);
void put_u16 (unsigned char *p, uint16_t v, int msb);
void put_u32 (unsigned char *p, uint32_t v, int msb);
void put_u64 (unsigned char *p, uint64_t v, int msb);

/* The identity a trace block is bound to: the file's build-id or, for a
   file without one, its size and FNV-1a 64 hash with the region's
   writable bytes counted as zero.  */
#define IDENTITY_BUILD_ID_MAX 256
struct identity
{
  size_t build_id_len;          /* 0: no build-id, use size and hash */
  unsigned char build_id[IDENTITY_BUILD_ID_MAX];
  uint64_t size;
  uint64_t fnv1a64;
};

int identity_equal (const struct identity *a, const struct identity *b);
/* "build-id HEX" or "size N fnv1a64 H" into BUF (at least
   2 * IDENTITY_BUILD_ID_MAX + 16 bytes), as a trace writes it.  */
void identity_format (const struct identity *id, char *buf, size_t bufsize);
#define IDENTITY_TEXT_MAX (2 * IDENTITY_BUILD_ID_MAX + 64)

/* Identity of a file: CONTENTS (or FD when null) of SIZE bytes, ELF the
   libelf handle on it (or null for a file that is not ELF); its region,
   if any, is located here.  Returns 0 or -1 after a message naming
   PATH.  */
int identity_compute (const char *path, Elf *elf, const unsigned char *contents,
                      int fd, uint64_t size, struct identity *id);
/* The same for an ELF file in memory whose region R the caller located
   (region_find returned 0 or REGION_STALE), or null when it has none.  */
int identity_of_region (const char *path, Elf *elf,
                        const unsigned char *contents, uint64_t size,
                        const struct region *r, struct identity *id);

/* One ELF file in memory with its region.  */
struct image
{
  const char *path;             /* as the user named it */
  int fd;                       /* open; flock'ed when opened for update */
  struct stat st;
  unsigned char *buf;           /* the whole file */
  size_t size;
  Elf *elf;                     /* elf_memory on BUF; libelf only reads it */
  int msb;                      /* ELFDATA2MSB */
  int elfclass;
  struct region region;
  struct identity id;
  int debug_file;               /* a separate debug file: the region is
                                   the section's copy, unplaced */
};

/* Opens PATH and reads it; IMAGE_UPDATE takes the exclusive lock that
   update.c relies on; IMAGE_STALE accepts a stale program header (the
   region is then the note, and region.stale is set); IMAGE_ANY_REGION
   accepts a file without a valid region (region.size is then 0 and the
   capacity counts the file's pages), for what reads traces of a file
   without writing its bitmap.  Returns 0 or -1 after a message.  */
#define IMAGE_UPDATE 1
#define IMAGE_STALE 2
#define IMAGE_ANY_REGION 4
int image_open (const char *path, int flags, struct image *img);
/* Points the stale program header of IMG at its note, in IMG->buf, and
   moves the note's entry and mark fields with it.  Returns 0 or -1 after
   a message.  */
int image_resync (struct image *img);
/* Whether ELF is a separate debug file (objcopy --only-keep-debug,
   eu-strip -f): its code sections have no contents.  */
int image_is_debug_file (Elf *elf);
void image_close (struct image *img);
/* The bits of the region inside IMG->buf.  */
unsigned char *image_bits (struct image *img);
/* Stores pages_set, runs, flags and max_gap from IMG->region.hdr into the
   buffer.  */
void image_store_header (struct image *img);

/* The file offset of address ADDR, from the PT_LOAD of ELF whose file
   contents hold it; -1 when none does.  */
int vaddr_offset (Elf *elf, uint64_t addr, uint64_t *offset);

/* qsort order of uint64_t values.  */
int u64_cmp (const void *a, const void *b);

/* A value and its place (index) in a list; qsort with indexed_cmp sorts
   by value and, among equal values, by place: the order a stable sort
   would give, which qsort does not promise.  */
struct indexed
{
  uint64_t value;
  size_t index;
};
int indexed_cmp (const void *a, const void *b);

/* Makes room for one more element in *ARRAY of *ALLOC elements of
   ELSIZE bytes, N of them used.  Returns 0 or -1 (errno set).  */
int array_reserve (void **array, size_t *alloc, size_t n, size_t elsize);

/* Counting over a bitmap.  */
uint64_t bits_count (const unsigned char *bits, uint64_t from, uint64_t to);
uint64_t bits_runs (const unsigned char *bits, uint64_t capacity);

/* Traces.  */
struct page_range
{
  uint64_t first;
  uint64_t last;                /* inclusive */
};

/* qsort order of page ranges: by first page.  */
int page_range_cmp (const void *a, const void *b);

struct trace_block
{
  char *path;
  struct identity id;
  unsigned line;                /* of its 'file' statement */
  struct page_range *ranges;
  size_t n_ranges;
  size_t alloc;
  uint64_t *order;              /* pages, first-touch order (version 2) */
  size_t n_order, order_alloc;
  int order_all;                /* ORDER ranks every page (version 3) */
  uint64_t *calls;              /* file offsets, first-call order */
  size_t n_calls, calls_alloc;
};

struct trace
{
  char *command;
  struct trace_block *blocks;
  size_t n_blocks;
  size_t alloc;
};

/* The largest page number a trace may hold: its byte offset fits in
   64 bits.  */
#define TRACE_PAGE_MAX (UINT64_MAX >> PBITMAP_PAGE_SHIFT)

int trace_read (const char *path, struct trace *t);
/* The same, keeping only the blocks whose identity is KEEP (all when KEEP
   is null): the others are checked as they are read, then dropped, so
   that memory grows with KEEP's pages, not with the trace.  */
int trace_read_for (const char *path, const struct identity *keep,
                    struct trace *t);
int trace_write (const char *path, const struct trace *t);
/* Writes T to F; errors show in ferror (F).  */
void trace_print (FILE *f, const struct trace *t);
/* Whether PATH reads as a trace (its first statement is
   'pbitmap-trace'); what --fill tells its traces from its files by.  */
int trace_sniff (const char *path);
void trace_free (struct trace *t);
struct trace_block *trace_add_block (struct trace *t, const char *path);
int trace_block_add_range (struct trace_block *b, uint64_t first,
                           uint64_t last);
/* Whether PAGE is in the ascending ranges of B.  */
int trace_block_has_page (const struct trace_block *b, uint64_t page);
/* Appends VALUE to the list *V of *N values (*ALLOC allocated): a
   block's 'order' or 'calls'.  Returns 0 or -1 (errno set).  */
int trace_list_append (uint64_t **v, size_t *n, size_t *alloc,
                       uint64_t value);

/* The reads of a bitmap (plan.c), as the runtime and --run make them.
   The file pages of ELF's PT_LOADs, sorted and merged, into *OUT;
   returns their number, or -1 (a libelf error).  When the runtime plans
   nothing from these PT_LOADs (include/pbitmap-plan.h, the PT_LOADs read
   from), returns 0 and sets *UNPLANNED to why; else sets it to null.  */
long load_ranges (Elf *elf, struct page_range **out, const char **unplanned);
/* Why the runtime plans nothing from ELF's PT_LOADs, or null when it
   plans from them (or libelf cannot read them: load_ranges says so).  */
const char *loads_unplanned (Elf *elf);
/* A region's read order (include/pbitmap-plan.h): its table, the
   entries in use (0: none) and whether they are big-endian.  */
struct plan_order
{
  const unsigned char *table;
  uint64_t len;
  int msb;
};
/* Feeds the set pages of BITS (CAPACITY pages) that lie in LOADS to
   CHUNKER, gaps readable only inside one load, in ascending order or,
   when ORDER is not null and has entries, the same reads block by block
   in that order (include/pbitmap-plan.h); and flushes it.  Returns the
   number of set pages fed.  */
uint64_t plan_bitmap (const struct page_range *loads, size_t n_loads,
                      const unsigned char *bits, uint64_t capacity,
                      const struct plan_order *order,
                      struct pbitmap_chunker *chunker);
/* What a chunker's receiver sums up: pages read (gaps included) and
   reads.  (The chunker counts the runs.)  */
struct plan_count
{
  uint64_t pages, reads;
};
void plan_count_chunk (struct plan_count *p, uint64_t first,
                       uint64_t npages);

/* File offsets of the function starts in ELF's .eh_frame_hdr search
   table (ehframe.c), ascending, without repeats.  0 and *N = 0 when the
   file has none; -1 with a message naming PATH on a malformed table.  */
int ehframe_entries (Elf *elf, const char *path, uint64_t **offsets,
                     size_t *n);

/* File offsets of ELF's function starts (starts.c): those of its
   unwind table and those of its symbol table's functions that lie in
   executable PT_LOADs, ascending, without repeats; returns as
   ehframe_entries does.  */
int function_starts (Elf *elf, const char *path, uint64_t **offsets,
                     size_t *n);

/* The region's max_gap (device.c): given with --max-gap, or from the
   class of a device, named or (DEVICE_AUTO) found under the binary, both
   pinned; or, when neither option was given (DEVICE_NONE), left to the
   reader.  Slower devices come later.  */
enum device_kind { DEVICE_NONE, DEVICE_AUTO, DEVICE_NVME, DEVICE_SSD,
                   DEVICE_CLOUD, DEVICE_HDD };

struct gap_choice
{
  int explicit_gap;             /* --max-gap was given: it wins */
  uint32_t max_gap;
  enum device_kind device;
};

int device_parse (const char *name, enum device_kind *kind);
/* The gap of a profile (not DEVICE_NONE or DEVICE_AUTO).  */
uint32_t device_max_gap (enum device_kind kind);
/* The gap C asks for the file open on FD; WHY says how it was chosen;
   *PINNED whether readers must use it (else they choose).  */
uint32_t device_choose_gap (const struct gap_choice *c, int fd,
                            char *why, size_t whysize, int *pinned);
/* The class of the device the file open on FD is on, as the runtime
   tells it (include/pbitmap-plan.h).  */
enum pbitmap_device device_of_file (int fd);

/* What finding a library needs to know of the object that needs it and
   of the objects that loaded that one (ldpath.c).  */
struct ld_object
{
  const struct ld_object *loader;       /* null for the executable */
  const char *origin;                   /* its directory, for $ORIGIN */
  const char *rpath;                    /* null when it has a DT_RUNPATH */
  const char *runpath;
  int nodeflib;                         /* DF_1_NODEFLIB */
};

/* Whether PATH is the library looked for (it opens, and is an ELF file of
   the program's class and machine).  */
typedef int (*ld_try_fn) (const char *path, void *arg);

/* Tries the places of library NAME, needed by NEEDER, in the dynamic
   linker's order until TRY accepts one; returns 1 and the path in *FOUND
   (malloc'ed), or 0.  */
int ld_search (const char *name, const struct ld_object *needer,
               ld_try_fn try, void *arg, char **found);

/* How a fill picks pages from N traces (fill.c).  */
enum merge_rule { MERGE_OR, MERGE_AND, MERGE_SHARE };
#define FILL_SHARE_ONE 1000000u         /* min_share is in millionths */
#define FILL_DEFAULT_SHARE 250000u      /* 0.25 */

struct fill_policy
{
  enum merge_rule merge;
  uint32_t min_share;           /* share: kept when count/runs >= this/10^6 */
  int budget_given;
  uint64_t budget_pages;        /* with BUDGET_GIVEN: at most this many */
  uint32_t age_weight;          /* --age: the old bitmap counts as this
                                   many runs; 0: not aged in */
  int allow_truncate;           /* --allow-truncate: drop the pages past
                                   the capacity instead of failing */
};

/* What a reader of traces sees of each trace: T holds only the blocks
   of the build in question.  Returns 0, or -1 after a message.  */
typedef int trace_visit_fn (const char *path, const struct trace *t,
                            void *arg);

/* Sets in BITS the pages trace PATH recorded for the build of IMG; pages
   past the capacity go to D as ranges.  Then shows VISIT (when not
   null) the trace's blocks of that build.  Refuses (-1 after a message)
   a trace without a block for IMG.  */
int trace_pages (const char *path, const struct image *img,
                 unsigned char *bits, struct trace_block *d,
                 trace_visit_fn *visit, void *arg);
/* Whether policy P keeps what COUNT of RUNS runs used.  */
int fill_kept (const struct fill_policy *p, uint64_t count, uint64_t runs);
/* Sets in BITS (IMG's capacity) the pages of TRACES, and with --age of
   the bitmap IMG holds, that policy P keeps (its budget applied); pages
   past the capacity are dropped with a warning.  VISIT
   sees each trace as trace_pages reads it.  Returns 0 or -1 after a
   message.  */
int fill_select (struct image *img, char **traces, size_t n_traces,
                 const struct fill_policy *p, unsigned char *bits,
                 trace_visit_fn *visit, void *arg);

/* The read order a fill stores (fill-order.c): per block of the region's
   order table, the sum of the ranks the traces gave it and their number;
   FIRST is scratch.  */
struct read_order
{
  uint64_t n_blocks;            /* the table's size; 0: no table */
  double *rank_sum;
  uint32_t *ranked;
  uint64_t *first;
  size_t traces;                /* traces that ranked every page */
};

/* Sizes O for IMG's region.  Returns 0, or -1 after a message.  */
int read_order_init (struct read_order *o, const struct image *img);
void read_order_free (struct read_order *o);
/* A trace_visit_fn: adds the ranks of T's first block whose 'order' ranks
   every page (version 3) to O (ARG).  */
int read_order_visit (const char *path, const struct trace *t, void *arg);
/* Writes into IMG's region the table of the blocks O ranked that hold a
   page of BITS, by rank, and sets the header's order_len (in IMG's
   decoded header; image_store_header stores it).  Returns their
   number.  */
uint64_t read_order_write (struct read_order *o, struct image *img,
                           const unsigned char *bits);

/* Prints, without a newline, the read order of the region whose header
   is H and whose order table TABLE is (big-endian when MSB): how many
   blocks it ranks and the first pages of the first few, or that reads
   are ascending (show.c, for --show of files and of store entries).  */
void show_read_order (const struct pbitmap_header *h,
                      const unsigned char *table, int msb);

/* A file's dynamic relocations (relocs.c): the bytes of its allocated
   SHT_REL and SHT_RELA sections, how many relative relocations they
   hold, the bytes of the word-aligned ones, and the bytes those sections
   and a DT_RELR table would take with them packed (-z
   pack-relative-relocs); PACKED when the file has a RELR table already.  */
struct reloc_count
{
  uint64_t bytes, relative, packable_bytes, packed_bytes;
  int packed;
};

/* Counts ELF's dynamic relocations into RC.  Returns 0, or -1 with errno
   set when memory runs out.  */
int relocs_count (Elf *elf, struct reloc_count *rc);

/* A file a recorded program mapped, and the pages it used (record.c;
   import.c fills them from perf's events).  */
struct mapped_file
{
  unsigned dev_major, dev_minor;
  uint64_t ino;
  char *path;
  int fd;                       /* -1: skipped */
  uint64_t *pages;              /* in any order, repeats allowed */
  size_t n_pages, alloc;
  struct file_code *code;       /* its code as watch.c saw it run, or null */
  int captured;                 /* a capture found it mapped */
  int has_region;               /* a valid bitmap region (set with its
                                   block) */
};

/* The files of one recording (record.c).  */
struct recording
{
  struct mapped_file *files;
  size_t n_files, alloc;
  int captured;
};

/* The file of the mapping [START, END) of PATH (as /proc/PID/maps
   writes it, modified in place) on device MAJ:MIN, inode INO, added to
   REC when new; its fd is -1 when it is not recorded.  Null after a
   message when memory runs out.  */
struct mapped_file *recording_file (struct recording *rec, pid_t pid,
                                    unsigned maj, unsigned min, uint64_t ino,
                                    uint64_t start, uint64_t end, char *path);

int mapped_file_add_page (struct mapped_file *f, uint64_t page);
/* One line of /proc/PID/maps.  */
struct maps_entry
{
  uint64_t start, end, offset, ino;
  unsigned maj, min;
  char perms[8];
  char *path;                   /* into the line */
};

/* Parses LINE of /proc/PID/maps (its newline cut off in place) into E:
   0 for a mapping of a file (a path starting with '/' and an inode),
   -1 for any other line.  */
int maps_parse (char *line, struct maps_entry *e);

/* Receives the index, from the mapping's start, of a present page;
   returns 0, or -1 to stop.  */
typedef int pagemap_page_fn (void *ctx, uint64_t index);

/* Calls PAGE for each page of [START, END) that /proc/PID/pagemap, open
   on PAGEMAP, says is present.  Returns 0, or -1 (errno set, or 0 when
   PAGE stopped it).  */
int pagemap_present (int pagemap, uint64_t start, uint64_t end,
                     pagemap_page_fn *page, void *ctx);

/* Appends F's block to T: the identity of the file open on F->fd and
   its pages, sorted, as ranges.  */
int mapped_file_block (struct mapped_file *f, struct trace *t);
void mapped_file_release (struct mapped_file *f);

/* How --record runs the program.  */
struct record_options
{
  int exact;                    /* evict and suppress read-around (exact.c) */
  int follow;                   /* also forked children and exec'd programs */
  int no_seccomp;               /* stop at every system call (no filter) */
  int order;                    /* watch the code run: 'calls', 'order' */
};

/* In the child about to exec PROG (seccomp.c): installs the filter that
   makes only the system calls a recording with OPT acts on stop it.
   Returns 0, or an errno value when no filter could be installed.  */
int seccomp_filter_install (const struct record_options *opt);

/* The system calls elfpatch makes a traced process run (exact.c): each
   queued call, through the `syscall' instruction at AT, the process's
   registers saved meanwhile.  */
enum inject_state { INJECT_NONE, INJECT_ENTRY, INJECT_EXIT };

struct injection
{
  enum inject_state state;
  struct user_regs_struct saved;
  uint64_t at;
  struct { long nr; uint64_t arg[4]; } *queue;
  size_t n, done, alloc;
  size_t splits;                /* pages split off so far, for the cap */
  int held_signal;              /* arrived meanwhile; sent again after */
};

/* Each empties INJ's queue and returns 1 when calls can be injected
   into PID (INJ->at set), 0 when not.  After exec: the vDSO's `syscall'
   instruction; with EXACT, evict the mapped files and queue their
   mappings.  */
int exact_prepare_exec (pid_t pid, struct injection *inj, int exact);
/* At the exit stop of mmap (ARGS, result RVAL) of a file: the `syscall'
   instruction just run; with EXACT, evict the file and queue the
   mapping.  */
int exact_prepare_mmap (pid_t pid, const uint64_t args[6], int64_t rval,
                        struct injection *inj, int exact);
/* Appends system call NR (A0 to A3) to INJ's queue.  Returns 0 or -1.  */
int inject_queue (struct injection *inj, long nr, uint64_t a0, uint64_t a1,
                  uint64_t a2, uint64_t a3);
/* Starts the queued calls: 1 when an injection started (resume PID with
   PTRACE_SYSCALL and no signal), 0 when there is nothing to do.  */
int exact_begin (pid_t pid, struct injection *inj);
/* At a system-call stop (OP: PTRACE_SYSCALL_INFO_*) while injecting.  */
void exact_step (pid_t pid, struct injection *inj, int op);
/* Whether processes of system-call architecture ARCH can be injected.  */
int exact_supported (uint32_t arch);
void exact_free (struct injection *inj);

/* Watching the code a recorded process runs (watch.c, x86-64): the
   order of its first use of each code page and of each function.  A
   task's view of its address space; threads share one.  */
struct watch_space;
struct watch_task
{
  struct watch_space *space;    /* null: nothing watched */
  uint64_t last_fault;          /* where it last faulted on watched code */
  unsigned repeats;             /* how often in a row */
};

/* Whether this elfpatch can watch code.  */
int watch_supported (void);
/* After PID's exec (INJ prepared): protects its file code mappings,
   recording into REC, and queues the calls into INJ.  EXACT: the exact
   method's evictions are kept (exact.c).  */
void watch_exec (struct recording *rec, pid_t pid, struct watch_task *w,
                 struct injection *inj, int exact);
/* At the exit stop of PID's mmap (ARGS, result RVAL; INJ prepared).  */
void watch_mmap (struct recording *rec, pid_t pid, struct watch_task *w,
                 const uint64_t args[6], int64_t rval,
                 struct injection *inj);
/* New task PID, created by PARENT: shares its space or, when the kernel
   copied the address space, a copy whose hits are recorded only when
   RECORDED.  */
void watch_inherit (struct watch_task *child, pid_t pid,
                    const struct watch_task *parent, pid_t parent_pid,
                    int recorded);
/* A SIGSEGV or SIGTRAP stop of PID (SI its info): 1 when elfpatch
   caused it, and it is handled (do not deliver it; an injection may
   have started), 0 otherwise.  REC is null once nothing is recorded.  */
int watch_signal (struct recording *rec, pid_t pid, struct watch_task *w,
                  const siginfo_t *si, struct injection *inj);
/* At the entry of PID's rt_sigaction (ARGS): mirrors the action the
   process TGID sets for SIGSEGV or SIGTRAP (see watch_signal).  */
void watch_sigaction (pid_t pid, pid_t tgid, struct watch_task *w,
                      const uint64_t args[6]);
/* At the entry of PID's clone or clone3 (NR, ARGS), while W's code is
   watched: takes CLONE_UNTRACED away, so that the new task is traced
   like every other (see watch.c).  */
void watch_clone (pid_t pid, struct watch_task *w, uint64_t nr,
                  const uint64_t args[6]);
/* Drops W's space (the task ended or exec'd).  */
void watch_release (struct watch_task *w);
/* Adds F's 'order' and 'calls' to its block B (pages already there).  */
int watch_block (const struct mapped_file *f, struct trace_block *b);
void watch_file_free (struct mapped_file *f);
/* Adds to COUNT the calls of F's block B, the breakpoints written in F's
   code and its pages in B's 'order' that ran.  */
void watch_count (const struct mapped_file *f, const struct trace_block *b,
                  uint64_t count[3]);

/* The commands.  Each returns the exit status.  --record exits with
   RECORD_PROG_FAILED when it wrote the trace of a program that exited
   with another status than 0 or was killed.  */
#define RECORD_PROG_FAILED 2
int record_command (char **argv, const char *output,
                    const struct record_options *opt);
/* The bitmap of IMG replaced in its buffer: from the blocks of TRACES
   that belong to it, as POLICY selects (GAP chooses max_gap), or emptied
   (POLICY and GAP null: a clear).  Returns whether the bytes changed, or
   -1 after a message.  fill_command and clear_command are this between
   image_open and update_write_back; the fuzz harness calls it directly.  */
int fill_image (struct image *img, char **traces, size_t n_traces,
                const struct fill_policy *policy, const struct gap_choice *gap);
/* Reads `perf script' output INPUT into the trace OUTPUT (import.c).  */
int import_perf_command (const char *input, const char *output);
/* Fills BINARY from TRACES (fill.c): fill_image between image_open and
   update_write_back.  Returns 0, or -1 after a message.  */
int fill_binary (const char *binary, char **traces, size_t n_traces,
                 const struct fill_policy *policy,
                 const struct gap_choice *gap);
/* How many of the N_ARGS arguments ARGS of --fill or --show --traces
   are traces (fill-many.c): the first, and those after it that read as
   traces, up to the first that does not (a file).  */
size_t trace_args (char **args, size_t n_args);
/* --fill TRACE... [FILE...] (fill-many.c): ARGS are the traces, then the
   files to fill; without files, every file the traces name that has a
   region.  Returns the exit status.  */
int fill_command (char **args, size_t n_args,
                  const struct fill_policy *policy,
                  const struct gap_choice *gap);
/* Writes to OUTPUT the names of BINARY's code and read-only data that
   TRACES used, in link order (order.c); the symbols of a stripped BINARY
   come from DEBUG_PATH or the debug file its build-id names.  */
int order_command (char **traces, size_t n_traces, const char *binary,
                   const struct fill_policy *policy, const char *debug_path,
                   const char *output);
/* --show [--traces] [--json] ARGS: the report on each file of ARGS, with
   WITH_TRACES on what the traces first in ARGS (trace_args) cover, as
   text or with JSON as JSON.  */
int show_command (char **args, size_t n_args, int with_traces, int json);
int clear_command (const char *binary);
int resync_command (const char *binary);
/* Prefetches PROG and its libraries, then execs it; returns only on
   failure, with the shell's status (127 not found, 126 otherwise).  */
int run_command (char **argv);
/* PROG as execvp finds it (run.c): a name with a slash as it is,
   otherwise the first executable regular file PROG in PATH (or in
   confstr's default path).  Null when there is none.  */
char *find_program (const char *prog);
/* Execs ARGV[0], found as EXE (find_program; may be null), as execvp
   does, but an ELF file the kernel refuses is not run by /bin/sh as a
   script.  Returns only on failure, with errno set.  */
void exec_program (const char *exe, char **argv);

/* The region header at RAW, in byte order MSB, in host order.  */
void region_header_decode (const unsigned char *raw, int msb,
                           struct pbitmap_header *h);

/* The bitmap store (store.c, include/pbitmap-store.h): --store=DIR, or
   null; the store in effect (that, PBITMAP_STORE, the default), in BUF
   when computed, or null when there is none.  */
extern const char *elfpatch_store_dir;
const char *store_dir (char *buf, size_t size);

/* A stored entry read and checked: the whole file, its region's header in
   host order, the object's identity and path as stored.  */
struct stored
{
  unsigned char *entry;
  size_t size;
  size_t region_offset, region_size;
  struct pbitmap_header hdr;
  struct identity id;
  uint64_t object_size;
  const char *path;
};

/* Reads the entry FILE: 0; 1 when there is none; -1 with WHY.  */
int stored_read (const char *file, struct stored *s, char *why,
                 size_t whysize);
/* The entry of ID in DIR (its name in FILE): as stored_read, and -1
   when it holds another build.  */
int stored_find (const char *dir, const struct identity *id,
                 struct stored *s, char *file, size_t filesize, char *why,
                 size_t whysize);
void stored_free (struct stored *s);
/* The filled bitmap the store holds for the ELF file PATH (FD, ELF, of
   FILE_SIZE bytes): its header into *HDR and bits into *BITS (malloc'ed),
   the entry's name into FROM; 0, or -1 when there is none (-v: a warning
   for a bad one).  */
int store_bitmap (const char *path, int fd, Elf *elf, uint64_t file_size,
                  struct pbitmap_header *hdr, unsigned char **bits,
                  char *from, size_t fromsize);
int store_fill_command (char **traces, size_t n_traces,
                        const struct fill_policy *policy,
                        const struct gap_choice *gap);
int store_show_command (char **objects, size_t n_objects);
int store_clear_command (char **objects, size_t n_objects);
/* Drops the entries whose object is gone or another build, and bad
   ones.  */
int store_gc_command (void);

/* Writes IMG->buf back over IMG->path atomically (update.c).  */
int update_write_back (struct image *img);
/* Creates the empty temporary file ".NAME.XXXXXX" beside TARGET, to be
   renamed over it: its name in *TMP, its directory in *DIR (both
   malloc'ed).  Returns its descriptor, or -1 after a message naming
   PATH.  */
int temp_beside (const char *target, const char *path, char **tmp,
                 char **dir);
/* Syncs directory DIR after a rename into it; a failure is a warning
   naming PATH.  */
void sync_directory (const char *dir, const char *path);
/* A new file written through a temporary file beside TARGET and renamed
   over it at the commit (order files, traces).  new_file_begin creates
   the temporary file (mode 0666 less the umask) and returns a stream on
   it, or null after a message naming TARGET; new_file_commit flushes,
   syncs and renames it (0, or -1 after a message); new_file_abort
   closes F (when not null) and removes it.  */
struct new_file
{
  const char *target;
  char *tmp, *dir;
};
FILE *new_file_begin (struct new_file *nf, const char *target);
int new_file_commit (struct new_file *nf, FILE *f);
void new_file_abort (struct new_file *nf, FILE *f);

#endif /* ELFPATCH_H */
