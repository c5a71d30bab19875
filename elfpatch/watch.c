/* watch.c: the order in which a recorded process first runs its code.
 *
 * Laying a program out for its start (issue 12, elfpatch --order) needs
 * more than the set of pages a run used: the order of their first use,
 * and finer, which functions ran, in the order they were first entered.
 * A recording writes both per file: 'order', the file's pages in the
 * order the run first touched them (code exactly, data as seen at the
 * code's first executions), and 'calls', the file offsets
 * of the function starts (starts.c: the unwind table's and the symbol
 * table's) in the order of their first entry
 * (doc/format.md, trace version 3).
 *
 * The obvious way, an int3 on every function start written when the code
 * is mapped, would spoil the page set the trace exists for: writing
 * into a private mapping copies the page on write, so every page that
 * holds a function start would be read from the file and be present at
 * exit, used or not.  So the breakpoints of a page are written only when
 * the program first executes that page, which a protection tells:
 *
 *   - When a file mapping with PROT_EXEC appears in a recorded process
 *     (after exec: the program and the dynamic linker; at the exit stop
 *     of an mmap of a file: libraries, dlopen), an injected mprotect
 *     (exact.c) takes PROT_EXEC away.  Reads of the code still work, by
 *     the program and by the kernel in system calls, and fault their
 *     pages in as before; only executing it traps.
 *   - An instruction fetch from such a page stops the process with
 *     SIGSEGV (SEGV_ACCERR, the address at or just after the
 *     instruction pointer).  That is the page's first execution: its
 *     file page goes on the 'order' list; elfpatch writes an int3 (0xcc)
 *     over the first byte of every function start in the page, with
 *     PTRACE_PEEKDATA and PTRACE_POKEDATA, one aligned word for the
 *     starts that share it (POKE writes through the missing write
 *     permission and copies the page, which the program is using now
 *     anyway; a copied private page still counts as present, record.c),
 *     then injects an mprotect that gives the page its protection back,
 *     through the vDSO's `syscall' instruction, and suppresses the
 *     signal: the instruction runs again.
 *   - An int3 stops the process with SIGTRAP (SI_KERNEL), the
 *     instruction pointer one past the breakpoint.  elfpatch writes the
 *     original byte back, sets the instruction pointer back by one,
 *     appends the start to 'calls' when it is the function's first entry
 *     in the recording, and suppresses the signal.  Each breakpoint fires
 *     once.
 *
 * The file's other pages (read-only and RELRO data) are ranked as they
 * appear: at each first execution of a code page, before that page goes
 * on the list, note_data reads /proc/PID/pagemap for the file's other
 * mappings and puts each present page no earlier look found on the list
 * first.  Reading data cannot be trapped the way running code is: a
 * system call that reads a protected page (write(2) of a string from
 * .rodata) would fail with EFAULT instead of stopping the program.  So
 * a data page is exact only to the first execution of new code after
 * it, and fault-around (64 KiB) brings in its neighbours with it.
 *
 * 'order' is then the pages in the order of their first touch (trace
 * version 3), followed by the block's other pages (touched after the
 * last new code page ran, or read ahead), ascending; a page used but
 * gone at the exit stop (unmapped) is left out, since every 'order'
 * page is in 'pages'.
 *
 * Threads share one view of the address space; a forked child gets a
 * copy, with the int3s and protections it inherited, and its hits are
 * recorded when the child is (--follow); a vfork child (kcmp says the
 * address space is the same) shares its parent's.  So every descendant
 * stays traced while it can run watched code: a child that is not
 * recorded has each protection and breakpoint undone when it meets it,
 * recording nothing, and (without the seccomp filter) is let go at its
 * exec, which replaces the watched code.  A task created with
 * CLONE_UNTRACED would escape the tracer and die at the first watched
 * page or breakpoint it runs (LeakSanitizer clones one at exit to ptrace
 * its parent, which then waits for it forever); so at the entry of a
 * clone or clone3 that asks for it, the flag is taken away (watch_clone)
 * and the task is traced like the others, as under strace -f.  A stop
 * that does not match
 * what elfpatch did (a SIGTRAP the program raised, an int3 of its own, a
 * fault on another address) is delivered to the program as before.
 *
 * Limits: the program sees its own breakpoints if it reads its code
 * (a checksum of its text) after running it; a program that changes its
 * code's protection itself (text relocations, mprotect of its text) runs
 * those pages unwatched; code with neither unwind information (an FDE in
 * .eh_frame_hdr) nor a function symbol has no calls, only pages (a
 * stripped static program: gcc links it without .eh_frame_hdr); an
 * address space reused after munmap without an mmap
 * of a file (anonymous code at a former library address) is not noticed.
 * If giving a page its protection back fails (the process has reached
 * vm.max_map_count), the whole mapping gets it back and runs unwatched.
 * Only x86-64 processes are watched.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elfpatch.h"

/* The code of one file, as the recording saw it run; shared by the
   file's record and the mappings of it.  */
