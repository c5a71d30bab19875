/* record.c: run a program once and write down which file pages it used.
 *
 * The working set of a run is read from the process itself, just before
 * it is gone: the program runs as a ptrace child with PTRACE_O_TRACEEXIT,
 * so the kernel stops it in exit, after the program's last instruction
 * but while its address space still exists.  At that stop
 * /proc/PID/maps lists the mappings and /proc/PID/pagemap says, for each
 * page of a mapping, whether it is present (bit 63).  A present page of
 * a file mapping at file offset OFFSET maps file page OFFSET / 4096 +
 * index: that page was read from the file during the run.  Private pages
 * that were copied on write (relocated data, and code pages watch.c wrote
 * breakpoints into, which it does only once the program runs them) count
 * too: the file page was read to make them.  This needs no privilege for
 * one's own child.
 *
 * Every file-backed mapping (a path starting with '/') is recorded: the
 * program, its libraries, the dynamic linker, mapped data files; a fill
 * picks out the blocks of the file it fills.  Each file is opened at the
 * exit stop and checked to be the inode that is mapped (a file deleted or
 * replaced since it was mapped is skipped), and the trace binds the pages
 * to that file's identity (build-id, or size and hash).
 *
 * The exact method (exact.c) needs the system-call stops of every
 * thread, so threads are always traced then; other processes are
 * recorded only with --follow, which also captures each image a process
 * leaves by exec, at the entry of execve, while it still exists.  Every
 * capture adds to one recording: a file's set is the union over all
 * captures.  A seccomp filter (seccomp.c) picks the system calls that
 * stop a tracee, and then every descendant of PROG stays traced, the
 * processes not recorded only resumed at their stops.  Without a filter
 * (--no-seccomp, or none available) a tracee stops at the entry and the
 * exit of every system call, and only threads and, with --follow, other
 * processes are traced.
 *
 * On x86-64, unless --no-order, watch.c also watches the code a recorded
 * process runs, for the trace's 'order' and 'calls': it protects each
 * code mapping at the same stops as the exact method's madvise calls
 * (after exec, at the exit of each mmap of a file) and handles the
 * SIGSEGV and SIGTRAP stops that causes.  A forked child inherits the
 * protections and breakpoints, so every descendant is traced while it
 * may run them: without the filter and --follow, a child that is not
 * recorded is let go at its exec, and the recording splits (see split)
 * so that one that never execs does not hold elfpatch.
 *
 * The program runs with PBITMAP=off: a filled bitmap's prefetch would
 * make pages present that the program never faulted.  It keeps its
 * standard streams; elfpatch ignores SIGINT and SIGQUIT while it runs
 * (like system(3)), so an interrupted program still yields a trace.  A
 * program that fails is reported in a warning and its trace is written
 * all the same, but elfpatch then exits with RECORD_PROG_FAILED, so that
 * a script can tell a run that went wrong from a good one.
 *
 * A run can be long or hard to repeat, so what can be checked before it
 * is: -o must be a file elfpatch can create (the trace is written to a
 * temporary file beside it, made before PROG starts, and renamed over it
 * at the end), not a directory, and not PROG itself; a directory as PROG
 * is named as one.  A trace renamed over a file the run mapped would
 * destroy what it describes (a library, a program PROG exec'd), so at the
 * end -o naming any file of the trace is refused too, leaving it as it
 * was.  Then one line says which of the recorded files have a bitmap
 * region, i.e. which a fill can do something for; a trace of which no
 * file has one is a warning.
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfpatch.h"

/* The receiver of the pages a capture finds present in one mapping.  */
struct capture_map
{
  struct mapped_file *f;
  uint64_t first_page;          /* the mapping's file offset, in pages */
};

static int
capture_page (void *ctx, uint64_t index)
{
  struct capture_map *c = ctx;
  return mapped_file_add_page (c->f, c->first_page + index);
}

