/* exact.c: make a recorded process fault in only the pages it uses.
 *
 * What is present in a process's page tables at exit over-counts what it
 * used: a page fault on a file mapping reads a read-around window of up
 * to read_ahead_kb (2 MiB and more) around the page, the kernel maps the
 * cached pages of a 64 KiB window around each fault (fault-around), and
 * large folios are mapped whole.  With read_ahead_kb at 0 every fault
 * reads its one page, and fault-around then only maps pages that were
 * read because they were needed: that is the exact set, but changing
 * read_ahead_kb needs root and slows every other reader of the device.
 *
 * MADV_RANDOM on a mapping gives the same per mapping, without
 * privilege: the kernel does no read-around for faults on it (it sets
 * VM_RAND_READ, which filemap_fault checks before any read-ahead, so a
 * fault reads one order-0 folio).  Since Linux 6.16 executable mappings
 * ignore VM_RAND_READ: a fault there reads ahead up to read_ahead_kb,
 * but never past the end of its VMA, and fault-around also stays inside
 * the VMA.  So an executable mapping is also cut into one-page VMAs, by
 * MADV_DONTDUMP on every other page (a flag that only core dumps look at,
 * and file-backed text is not dumped by default): a fault there reads
 * and maps its one page.  This costs one VMA per page of text (the
 * cut stops at EXACT_SPLIT_MAX pages per process, far below the default
 * vm.max_map_count of 65530) and one injected call per two pages.
 * Pages cached before the run (earlier
 * runs, the header the kernel or ld.so read with read(2) and its
 * read-ahead) would still be mapped by fault-around, so each mapped file
 * is evicted first, with posix_fadvise(POSIX_FADV_DONTNEED), which drops
 * the clean pages no process maps.  Pages another process maps (a shared
 * libc) stay cached, and fault-around can still map a few of them: exact
 * for the program's own files, close for shared ones.
 *
 * The recorded process runs under ptrace with system-call stops, and
 * elfpatch makes it call madvise itself, by system-call injection:
 *
 *   - after exec (the first stop of the program, or the exit stop of an
 *     execve), for each file mapping the kernel made (the program, the
 *     dynamic linker), using a `syscall' instruction of the vDSO;
 *   - at the exit stop of each mmap of a file, before the process runs
 *     another instruction, re-executing the `syscall' instruction just
 *     before the instruction pointer.
 *
 * Injecting is: save the registers, point the instruction pointer at a
 * `syscall' instruction with rax = madvise and its arguments (orig_rax =
 * -1, so no system-call restart logic touches them), resume to the entry
 * and exit stops of that call, then restore the saved registers.  The
 * process's own state is untouched; a signal that arrives meanwhile is
 * held back and sent again afterwards.  Only x86-64 processes are
 * injected into (the system-call info names the architecture); others
 * run as they are and over-count.  The queue takes any system call:
 * watch.c queues mprotect calls behind the madvise calls of the same
 * stops, and injects them at signal stops too, through the vDSO.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>

#include "elfpatch.h"

#if defined __x86_64__

#include <sys/user.h>

/* The files already evicted, so that a file is evicted once, before its
   first fault: later evictions would only drop pages to read again.  */
struct evicted
{
  dev_t dev;
  ino_t ino;
};

static struct evicted *evicted;
static size_t n_evicted, evicted_alloc;

/* Evicts the file open on FD, unless done before.  */
static void
evict_once (int fd)
{
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    return;
  for (size_t i = 0; i < n_evicted; i++)
    if (evicted[i].dev == st.st_dev && evicted[i].ino == st.st_ino)
      return;
  if (array_reserve ((void **) &evicted, &evicted_alloc, n_evicted,
                     sizeof *evicted) != 0)
    return;
  evicted[n_evicted].dev = st.st_dev;
  evicted[n_evicted++].ino = st.st_ino;
  fdatasync (fd);
  posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void
evict_path (const char *path)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0)
    {
      evict_once (fd);
      close (fd);
    }
}

/* Pages of executable mappings cut into VMAs of their own, at most, per
   process.  */
#define EXACT_SPLIT_MAX 40000

int
inject_queue (struct injection *inj, long nr, uint64_t a0, uint64_t a1,
              uint64_t a2, uint64_t a3)
{
  if (array_reserve ((void **) &inj->queue, &inj->alloc, inj->n,
                     sizeof *inj->queue) != 0)
    return -1;
  inj->queue[inj->n].nr = nr;
  inj->queue[inj->n].arg[0] = a0;
  inj->queue[inj->n].arg[1] = a1;
  inj->queue[inj->n].arg[2] = a2;
  inj->queue[inj->n++].arg[3] = a3;
  return 0;
}

