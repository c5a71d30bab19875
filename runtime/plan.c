/* plan.c: the reads an object's bitmap turns into (step 4 of
 * runtime/prefetch.c).
 *
 * The PT_LOADs are visited in ascending address order; the set bits of
 * the file pages each maps come from the scanner of
 * include/pbitmap-plan.h as runs, and the runs go, as addresses, to the
 * chunker there.  A file page an earlier PT_LOAD maps too is planned
 * there; at its second address it is added again, so that the chunks
 * and runs are those of the file.  A gap is read through only where the
 * memory between is all mapped from the file.  The same plan is first
 * only counted and sampled, in ascending order, then issued, a chunk at
 * a time (plan_chunk), in the region's read order when it has one (the
 * same chunks, block by block: include/pbitmap-plan.h).
 */

#include "rt.h"
#include "sys.h"

static void plan_chunk (void *ctx, uint64_t first, uint64_t npages);

void
rt_plan_init (struct plan *p, const struct segment *segs, uint64_t max_gap,
           int advice)
{
  pbitmap_chunker_init (&p->chunker, max_gap, plan_chunk, p);
  p->seg = 0;
  p->scan = 0;
  p->bits = NULL;
  p->nbytes = 0;
  p->segs = segs;
  p->advice = advice;
  p->n.pages = p->n.runs = p->n.reads = 0;
  p->nsample = 0;
  p->stride = 1;
}

/* Samples the NPAGES pages at ADDR, whose first page is planned page
   number FIRST.  */
static void
plan_sample (struct plan *p, uintptr_t addr, uint64_t first, uint64_t npages)
{
  uint64_t idx = (first + p->stride - 1) / p->stride * p->stride;
  while (idx < first + npages)
    {
      if (p->nsample == RT_SAMPLES)
        {
          for (unsigned i = 0; i < RT_SAMPLES / 2; i++)
            p->sample[i] = p->sample[2 * i];
          p->nsample = RT_SAMPLES / 2;
          p->stride *= 2;
          if (idx % p->stride != 0)
            {
              idx += p->stride / 2;
              continue;
            }
        }
      p->sample[p->nsample++] = addr + (idx - first) * RT_PAGE;
      idx += p->stride;
    }
}

/* One WILLNEED call of a chunk (pbitmap_chunk_calls).  */
static void
plan_willneed (void *ctx, uint64_t first, uint64_t npages)
{
  (void) ctx;
  rt_madvise ((uintptr_t) first * RT_PAGE, (uintptr_t) npages * RT_PAGE,
              RT_MADV_WILLNEED);
}

/* One chunk of the plan: madvise it, or count and sample it.  Its pages
   added again were read as another address's and are not counted.
   MADV_POPULATE_READ takes a chunk in one call (it faults the pages in,
   whatever the read-ahead window); WILLNEED takes the calls of
   pbitmap_chunk_calls.  A kernel without MADV_POPULATE_READ (before
   5.14) says EINVAL: then WILLNEED it is.  */
static void
plan_chunk (void *ctx, uint64_t first, uint64_t npages)
{
  struct plan *p = ctx;
  uintptr_t addr = (uintptr_t) first * RT_PAGE;
  uintptr_t len = (uintptr_t) npages * RT_PAGE;
  if (p->advice == 0)
    plan_sample (p, addr, p->n.pages, npages);
  else if (p->advice != RT_MADV_POPULATE_READ
           || rt_madvise (addr, len, p->advice) == -RT_EINVAL)
    {
      p->advice = RT_MADV_WILLNEED;
      pbitmap_chunk_calls (first, npages, plan_willneed, p);
    }
  p->n.reads++;
  p->n.pages += npages - p->chunker.again;
}

/* Whether the memory between segments FROM and TO (sorted indices) is
   all mapped from the file: each one starts where the one before ends.
   Reading through a gap is only safe over mapped memory.  */
static int
segments_adjacent (const struct segment *segs, size_t from, size_t to)
{
  for (size_t j = from; j < to; j++)
    if (segs[j + 1].delta + segs[j + 1].first * RT_PAGE
        > segs[j].delta + (segs[j].last + 1) * RT_PAGE)
      return 0;
  return 1;
}