/* At the exit stop: reads the maps and pagemap of PID.  */
static int
capture (pid_t pid, struct recording *rec)
{
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/maps", (int) pid);
  FILE *maps = fopen (name, "re");
  snprintf (name, sizeof name, "/proc/%d/pagemap", (int) pid);
  int pagemap = open (name, O_RDONLY | O_CLOEXEC);
  char *line = NULL;
  size_t linesize = 0;
  int rc = 0;
  if (maps == NULL || pagemap < 0)
    {
      error (0, errno, "error: %s", name);
      rc = -1;
    }

  while (rc == 0 && getline (&line, &linesize, maps) > 0)
    {
      struct maps_entry e;
      if (maps_parse (line, &e) != 0)
        continue;
      struct mapped_file *f = recording_file (rec, pid, e.maj, e.min, e.ino,
                                              e.start, e.end, e.path);
      if (f == NULL)
        {
          error (0, errno, "error: %s", name);
          rc = -1;
          continue;
        }
      f->captured = 1;
      struct capture_map c = { f, e.offset / PBITMAP_PAGE_SIZE };
      if (f->fd >= 0
          && pagemap_present (pagemap, e.start, e.end, capture_page, &c) != 0)
        {
          error (0, errno ? errno : EIO, "error: %s", name);
          rc = -1;
        }
    }
  free (line);
  if (maps != NULL)
    fclose (maps);
  if (pagemap >= 0)
    close (pagemap);
  rec->captured = rc == 0;
  return rc;
}

int
mapped_file_block (struct mapped_file *f, struct trace *t)
{
  struct stat st;
  if (fstat (f->fd, &st) != 0)
    {
      error (0, errno, "error: %s", f->path);
      return -1;
    }
  Elf *elf = elf_begin (f->fd, ELF_C_READ_MMAP, NULL);
  Elf *as_elf = elf != NULL && elf_kind (elf) == ELF_K_ELF ? elf : NULL;
  struct region r;
  char why[256];
  f->has_region = as_elf != NULL
    && region_find (as_elf, NULL, f->fd, (uint64_t) st.st_size, &r, why,
                    sizeof why) == 0;
  struct trace_block *b = trace_add_block (t, f->path);
  int rc = -1;
  if (b == NULL)
    error (0, errno, "error: %s", f->path);
  else
    rc = identity_compute (f->path, as_elf, NULL, f->fd,
                           (uint64_t) st.st_size, &b->id);
  if (elf != NULL)
    elf_end (elf);

  if (f->n_pages > 1)
    qsort (f->pages, f->n_pages, sizeof *f->pages, u64_cmp);
  for (size_t i = 0; i < f->n_pages && rc == 0; i++)
    {
      uint64_t page = f->pages[i];
      if (b->n_ranges > 0 && page <= b->ranges[b->n_ranges - 1].last)
        continue;               /* mapped twice */
      if (trace_block_add_range (b, page, page) != 0)
        {
          error (0, errno, "error: %s", f->path);
          rc = -1;
        }
    }
  if (rc == 0 && f->code != NULL && watch_block (f, b) != 0)
    {
      error (0, errno, "error: %s", f->path);
      rc = -1;
    }
  return rc;
}

static char *
join_command (char **argv)
{
  size_t len = 1;
  for (char **a = argv; *a != NULL; a++)
    len += strlen (*a) + 1;
  char *s = malloc (len);
  if (s == NULL)
    return NULL;
  s[0] = '\0';
  for (char **a = argv; *a != NULL; a++)
    {
      if (a != argv)
        strcat (s, " ");
      strcat (s, *a);
    }
  return s;
}

static int
wait_child (pid_t pid, int *status)
{
  while (waitpid (pid, status, 0) < 0)
    if (errno != EINTR)
      {
        error (0, errno, "error: waitpid");
        return -1;
      }
  return 0;
}

/* One traced thread or process.  */
struct tracee
{
  pid_t pid;
  pid_t tgid;
  int fresh;                    /* auto-attached: its first SIGSTOP is ours */
  int adopted;                  /* W is its creator's space (or its own) */
  int exec_pending;             /* exact: after the exec, at the exit stop */
  int recorded;                 /* its pages are captured and injected */
  int to_exit;                  /* stop at the exit of this system call */
  uint32_t arch;                /* of the system call it is in */
  uint64_t nr;
  uint64_t args[6];
  struct injection inj;
  struct watch_task w;
};

struct tracer
{
  const struct record_options *opt;
  struct new_file out;          /* where the trace goes, begun early */
  FILE *out_f;
  struct recording *rec;
  struct tracee *t;
  size_t n, alloc;
  pid_t main_pid;
  int main_status;
  int filtered;                 /* PROG runs under the seccomp filter */
  int leave_rest;               /* stop tracing at PROG's end: see split */
  int rc;
};

static int
uses_syscall_stops (const struct record_options *opt)
{
  return opt->exact || opt->follow || opt->order;
}

