/* pbitmap-plan.h: how the pages a bitmap marks become reads.
 *
 * Two readers issue a bitmap's reads: the runtime inside the program
 * (runtime/prefetch.c, in memory, with madvise) and the launcher
 * (elfpatch/run.c, in the file, with posix_fadvise).  Both take the
 * marked pages in ascending order, as runs of adjacent pages, and feed
 * them to the chunker below, so that the same bitmap gives the same reads
 * whoever issues them.
 *
 * A read (a chunk) starts at a marked page, ends at a marked page and
 * spans at most PBITMAP_CHUNK_PAGES pages (512 KiB):
 *
 *  - the kernel silently cuts one WILLNEED call to its read-ahead window
 *    (max (read_ahead_kb, max_sectors_kb)), and block devices commonly
 *    split requests at 512 KiB anyway, so a longer chunk is not one I/O;
 *  - a gap of at most max_gap unmarked pages inside the span is read
 *    through, since reading it costs less than one more I/O (the region's
 *    max_gap, chosen per device by elfpatch --fill; elfpatch/device.c),
 *    but only where the reader says the pages in between may be read
 *    (the runtime reads memory, and only mapped memory can be);
 *  - each chunk grows as far as these rules let it before the next one
 *    starts, at the next marked page.
 *
 * For a fixed longest span that greedy rule gives the fewest chunks that
 * cover the marked pages (a chunk that started any later would leave its
 * first page to another chunk), and no chunk begins or ends in a gap.
 * Cutting merged runs into 512 KiB pieces from their start, as an earlier
 * version did, reads gap pages at the pieces' ends and needs up to one
 * chunk more per merged run: ~12% more bytes and ~4% more reads on a large
 * program's bitmap at the hdd profile's max_gap.
 *
 * This header is freestanding (the runtime has no C library state): plain
 * C, no allocation, the caller's EMIT function receives each chunk.
 */
#ifndef PBITMAP_PLAN_H
#define PBITMAP_PLAN_H

#include <stdint.h>

/* Longest chunk, in pages of PBITMAP_PAGE_SIZE.  */
#define PBITMAP_CHUNK_PAGES 128u

/* Receives the chunk of NPAGES pages starting at page FIRST.  */
typedef void pbitmap_chunk_fn (void *ctx, uint64_t first, uint64_t npages);

struct pbitmap_chunker
{
  uint64_t start;               /* the open chunk: [start, end) */
  uint64_t end;
  uint64_t max_gap;
  int open;
  pbitmap_chunk_fn *emit;
  void *ctx;
};

static inline void
pbitmap_chunker_init (struct pbitmap_chunker *c, uint64_t max_gap,
                      pbitmap_chunk_fn *emit, void *ctx)
{
  c->start = c->end = 0;
  c->max_gap = max_gap;
  c->open = 0;
  c->emit = emit;
  c->ctx = ctx;
}

/* Emits the open chunk, if any.  */
static inline void
pbitmap_chunker_flush (struct pbitmap_chunker *c)
{
  if (c->open)
    c->emit (c->ctx, c->start, c->end - c->start);
  c->open = 0;
}

/* Whether marked pages starting at FIRST may join the open chunk.
   GAP_READABLE says whether the pages between the chunk's end and FIRST
   may be read.  */
static inline int
pbitmap_chunker_joins (const struct pbitmap_chunker *c, uint64_t first,
                       int gap_readable)
{
  if (!c->open || first < c->end
      || first - c->start >= PBITMAP_CHUNK_PAGES)
    return 0;
  return first == c->end || (gap_readable && first - c->end <= c->max_gap);
}

/* Adds the NPAGES marked pages starting at page FIRST, which lies at or
   after every page added before.  GAP_READABLE as above.  */
static inline void
pbitmap_chunker_add (struct pbitmap_chunker *c, uint64_t first,
                     uint64_t npages, int gap_readable)
{
  while (npages > 0)
    {
      if (!pbitmap_chunker_joins (c, first, gap_readable))
        {
          pbitmap_chunker_flush (c);
          c->start = c->end = first;
          c->open = 1;
        }
      uint64_t room = c->start + PBITMAP_CHUNK_PAGES - first;
      uint64_t take = npages < room ? npages : room;
      c->end = first + take;
      first += take;
      npages -= take;
      if (c->end - c->start == PBITMAP_CHUNK_PAGES)
        pbitmap_chunker_flush (c);
    }
}

#endif /* PBITMAP_PLAN_H */