struct file_code
{
  unsigned refs;
  uint64_t *starts;             /* function starts, file offsets, ascending */
  size_t n_starts;
  unsigned char *called;        /* per start: its entry is in CALLS */
  uint64_t *calls;              /* first-entry order */
  size_t n_calls, calls_alloc;
  uint64_t *touched;            /* file pages, first-touch order */
  size_t n_touched, touched_alloc;
  unsigned dev_major, dev_minor; /* the file, as /proc/PID/maps names it */
  uint64_t ino;
  unsigned char *seen;          /* per file page outside CODE: on TOUCHED */
  uint64_t seen_bytes;
  struct page_range *code;      /* file pages mapped executable */
  size_t n_code, code_alloc;
  uint64_t planted;             /* breakpoints written, in all processes */
  uint64_t n_run;               /* pages of TOUCHED, without repeats */
};

static void
file_code_put (struct file_code *fc)
{
  if (fc == NULL || --fc->refs > 0)
    return;
  free (fc->starts);
  free (fc->called);
  free (fc->calls);
  free (fc->touched);
  free (fc->seen);
  free (fc->code);
  free (fc);
}

void
watch_file_free (struct mapped_file *f)
{
  file_code_put (f->code);
  f->code = NULL;
}

void
watch_count (const struct mapped_file *f, const struct trace_block *b,
             uint64_t count[3])
{
  if (f->code != NULL)
    {
      count[0] += b->n_calls;
      count[1] += f->code->planted;
      count[2] += f->code->n_run;
    }
}

static int
in_code (const struct file_code *fc, uint64_t page)
{
  for (size_t i = 0; i < fc->n_code; i++)
    if (fc->code[i].first <= page && page <= fc->code[i].last)
      return 1;
  return 0;
}

/* Whether one executable mapping of FC's file maps all of pages [FIRST,
   LAST].  */
static int
code_covers (const struct file_code *fc, uint64_t first, uint64_t last)
{
  for (size_t i = 0; i < fc->n_code; i++)
    if (fc->code[i].first <= first && last <= fc->code[i].last)
      return 1;
  return 0;
}

int
watch_block (const struct mapped_file *f, struct trace_block *b)
{
  struct file_code *fc = f->code;
  if (b->n_ranges == 0)
    return 0;
  uint64_t n_pages = b->ranges[b->n_ranges - 1].last + 1;
  unsigned char *emitted = calloc ((size_t) (n_pages / 8 + 1), 1);
  int rc = emitted == NULL ? -1 : 0;
  for (size_t i = 0; i < fc->n_touched && rc == 0; i++)
    {
      uint64_t p = fc->touched[i];
      if (p >= n_pages || (emitted[p / 8] & (1u << (p % 8)))
          || !trace_block_has_page (b, p))
        continue;
      emitted[p / 8] |= (unsigned char) (1u << (p % 8));
      rc = trace_list_append (&b->order, &b->n_order, &b->order_alloc, p);
      fc->n_run += in_code (fc, p);
    }
  for (size_t r = 0; r < b->n_ranges && rc == 0; r++)
    for (uint64_t p = b->ranges[r].first; p <= b->ranges[r].last && rc == 0;
         p++)
      if (!(emitted[p / 8] & (1u << (p % 8))))
        rc = trace_list_append (&b->order, &b->n_order, &b->order_alloc, p);
  b->order_all = b->n_order > 0;
  for (size_t i = 0; i < fc->n_calls && rc == 0; i++)
    rc = trace_list_append (&b->calls, &b->n_calls, &b->calls_alloc,
                            fc->calls[i]);
  free (emitted);
  return rc;
}

#if defined __x86_64__

#include <sys/user.h>
#include <linux/kcmp.h>

enum { BP_NONE, BP_ARMED, BP_DONE };
#define INT3 0xcc
#define PAGE PBITMAP_PAGE_SIZE

/* One watched mapping of a file.  Its arrays are indexed from where the
   mapping was made (BASE, FIRST); an mmap over part of it moves START
   and END only.  */