/* Whether new mappings are acted on at the exit of their mmap, and new
   images after exec.  */
static int
acts_on_mappings (const struct record_options *opt)
{
  return opt->exact || opt->order;
}

/* The thread group of task PID, or 0.  */
static pid_t
task_tgid (pid_t pid)
{
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/status", (int) pid);
  FILE *status = fopen (name, "re");
  char *line = NULL;
  size_t linesize = 0;
  int tgid = 0;
  while (status != NULL && getline (&line, &linesize, status) > 0
         && sscanf (line, "Tgid: %d", &tgid) != 1)
    ;
  free (line);
  if (status != NULL)
    fclose (status);
  return tgid;
}

static struct tracee *
find_tracee (struct tracer *tr, pid_t pid)
{
  for (size_t i = 0; i < tr->n; i++)
    if (tr->t[i].pid == pid)
      return &tr->t[i];
  if (array_reserve ((void **) &tr->t, &tr->alloc, tr->n, sizeof *tr->t) != 0)
    return NULL;
  struct tracee *t = &tr->t[tr->n++];
  memset (t, 0, sizeof *t);
  t->pid = pid;
  t->tgid = task_tgid (pid);
  t->fresh = 1;
  t->recorded = tr->opt->follow || pid == tr->main_pid
                || t->tgid == tr->main_pid;
  return t;
}

static void
forget_tracee (struct tracer *tr, pid_t pid)
{
  for (size_t i = 0; i < tr->n; i++)
    if (tr->t[i].pid == pid)
      {
        exact_free (&tr->t[i].inj);
        watch_release (&tr->t[i].w);
        tr->t[i] = tr->t[--tr->n];
        return;
      }
}

/* Resumes PID to its next stop.  Under the filter, that is the exit of
   the current system call only when it is wanted or an injection runs;
   the filter brings the next entry that matters.  */
static void
resume (struct tracer *tr, pid_t pid, int sig)
{
  const struct tracee *t = find_tracee (tr, pid);
  int syscall_stops = tr->filtered
                      ? t != NULL && (t->to_exit
                                      || t->inj.state != INJECT_NONE)
                      : uses_syscall_stops (tr->opt);
  ptrace (syscall_stops ? PTRACE_SYSCALL : PTRACE_CONT, pid, 0,
          (void *) (long) sig);
}

static void
capture_now (struct tracer *tr, pid_t pid)
{
  if (tr->rec != NULL && capture (pid, tr->rec) != 0)
    tr->rc = -1;
}

/* The entry of system call NR with ARGS of T, at a system-call stop or
   a seccomp stop.  */
static void
on_entry (struct tracer *tr, struct tracee *t, uint32_t arch, uint64_t nr,
          const uint64_t args[6])
{
  t->arch = arch;
  t->nr = nr;
  memcpy (t->args, args, sizeof t->args);
  if (!exact_supported (arch))
    return;
  if (nr == SYS_rt_sigaction)
    watch_sigaction (t->pid, t->tgid, &t->w, args);
  else if (nr == SYS_clone || nr == SYS_clone3)
    watch_clone (t->pid, &t->w, nr, args);
  if (!t->recorded)
    return;
  /* The image about to be replaced: its pages were used too.  */
  if (tr->opt->follow && (nr == SYS_execve || nr == SYS_execveat))
    capture_now (tr, t->pid);
  else if (nr == SYS_mmap && acts_on_mappings (tr->opt))
    t->to_exit = 1;
}

/* After T's exec, at its first stop in the new image: makes it fault
   its files' pages one by one and watches its code.  */
static void
after_exec (struct tracer *tr, struct tracee *t)
{
  watch_release (&t->w);
  if (exact_prepare_exec (t->pid, &t->inj, tr->opt->exact)
      && tr->opt->order && tr->rec != NULL)
    watch_exec (tr->rec, t->pid, &t->w, &t->inj, tr->opt->exact);
  exact_begin (t->pid, &t->inj);
}

/* At the exit stop of T's mmap that returned RVAL.  */
static void
after_mmap (struct tracer *tr, struct tracee *t, int64_t rval)
{
  if (exact_prepare_mmap (t->pid, t->args, rval, &t->inj, tr->opt->exact)
      && tr->opt->order && tr->rec != NULL)
    watch_mmap (tr->rec, t->pid, &t->w, t->args, rval, &t->inj);
  exact_begin (t->pid, &t->inj);
}

