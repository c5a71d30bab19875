/* plan.c: the reads a bitmap turns into, for every part of elfpatch that
 * issues or reports them.
 *
 * The runtime and the launcher (run.c) must read the same bitmap in the
 * same reads, and --show must report the reads they make; so all three
 * take the set pages the same way and feed them to the one chunker of
 * include/pbitmap-plan.h.  Only set pages inside the file range of a
 * PT_LOAD are read (nothing else is ever mapped, so nothing else can be
 * needed), in ascending order, and a gap is read through only inside the
 * file range of one PT_LOAD (the runtime reads memory, and only mapped
 * memory can be read).  What the planner's receiver sees is summed up the
 * same way everywhere: pages read (gaps included) and reads; the chunker
 * counts the runs of set pages.  The set pages are found by the
 * runtime's scanner, pbitmap_scan, also in include/pbitmap-plan.h.
 */

#include <stdlib.h>

#include "elfpatch.h"

long
load_ranges (Elf *elf, struct page_range **out)
{
  size_t phnum, n = 0;
  *out = NULL;
  if (elf_getphdrnum (elf, &phnum) != 0
      || (*out = calloc (phnum + 1, sizeof **out)) == NULL)
    return -1;
  struct page_range *r = *out;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL || ph.p_type != PT_LOAD
          || ph.p_filesz == 0 || ph.p_offset > UINT64_MAX - ph.p_filesz)
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
};

static void
plan_run (void *ctx, uint64_t lo, uint64_t hi)
{
  struct plan_scan *s = ctx;
  pbitmap_chunker_add (s->chunker, lo, hi - lo + 1, s->in_load);
  s->in_load = 1;
  s->planned += hi - lo + 1;
}

uint64_t
plan_bitmap (const struct page_range *loads, size_t n_loads,
             const unsigned char *bits, uint64_t capacity,
             struct pbitmap_chunker *chunker)
{
  struct plan_scan s = { chunker, 0, 0 };
  uint64_t nbytes = pbitmap_bits_size (capacity);
  for (size_t i = 0; i < n_loads && loads[i].first < capacity; i++)
    {
      uint64_t last = loads[i].last < capacity ? loads[i].last : capacity - 1;
      s.in_load = 0;
      pbitmap_scan (bits, nbytes, loads[i].first, last, plan_run, &s);
    }
  pbitmap_chunker_flush (chunker);
  return s.planned;
}

void
plan_count_chunk (struct plan_count *p, uint64_t first, uint64_t npages)
{
  (void) first;
  p->reads++;
  p->pages += npages;
}