static int
queue_call (struct injection *inj, uint64_t start, uint64_t len, int advice)
{
  return inject_queue (inj, SYS_madvise, start, len, (uint64_t) advice, 0);
}

/* Queues what makes the mapping [START, START + LEN) fault page by page:
   MADV_RANDOM, and for an executable one, a VMA per page.  */
static void
queue_mapping (struct injection *inj, uint64_t start, uint64_t len,
               int executable)
{
  if (queue_call (inj, start, len, MADV_RANDOM) != 0 || !executable)
    return;
  uint64_t pages = len / PBITMAP_PAGE_SIZE;
  for (uint64_t i = 1; i < pages && inj->splits < EXACT_SPLIT_MAX; i += 2)
    {
      if (queue_call (inj, start + i * PBITMAP_PAGE_SIZE, PBITMAP_PAGE_SIZE,
                      MADV_DONTDUMP) != 0)
        return;
      inj->splits += 2;
    }
  if (inj->splits >= EXACT_SPLIT_MAX && inj->splits < EXACT_SPLIT_MAX + 2)
    {
      elfpatch_warn ("more than %d pages of code: the rest is recorded "
                     "with read-ahead", EXACT_SPLIT_MAX);
      inj->splits += 2;
    }
}

/* The address of a `syscall' instruction (0f 05) in the vDSO of PID, or
   0.  */
static uint64_t
vdso_syscall (pid_t pid, uint64_t start, uint64_t end)
{
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/mem", (int) pid);
  int fd = open (name, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  uint64_t found = 0;
  unsigned char page[PBITMAP_PAGE_SIZE + 1];
  for (uint64_t at = start; at < end && found == 0; at += PBITMAP_PAGE_SIZE)
    {
      size_t want = end - at > PBITMAP_PAGE_SIZE + 1 ? PBITMAP_PAGE_SIZE + 1
                    : (size_t) (end - at);
      ssize_t got = pread (fd, page, want, (off_t) at);
      for (ssize_t i = 0; i + 1 < got && found == 0; i++)
        if (page[i] == 0x0f && page[i + 1] == 0x05)
          found = at + (uint64_t) i;
    }
  close (fd);
  return found;
}

/* Whether PID runs x86-64 code: injecting a 64-bit madvise into a
   32-bit process would run another call.  */
static int
injectable (pid_t pid)
{
  struct __ptrace_syscall_info info;
  return ptrace (PTRACE_GET_SYSCALL_INFO, pid, (void *) sizeof info, &info) > 0
         && exact_supported (info.arch);
}

int
exact_prepare_exec (pid_t pid, struct injection *inj, int exact)
{
  char name[64];
  inj->n = inj->done = inj->splits = 0;
  inj->at = 0;
  if (!injectable (pid))
    return 0;
  snprintf (name, sizeof name, "/proc/%d/maps", (int) pid);
  FILE *maps = fopen (name, "re");
  if (maps == NULL)
    return 0;
  char *line = NULL;
  size_t linesize = 0;
  while (getline (&line, &linesize, maps) > 0)
    {
      uint64_t start, end, ino;
      char perms[8];
      int path_at = 0;
      line[strcspn (line, "\n")] = '\0';
      if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %7s %*x %*x:%*x %" SCNu64
                  " %n", &start, &end, perms, &ino, &path_at) < 4
          || path_at == 0)
        continue;
      const char *path = line + path_at;
      if (strcmp (path, "[vdso]") == 0)
        inj->at = vdso_syscall (pid, start, end);
      else if (exact && path[0] == '/' && ino != 0)
        {
          evict_path (path);
          queue_mapping (inj, start, end - start, perms[2] == 'x');
        }
    }
  free (line);
  fclose (maps);
  if (inj->at == 0)
    {
      if (exact)
        elfpatch_warn ("process %d: no vDSO system-call instruction; its "
                       "first mappings keep read-around", (int) pid);
      inj->n = 0;
      return 0;
    }
  return 1;
}