/* A system-call stop or seccomp stop of T.  */
static void
on_syscall (struct tracer *tr, struct tracee *t)
{
  struct __ptrace_syscall_info info;
  if (ptrace (PTRACE_GET_SYSCALL_INFO, t->pid, (void *) sizeof info, &info)
      <= 0)
    return;
  if (t->inj.state != INJECT_NONE)
    {
      exact_step (t->pid, &t->inj, info.op);
      return;
    }
  if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
    on_entry (tr, t, info.arch, info.entry.nr, info.entry.args);
  else if (info.op == PTRACE_SYSCALL_INFO_SECCOMP)
    on_entry (tr, t, info.arch, info.seccomp.nr, info.seccomp.args);
  if (info.op != PTRACE_SYSCALL_INFO_EXIT)
    return;
  int wanted = t->to_exit;
  t->to_exit = 0;
  if (t->exec_pending)
    {
      t->exec_pending = 0;
      after_exec (tr, t);
    }
  else if (wanted)
    after_mmap (tr, t, info.exit.rval);
}

/* Gives the new task CHILD the code view of the task that created it,
   PARENT, or when that is unknown (CHILD stopped before PARENT's event
   was seen), of the task /proc names: the thread group's leader for a
   thread, else the parent process.  */
static void
adopt (struct tracer *tr, pid_t child, pid_t parent)
{
  struct tracee *c = find_tracee (tr, child);
  if (c == NULL || c->adopted)
    return;
  c->adopted = 1;
  if (parent == 0 && c->tgid != 0 && c->tgid != child)
    parent = c->tgid;
  if (parent == 0)
    {
      char name[64];
      snprintf (name, sizeof name, "/proc/%d/stat", (int) child);
      FILE *stat = fopen (name, "re");
      int ppid = 0;
      if (stat != NULL && fscanf (stat, "%*d (%*[^)]) %*c %d", &ppid) != 1)
        ppid = 0;
      if (stat != NULL)
        fclose (stat);
      parent = ppid;
    }
  for (size_t i = 0; i < tr->n; i++)
    if (tr->t[i].pid == parent
        || (tr->t[i].tgid == parent && tr->t[i].w.space != NULL))
      {
        watch_inherit (&c->w, child, &tr->t[i].w, tr->t[i].pid, c->recorded);
        return;
      }
}

/* A PTRACE_EVENT_* stop of T.  Returns 1 when T is to be let go.  */
static int
on_event (struct tracer *tr, struct tracee *t, int event)
{
  unsigned long msg = 0;
  switch (event)
    {
    case PTRACE_EVENT_EXIT:
      if (t->recorded)
        capture_now (tr, t->pid);
      break;
    case PTRACE_EVENT_EXEC:
      watch_release (&t->w);
      /* Traced only for the code it ran before the exec (watch.c).  */
      if (!t->recorded && !tr->filtered && !tr->opt->follow)
        return 1;
      /* The injection waits for the exit stop of the exec: until then the
         kernel still writes the call's result into the registers.  */
      t->exec_pending = t->to_exit = acts_on_mappings (tr->opt)
                                     && t->recorded;
      break;
    case PTRACE_EVENT_SECCOMP:
      on_syscall (tr, t);
      break;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      if (ptrace (PTRACE_GETEVENTMSG, t->pid, 0, &msg) == 0)
        adopt (tr, (pid_t) msg, t->pid);
      break;
    default:
      break;
    }
  return 0;
}

/* A stop that is no ptrace event: the signal to deliver, or 0.  */
static int
on_signal (struct tracer *tr, struct tracee *t, int sig)
{
  siginfo_t si;
  if (t->fresh && sig == SIGSTOP)
    {
      t->fresh = 0;
      pid_t pid = t->pid;
      adopt (tr, pid, 0);
      return 0;
    }
  if (ptrace (PTRACE_GETSIGINFO, t->pid, 0, &si) != 0)
    return 0;                   /* a group-stop: resume it */
  if (t->inj.state != INJECT_NONE)
    {
      t->inj.held_signal = sig;
      return 0;
    }
  if ((sig == SIGSEGV || sig == SIGTRAP)
      && watch_signal (tr->rec, t->pid, &t->w, &si, &t->inj))
    return 0;
  return sig;
}

