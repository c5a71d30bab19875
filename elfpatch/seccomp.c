/* seccomp.c: stop a recorded process only at the system calls that matter.
 *
 * A recording needs few of the program's system calls: the exact method
 * injects madvise calls at the exit of each mmap of a file (exact.c), and
 * --follow reads a process's pages at the entry of each execve and
 * execveat, before the image is gone (record.c).  With PTRACE_SYSCALL the
 * tracee stops at the entry and the exit of every system call; a program
 * that makes many cheap calls then runs an order of magnitude slower.
 *
 * Instead, the child that becomes PROG installs, before its exec, a
 * seccomp filter (a classic BPF program the kernel runs at each system
 * call) that returns SECCOMP_RET_TRACE for exactly those calls made in
 * x86-64 mode (the calls exact.c, watch.c and record.c act on: mmap with
 * a file descriptor and without MAP_ANONYMOUS, for the exact method and
 * code watching only; rt_sigaction of SIGSEGV and SIGTRAP, clone with
 * CLONE_UNTRACED and every clone3, for code watching only; execve and
 * execveat) and SECCOMP_RET_ALLOW for
 * everything else.  The tracer sets PTRACE_O_TRACESECCOMP and resumes
 * with PTRACE_CONT; the kernel stops the tracee with
 * PTRACE_EVENT_SECCOMP at the entry of a traced call, and one
 * PTRACE_SYSCALL from there stops it again at the call's exit, where an
 * injection starts as before.
 *
 * The filter is inherited by every descendant and cannot be removed, and
 * SECCOMP_RET_TRACE in a process with no tracer, or whose tracer did not
 * set PTRACE_O_TRACESECCOMP, fails the call with ENOSYS.  So the tracer
 * must have set that option before PROG's own execve: the child stops
 * itself with SIGSTOP between installing the filter and exec, and the
 * tracer sets its options there.  And every descendant stays traced to
 * its end (PTRACE_O_TRACEFORK, VFORK and CLONE always), also without
 * --follow; the processes --follow would not record are only resumed at
 * their stops, and those PROG leaves behind are traced on, after the
 * trace is written, by a process of elfpatch's own (record.c, split).
 *
 * Installing a filter needs CAP_SYS_ADMIN or the no_new_privs bit.  The
 * child tries without the bit first, so that under root set-user-ID
 * programs among the descendants keep their privileges as they do under
 * a privileged tracer; otherwise it sets the bit, and such programs run
 * without their privileges, as traced ones already do under an
 * unprivileged tracer.  Where no filter can be installed (a kernel
 * without CONFIG_SECCOMP_FILTER, or another architecture), the child
 * execs without one and the tracer stops at every system call, as
 * --no-seccomp asks.
 */

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "elfpatch.h"

#if defined __x86_64__

/* The low 32 bits of system-call argument N (little-endian).  */
#define ARG_LOW(n) (offsetof (struct seccomp_data, args) + (n) * sizeof (__u64))

int
seccomp_filter_install (const struct record_options *opt)
{
  /* Jump offsets count instructions after the jump.  The mmap checks
     mirror the ones exact_prepare_mmap makes, so that a call it would
     ignore does not stop.  */
  struct sock_filter code[] =
  {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 17),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 14, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 13, 0),
    /* Code watching keeps every new task traced: a clone asking for
       CLONE_UNTRACED, and every clone3 (its flags are in memory).  */
    opt->order
    ? (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone,
                                     0, 2)
    : (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JA | BPF_K, 2, 0, 0),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG_LOW (0)),
    BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, CLONE_UNTRACED, 10, 11),
    opt->order
    ? (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3,
                                     9, 0)
    : (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JA | BPF_K, 0, 0, 0),
    /* Code watching mirrors the actions of SIGSEGV and SIGTRAP.  */
    opt->order
    ? (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                     SYS_rt_sigaction, 0, 3)
    : (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JA | BPF_K, 3, 0, 0),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG_LOW (0)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SIGSEGV, 6, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SIGTRAP, 5, 6),
    /* Without the exact method and code watching (watch.c) no mmap
       stops: straight to allow.  */
    opt->exact || opt->order
    ? (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 5)
    : (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JA | BPF_K, 5, 0, 0),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG_LOW (3)),
    BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 3, 0),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG_LOW (4)),
    BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, 0x80000000, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_TRACE),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog =
  {
    .len = sizeof code / sizeof code[0],
    .filter = code,
  };
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
    return 0;
  if (errno != EACCES)
    return errno;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
    return errno;
  return 0;
}

#else /* !__x86_64__ */

int
seccomp_filter_install (const struct record_options *opt)
{
  /* Nothing is injected or captured at system calls here (exact.c):
     the tracer's fallback is as good.  */
  (void) opt;
  return ENOSYS;
}

#endif