struct code_map
{
  uint64_t start, end;          /* watched addresses now */
  uint64_t base, base_end;      /* as mapped */
  uint64_t base_offset;         /* file offset of BASE */
  int prot;                     /* as mapped */
  int watched;                  /* 0: its protection is back, all of it */
  struct file_code *fc;
  size_t first, n;              /* fc->starts[FIRST, FIRST + N) lie in it */
  unsigned char *open;          /* per page from BASE: may run */
  unsigned char *bp;            /* per start: BP_* */
  unsigned char *orig;          /* per start: the byte under the int3 */
};

/* A file's mapping, as /proc/PID/maps lists it.  */
struct file_span
{
  uint64_t start, end, offset, ino;
  unsigned dev_major, dev_minor;
};

/* The action rt_sigaction takes on x86-64; handler 0 is SIG_DFL.  */
struct kernel_action
{
  uint64_t handler, flags, restorer, mask;
};

struct watch_space
{
  unsigned refs;
  int recorded;                 /* hits go into the recording */
  uint64_t syscall_at;          /* the vDSO's `syscall' instruction */
  int evict;                    /* the exact method's: see file_code_get */
  pid_t owner;                  /* the process whose actions ACTION are */
  struct kernel_action action[2];       /* of SIGSEGV, SIGTRAP */
  struct code_map *maps;
  size_t n_maps, alloc;
  struct file_span *spans;      /* the file mappings, for note_data */
  size_t n_spans, spans_alloc;
  int spans_stale;              /* an mmap since SPANS were read */
};

int
watch_supported (void)
{
  return 1;
}

static void
map_free (struct code_map *m)
{
  free (m->open);
  free (m->bp);
  free (m->orig);
  file_code_put (m->fc);
}

/* Copies the arrays of FROM into TO (a struct copy of it).  */
static int
map_copy (struct code_map *to, const struct code_map *from)
{
  size_t pages = (size_t) ((from->base_end - from->base) / PAGE);
  to->open = malloc (pages + 1);
  to->bp = malloc (from->n + 1);
  to->orig = malloc (from->n + 1);
  if (to->open == NULL || to->bp == NULL || to->orig == NULL)
    {
      free (to->open);
      free (to->bp);
      free (to->orig);
      return -1;
    }
  memcpy (to->open, from->open, pages);
  memcpy (to->bp, from->bp, from->n);
  memcpy (to->orig, from->orig, from->n);
  to->fc->refs++;
  return 0;
}

static void
space_put (struct watch_space *sp)
{
  if (sp == NULL || --sp->refs > 0)
    return;
  for (size_t i = 0; i < sp->n_maps; i++)
    map_free (&sp->maps[i]);
  free (sp->maps);
  free (sp->spans);
  free (sp);
}

void
watch_release (struct watch_task *w)
{
  space_put (w->space);
  w->space = NULL;
  w->repeats = 0;
}

static struct watch_space *
space_copy (const struct watch_space *from, int recorded)
{
  struct watch_space *sp = calloc (1, sizeof *sp);
  if (sp == NULL)
    return NULL;
  sp->refs = 1;
  sp->recorded = recorded;
  sp->spans_stale = 1;
  sp->syscall_at = from->syscall_at;
  sp->evict = from->evict;
  memcpy (sp->action, from->action, sizeof sp->action);
  for (size_t i = 0; i < from->n_maps; i++)
    {
      if (array_reserve ((void **) &sp->maps, &sp->alloc, sp->n_maps,
                         sizeof *sp->maps) != 0)
        break;
      sp->maps[sp->n_maps] = from->maps[i];
      if (map_copy (&sp->maps[sp->n_maps], &from->maps[i]) != 0)
        break;
      sp->n_maps++;
    }
  return sp;
}

void
watch_inherit (struct watch_task *child, pid_t pid,
               const struct watch_task *parent, pid_t parent_pid,
               int recorded)
{
  watch_release (child);
  if (parent->space == NULL)
    return;
  /* The kernel says whether the address space is shared (a thread, a
     vfork child) or was copied; without kcmp, only threads share.  */
  long same = syscall (SYS_kcmp, parent_pid, pid, KCMP_VM, 0, 0);
  if (same < 0)
    {
      char name[64];
      snprintf (name, sizeof name, "/proc/%d/task/%d", (int) parent_pid,
                (int) pid);
      same = access (name, F_OK) == 0 ? 0 : 1;
    }
  if (same == 0)
    {
      child->space = parent->space;
      child->space->refs++;
    }
  else
    {
      child->space = space_copy (parent->space, recorded);
      if (child->space != NULL)
        child->space->owner = pid;
    }
}