static long
trace_options (const struct tracer *tr)
{
  long options = PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
  if (uses_syscall_stops (tr->opt))
    options |= PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE;
  /* Under the filter every descendant must stay traced (seccomp.c).  */
  /* Watched code is copied into children (watch.c).  */
  if (tr->opt->follow || tr->filtered || tr->opt->order)
    options |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
  if (tr->filtered)
    options |= PTRACE_O_TRACESECCOMP;
  return options;
}

/* Handles the stops of the traced tasks until none is left or, with
   TR->leave_rest, PROG has ended.  */
static int
trace_loop (struct tracer *tr)
{
  for (;;)
    {
      int status;
      pid_t pid = waitpid (-1, &status, __WALL);
      if (pid < 0 && errno == EINTR)
        continue;
      if (pid < 0 && errno == ECHILD)
        return tr->rc;
      if (pid < 0)
        {
          error (0, errno, "error: waitpid");
          return -1;
        }
      if (WIFEXITED (status) || WIFSIGNALED (status))
        {
          forget_tracee (tr, pid);
          if (pid != tr->main_pid)
            continue;
          tr->main_status = status;
          if (tr->leave_rest)
            return tr->rc;
          continue;
        }
      struct tracee *t = find_tracee (tr, pid);
      if (!WIFSTOPPED (status) || t == NULL)
        continue;
      int sig = WSTOPSIG (status), event = status >> 16, deliver = 0;
      if (sig == (SIGTRAP | 0x80))
        on_syscall (tr, t);
      else if (sig == SIGTRAP && event != 0)
        {
          if (on_event (tr, t, event))
            {
              ptrace (PTRACE_DETACH, pid, 0, 0);
              forget_tracee (tr, pid);
              continue;
            }
        }
      else
        deliver = on_signal (tr, t, sig);
      resume (tr, pid, deliver);
    }
}

/* Runs the traced processes to their end (to PROG's, with
   TR->leave_rest), capturing at each exit stop (and, with --follow,
   before each exec).  */
static int
trace_children (struct tracer *tr, const char *prog)
{
  struct tracee *main_tracee = find_tracee (tr, tr->main_pid);
  if (main_tracee == NULL
      || ptrace (PTRACE_SETOPTIONS, tr->main_pid, 0, trace_options (tr)) != 0)
    {
      error (0, errno, "error: %s: ptrace", prog);
      kill (tr->main_pid, SIGKILL);
      wait_child (tr->main_pid, &tr->main_status);
      return -1;
    }
  main_tracee->fresh = 0;
  main_tracee->adopted = 1;
  if (tr->filtered)
    main_tracee->exec_pending = main_tracee->to_exit
      = acts_on_mappings (tr->opt);
  else if (acts_on_mappings (tr->opt))
    after_exec (tr, main_tracee);
  resume (tr, tr->main_pid, 0);
  return trace_loop (tr);
}

/* Under the filter: sets the tracer's options on the child, stopped by
   its own SIGSTOP, and runs it to the PTRACE_EVENT_EXEC stop of PROG's
   exec or to its end; the seccomp stops on the way (its execve calls)
   are elfpatch's image, not recorded.  STATUS is the last wait status.  */
static int
run_to_exec (struct tracer *tr, const char *prog, pid_t pid, int *status)
{
  if (ptrace (PTRACE_SETOPTIONS, pid, 0, trace_options (tr)) != 0)
    {
      error (0, errno, "error: %s: ptrace", prog);
      return -1;
    }
  do
    {
      if (ptrace (PTRACE_CONT, pid, 0, 0) != 0)
        {
          error (0, errno, "error: %s: ptrace", prog);
          return -1;
        }
      if (wait_child (pid, status) != 0)
        return -1;
    }
  while (WIFSTOPPED (*status)
         && *status >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8)));
  return 0;
}

/* The child: becomes PROG, traced; with WANT_FILTER under the filter.
   Through REPORT it tells why the filter is missing (as a negative
   number) and why PROG did not start.  */
static _Noreturn void
become_prog (char **argv, const struct record_options *opt, int want_filter,
             int report)
{
  int err = 0;
  /* A program that prefetches its own bitmap would fault nothing.  */
  if (setenv ("PBITMAP", "off", 1) != 0)
    err = errno;
  else if (ptrace (PTRACE_TRACEME, 0, 0, 0) != 0)
    err = errno;
  else
    {
      int filter_err = want_filter ? seccomp_filter_install (opt) : 0;
      int no_filter = -filter_err;
      if (filter_err != 0 && write (report, &no_filter, sizeof no_filter) < 0)
        _exit (127);
      /* The filtered calls fail with ENOSYS until the tracer has set
         PTRACE_O_TRACESECCOMP: it does so in this stop.  */
      if (want_filter && filter_err == 0)
        raise (SIGSTOP);
      char *exe = find_program (argv[0]);
      exec_program (exe, argv);
      err = errno;
    }
  if (write (report, &err, sizeof err) < 0)
    _exit (127);
  _exit (127);
}

