/* seccomp-exec: run a program under a kill-by-default seccomp filter, as a
 * sandbox such as systemd's SystemCallFilter= does, for the tests that
 * check that the runtime makes only system calls common filters allow.
 *
 *   seccomp-exec LIST PROG [ARG]...
 *
 * LIST holds x86-64 system call numbers, one per line (the tests turn
 * names into numbers with the kernel's <asm/unistd_64.h>).  The filter
 * allows exactly those and kills the whole process (SECCOMP_RET_KILL_PROCESS,
 * as systemd's default action does) at any other call, or at any call of
 * another architecture or of the x32 ABI.  It is installed with
 * no_new_privs, so an unprivileged user can use it too, and is kept
 * across the exec of PROG, which seccomp-exec's last system call is.
 *
 *   seccomp-exec --fail=NR:ERRNO PROG [ARG]...
 *
 * allows every call instead and makes system call NR fail with ERRNO,
 * for the tests of a fallback taken when a call is missing, as on an
 * older kernel (ENOTTY for an ioctl it does not know).
 *
 * Exit status: PROG's, or 125 when the filter cannot be built or set up,
 * 127 when PROG cannot be executed (under the filter).
 */
#include <errno.h>
#include <error.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Two instructions per allowed call, and six around them: far below the
   kernel's limit of 4096 for the list of a few hundred calls.  */
#define MAX_CALLS 1000

static struct sock_filter prog[6 + 2 * MAX_CALLS];

/* The filter's first instructions: a call of another architecture
   kills the process, then the call's number is loaded.  Returns their
   count.  */
static size_t
prologue (void)
{
  size_t n = 0;
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                             offsetof (struct seccomp_data,
                                                       arch));
  prog[n++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                             AUDIT_ARCH_X86_64, 1, 0);
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                             SECCOMP_RET_KILL_PROCESS);
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                                             offsetof (struct seccomp_data,
                                                       nr));
  return n;
}

/* Installs the first N instructions of PROG as the filter and executes
   ARGV.  */
static int
install_and_exec (size_t n, char **argv)
{
  struct sock_fprog fprog = { .len = (unsigned short) n, .filter = prog };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    error (125, errno, "prctl (PR_SET_NO_NEW_PRIVS)");
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0)
    error (125, errno, "seccomp (SECCOMP_SET_MODE_FILTER)");
  execv (argv[0], argv);
  /* Reporting the failure would need calls the list may not allow.  */
  _exit (127);
}

/* --fail: every x86-64 call allowed but NR, which fails with ERRNO.  */
static int
fail_one (unsigned long nr, unsigned long err, char **argv)
{
  size_t n = prologue ();
  prog[n++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                             nr, 0, 1);
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                             SECCOMP_RET_ERRNO | err);
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                             SECCOMP_RET_ALLOW);
  return install_and_exec (n, argv);
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    error (125, 0, "usage: seccomp-exec LIST|--fail=NR:ERRNO PROG [ARG]...");
  unsigned long fail_nr, fail_errno;
  char end;
  if (sscanf (argv[1], "--fail=%lu:%lu%c", &fail_nr, &fail_errno, &end) == 2)
    {
      if (fail_nr >= 0x40000000 || fail_errno == 0 || fail_errno > 4095)
        error (125, 0, "%s: not a call number and an errno", argv[1]);
      return fail_one (fail_nr, fail_errno, argv + 2);
    }
  FILE *list = fopen (argv[1], "re");
  if (list == NULL)
    error (125, errno, "%s", argv[1]);

  size_t n = prologue ();
  unsigned long nr;
  size_t calls = 0;
  while (fscanf (list, "%lu", &nr) == 1)
    {
      if (++calls > MAX_CALLS || nr >= 0x40000000)
        error (125, 0, "%s: more than %d calls, or an x32 number", argv[1],
               MAX_CALLS);
      prog[n++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                                 nr, 0, 1);
      prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                                 SECCOMP_RET_ALLOW);
    }
  if (!feof (list) || calls == 0)
    error (125, 0, "%s: not a list of system call numbers", argv[1]);
  fclose (list);
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
                                             SECCOMP_RET_KILL_PROCESS);

  return install_and_exec (n, argv + 2);
}