/* Adds NPAGES pages at ADDR, in segment SEG, to the plan.  Addresses
   only ascend.  */
static void
plan_add (struct plan *p, uintptr_t addr, uint64_t npages, size_t seg)
{
  int gap_readable = segments_adjacent (p->segs, p->seg, seg);
  pbitmap_chunker_add (&p->chunker, addr / RT_PAGE, npages, gap_readable);
  p->seg = seg;
}

/* The PT_LOADs that map file pages, sorted by address, into SEGS (room
   for PBITMAP_LOADS_MAX).  A segment whose address and offset disagree
   modulo the page size cannot have been mapped and is left out.  Returns
   their number, or -1 when the program headers do not say which pages
   come from the file (include/pbitmap-plan.h, the PT_LOADs read from).  */
long
rt_segments_collect (const struct rt_object *im, struct segment *segs)
{
  struct pbitmap_load loads[PBITMAP_LOADS_MAX];
  uint64_t nloads = 0;
  size_t n = 0;
  for (size_t i = 0; i < im->phnum; i++)
    {
      const rt_phdr *ph = rt_object_phdr (im, i);
      if (ph->p_type != PT_LOAD || (ph->p_memsz == 0 && ph->p_filesz == 0))
        continue;
      struct pbitmap_load lp;
      if (!pbitmap_load_pages (ph->p_vaddr, ph->p_offset, ph->p_filesz,
                               ph->p_memsz, (ph->p_flags & PF_R) != 0,
                               UINTPTR_MAX, &lp)
          || (nloads = pbitmap_loads_add (loads, nloads, &lp)) == 0)
        return -1;
      if (ph->p_filesz == 0
          || (ph->p_vaddr - ph->p_offset) % RT_PAGE != 0
          || ph->p_filesz > UINT64_MAX - ph->p_offset)
        continue;
      struct segment s;
      s.first = ph->p_offset / RT_PAGE;
      s.last = (ph->p_offset + ph->p_filesz - 1) / RT_PAGE;
      s.vaddr = ph->p_vaddr;
      s.delta = im->bias + ph->p_vaddr - ph->p_offset;
      size_t j = n++;
      for (; j > 0 && segs[j - 1].vaddr > s.vaddr; j--)
        segs[j] = segs[j - 1];
      segs[j] = s;
    }
  return (long) n;
}

/* The scanner's receiver: the run [LO, HI] of set pages of segment
   P->scan.  */
static void
plan_run (void *ctx, uint64_t lo, uint64_t hi)
{
  struct plan *p = ctx;
  plan_add (p, p->segs[p->scan].delta + lo * RT_PAGE, hi - lo + 1, p->scan);
}

/* Feeds the runs of set pages of file pages [LO, HI] of segment P->scan
   to plan_run: with no bits (full mode), all of them.  */
static void
plan_scan (struct plan *p, uint64_t lo, uint64_t hi)
{
  if (p->bits == NULL)
    plan_run (p, lo, hi);
  else
    pbitmap_scan (p->bits, p->nbytes, lo, hi, plan_run, p);
}

/* Adds again file pages [LO, HI] of segment K, which an earlier segment
   maps and so planned, where K maps them past the memory of every
   earlier segment; where it does not, the page there is the earlier
   segment's own.  */
static void
plan_again (struct plan *p, size_t k, uint64_t lo, uint64_t hi)
{
  const struct segment *segs = p->segs;
  uintptr_t addr = segs[k].delta + lo * RT_PAGE;
  for (size_t j = 0; j < k; j++)
    if (addr < segs[j].delta + (segs[j].last + 1) * RT_PAGE)
      return;
  uint64_t marked = 0;
  while (lo + marked <= hi
         && (p->bits == NULL || pbitmap_test (p->bits, lo + marked)))
    marked++;
  pbitmap_chunker_add_again (&p->chunker, addr / RT_PAGE, hi - lo + 1,
                             marked);
}