/* Starts PROG under ptrace; returns its pid, stopped after exec (at the
   exec event when TR->filtered is set).  */
static pid_t
start_child (struct tracer *tr, char **argv)
{
  int want_filter = uses_syscall_stops (tr->opt) && !tr->opt->no_seccomp;
  int report[2];
  if (pipe2 (report, O_CLOEXEC) != 0)
    {
      error (0, errno, "error: pipe");
      return -1;
    }
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      error (0, errno, "error: fork");
      return -1;
    }
  if (pid == 0)
    {
      close (report[0]);
      become_prog (argv, tr->opt, want_filter, report[1]);
    }
  close (report[1]);

  int status, msg, err = 0, failed = 0, filter_err = 0;
  tr->filtered = 0;
  if (wait_child (pid, &status) != 0)
    return -1;
  /* A signal sent to the child before its own SIGSTOP (or, without a
     filter, its exec) is delivered, and the wait goes on.  */
  while (want_filter && WIFSTOPPED (status) && WSTOPSIG (status) != SIGSTOP
         && WSTOPSIG (status) != SIGTRAP)
    if (ptrace (PTRACE_CONT, pid, 0, (void *) (long) WSTOPSIG (status)) != 0
        || wait_child (pid, &status) != 0)
      {
        error (0, errno, "error: %s: ptrace", argv[0]);
        kill (pid, SIGKILL);
        return -1;
      }
  if (want_filter && WIFSTOPPED (status) && WSTOPSIG (status) == SIGSTOP)
    {
      tr->filtered = 1;
      if (run_to_exec (tr, argv[0], pid, &status) != 0)
        failed = -1;
    }
  /* The child has exec'd PROG (closing its end) or ended.  */
  while (failed >= 0 && read (report[0], &msg, sizeof msg) == sizeof msg)
    if (msg < 0)
      filter_err = -msg;
    else
      {
        err = msg;
        failed = 1;
      }
  close (report[0]);
  if (want_filter && filter_err != 0)
    elfpatch_note ("%s: no seccomp filter (%s); stopping at every system "
                   "call", argv[0], strerror (filter_err));
  if (failed != 0 || !WIFSTOPPED (status))
    {
      if (failed >= 0)
        error (0, failed ? err : 0, "error: %s%s", argv[0],
               failed ? "" : ": did not start");
      if (WIFSTOPPED (status))
        {
          kill (pid, SIGKILL);
          wait_child (pid, &status);
        }
      return -1;
    }
  return pid;
}

static void
report_status (const char *prog, int status)
{
  if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
    elfpatch_warn ("%s: exited with status %d", prog, WEXITSTATUS (status));
  else if (WIFSIGNALED (status))
    elfpatch_warn ("%s: killed by signal %d (%s)", prog, WTERMSIG (status),
                   strsignal (WTERMSIG (status)));
}

void
mapped_file_release (struct mapped_file *f)
{
  free (f->path);
  free (f->pages);
  watch_file_free (f);
  if (f->fd >= 0)
    close (f->fd);
}

static void
free_recording (struct recording *rec)
{
  for (size_t i = 0; i < rec->n_files; i++)
    mapped_file_release (&rec->files[i]);
  free (rec->files);
}

/* Under the filter (or watching code) without --follow, the processes
   PROG leaves behind (daemons) stay traced until they end (seccomp.c)
   or exec (watch.c), but the caller should not wait for them: it did
   not before the filter, and their pages are not recorded.  So elfpatch
   splits in two: the recording runs in a child, the tracer, which hands
   the exit status to the first process through a pipe once the trace
   is written and then traces the rest in the background, in a session
   of its own, without standard streams.  Until then the tracer dies
   with the first process (PR_SET_PDEATHSIG), and PROG with the tracer
   (PTRACE_O_EXITKILL), as when elfpatch is one process.  Returns -1 in
   the tracer, with *REPORT the pipe's end; in the first process, the
   status to exit with.  */
