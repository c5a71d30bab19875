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
   Spelled out so that no C library header is needed.  Every one is in
   systemd's @system-service set and in Docker's default seccomp profile
   (doc/security.md lists them with what each is for).  */
#define SYS_RT_WRITE 1
#define SYS_RT_CLOSE 3
#define SYS_RT_MMAP 9
#define SYS_RT_MADVISE 28
#define SYS_RT_GETRUSAGE 98
#define SYS_RT_CLOCK_GETTIME 228
#define SYS_RT_OPENAT 257
#define SYS_RT_NEWFSTATAT 262
#define SYS_RT_READLINKAT 267
#define SYS_RT_PREADV2 327

#define RT_AT_FDCWD (-100)
#define RT_O_RDONLY 0
#define RT_O_NOCTTY 0400
#define RT_O_NONBLOCK 04000
#define RT_O_CLOEXEC 02000000
#define RT_MADV_NORMAL 0
#define RT_MADV_RANDOM 1
#define RT_MADV_WILLNEED 3
#define RT_MADV_POPULATE_READ 22
#define RT_RWF_NOWAIT 8
#define RT_RUSAGE_SELF 0
#define RT_EINVAL 22
#define RT_CLOCK_MONOTONIC 1

struct rt_iovec
{
  void *base;
  unsigned long len;
};

struct rt_timespec
{
  long tv_sec;
  long tv_nsec;
};

/* struct stat of x86-64: the device first, 144 bytes in all.  */
struct rt_stat
{
  unsigned long st_dev;
  unsigned long st_rest[17];
};

/* The major and minor numbers of a dev_t as stat gives it.  */
static inline unsigned
rt_major (unsigned long dev)
{
  return (unsigned) (((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfffUL));
}

static inline unsigned
rt_minor (unsigned long dev)
{
  return (unsigned) ((dev & 0xff) | ((dev >> 12) & ~0xffUL));
}

/* struct rusage: two struct timevals, then fourteen longs.  */
struct rt_rusage
{
  long ru_utime[2];
  long ru_stime[2];
  long ru_maxrss, ru_ixrss, ru_idrss, ru_isrss, ru_minflt, ru_majflt;
  long ru_nswap, ru_inblock;
  long ru_rest[6];
};

#if defined PBITMAP_SYS_EXTERN
/* A harness that runs the runtime's files inside an ordinary process
   (fuzz/runtime-region.c) defines these calls itself, to watch them.  */
long rt_write (int fd, const void *buf, unsigned long len);
long rt_openat (int dirfd, const char *path, int flags);
long rt_close (int fd);
long rt_madvise (unsigned long addr, unsigned long len, int advice);
long rt_populate (unsigned long addr, unsigned long len);
long rt_getrusage (int who, struct rt_rusage *ru);
long rt_map_anonymous (unsigned long len);
long rt_preadv2 (int fd, void *buf, unsigned long len, long off, int flags);
long rt_newfstatat (int dirfd, const char *path, struct rt_stat *st,
                    int flags);
long rt_readlinkat (int dirfd, const char *path, char *buf,
                    unsigned long size);
long rt_clock_gettime (int clock, struct rt_timespec *ts);
#else

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

/* Faults [ADDR, ADDR + LEN) in as reads would, without a signal: 0
   when every page could be read, -EFAULT, -ENOMEM (not mapped) or
   -EINVAL (not readable, or a kernel before 5.14) otherwise.  */
static inline long
rt_populate (unsigned long addr, unsigned long len)
{
  return rt_madvise (addr, len, RT_MADV_POPULATE_READ);
}

/* The process's resource usage; RT_RUSAGE_SELF counts every thread.  */
static inline long
rt_getrusage (int who, struct rt_rusage *ru)
{
  return rt_syscall2 (SYS_RT_GETRUSAGE, who, (long) ru);
}

/* LEN bytes of fresh zeroed memory, private and readable and writable,
   at the address returned; a negated errno when the kernel refuses.  */
static inline long
rt_map_anonymous (unsigned long len)
{
  return rt_syscall6 (SYS_RT_MMAP, 0, (long) len, 3 /* PROT_READ|WRITE */,
                      0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0);
}

/* Reads LEN bytes at file offset OFF of FD into BUF, with FLAGS
   (RT_RWF_NOWAIT: only what is in the page cache, else -EAGAIN).  */
static inline long
rt_preadv2 (int fd, void *buf, unsigned long len, long off, int flags)
{
  struct rt_iovec iov = { buf, len };
  return rt_syscall6 (SYS_RT_PREADV2, fd, (long) &iov, 1, off, 0, flags);
}

static inline long
rt_newfstatat (int dirfd, const char *path, struct rt_stat *st, int flags)
{
  return rt_syscall4 (SYS_RT_NEWFSTATAT, dirfd, (long) path, (long) st,
                      flags);
}

static inline long
rt_readlinkat (int dirfd, const char *path, char *buf, unsigned long size)
{
  return rt_syscall4 (SYS_RT_READLINKAT, dirfd, (long) path, (long) buf,
                      (long) size);
}

/* Not the vDSO: finding it needs the auxiliary vector and a symbol
   lookup, and the time is only taken for the debug line.  */
static inline long
rt_clock_gettime (int clock, struct rt_timespec *ts)
{
  return rt_syscall2 (SYS_RT_CLOCK_GETTIME, clock, (long) ts);
}

#endif /* PBITMAP_SYS_EXTERN */

/* The two calls include/pbitmap-plan.h's device classification makes
   (struct pbitmap_sysfs), made raw: for the runtime and the audit
   module alike.  */
static inline long
rt_sysfs_readlink (void *ctx, const char *path, char *buf,
                   unsigned long size)
{
  (void) ctx;
  return rt_readlinkat (RT_AT_FDCWD, path, buf, size);
}

static inline int
rt_sysfs_first_byte (void *ctx, const char *path, char *byte)
{
  (void) ctx;
  long fd = rt_openat (RT_AT_FDCWD, path, RT_O_RDONLY | RT_O_CLOEXEC);
  if (fd < 0)
    return -1;
  long got = rt_preadv2 ((int) fd, byte, 1, 0, 0);
  rt_close ((int) fd);
  return got == 1 ? 0 : -1;
}

#endif /* PBITMAP_SYS_H */