int
exact_prepare_mmap (pid_t pid, const uint64_t args[6], int64_t rval,
                    struct injection *inj, int exact)
{
  int fd = (int) args[4];
  inj->n = inj->done = 0;
  if (rval < 0 && rval > -4096)
    return 0;
  if ((args[3] & MAP_ANONYMOUS) || fd < 0 || args[1] == 0)
    return 0;

  struct user_regs_struct regs;
  if (ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0)
    return 0;
  errno = 0;
  long word = ptrace (PTRACE_PEEKTEXT, pid, (void *) (regs.rip - 2), 0);
  if (errno != 0 || (word & 0xffff) != 0x050f)
    return 0;
  inj->at = regs.rip - 2;
  if (!exact)
    return 1;

  char name[64];
  snprintf (name, sizeof name, "/proc/%d/fd/%d", (int) pid, fd);
  int ours = open (name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (ours >= 0)
    {
      evict_once (ours);
      close (ours);
    }
  uint64_t len = (args[1] + PBITMAP_PAGE_SIZE - 1) & -(uint64_t) PBITMAP_PAGE_SIZE;
  queue_mapping (inj, (uint64_t) rval, len, (args[2] & PROT_EXEC) != 0);
  return 1;
}

/* Points PID at the next queued call.  */
static int
inject_next (pid_t pid, struct injection *inj)
{
  struct user_regs_struct regs = inj->saved;
  regs.rip = inj->at;
  regs.rax = (unsigned long long) inj->queue[inj->done].nr;
  regs.orig_rax = (unsigned long long) -1;
  regs.rdi = inj->queue[inj->done].arg[0];
  regs.rsi = inj->queue[inj->done].arg[1];
  regs.rdx = inj->queue[inj->done].arg[2];
  regs.r10 = inj->queue[inj->done].arg[3];
  inj->done++;
  if (ptrace (PTRACE_SETREGS, pid, 0, &regs) != 0)
    return -1;
  inj->state = INJECT_ENTRY;
  return 0;
}

/* Gives PID its saved registers back and sends a held-back signal.  */
static void
inject_finish (pid_t pid, struct injection *inj)
{
  ptrace (PTRACE_SETREGS, pid, 0, &inj->saved);
  inj->state = INJECT_NONE;
  if (inj->held_signal != 0)
    syscall (SYS_tkill, pid, inj->held_signal);
  inj->held_signal = 0;
}

int
exact_begin (pid_t pid, struct injection *inj)
{
  if (inj->n == 0)
    return 0;
  if (ptrace (PTRACE_GETREGS, pid, 0, &inj->saved) != 0
      || inject_next (pid, inj) != 0)
    {
      inj->state = INJECT_NONE;
      return 0;
    }
  return 1;
}

void
exact_step (pid_t pid, struct injection *inj, int op)
{
  if (inj->state == INJECT_ENTRY && op == PTRACE_SYSCALL_INFO_ENTRY)
    inj->state = INJECT_EXIT;
  else if (inj->state == INJECT_EXIT && op == PTRACE_SYSCALL_INFO_EXIT)
    {
      if (inj->done < inj->n && inject_next (pid, inj) == 0)
        return;
      inject_finish (pid, inj);
    }
}

int
exact_supported (uint32_t arch)
{
  return arch == AUDIT_ARCH_X86_64;
}

#else /* !__x86_64__ */

int
exact_prepare_exec (pid_t pid, struct injection *inj, int exact)
{
  (void) pid;
  (void) exact;
  inj->n = inj->done = 0;
  return 0;
}

int
exact_prepare_mmap (pid_t pid, const uint64_t args[6], int64_t rval,
                    struct injection *inj, int exact)
{
  (void) pid;
  (void) args;
  (void) rval;
  (void) exact;
  inj->n = inj->done = 0;
  return 0;
}

int
inject_queue (struct injection *inj, long nr, uint64_t a0, uint64_t a1,
              uint64_t a2, uint64_t a3)
{
  (void) inj;
  (void) nr;
  (void) a0;
  (void) a1;
  (void) a2;
  (void) a3;
  return -1;
}

int
exact_begin (pid_t pid, struct injection *inj)
{
  (void) pid;
  (void) inj;
  return 0;
}

void
exact_step (pid_t pid, struct injection *inj, int op)
{
  (void) pid;
  (void) inj;
  (void) op;
}

int
exact_supported (uint32_t arch)
{
  (void) arch;
  return 0;
}

#endif

void
exact_free (struct injection *inj)
{
  free (inj->queue);
  inj->queue = NULL;
  inj->n = inj->alloc = 0;
}