/* The file code record of F, made with its function starts on first
   use (EVICT: evict the file after reading them); null when memory runs
   out.  */
static struct file_code *
file_code_get (struct mapped_file *f, int evict)
{
  if (f->code != NULL)
    return f->code;
  struct file_code *fc = calloc (1, sizeof *fc);
  if (fc == NULL)
    return NULL;
  fc->refs = 1;
  fc->dev_major = f->dev_major;
  fc->dev_minor = f->dev_minor;
  fc->ino = f->ino;
  Elf *elf = elf_begin (f->fd, ELF_C_READ_MMAP, NULL);
  /* A file whose table is malformed is said so and watched by page.  */
  if (elf != NULL && elf_kind (elf) == ELF_K_ELF
      && function_starts (elf, f->path, &fc->starts, &fc->n_starts) == 0)
    fc->called = calloc (fc->n_starts + 1, 1);
  if (elf != NULL)
    elf_end (elf);
  /* Reading the table brought its pages and their read-around into the
     page cache, where fault-around would map them into the program as if
     it had used them: with the exact method, evict them again (as
     exact.c evicted the file just before; pages mapped somewhere
     stay).  */
  if (evict)
    posix_fadvise (f->fd, 0, 0, POSIX_FADV_DONTNEED);
  if (fc->called == NULL)
    {
      free (fc->starts);
      fc->starts = NULL;
      fc->n_starts = 0;
    }
  f->code = fc;
  return fc;
}