static int
split (int *report)
{
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) != 0)
    {
      error (0, errno, "error: pipe");
      return 1;
    }
  fflush (NULL);
  pid_t first = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      error (0, errno, "error: fork");
      close (fds[0]);
      close (fds[1]);
      return 1;
    }
  if (pid == 0)
    {
      close (fds[0]);
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != first)
        _exit (1);
      *report = fds[1];
      return -1;
    }
  close (fds[1]);
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;
  sigaction (SIGINT, &ignore, &old_int);
  sigaction (SIGQUIT, &ignore, &old_quit);
  int status = 1, wstatus;
  ssize_t n;
  while ((n = read (fds[0], &status, sizeof status)) < 0 && errno == EINTR)
    ;
  close (fds[0]);
  if (n != sizeof status)
    {
      /* The tracer ended without handing over: its own status.  */
      if (wait_child (pid, &wstatus) != 0)
        status = 1;
      else if (WIFEXITED (wstatus))
        status = WEXITSTATUS (wstatus);
      else
        {
          error (0, 0, "error: the recording process was killed by signal "
                 "%d", WTERMSIG (wstatus));
          status = 1;
        }
    }
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGQUIT, &old_quit, NULL);
  return status;
}

/* In the tracer: gives STATUS to the first process, then traces what is
   left until it ends.  */
static void
hand_over (struct tracer *tr, int report, int status)
{
  fflush (NULL);
  prctl (PR_SET_PDEATHSIG, 0);
  if (write (report, &status, sizeof status) != sizeof status)
    error (0, errno, "error: pipe");
  close (report);
  setsid ();
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; null >= 0 && fd <= 2; fd++)
    dup2 (null, fd);
  if (null > 2)
    close (null);
  tr->leave_rest = 0;
  tr->rec = NULL;               /* written: what is left is not recorded */
  trace_loop (tr);
}

/* Whether F is in the trace (written as a block).  */
static int
in_trace (const struct mapped_file *f)
{
  return f->fd >= 0 && f->captured;
}

/* The recorded file that is the file at OUTPUT, if any.  */
static const struct mapped_file *
output_recorded (const struct recording *rec, const char *output)
{
  struct stat st;
  if (stat (output, &st) != 0)
    return NULL;
  for (size_t i = 0; i < rec->n_files; i++)
    {
      const struct mapped_file *f = &rec->files[i];
      if (in_trace (f) && f->ino == st.st_ino
          && f->dev_major == major (st.st_dev)
          && f->dev_minor == minor (st.st_dev))
        return f;
    }
  return NULL;
}

/* Says which files of T (from REC) have a bitmap region.  */
static void
report_regions (const struct recording *rec, const struct trace *t,
                const char *output)
{
  size_t with = 0;
  for (size_t i = 0; i < rec->n_files; i++)
    if (in_trace (&rec->files[i]) && rec->files[i].has_region)
      with++;
    else if (in_trace (&rec->files[i]))
      elfpatch_note ("%s: no bitmap region: %s", output, rec->files[i].path);
  if (with == 0)
    elfpatch_warn ("%s: none of the %zu recorded files has a bitmap region "
                   "(linked with the pbitmap plugin); only --fill --store "
                   "can use it", output, t->n_blocks);
  if (with == 0 || elfpatch_quiet)
    return;
  fflush (stdout);
  fprintf (stderr, "%s: %s: %zu of %zu recorded files have a bitmap region:",
           program_invocation_name, output, with, t->n_blocks);
  const char *sep = " ";
  for (size_t i = 0; i < rec->n_files; i++)
    if (in_trace (&rec->files[i]) && rec->files[i].has_region)
      {
        fprintf (stderr, "%s%s", sep, rec->files[i].path);
        sep = ", ";
      }
  fputc ('\n', stderr);
}

/* After the run: warns about PROG's status and writes the trace.
   Returns the exit status.  */