/* Adds the set pages of file pages [LO, HI] of segment K: those no
   earlier segment maps, and again those one does (so that every file
   page is planned once, and the pages between are as in the file).  */
static void
plan_segment (struct plan *p, size_t k, uint64_t lo, uint64_t hi)
{
  const struct segment *segs = p->segs;
  p->scan = k;
  while (lo <= hi)
    {
      size_t j = 0;
      while (j < k && !(segs[j].first <= lo && lo <= segs[j].last))
        j++;
      uint64_t end = hi;
      if (j < k)
        {
          end = segs[j].last < hi ? segs[j].last : hi;
          plan_again (p, k, lo, end);
        }
      else
        {
          for (j = 0; j < k; j++)
            if (segs[j].first > lo && segs[j].first <= end)
              end = segs[j].first - 1;
          plan_scan (p, lo, end);
        }
      if (end == hi)
        return;
      lo = end + 1;
    }
}

/* Feeds the set pages of file pages [FIRST, LAST] (LAST below the
   capacity, or any in full mode) to the plan, segment by segment in
   address order.  */
static void
plan_set_pages (struct plan *p, size_t nsegs, uint64_t first, uint64_t last)
{
  const struct segment *segs = p->segs;
  for (size_t k = 0; k < nsegs; k++)
    {
      uint64_t lo = segs[k].first > first ? segs[k].first : first;
      uint64_t hi = segs[k].last < last ? segs[k].last : last;
      if (lo <= hi)
        plan_segment (p, k, lo, hi);
    }
}

/* The order's feed (include/pbitmap-plan.h): the set pages of file
   pages [FIRST, LAST] of the region being planned.  */
struct order_feed
{
  struct plan *p;
  size_t nsegs;
};

static void
order_feed (void *ctx, uint64_t first, uint64_t last)
{
  struct order_feed *f = ctx;
  plan_set_pages (f->p, f->nsegs, first, last);
}

/* The file page of planned page PAGE: the segment that maps its address
   says.  */
static uint64_t
order_file_page (void *ctx, uint64_t page)
{
  struct order_feed *f = ctx;
  const struct segment *segs = f->p->segs;
  uintptr_t addr = (uintptr_t) page * RT_PAGE;
  for (size_t k = 0; k < f->nsegs; k++)
    if (addr >= segs[k].delta + segs[k].first * RT_PAGE
        && addr < segs[k].delta + (segs[k].last + 1) * RT_PAGE)
      return (addr - segs[k].delta) / RT_PAGE;
  return UINT64_MAX;
}

/* Whether planning again from a file page makes the chunks the ascending
   plan makes from it (include/pbitmap-plan.h), and each planned page has
   one file page: the segments, in address order, start in ascending
   file order and do not overlap in memory.  Then the pages planned
   ascend in the file as in memory.  */
static int
segments_file_ordered (const struct segment *segs, size_t nsegs)
{
  for (size_t k = 1; k < nsegs; k++)
    if (segs[k].first < segs[k - 1].first
        || segs[k].delta + segs[k].first * RT_PAGE
           < segs[k - 1].delta + (segs[k - 1].last + 1) * RT_PAGE)
      return 0;
  return 1;
}

/* Builds the whole plan: in full mode every page of every segment, else
   the set bits that fall in a segment, in ascending order or, when
   ORDERED and the region has a read order the plan can follow, the same
   chunks issued in that order (include/pbitmap-plan.h).  */
