/* residency.c: whether a plan's pages are in the page cache already
 * (step 5 of runtime/prefetch.c).
 *
 * A warm start need not ask for anything.  Unless the process has taken
 * a major fault (then the start is cold), the object's file is opened by
 * the name the process knows it by, its headers are compared with the
 * mapped ones, and a one-byte preadv2 with RWF_NOWAIT of each sampled
 * page asks whether it is cached.
 */

#include "rt.h"
#include "sys.h"

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

/* Whether the sampled pages of the plan P of IM are in the page cache
   (step 5): PROBES of them, evenly spread, or all when there are fewer.
   PATH names IM's file, or is null.  No sample (nothing planned) is not
   resident: there is nothing to skip.  */
int
rt_plan_resident (const struct plan *p, size_t nsegs,
                  const struct rt_object *im, struct proc *pr,
                  const char *path, unsigned probes)
{
  if (p->nsample == 0 || path == NULL || *path == '\0' || rt_proc_secure (pr)
      || rt_proc_cold (pr))
    return 0;
  long fd = rt_openat (RT_AT_FDCWD, path, RT_O_RDONLY | RT_O_NONBLOCK
                                          | RT_O_NOCTTY | RT_O_CLOEXEC);
  if (fd < 0)
    return 0;
  const rt_ehdr *eh = (const rt_ehdr *) im->ehdr;
  int resident = file_matches ((int) fd, 0, im->ehdr,
                               eh->e_phoff + im->phnum * im->phentsize);
  unsigned asked = probes < p->nsample ? probes : p->nsample;
  for (unsigned k = 0; k < asked && resident; k++)
    {
      unsigned char byte;
      unsigned i = (unsigned) ((uint64_t) k * p->nsample / asked);
      uint64_t off = plan_offset (p, nsegs, p->sample[i]);
      resident = off != UINT64_MAX
                 && rt_preadv2 ((int) fd, &byte, 1, (long) off,
                                RT_RWF_NOWAIT) == 1;
    }
  rt_close ((int) fd);
  return resident;
}