/* The first index in FC's starts at or above OFFSET.  */
static size_t
starts_from (const struct file_code *fc, uint64_t offset)
{
  size_t lo = 0, hi = fc->n_starts;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (fc->starts[mid] < offset)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Frees the watched parts of SP's mappings that [START, END) replaces.  */
static void
forget_range (struct watch_space *sp, uint64_t start, uint64_t end)
{
  for (size_t i = 0; i < sp->n_maps;)
    {
      struct code_map *m = &sp->maps[i];
      if (m->end <= start || m->start >= end)
        i++;
      else if (m->start < start && m->end > end)
        {
          /* A hole in the middle: the part above it becomes a map of its
             own, with copies of the arrays.  */
          struct code_map above = *m;
          if (map_copy (&above, m) == 0
              && array_reserve ((void **) &sp->maps, &sp->alloc, sp->n_maps,
                                sizeof *sp->maps) == 0)
            {
              above.start = end;
              sp->maps[i].end = start;
              sp->maps[sp->n_maps++] = above;
            }
          else
            sp->maps[i].end = start;
          i++;
        }
      else if (m->start < start || m->end > end)
        {
          if (m->start < start)
            m->end = start;
          else
            m->start = end;
          i++;
        }
      else
        {
          map_free (m);
          sp->maps[i] = sp->maps[--sp->n_maps];
        }
    }
}

/* Watches the mapping [START, END) of F at file OFFSET with protection
   PROT: queues the mprotect that takes PROT_EXEC away.  */
static void
add_map (struct watch_space *sp, struct mapped_file *f, uint64_t start,
         uint64_t end, uint64_t offset, int prot, struct injection *inj)
{
  struct file_code *fc = file_code_get (f, sp->evict);
  if (fc == NULL
      || array_reserve ((void **) &sp->maps, &sp->alloc, sp->n_maps,
                        sizeof *sp->maps) != 0
      || array_reserve ((void **) &fc->code, &fc->code_alloc, fc->n_code,
                        sizeof *fc->code) != 0)
    return;
  struct code_map m = { .start = start, .end = end, .base = start,
                        .base_end = end, .base_offset = offset,
                        .prot = prot, .watched = 1, .fc = fc };
  m.first = starts_from (fc, offset);
  m.n = starts_from (fc, offset + (end - start)) - m.first;
  m.open = calloc ((size_t) ((end - start) / PAGE) + 1, 1);
  m.bp = calloc (m.n + 1, 1);
  m.orig = calloc (m.n + 1, 1);
  if (m.open == NULL || m.bp == NULL || m.orig == NULL
      || inject_queue (inj, SYS_mprotect, start, end - start,
                       (uint64_t) ((prot & ~PROT_EXEC) | PROT_READ), 0) != 0)
    {
      free (m.open);
      free (m.bp);
      free (m.orig);
      return;
    }
  fc->refs++;
  fc->code[fc->n_code].first = offset / PAGE;
  fc->code[fc->n_code++].last = (offset + (end - start) - 1) / PAGE;
  sp->maps[sp->n_maps++] = m;
}

/* Watches the file mappings with PROT_EXEC of PID that lie in [FROM, TO),
   the parts inside it.  PROT, when not -1, is their protection.  */
static void
add_maps (struct recording *rec, pid_t pid, struct watch_space *sp,
          uint64_t from, uint64_t to, int prot, struct injection *inj)
{
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/maps", (int) pid);
  FILE *maps = fopen (name, "re");
  char *line = NULL;
  size_t linesize = 0;
  while (maps != NULL && getline (&line, &linesize, maps) > 0)
    {
      struct maps_entry e;
      if (maps_parse (line, &e) != 0 || e.end <= from || e.start >= to)
        continue;
      int p = prot;
      if (p == -1)
        {
          if (e.perms[2] != 'x')
            continue;
          p = PROT_EXEC | (e.perms[0] == 'r' ? PROT_READ : 0)
              | (e.perms[1] == 'w' ? PROT_WRITE : 0);
        }
      uint64_t lo = e.start > from ? e.start : from;
      uint64_t hi = e.end < to ? e.end : to;
      struct mapped_file *f = recording_file (rec, pid, e.maj, e.min, e.ino,
                                              e.start, e.end, e.path);
      if (f == NULL)
        break;
      if (f->fd >= 0)
        add_map (sp, f, lo, hi, e.offset + (lo - e.start), p, inj);
    }
  free (line);
  if (maps != NULL)
    fclose (maps);
}

void
watch_exec (struct recording *rec, pid_t pid, struct watch_task *w,
            struct injection *inj, int exact)
{
  watch_release (w);
  struct watch_space *sp = calloc (1, sizeof *sp);
  if (sp == NULL)
    return;
  sp->refs = 1;
  sp->recorded = 1;
  sp->spans_stale = 1;
  sp->syscall_at = inj->at;
  sp->evict = exact;
  sp->owner = pid;
  w->space = sp;
  add_maps (rec, pid, sp, 0, UINT64_MAX, -1, inj);
}

void
watch_mmap (struct recording *rec, pid_t pid, struct watch_task *w,
            const uint64_t args[6], int64_t rval, struct injection *inj)
{
  struct watch_space *sp = w->space;
  if (sp == NULL)
    return;
  uint64_t start = (uint64_t) rval;
  uint64_t end = start + ((args[1] + PAGE - 1) & -(uint64_t) PAGE);
  sp->spans_stale = 1;
  forget_range (sp, start, end);
  if (args[2] & PROT_EXEC)
    add_maps (rec, pid, sp, start, end, (int) args[2], inj);
}

static struct code_map *
find_map (struct watch_space *sp, uint64_t addr)
{
  for (size_t i = 0; i < sp->n_maps; i++)
    if (sp->maps[i].start <= addr && addr < sp->maps[i].end)
      return &sp->maps[i];
  return NULL;
}

/* Writes the int3s of the function starts in page PAGE (from BASE) of M,
   one PEEK and one POKE per aligned word.  */
static void
plant (pid_t pid, struct code_map *m, uint64_t page)
{
  struct file_code *fc = m->fc;
  uint64_t from = m->base_offset + page * PAGE;
  size_t i = starts_from (fc, from);
  while (i < m->first + m->n && fc->starts[i] < from + PAGE)
    {
      uint64_t word = (m->base + (fc->starts[i] - m->base_offset))
                      & ~(uint64_t) 7;
      errno = 0;
      long v = ptrace (PTRACE_PEEKDATA, pid, (void *) word, 0);
      if (errno != 0)
        return;
      unsigned char bytes[8];
      memcpy (bytes, &v, sizeof bytes);
      for (; i < m->first + m->n && fc->starts[i] < from + PAGE; i++)
        {
          uint64_t addr = m->base + (fc->starts[i] - m->base_offset);
          if (addr >= word + 8)
            break;
          size_t k = i - m->first;
          /* A start that is an int3 already would trap forever.  */
          if (m->bp[k] != BP_NONE || bytes[addr - word] == INT3)
            continue;
          m->orig[k] = bytes[addr - word];
          bytes[addr - word] = INT3;
          m->bp[k] = BP_ARMED;
          fc->planted++;
        }
      memcpy (&v, bytes, sizeof v);
      if (ptrace (PTRACE_POKEDATA, pid, (void *) word, (void *) v) != 0)
        return;
    }
}

/* Reads into SP's spans the file mappings of PID (/proc/PID/maps).  A
   code mapping is there in pieces, split by the protections given back
   page by page; note_data passes over each piece as code.  */
static void
read_spans (pid_t pid, struct watch_space *sp)
{
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/maps", (int) pid);
  FILE *maps = fopen (name, "re");
  char *line = NULL;
  size_t linesize = 0;
  sp->n_spans = 0;
  sp->spans_stale = maps == NULL;
  while (maps != NULL && getline (&line, &linesize, maps) > 0)
    {
      struct maps_entry e;
      if (maps_parse (line, &e) != 0)
        continue;
      if (array_reserve ((void **) &sp->spans, &sp->spans_alloc,
                         sp->n_spans, sizeof *sp->spans) == 0)
        sp->spans[sp->n_spans++] = (struct file_span) {
          e.start, e.end, e.offset, e.ino, e.maj, e.min };
    }
  free (line);
  if (maps != NULL)
    fclose (maps);
}

/* The receiver of the pages note_data finds present in a mapping of
   FC's file at file page FIRST_PAGE.  */
struct data_scan
{
  struct file_code *fc;
  uint64_t first_page;
};

static int
data_page (void *ctx, uint64_t index)
{
  struct data_scan *d = ctx;
  struct file_code *fc = d->fc;
  uint64_t p = d->first_page + index;
  if (in_code (fc, p))
    return 0;
  if (p / 8 >= fc->seen_bytes)
    {
      uint64_t bytes = p / 8 + 1 > 2 * fc->seen_bytes ? p / 8 + 1
                                                       : 2 * fc->seen_bytes;
      unsigned char *seen = realloc (fc->seen, (size_t) bytes);
      if (seen == NULL)
        return -1;
      memset (seen + fc->seen_bytes, 0, (size_t) (bytes - fc->seen_bytes));
      fc->seen = seen;
      fc->seen_bytes = bytes;
    }
  if (fc->seen[p / 8] & (1u << (p % 8)))
    return 0;
  fc->seen[p / 8] |= (unsigned char) (1u << (p % 8));
  return trace_list_append (&fc->touched, &fc->n_touched, &fc->touched_alloc,
                            p);
}

/* Puts on FC's touched list the pages of its file outside its code that
   PID (of space SP) has present now and that no earlier look found: the
   data the run touched before the code page about to run first.  The
   mappings are read again only after an mmap (watch_mmap); one a munmap
   alone took away reads as not present.  */
static void
note_data (pid_t pid, struct watch_space *sp, struct file_code *fc)
{
  if (sp->spans_stale)
    read_spans (pid, sp);
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/pagemap", (int) pid);
  int pagemap = open (name, O_RDONLY | O_CLOEXEC);
  for (size_t i = 0; pagemap >= 0 && i < sp->n_spans; i++)
    {
      const struct file_span *span = &sp->spans[i];
      struct data_scan d = { fc, span->offset / PAGE };
      if (span->ino != fc->ino || span->dev_major != fc->dev_major
          || span->dev_minor != fc->dev_minor
          || code_covers (fc, d.first_page, d.first_page
                          + (span->end - span->start) / PAGE - 1))
        continue;
      if (pagemap_present (pagemap, span->start, span->end, data_page, &d)
          != 0)
        break;
    }
  if (pagemap >= 0)
    close (pagemap);
}

/* An instruction fetch from watched code of PID faulted at ADDR.  */
static int
on_fault (struct recording *rec, pid_t pid, struct watch_task *w,
          uint64_t addr, struct injection *inj)
{
  struct watch_space *sp = w->space;
  struct user_regs_struct regs;
  struct code_map *m = find_map (sp, addr);
  if (m == NULL || ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0
      || addr < regs.rip || addr - regs.rip >= 16)
    return 0;
  w->repeats = w->last_fault == regs.rip ? w->repeats + 1 : 0;
  w->last_fault = regs.rip;
  /* The page's protection did not come back: the whole mapping's, or
     the fault is the program's.  */
  if (w->repeats >= 4)
    return 0;
  if (m->watched && w->repeats >= 2)
    {
      elfpatch_warn ("process %d: cannot give a page of code its "
                     "protection back; the rest of the mapping runs "
                     "unwatched", (int) pid);
      m->watched = 0;
    }
  if (!m->watched)
    inject_queue (inj, SYS_mprotect, m->start, m->end - m->start,
                  (uint64_t) m->prot, 0);
  else
    {
      uint64_t page = (addr - m->base) / PAGE;
      if (!m->open[page])
        {
          m->open[page] = 1;
          struct file_code *fc = m->fc;
          if (rec != NULL && sp->recorded)
            {
              note_data (pid, sp, fc);
              trace_list_append (&fc->touched, &fc->n_touched,
                                 &fc->touched_alloc,
                                 (m->base_offset + page * PAGE) / PAGE);
            }
          plant (pid, m, page);
        }
      inject_queue (inj, SYS_mprotect, m->base + page * PAGE, PAGE,
                    (uint64_t) m->prot, 0);
    }
  return 1;
}

/* PID stopped after an int3: when it is one of the breakpoints, puts the
   byte back, runs the instruction again, records the call.  */
static int
on_trap (struct recording *rec, pid_t pid, struct watch_task *w)
{
  struct watch_space *sp = w->space;
  struct user_regs_struct regs;
  if (ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0)
    return 0;
  uint64_t addr = regs.rip - 1;
  struct code_map *m = find_map (sp, addr);
  if (m == NULL)
    return 0;
  struct file_code *fc = m->fc;
  size_t i = starts_from (fc, m->base_offset + (addr - m->base));
  if (i < m->first || i >= m->first + m->n
      || fc->starts[i] != m->base_offset + (addr - m->base)
      || m->bp[i - m->first] == BP_NONE)
    return 0;
  size_t k = i - m->first;
  /* Another thread may have hit it first and had it restored; a forked
     copy may still hold the int3 its parent's copy lost.  */
  uint64_t word = addr & ~(uint64_t) 7;
  errno = 0;
  long v = ptrace (PTRACE_PEEKDATA, pid, (void *) word, 0);
  if (errno != 0)
    return 0;
  unsigned char bytes[8];
  memcpy (bytes, &v, sizeof bytes);
  if (bytes[addr - word] == INT3)
    {
      bytes[addr - word] = m->orig[k];
      memcpy (&v, bytes, sizeof v);
      if (ptrace (PTRACE_POKEDATA, pid, (void *) word, (void *) v) != 0)
        return 0;
    }
  m->bp[k] = BP_DONE;
  regs.rip = addr;
  if (ptrace (PTRACE_SETREGS, pid, 0, &regs) != 0)
    return 0;
  if (rec != NULL && sp->recorded && !fc->called[i])
    {
      fc->called[i] = 1;
      trace_list_append (&fc->calls, &fc->n_calls, &fc->calls_alloc,
                         fc->starts[i]);
    }
  return 1;
}

void
watch_sigaction (pid_t pid, pid_t tgid, struct watch_task *w,
                 const uint64_t args[6])
{
  struct watch_space *sp = w->space;
  int k = args[0] == SIGSEGV ? 0 : args[0] == SIGTRAP ? 1 : -1;
  /* A vfork child shares the memory, not the actions.  */
  if (sp == NULL || k < 0 || args[1] == 0 || tgid != sp->owner)
    return;
  uint64_t v[4];
  for (int i = 0; i < 4; i++)
    {
      errno = 0;
      v[i] = (uint64_t) ptrace (PTRACE_PEEKDATA, pid,
                                (void *) (args[1] + 8 * (uint64_t) i), 0);
      if (errno != 0)
        return;
    }
  sp->action[k] = (struct kernel_action) { v[0], v[1], v[2], v[3] };
}

void
watch_clone (pid_t pid, struct watch_task *w, uint64_t nr,
             const uint64_t args[6])
{
  if (w->space == NULL)
    return;
  if (nr == SYS_clone && (args[0] & CLONE_UNTRACED))
    {
      struct user_regs_struct regs;
      if (ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0)
        return;
      regs.rdi &= ~(unsigned long long) CLONE_UNTRACED;
      ptrace (PTRACE_SETREGS, pid, 0, &regs);
    }
  else if (nr == SYS_clone3 && args[0] != 0 && args[1] >= sizeof (uint64_t))
    {
      /* struct clone_args begins with the flags.  */
      errno = 0;
      long flags = ptrace (PTRACE_PEEKDATA, pid, (void *) args[0], 0);
      if (errno == 0 && (flags & CLONE_UNTRACED))
        ptrace (PTRACE_POKEDATA, pid, (void *) args[0],
                (void *) (flags & ~(long) CLONE_UNTRACED));
    }
}

/* The mask of /proc/PID/status's line NAME ("SigCgt:").  */
static uint64_t
status_mask (pid_t pid, const char *name)
{
  char path[64], *line = NULL;
  size_t linesize = 0, len = strlen (name);
  uint64_t mask = 0;
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  FILE *f = fopen (path, "re");
  while (f != NULL && getline (&line, &linesize, f) > 0)
    if (strncmp (line, name, len) == 0)
      {
        mask = strtoull (line + len, NULL, 16);
        break;
      }
  free (line);
  if (f != NULL)
    fclose (f);
  return mask;
}

/* A signal the kernel forces (a fault, an int3) while the program blocks
   or ignores it resets its action to SIG_DFL and unblocks it, before
   the stop at which elfpatch suppresses it.  When the program had a
   handler for SIG or ignored it (as its rt_sigaction calls said) and no
   longer does, this puts the action back, by an injected rt_sigaction
   (the action written below the stack's red zone), and blocks SIG
   again.  */
static void
restore_action (pid_t pid, struct watch_space *sp, int sig,
                struct injection *inj)
{
  const struct kernel_action *a = &sp->action[sig == SIGSEGV ? 0 : 1];
  uint64_t bit = UINT64_C (1) << (sig - 1);
  int ignored = a->handler == (uint64_t) (uintptr_t) SIG_IGN;
  if (a->handler == (uint64_t) (uintptr_t) SIG_DFL
      || (status_mask (pid, ignored ? "SigIgn:" : "SigCgt:") & bit))
    return;
  struct user_regs_struct regs;
  uint64_t blocked;
  if (ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0)
    return;
  if (!ignored
      && ptrace (PTRACE_GETSIGMASK, pid, (void *) sizeof blocked,
                 &blocked) == 0)
    {
      blocked |= bit;
      ptrace (PTRACE_SETSIGMASK, pid, (void *) sizeof blocked, &blocked);
    }
  uint64_t at = (regs.rsp - 128 - sizeof *a) & ~(uint64_t) 15;
  const uint64_t v[4] = { a->handler, a->flags, a->restorer, a->mask };
  for (int i = 0; i < 4; i++)
    if (ptrace (PTRACE_POKEDATA, pid, (void *) (at + 8 * (uint64_t) i),
                (void *) v[i]) != 0)
      return;
  inject_queue (inj, SYS_rt_sigaction, (uint64_t) sig, at, 0, 8);
}

int
watch_signal (struct recording *rec, pid_t pid, struct watch_task *w,
              const siginfo_t *si, struct injection *inj)
{
  struct watch_space *sp = w->space;
  int ours = 0;
  if (sp == NULL || sp->syscall_at == 0)
    return 0;
  inj->n = inj->done = 0;
  inj->at = sp->syscall_at;
  if (si->si_signo == SIGSEGV && si->si_code == SEGV_ACCERR)
    ours = on_fault (rec, pid, w, (uint64_t) si->si_addr, inj);
  else if (si->si_signo == SIGTRAP && si->si_code == SI_KERNEL)
    ours = on_trap (rec, pid, w);
  if (ours)
    {
      restore_action (pid, sp, si->si_signo, inj);
      exact_begin (pid, inj);
    }
  return ours;
}

#else /* !__x86_64__ */

int
watch_supported (void)
{
  return 0;
}

void
watch_exec (struct recording *rec, pid_t pid, struct watch_task *w,
            struct injection *inj, int exact)
{
  (void) exact;
  (void) rec;
  (void) pid;
  (void) w;
  (void) inj;
}

void
watch_mmap (struct recording *rec, pid_t pid, struct watch_task *w,
            const uint64_t args[6], int64_t rval, struct injection *inj)
{
  (void) rec;
  (void) pid;
  (void) w;
  (void) args;
  (void) rval;
  (void) inj;
}

void
watch_inherit (struct watch_task *child, pid_t pid,
               const struct watch_task *parent, pid_t parent_pid,
               int recorded)
{
  (void) child;
  (void) pid;
  (void) parent;
  (void) parent_pid;
  (void) recorded;
}

void
watch_clone (pid_t pid, struct watch_task *w, uint64_t nr,
             const uint64_t args[6])
{
  (void) pid;
  (void) w;
  (void) nr;
  (void) args;
}

void
watch_sigaction (pid_t pid, pid_t tgid, struct watch_task *w,
                 const uint64_t args[6])
{
  (void) pid;
  (void) tgid;
  (void) w;
  (void) args;
}

int
watch_signal (struct recording *rec, pid_t pid, struct watch_task *w,
              const siginfo_t *si, struct injection *inj)
{
  (void) rec;
  (void) pid;
  (void) w;
  (void) si;
  (void) inj;
  return 0;
}

void
watch_release (struct watch_task *w)
{
  w->space = NULL;
}

#endif