void
rt_plan_build (struct plan *p, const struct pbitmap_header *h, size_t nsegs,
               int full, int ordered)
{
  const struct segment *segs = p->segs;
  uint64_t blocks = pbitmap_order_blocks (h->capacity);
  uint64_t order_len = full || !ordered ? 0 : pbitmap_order_len (h);
  if (order_len > 0 && (blocks > PBITMAP_ORDER_FOLLOW_BLOCKS
                        || !segments_file_ordered (segs, nsegs)))
    order_len = 0;
  if (full)
    {
      p->bits = NULL;
      plan_set_pages (p, nsegs, 0, UINT64_MAX);
    }
  else if (h->capacity > 0)
    {
      p->bits = (const unsigned char *) h + PBITMAP_HEADER_SIZE;
      p->nbytes = pbitmap_bits_size (h->capacity);
      /* A byte per block, a byte per 512 KiB of file: 8 KiB at most,
         a few hundred bytes for most programs, so that a thread with a
         small stack can load one.  */
      unsigned char starts[order_len > 0 ? blocks : 1];
      struct order_feed f = { p, nsegs };
      struct pbitmap_order_plan o;
      if (order_len > 0)
        pbitmap_order_begin (&o, &p->chunker, h->capacity, starts,
                             order_file_page, &f);
      plan_set_pages (p, nsegs, 0, h->capacity - 1);
      if (order_len > 0)
        pbitmap_order_issue_blocks (&o, &p->chunker,
                                    (const unsigned char *) h
                                    + pbitmap_order_offset (h->capacity),
                                    order_len,
                                    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
                                    h->capacity, order_feed);
    }
  pbitmap_chunker_flush (&p->chunker);
  p->n.runs = p->chunker.runs;
}

/* The file whose device gives the gap, and where the gap goes.  */
struct device_gap
{
  struct proc *pr;
  const char *path;
  struct gap *gap;
};

/* The chunker's resolver (include/pbitmap-plan.h): the gap of the class
   of the device the file is on (step 6), looked up now.  */
static uint64_t
device_gap (void *ctx)
{
  struct device_gap *dg = ctx;
  return rt_gap_look_up (dg->pr, dg->path, dg->gap);
}

/* Plans the bitmap H (a region's header and bits, IM's own or another
   copy of them) over IM's PT_LOADs and issues it, as OPTS say: first the
   residency sample (PROBES of the sampled pages, at most RT_SAMPLES, are
   asked), then, unless they are all resident, each chunk (plan_chunk) at
   the gap H pins or, with PBITMAP_F_GAP_AUTO, the gap of the device PATH
   is on.  That gap is looked up only when a chunk's extent depends on it,
   after the chunks before it were issued; when none did, GAP's device is
   GAP_OPEN.  PATH names IM's file, or is null.  */
enum status
rt_plan_prefetch (const struct rt_object *im, const struct pbitmap_header *h,
                  unsigned opts, struct proc *pr, const char *path,
                  unsigned probes, struct counts *n, struct gap *gap)
{
  unsigned mode = opts & OPT_MODE;
  int full = mode == MODE_FULL;
  if (!full && rt_region_empty (h))
    return ST_EMPTY;

  struct segment segs[PBITMAP_LOADS_MAX];
  long nsegs = rt_segments_collect (im, segs);
  if (nsegs < 0)
    return ST_INVALID;

  struct plan p;
  if (!(opts & OPT_NOCHECK))
    {
      rt_plan_init (&p, segs, h->max_gap, 0);
      rt_plan_build (&p, h, (size_t) nsegs, full, 0);
      *n = p.n;
      if (rt_plan_resident (&p, (size_t) nsegs, im, pr, path, probes))
        return ST_CACHED;
    }
  gap->pages = h->max_gap;
  gap->device = GAP_PINNED;
  rt_plan_init (&p, segs, gap->pages,
                mode == MODE_POPULATE ? RT_MADV_POPULATE_READ
                                      : RT_MADV_WILLNEED);
  struct device_gap dg = { pr, path, gap };
  if (h->flags & PBITMAP_F_GAP_AUTO)
    {
      uint64_t lo, hi;
      pbitmap_device_gap_range (&lo, &hi);
      pbitmap_chunker_defer_gap (&p.chunker, lo, hi, device_gap, &dg);
    }
  rt_plan_build (&p, h, (size_t) nsegs, full, 1);
  if (p.chunker.resolve != NULL)
    gap->device = GAP_OPEN;
  *n = p.n;
  if (full)
    return ST_FULL;
  return p.advice == RT_MADV_POPULATE_READ ? ST_POPULATE : ST_WILLNEED;
}