static int
write_recording (char **argv, const char *output, struct tracer *tr)
{
  struct trace t = { 0 };
  struct recording *rec = tr->rec;
  int status = 1;
  report_status (argv[0], tr->main_status);
  const struct mapped_file *clash = output_recorded (rec, output);
  if (clash != NULL)
    {
      error (0, 0, "error: %s: is %s, a file the trace describes; the "
             "trace is not written", output, clash->path);
      goto out;
    }
  if (!rec->captured)
    {
      error (0, 0, "error: %s: ended before its pages could be read",
             argv[0]);
      goto out;
    }

  t.command = join_command (argv);
  uint64_t pages = 0, count[3] = { 0, 0, 0 };
  /* Files only watched (the images a process left by exec, without
     --follow) are not written.  */
  for (size_t i = 0; i < rec->n_files; i++)
    if (in_trace (&rec->files[i]))
      {
        if (mapped_file_block (&rec->files[i], &t) != 0)
          goto out;
        const struct trace_block *b = &t.blocks[t.n_blocks - 1];
        for (size_t r = 0; r < b->n_ranges; r++)
          pages += b->ranges[r].last - b->ranges[r].first + 1;
        watch_count (&rec->files[i], b, count);
      }
  trace_print (tr->out_f, &t);
  int written = new_file_commit (&tr->out, tr->out_f);
  tr->out_f = NULL;
  if (written != 0)
    goto out;
  if (tr->opt->order)
    elfpatch_note ("%s: %zu files, %" PRIu64 " pages, %" PRIu64 " calls, "
                   "%" PRIu64 " breakpoints, %" PRIu64 " code pages run",
                   output, t.n_blocks, pages, count[0], count[1], count[2]);
  else
    elfpatch_note ("%s: %zu files, %" PRIu64 " pages", output, t.n_blocks,
                   pages);
  report_regions (rec, &t, output);
  status = WIFEXITED (tr->main_status) && WEXITSTATUS (tr->main_status) == 0
           ? 0 : RECORD_PROG_FAILED;

out:
  if (tr->out_f != NULL)
    {
      new_file_abort (&tr->out, tr->out_f);
      tr->out_f = NULL;
    }
  trace_free (&t);
  return status;
}

/* What can be checked before PROG runs: PROG is not a directory, OUTPUT
   is neither a directory nor PROG.  Returns 0 or -1 after a message.  */
static int
check_paths (const char *prog, const char *output)
{
  struct stat ps, os;
  char *path = find_program (prog);
  int have_prog = path != NULL && stat (path, &ps) == 0;
  int rc = -1;
  if (have_prog && S_ISDIR (ps.st_mode))
    error (0, 0, "error: %s: is a directory, not a program", prog);
  else if (stat (output, &os) == 0 && S_ISDIR (os.st_mode))
    error (0, 0, "error: %s: is a directory; -o names the trace file",
           output);
  else if (have_prog && stat (output, &os) == 0 && os.st_dev == ps.st_dev
           && os.st_ino == ps.st_ino)
    error (0, 0, "error: %s: is %s, the program to record; -o must name "
           "another file", output, prog);
  else
    rc = 0;
  free (path);
  return rc;
}

int
record_command (char **argv, const char *output,
                const struct record_options *options)
{
  struct record_options o = *options, *opt = &o;
  struct recording rec = { 0 };
  struct tracer tr = { .opt = opt, .rec = &rec };
  int status = 1, report = -1;
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;

  o.order = o.order && watch_supported ();
  if (check_paths (argv[0], output) != 0)
    return 1;
  tr.out_f = new_file_begin (&tr.out, output);
  if (tr.out_f == NULL)
    return 1;
  /* Children that are not recorded stay traced, under the filter to
     their end, with watched code until they exec.  */
  if (((uses_syscall_stops (opt) && !opt->no_seccomp) || opt->order)
      && !opt->follow)
    {
      int first = split (&report);
      if (first >= 0)
        {
          /* The tracer writes the trace, or removes its file.  */
          fclose (tr.out_f);
          free (tr.out.tmp);
          free (tr.out.dir);
          return first;
        }
      tr.leave_rest = 1;
    }
  elf_version (EV_CURRENT);
  tr.main_pid = start_child (&tr, argv);
  if (tr.main_pid < 0)
    {
      new_file_abort (&tr.out, tr.out_f);
      return 1;
    }
  sigaction (SIGINT, &ignore, &old_int);
  sigaction (SIGQUIT, &ignore, &old_quit);
  if (trace_children (&tr, argv[0]) == 0)
    status = write_recording (argv, output, &tr);
  else
    new_file_abort (&tr.out, tr.out_f);
  free_recording (&rec);
  if (report >= 0)
    hand_over (&tr, report, status);
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGQUIT, &old_quit, NULL);
  for (size_t i = 0; i < tr.n; i++)
    {
      exact_free (&tr.t[i].inj);
      watch_release (&tr.t[i].w);
    }
  free (tr.t);
  return status;
}
