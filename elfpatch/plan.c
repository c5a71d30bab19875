/* plan.c: the reads a bitmap turns into, for every part of elfpatch that
 * issues or reports them.
 *
 * The runtime and the launcher (run.c) must read the same bitmap in the
 * same reads, and --show must report the reads they make; so all three
 * take the set pages the same way and feed them to the one chunker of
 * include/pbitmap-plan.h.  Only set pages inside the file range of a
 * PT_LOAD are read (nothing else is ever mapped, so nothing else can be
 * needed), none when the PT_LOADs do not say which pages of memory hold
 * which file pages (include/pbitmap-plan.h), in ascending order or, with
 * the same reads, block by block in the region's read order, and a gap
 * is read through only inside the file range of one PT_LOAD (the runtime
 * reads memory, and only mapped memory can be read).  What the planner's receiver sees is summed up the
 * same way everywhere: pages read (gaps included) and reads; the chunker
 * counts the runs of set pages.  The set pages are found by the
 * runtime's scanner, pbitmap_scan, also in include/pbitmap-plan.h.
 */

#include <stdlib.h>

#include "elfpatch.h"

const char *
loads_unplanned (Elf *elf)
{
  struct pbitmap_load loads[PBITMAP_LOADS_MAX];
  uint64_t n = 0;
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    return NULL;
  uint64_t addr_max = gelf_getclass (elf) == ELFCLASS32 ? UINT32_MAX
                                                        : UINT64_MAX;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      struct pbitmap_load lp;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL || ph.p_type != PT_LOAD
          || (ph.p_memsz == 0 && ph.p_filesz == 0))
        continue;
      _Static_assert (PBITMAP_LOADS_MAX == 16, "the message says 16");
      if (n == PBITMAP_LOADS_MAX)
        return "more than 16 PT_LOADs";
      if (!pbitmap_load_pages (ph.p_vaddr, ph.p_offset, ph.p_filesz,
                               ph.p_memsz, (ph.p_flags & PF_R) != 0,
                               addr_max, &lp))
        return "a PT_LOAD reaches the end of the address space";
      if ((n = pbitmap_loads_add (loads, n, &lp)) == 0)
        return "two PT_LOADs share a page of memory without mapping it alike";
    }
  return NULL;
}

long
load_ranges (Elf *elf, struct page_range **out, const char **unplanned)
{
  size_t phnum, n = 0;
  *out = NULL;
  *unplanned = NULL;
  if (elf_getphdrnum (elf, &phnum) != 0
      || (*out = calloc (phnum + 1, sizeof **out)) == NULL)
    return -1;
  if ((*unplanned = loads_unplanned (elf)) != NULL)
    return 0;
  struct page_range *r = *out;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL || ph.p_type != PT_LOAD
          || ph.p_filesz == 0 || ph.p_offset > UINT64_MAX - ph.p_filesz
          || (ph.p_vaddr - ph.p_offset) % PBITMAP_PAGE_SIZE != 0)
        continue;
      r[n].first = ph.p_offset >> PBITMAP_PAGE_SHIFT;
      r[n].last = (ph.p_offset + ph.p_filesz - 1) >> PBITMAP_PAGE_SHIFT;
      n++;
    }
  qsort (r, n, sizeof *r, page_range_cmp);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (m > 0 && r[i].first <= r[m - 1].last + 1)
      r[m - 1].last = r[i].last > r[m - 1].last ? r[i].last : r[m - 1].last;
    else
      r[m++] = r[i];
  return (long) m;
}

/* The scanner's receiver: a run of set pages of the PT_LOAD file range
   being scanned, whose gaps may be read through after its first run.  */
struct plan_scan
{
  struct pbitmap_chunker *chunker;
  int in_load;
  uint64_t planned;
  const struct page_range *loads;
  size_t n_loads;
  const unsigned char *bits;
  uint64_t nbytes, capacity;
};

static void
plan_run (void *ctx, uint64_t lo, uint64_t hi)
{
  struct plan_scan *s = ctx;
  pbitmap_chunker_add (s->chunker, lo, hi - lo + 1, s->in_load);
  s->in_load = 1;
  s->planned += hi - lo + 1;
}

/* Feeds the set pages of [FIRST, LAST] in each load to the chunker.  */
static void
plan_range (struct plan_scan *s, uint64_t first, uint64_t last)
{
  for (size_t i = 0; i < s->n_loads && s->loads[i].first < s->capacity; i++)
    {
      uint64_t lo = s->loads[i].first > first ? s->loads[i].first : first;
      uint64_t hi = s->loads[i].last < last ? s->loads[i].last : last;
      hi = hi < s->capacity ? hi : s->capacity - 1;
      if (lo > hi)
        continue;
      s->in_load = 0;
      pbitmap_scan (s->bits, s->nbytes, lo, hi, plan_run, s);
    }
}

/* The order's feed: the set pages of [FIRST, LAST] in each load.  */
static void
plan_feed (void *ctx, uint64_t first, uint64_t last)
{
  plan_range (ctx, first, last);
}

/* The order's file page of a chunk's first page: the same, elfpatch
   plans in file pages.  */
static uint64_t
plan_file_page (void *ctx, uint64_t page)
{
  (void) ctx;
  return page;
}

uint64_t
plan_bitmap (const struct page_range *loads, size_t n_loads,
             const unsigned char *bits, uint64_t capacity,
             const struct plan_order *order, struct pbitmap_chunker *chunker)
{
  struct plan_scan s = { chunker, 0, 0, loads, n_loads, bits,
                         pbitmap_bits_size (capacity), capacity };
  if (capacity == 0)
    return 0;
  /* On the stack, as the runtime has it: no allocation that could fail
     and leave this plan in another order than the runtime's.  */
  unsigned char starts[PBITMAP_ORDER_FOLLOW_BLOCKS];
  struct pbitmap_order_plan o;
  int ordered = order != NULL && order->len > 0
                && pbitmap_order_blocks (capacity)
                   <= PBITMAP_ORDER_FOLLOW_BLOCKS;
  if (ordered)
    pbitmap_order_begin (&o, chunker, capacity, starts, plan_file_page, &s);
  plan_range (&s, 0, capacity - 1);
  uint64_t planned = s.planned;
  if (ordered)
    pbitmap_order_issue_blocks (&o, chunker, order->table, order->len,
                                order->msb, capacity, plan_feed);
  pbitmap_chunker_flush (chunker);
  return planned;
}

void
plan_count_chunk (struct plan_count *p, uint64_t first, uint64_t npages)
{
  (void) first;
  p->reads++;
  p->pages += npages;
}
