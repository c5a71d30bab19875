/* sys.h: the few system calls the pbitmap runtime makes, as inline
 * assembly.
 *
 * The runtime runs inside every program linked with pbitmap, before main
 * and possibly (once the hook moves to the entry point) before the C
 * library has set up thread-local storage.  So it cannot call the C
 * library at all: not for the system calls (their wrappers set errno,
 * which lives in TLS, and the program must never see its errno change),
 * not for string functions.  These wrappers trap straight into the kernel
 * and return the kernel's result: a non-negative value, or -errno in the
 * range [-4095, -1].
 *
 * Only x86-64 is provided.  Another architecture needs its own block of
 * wrappers here with the same names; the rest of the runtime is portable.
 */
#ifndef PBITMAP_SYS_H
#define PBITMAP_SYS_H

#if !defined __x86_64__ || !defined __LP64__
# error "pbitmap runtime: no system call wrappers for this architecture"
#endif

/* System call numbers of x86-64 (arch/x86/entry/syscalls/syscall_64.tbl).
   Spelled out so that no C library header is needed.  */
#define SYS_RT_READ 0
#define SYS_RT_WRITE 1
#define SYS_RT_CLOSE 3
#define SYS_RT_RT_SIGPROCMASK 14
#define SYS_RT_GETPID 39
#define SYS_RT_MINCORE 27
#define SYS_RT_MADVISE 28
#define SYS_RT_CLOCK_GETTIME 228
#define SYS_RT_OPENAT 257
#define SYS_RT_PROCESS_VM_WRITEV 311

#define RT_AT_FDCWD (-100)
#define RT_O_RDONLY 0
#define RT_O_CLOEXEC 02000000
#define RT_MADV_NORMAL 0
#define RT_MADV_RANDOM 1
#define RT_MADV_WILLNEED 3
#define RT_MADV_POPULATE_READ 22
#define RT_EINVAL 22
#define RT_CLOCK_MONOTONIC 1

struct rt_iovec
{
  const void *base;
  unsigned long len;
};

struct rt_timespec
{
  long tv_sec;
  long tv_nsec;
};

/* The kernel clobbers rcx (return address) and r11 (flags) and may read
   memory the arguments point to: hence the "memory" clobber.  */
static inline long
rt_syscall1 (long nr, long a)
{
  long ret;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a)
                    : "rcx", "r11", "memory");
  return ret;
}

static inline long
rt_syscall2 (long nr, long a, long b)
{
  long ret;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a), "S" (b)
                    : "rcx", "r11", "memory");
  return ret;
}

static inline long
rt_syscall3 (long nr, long a, long b, long c)
{
  long ret;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a), "S" (b), "d" (c)
                    : "rcx", "r11", "memory");
  return ret;
}

static inline long
rt_syscall4 (long nr, long a, long b, long c, long d)
{
  long ret;
  register long r10 __asm__ ("r10") = d;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a), "S" (b), "d" (c), "r" (r10)
                    : "rcx", "r11", "memory");
  return ret;
}

static inline long
rt_syscall6 (long nr, long a, long b, long c, long d, long e, long f)
{
  long ret;
  register long r10 __asm__ ("r10") = d;
  register long r8 __asm__ ("r8") = e;
  register long r9 __asm__ ("r9") = f;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a), "S" (b), "d" (c), "r" (r10),
                      "r" (r8), "r" (r9)
                    : "rcx", "r11", "memory");
  return ret;
}

static inline long
rt_read (int fd, void *buf, unsigned long len)
{
  return rt_syscall3 (SYS_RT_READ, fd, (long) buf, (long) len);
}

static inline long
rt_write (int fd, const void *buf, unsigned long len)
{
  return rt_syscall3 (SYS_RT_WRITE, fd, (long) buf, (long) len);
}

static inline long
rt_openat (int dirfd, const char *path, int flags)
{
  return rt_syscall3 (SYS_RT_OPENAT, dirfd, (long) path, flags);
}

static inline long
rt_close (int fd)
{
  return rt_syscall1 (SYS_RT_CLOSE, fd);
}

static inline long
rt_madvise (unsigned long addr, unsigned long len, int advice)
{
  return rt_syscall3 (SYS_RT_MADVISE, (long) addr, (long) len, advice);
}

/* VEC gets one byte per page of [ADDR, ADDR + LEN); bit 0 says the page
   is resident and up to date (a page still being read is not).  */
static inline long
rt_mincore (unsigned long addr, unsigned long len, unsigned char *vec)
{
  return rt_syscall3 (SYS_RT_MINCORE, (long) addr, (long) len, (long) vec);
}

/* Not the vDSO: finding it needs the auxiliary vector and a symbol
   lookup, and the time is only taken for the debug line.  */
static inline long
rt_clock_gettime (int clock, struct rt_timespec *ts)
{
  return rt_syscall2 (SYS_RT_CLOCK_GETTIME, clock, (long) ts);
}

/* Whether the byte at ADDR (and so its page) can be read, asked without
   reading it: rt_sigprocmask copies its 8-byte set from ADDR before it
   looks at HOW, so with an invalid HOW it fails with EFAULT when the
   memory is unmapped or PROT_NONE and with EINVAL otherwise, and changes
   nothing.  ADDR must leave 8 bytes before the page ends.  */
static inline int
rt_readable (unsigned long addr)
{
  return rt_syscall4 (SYS_RT_RT_SIGPROCMASK, -1, (long) addr, 0, 8) == -22;
}

/* Copies LEN bytes from FROM to ADDR in this process through the kernel
   (process_vm_writev on itself), which fails with EFAULT where a store
   would fault: memory unmapped, read-only or PROT_NONE.  Returns the
   bytes written or a negative error (also where a sandbox forbids the
   call).  */
static inline long
rt_store_checked (unsigned long addr, const void *from, unsigned long len)
{
  struct rt_iovec local = { from, len };
  struct rt_iovec remote = { (const void *) addr, len };
  long pid = rt_syscall1 (SYS_RT_GETPID, 0);
  return rt_syscall6 (SYS_RT_PROCESS_VM_WRITEV, pid, (long) &local, 1,
                      (long) &remote, 1, 0);
}

#endif /* PBITMAP_SYS_H */
