/* pbitmap-plan.h: how the pages a bitmap marks become reads.
 *
 * Two readers issue a bitmap's reads: the runtime inside the program
 * (runtime/plan.c, in memory, with madvise) and the launcher
 * (elfpatch/run.c through elfpatch/plan.c, in the file, with
 * posix_fadvise).  Both find the marked pages with the scanner below, in
 * ascending order or block by block in the region's read order (below),
 * as runs of adjacent pages, and feed them to the chunker below, so that
 * the same bitmap gives the same reads whoever issues them.
 *
 * A read (a chunk) starts at a marked page, ends at a marked page and
 * spans at most PBITMAP_CHUNK_PAGES pages (512 KiB):
 *
 *  - one WILLNEED call reads at most the device's read-ahead window,
 *    max (read_ahead_kb, max_sectors_kb): the kernel silently cuts a
 *    longer one (force_page_cache_ra), and block devices commonly split
 *    requests at 512 KiB anyway, so a longer chunk is not one I/O.
 *    Where the window is smaller, a device whose max_sectors_kb is 128
 *    or 256 at the common read_ahead_kb of 128, or a FUSE or NFS mount
 *    (a 128 KiB window there), the pages of a chunk past the window are
 *    not read by that call (on a loop device at max_sectors_kb 128 and
 *    read_ahead_kb 128, a WILLNEED of 512 KiB read 128 KiB; at either
 *    value 1280 or 2560, all of it).  So a reader that asks for reads
 *    with WILLNEED issues each chunk as calls of its own
 *    (pbitmap_chunk_calls, below): one for the whole chunk, then one
 *    from each later PBITMAP_WINDOW_PAGES boundary of it to its end.
 *    Where the window holds the chunk, the first call reads it all, in
 *    one request, and the others find its pages in the page cache and
 *    read nothing; where the window is smaller (but at least 128 KiB),
 *    each call reads the next part the ones before did not;
 *  - a gap of at most max_gap unmarked pages inside the span is read
 *    through, since reading it costs less than one more I/O (the gap of
 *    the device the file is read from, below, or the one a fill pinned),
 *    but only where the reader says the pages in between may be read
 *    (the runtime reads memory, and only mapped memory can be);
 *  - each chunk grows as far as these rules let it before the next one
 *    starts, at the next marked page.
 *
 * For a fixed longest span that greedy rule gives the fewest chunks that
 * cover the marked pages (a chunk that started any later would leave its
 * first page to another chunk), and no chunk begins or ends in a gap.
 * Cutting merged runs into 512 KiB pieces from their start instead would
 * read gap pages at the pieces' ends and need up to one chunk more per
 * merged run: ~12% more bytes and ~4% more reads on a large program's
 * bitmap at the hdd profile's max_gap.
 *
 * This header is freestanding (the runtime has no C library state): plain
 * C, no allocation, the caller's EMIT function receives each chunk.
 */
#ifndef PBITMAP_PLAN_H
#define PBITMAP_PLAN_H

#include <stdint.h>

#include "pbitmap-format.h"

/* Longest chunk, in pages of PBITMAP_PAGE_SIZE.  */
#define PBITMAP_CHUNK_PAGES 128u

/* Receives the chunk of NPAGES pages starting at page FIRST.  */
typedef void pbitmap_chunk_fn (void *ctx, uint64_t first, uint64_t npages);

/* The least read-ahead window a WILLNEED call is cut to, in pages: 128
   KiB, the kernel's default read_ahead_kb and the window of FUSE and NFS
   mounts at it (a block device's is at least its max_sectors_kb).  */
#define PBITMAP_WINDOW_PAGES 32u

/* Calls CALL (CTX, FIRST + K, NPAGES - K) for K = 0 and each multiple of
   PBITMAP_WINDOW_PAGES under NPAGES: the WILLNEED calls of one chunk
   (the window, above).  */
static inline void
pbitmap_chunk_calls (uint64_t first, uint64_t npages, pbitmap_chunk_fn *call,
                     void *ctx)
{
  for (uint64_t k = 0; k < npages; k += PBITMAP_WINDOW_PAGES)
    call (ctx, first + k, npages - k);
}

/* Returns the gap the chunks are to be read with: asked once, only when
   a chunk's extent depends on it (below).  */
typedef uint64_t pbitmap_gap_fn (void *ctx);

/* RUNS counts the runs of marked pages added: maximal ranges of adjacent
   marked pages, whatever the gaps and chunks they are read with.  That is
   what "runs" means wherever a reader or elfpatch reports one: the
   header's runs field (all marked pages), --show, PBITMAP_DEBUG and
   elfpatch --run -v (the marked pages inside the file's PT_LOADs).

   A reader that must look the gap up (the device's, below) can leave it
   open: while RESOLVE is set the gap is only known to lie in [max_gap,
   gap_hi], and every chunk whose extent is the same for any gap in that
   range is emitted (issued) without asking.  RESOLVE is called at the
   first gap in between, the reads already issued then being in flight
   while it looks, and never when no gap falls in between: the chunks
   are exactly those of the gap it returns, which must lie in the range.

   A reader in memory can see a file page twice: where two PT_LOADs map
   it, at two addresses (with ld.bfd the writable segment's first file
   page is most often the read-only one's last, mapped again at the next
   page).  It adds the second mapping, marked or not, with
   pbitmap_chunker_add_again, so that its chunks and runs are those of
   the file: a run of marked pages goes on through such pages, and a
   chunk spans them (AGAIN of them) to the marked pages after them
   without counting them against its length or as part of a gap; until
   those come, PENDING of them wait after its end.  */
struct pbitmap_chunker
{
  uint64_t start;               /* the open chunk: [start, end) */
  uint64_t end;
  uint64_t again;               /* pages of it added again (above) */
  uint64_t pending;             /* pages added again after its end */
  uint64_t max_gap;
  uint64_t gap_hi;
  pbitmap_gap_fn *resolve;      /* null once the gap is known */
  void *resolve_ctx;
  int open;
  uint64_t runs;
  uint64_t marked_end;          /* the page after the last marked page,
                                   UINT64_MAX before the first */
  pbitmap_chunk_fn *emit;
  void *ctx;
};

static inline void
pbitmap_chunker_init (struct pbitmap_chunker *c, uint64_t max_gap,
                      pbitmap_chunk_fn *emit, void *ctx)
{
  c->start = c->end = c->again = c->pending = 0;
  c->max_gap = c->gap_hi = max_gap;
  c->resolve = NULL;
  c->resolve_ctx = NULL;
  c->open = 0;
  c->runs = 0;
  c->marked_end = UINT64_MAX;
  c->emit = emit;
  c->ctx = ctx;
}

/* Leaves the gap open: it lies in [LO, HI] and RESOLVE (CTX) tells it
   when a chunk's extent depends on it.  */
static inline void
pbitmap_chunker_defer_gap (struct pbitmap_chunker *c, uint64_t lo,
                           uint64_t hi, pbitmap_gap_fn *resolve, void *ctx)
{
  c->max_gap = lo;
  c->gap_hi = hi;
  c->resolve = resolve;
  c->resolve_ctx = ctx;
}

/* Emits the open chunk, if any.  */
static inline void
pbitmap_chunker_flush (struct pbitmap_chunker *c)
{
  if (c->open)
    c->emit (c->ctx, c->start, c->end - c->start);
  c->open = 0;
  c->pending = 0;
}

/* The page at which pages added again after the open chunk end (its
   end, as the file has it), and whether a page at FIRST, at or after
   it, lies at least PBITMAP_CHUNK_PAGES file pages from the chunk's
   start (pages added again do not count).  */
static inline uint64_t
pbitmap_chunker_end (const struct pbitmap_chunker *c)
{
  return c->end + c->pending;
}

static inline int
pbitmap_chunker_past (const struct pbitmap_chunker *c, uint64_t first)
{
  return first - c->start - c->again - c->pending >= PBITMAP_CHUNK_PAGES;
}

/* Whether marked pages starting at FIRST may join the open chunk.
   GAP_READABLE says whether the pages between the chunk's end and FIRST
   may be read.  */
static inline int
pbitmap_chunker_joins (const struct pbitmap_chunker *c, uint64_t first,
                       int gap_readable)
{
  uint64_t end = pbitmap_chunker_end (c);
  if (!c->open || first < end || pbitmap_chunker_past (c, first))
    return 0;
  return first == end || (gap_readable && first - end <= c->max_gap);
}

/* Asks for the gap if it is still open and whether the marked pages at
   FIRST join the open chunk depends on it: the gap before them is longer
   than the range's least gap and at most its greatest.  */
static inline void
pbitmap_chunker_settle (struct pbitmap_chunker *c, uint64_t first,
                        int gap_readable)
{
  uint64_t end = pbitmap_chunker_end (c);
  if (c->resolve == NULL || !c->open || first <= end || !gap_readable
      || pbitmap_chunker_past (c, first))
    return;
  uint64_t gap = first - end;
  if (gap > c->max_gap && gap <= c->gap_hi)
    {
      c->max_gap = c->resolve (c->resolve_ctx);
      c->resolve = NULL;
    }
}

/* Adds the NPAGES marked pages starting at page FIRST, which lies at or
   after every page added since C last had no open chunk (the read
   order, below, plans again from an earlier page after a flush).
   GAP_READABLE as above.  */
static inline void
pbitmap_chunker_add (struct pbitmap_chunker *c, uint64_t first,
                     uint64_t npages, int gap_readable)
{
  if (npages > 0 && first != c->marked_end)
    c->runs++;
  if (npages > 0)
    c->marked_end = first + npages;
  while (npages > 0)
    {
      pbitmap_chunker_settle (c, first, gap_readable);
      if (!pbitmap_chunker_joins (c, first, gap_readable))
        {
          pbitmap_chunker_flush (c);
          c->start = c->end = first;
          c->again = 0;
          c->open = 1;
        }
      c->again += c->pending;
      c->pending = 0;
      uint64_t room = c->start + c->again + PBITMAP_CHUNK_PAGES - first;
      uint64_t take = npages < room ? npages : room;
      c->end = first + take;
      first += take;
      npages -= take;
      if (c->end - c->start - c->again == PBITMAP_CHUNK_PAGES)
        pbitmap_chunker_flush (c);
    }
}

/* Adds the NPAGES pages starting at page FIRST, each the second mapping
   of a page added before (above), at or after every page added before;
   the first MARKED of them are marked.  They wait after the open chunk,
   to join it with the marked pages after them, and never begin or end
   a chunk: in the file they lie before the open chunk's end.  */
static inline void
pbitmap_chunker_add_again (struct pbitmap_chunker *c, uint64_t first,
                           uint64_t npages, uint64_t marked)
{
  if (first == c->marked_end)
    c->marked_end = first + marked;
  if (c->open && first >= pbitmap_chunker_end (c))
    c->pending += npages;
}


/* ---- the PT_LOADs read from ----------------------------------------------
 *
 * The runtime reads a bitmap's pages where the PT_LOADs map them, so it
 * plans from an object's program headers only when they say which pages
 * of memory hold which file pages.  They do not when two PT_LOADs share
 * a page of memory that they do not both map from the same file page:
 * the later one's mapping replaces the earlier one's there (anonymous
 * memory, or another file page), which no linker makes.  (A linker may
 * grow a segment into the next one's first page; both map the same file
 * page there, and both are readable.)  The runtime keeps each PT_LOAD's
 * pages on its stack, so it also stops at more than PBITMAP_LOADS_MAX
 * PT_LOADs with memory.  An object either rule stops is not read at all,
 * and elfpatch plans it the same way: no reads.  */

/* Most PT_LOADs with memory an object planned from may have.  */
#define PBITMAP_LOADS_MAX 16u

/* The memory a PT_LOAD maps: its pages [LO, HI), of which [LO, FHI)
   are mapped from the file (none without file bytes), at addresses
   DELTA above their offsets; READABLE when PF_R is set.  */
struct pbitmap_load
{
  uint64_t lo, hi, fhi, delta;
  int readable;
};

/* Sets *LP to the memory of the PT_LOAD at VADDR of FILESZ bytes at
   OFFSET, MEMSZ in memory, READABLE when its flags have PF_R.  Returns 0
   when its pages do not fit below ADDR_MAX, the last address of the
   address space.  */
static inline int
pbitmap_load_pages (uint64_t vaddr, uint64_t offset, uint64_t filesz,
                    uint64_t memsz, int readable, uint64_t addr_max,
                    struct pbitmap_load *lp)
{
  uint64_t size = memsz > filesz ? memsz : filesz;
  if (size > addr_max - PBITMAP_PAGE_SIZE
      || vaddr > addr_max - PBITMAP_PAGE_SIZE - size)
    return 0;
  lp->lo = vaddr / PBITMAP_PAGE_SIZE * PBITMAP_PAGE_SIZE;
  lp->hi = (vaddr + size + PBITMAP_PAGE_SIZE - 1) / PBITMAP_PAGE_SIZE
           * PBITMAP_PAGE_SIZE;
  lp->fhi = filesz == 0 ? lp->lo
            : (vaddr + filesz + PBITMAP_PAGE_SIZE - 1) / PBITMAP_PAGE_SIZE
              * PBITMAP_PAGE_SIZE;
  lp->delta = vaddr - offset;
  lp->readable = readable;
  return 1;
}

/* Whether PT_LOADs A and B, where they share pages of memory, both map
   the same file pages there and both are readable, so that the later
   one's mapping changes nothing.  */
static inline int
pbitmap_loads_agree (const struct pbitmap_load *a,
                     const struct pbitmap_load *b)
{
  uint64_t lo = a->lo > b->lo ? a->lo : b->lo;
  uint64_t hi = a->hi < b->hi ? a->hi : b->hi;
  return lo >= hi
         || (a->delta == b->delta && hi <= a->fhi && hi <= b->fhi
             && a->readable && b->readable);
}

/* Adds the PT_LOAD *LP to the N before it in LOADS (room for
   PBITMAP_LOADS_MAX): returns N + 1, or 0 when the object is not to be
   planned from (above).  */
static inline uint64_t
pbitmap_loads_add (struct pbitmap_load *loads, uint64_t n,
                   const struct pbitmap_load *lp)
{
  if (n == PBITMAP_LOADS_MAX)
    return 0;
  for (uint64_t j = 0; j < n; j++)
    if (!pbitmap_loads_agree (&loads[j], lp))
      return 0;
  loads[n] = *lp;
  return n + 1;
}


/* ---- the scanner ---------------------------------------------------------
 *
 * Both readers find the runs of set bits the same way: 64 pages at a
 * time, skipping words without a set bit, taking each run whole.  */

/* Word W of the bitmap BITS of NBYTES bytes, page 64 * W in its least
   significant bit, whatever the machine's byte order; past the last whole
   word only the bitmap's own bytes are read.  */
static inline uint64_t
pbitmap_word (const unsigned char *bits, uint64_t nbytes, uint64_t w)
{
  const unsigned char *b = bits + w * 8;
  if (w < nbytes / 8)
    return (uint64_t) b[0] | (uint64_t) b[1] << 8 | (uint64_t) b[2] << 16
           | (uint64_t) b[3] << 24 | (uint64_t) b[4] << 32
           | (uint64_t) b[5] << 40 | (uint64_t) b[6] << 48
           | (uint64_t) b[7] << 56;
  uint64_t v = 0;
  for (uint64_t i = 0; i < 8 && w * 8 + i < nbytes; i++)
    v |= (uint64_t) b[i] << (8 * i);
  return v;
}

/* Receives the run of set pages [LO, HI].  */
typedef void pbitmap_run_fn (void *ctx, uint64_t lo, uint64_t hi);

/* Calls RUN for each run of set pages of BITS (NBYTES bytes) inside
   [FIRST, LAST], in ascending order; a run is cut only at FIRST and LAST.
   LAST must be a page of the bitmap (LAST < 8 * NBYTES).  */
static inline void
pbitmap_scan (const unsigned char *bits, uint64_t nbytes, uint64_t first,
              uint64_t last, pbitmap_run_fn *run, void *ctx)
{
  int open = 0;
  uint64_t lo = 0;
  for (uint64_t w = first / 64; w <= last / 64; w++)
    {
      uint64_t word = pbitmap_word (bits, nbytes, w);
      if (w == first / 64)
        word &= ~(uint64_t) 0 << (first % 64);
      if (w == last / 64 && last % 64 != 63)
        word &= ((uint64_t) 1 << (last % 64 + 1)) - 1;
      unsigned pos = 0;
      while (pos < 64)
        {
          if (!open)
            {
              uint64_t rest = word >> pos;
              if (rest == 0)
                break;
              pos += (unsigned) __builtin_ctzll (rest);
              lo = w * 64 + pos;
              open = 1;
            }
          uint64_t zeros = ~(word >> pos);
          unsigned ones = zeros == 0 ? 64 - pos
                                     : (unsigned) __builtin_ctzll (zeros);
          if (ones > 64 - pos)
            ones = 64 - pos;
          pos += ones;
          if (pos < 64)
            {
              run (ctx, lo, w * 64 + pos - 1);
              open = 0;
            }
        }
    }
  if (open)
    run (ctx, lo, last);
}


/* ---- the read order ------------------------------------------------------
 *
 * A region of version 2 may rank blocks of PBITMAP_BLOCK_PAGES pages
 * (include/pbitmap-format.h): the blocks to read first, in the order a
 * recorded start first touched them (doc/format.md, Read order).  A
 * reader that follows the order makes the reads of the ascending plan,
 * the same chunks, and changes only when each is issued: a chunk belongs
 * to the block its first page lies in, and the blocks' chunks go block
 * by block, the ranked blocks first in the table's order, then the
 * others in ascending order; a block's own chunks in ascending order.
 * So an order never costs a read: a chunk that crosses a block's end is
 * still one read, issued with the block it starts in.  A table entry
 * past the capacity, or a block named before, is passed over, so a
 * hostile table makes no read that the bitmap does not ask for and none
 * twice.
 *
 * Without room for the chunks themselves, the reader plans twice.  First
 * the whole bitmap in ascending order, issuing nothing: each chunk notes
 * where the first chunk of its block starts (a byte per block, the page
 * within it).  Then, for each block in the order, it plans again from
 * that page, which begins a chunk of the ascending plan and so begins the
 * same chunks again, as far as a chunk begun in the block can reach (the
 * end of the block after it), and issues those that begin in the block.
 * A gap left open (pbitmap_chunker_defer_gap) is settled in the first
 * plan, where the ascending plan would settle it, so before any read is
 * issued.
 *
 * The byte per block is on the reader's stack; a reader follows the
 * order only where there are at most PBITMAP_ORDER_FOLLOW_BLOCKS blocks
 * (a file of at most 4 GiB), and reads a larger one in ascending order,
 * so that a thread with a small stack can load any file.  The runtime
 * also reads in ascending order an object whose PT_LOADs, in address
 * order, do not start in ascending file order (runtime/plan.c): planning
 * again from a page is the same as the ascending plan only where the
 * pages it plans ascend in the file as in memory.  */

#define PBITMAP_ORDER_FOLLOW_BLOCKS 8192u

/* A block without a chunk to issue (none begins there, or they were).  */
#define PBITMAP_ORDER_NO_CHUNK 0xffu

/* Feeds the chunker the set pages of the file pages [FIRST, LAST] the
   way the reader plans them (its PT_LOADs, its page numbers).  */
typedef void pbitmap_feed_fn (void *ctx, uint64_t first, uint64_t last);

/* The file page of the reader's page PAGE, the first page of a chunk.  */
typedef uint64_t pbitmap_file_page_fn (void *ctx, uint64_t page);

/* The state of the read order's two plans, which their chunk receivers
   share.  */
struct pbitmap_order_plan
{
  unsigned char *starts;        /* per block: its first chunk's page */
  uint64_t blocks;
  uint64_t block;               /* the block whose chunks are issued */
  pbitmap_file_page_fn *file_page;
  void *ctx;
  pbitmap_chunk_fn *emit;       /* the reader's receiver */
  void *emit_ctx;
};

/* The chunk receiver of the first, ascending plan: notes where the
   chunk's block has its first chunk.  */
static inline void
pbitmap_order_note (void *ctx, uint64_t first, uint64_t npages)
{
  struct pbitmap_order_plan *o = ctx;
  (void) npages;
  uint64_t page = o->file_page (o->ctx, first);
  uint64_t b = page / PBITMAP_BLOCK_PAGES;
  if (b < o->blocks && o->starts[b] == PBITMAP_ORDER_NO_CHUNK)
    o->starts[b] = (unsigned char) (page % PBITMAP_BLOCK_PAGES);
}

/* The chunk receiver of a block's plan: issues the chunks that begin in
   the block.  */
static inline void
pbitmap_order_issue (void *ctx, uint64_t first, uint64_t npages)
{
  struct pbitmap_order_plan *o = ctx;
  if (o->file_page (o->ctx, first) / PBITMAP_BLOCK_PAGES == o->block)
    o->emit (o->emit_ctx, first, npages);
}

/* The first plan of the order: makes C note, instead of emitting, where
   each block of a bitmap of CAPACITY pages (at most
   PBITMAP_ORDER_FOLLOW_BLOCKS blocks) has its first chunk, in STARTS
   (the caller's, pbitmap_order_blocks (CAPACITY) bytes), with FILE_PAGE
   (CTX).  The reader then feeds C its ascending plan.  */
static inline void
pbitmap_order_begin (struct pbitmap_order_plan *o, struct pbitmap_chunker *c,
                     uint64_t capacity, unsigned char *starts,
                     pbitmap_file_page_fn *file_page, void *ctx)
{
  o->starts = starts;
  o->blocks = pbitmap_order_blocks (capacity);
  o->block = 0;
  o->file_page = file_page;
  o->ctx = ctx;
  o->emit = c->emit;
  o->emit_ctx = c->ctx;
  for (uint64_t b = 0; b < o->blocks; b++)
    {
      starts[b] = PBITMAP_ORDER_NO_CHUNK;
      /* Keeps the compiler from making this a call of memset, which the
         freestanding runtime does not have.  */
      __asm__ ("" : : : "memory");
    }
  c->emit = pbitmap_order_note;
  c->ctx = o;
}

/* The second: ends the first plan, then issues the chunks block by
   block, in the order the first LEN entries of the order table TABLE
   (big-endian when MSB) give, then the other blocks ascending, each
   block's planned again with FEED (O's CTX); gives C back its receiver,
   with the runs the first plan counted.  */
static inline void
pbitmap_order_issue_blocks (struct pbitmap_order_plan *o,
                            struct pbitmap_chunker *c,
                            const unsigned char *table, uint64_t len,
                            int msb, uint64_t capacity, pbitmap_feed_fn *feed)
{
  pbitmap_chunker_flush (c);
  uint64_t runs = c->runs;
  c->emit = pbitmap_order_issue;
  for (uint64_t i = 0; i < len + o->blocks; i++)
    {
      uint64_t b = i < len ? pbitmap_order_get (table, i, msb) : i - len;
      if (b >= o->blocks || o->starts[b] == PBITMAP_ORDER_NO_CHUNK)
        continue;
      uint64_t first = b * PBITMAP_BLOCK_PAGES + o->starts[b];
      uint64_t last = (b + 2) * PBITMAP_BLOCK_PAGES - 1;
      o->starts[b] = PBITMAP_ORDER_NO_CHUNK;
      o->block = b;
      feed (o->ctx, first, last < capacity ? last : capacity - 1);
      pbitmap_chunker_flush (c);
    }
  c->emit = o->emit;
  c->ctx = o->emit_ctx;
  c->runs = runs;
}


/* ---- the gap for a device ------------------------------------------------
 *
 * Two runs of marked pages separated by a gap of unmarked ones can be read
 * as one: that costs reading the gap and saves one I/O, so the gap is worth
 * reading when reading it takes less time than one more I/O:
 *
 *     gap_bytes / bandwidth < 1 / IOPS
 *     max_gap = floor (bandwidth / (IOPS * 4096))    (in pages)
 *
 * A device class is summarised by its random-read IOPS and sequential read
 * bandwidth (decimal units, as vendors state them):
 *
 *     nvme   500,000 IOPS   3 GB/s     ->   1 page
 *     ssd     20,000 IOPS   500 MB/s   ->   6 pages
 *     cloud    3,000 IOPS   125 MB/s   ->  10 pages
 *     hdd        200 IOPS   100 MB/s   -> 122 pages
 *
 * nvme is a mid-range PCIe 3 drive at low queue depth, ssd a SATA drive,
 * cloud a general-purpose cloud block volume's baseline (and a virtual
 * disk: a VM's disk is most often one), hdd a 7,200 rpm disk (seek plus
 * half a rotation is ~5 ms).
 *
 * A file whose device cannot be told (no block device under it: tmpfs,
 * overlayfs, btrfs, NFS; no sysfs) is read with PBITMAP_GAP_UNKNOWN, 32
 * pages.  A gap too small is what hurts: on the bench's hdd profile
 * (bench/results/io-floor.md, llvm-o2) a plan at gap 16 alone takes 982
 * ms, which with the program's 563 ms warm run is more than demand
 * paging's 1,360 ms, while gap 32 takes 681 ms (1,244 ms: faster), within
 * 20% of the best plan (gap 64, 570 ms).  A gap too large costs bytes
 * only: gap 32 reads 38.8 MiB of llvm-o2 where gap 6 reads ~25, ~28 ms
 * more at the ssd profile's 500 MB/s, against a margin of more than 100
 * ms over demand paging there (bench/RESULTS.md); gap 64 would read 5.6
 * MiB more again, for nothing on the faster devices.  32 is also the
 * middle of the classes' gaps (the geometric mean of 6 and 122 is 27).
 *
 * The class comes from sysfs, cheaply enough for a cold start (a few
 * system calls, every one in systemd's @system-service set and Docker's
 * default seccomp profile, none failing on a normal system), and a reader
 * that defers the gap (pbitmap_chunker_defer_gap) makes them only when a
 * read depends on the class:
 *
 *  1. The file's st_dev.  Major 0 is an anonymous device, no block device
 *     (tmpfs, overlayfs, btrfs, NFS): unknown, with no call at all.
 *  2. readlink /sys/dev/block/MAJ:MIN, the device's place in sysfs
 *     ("../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda/vda1").
 *     A last component that is its parent's name and a number (sda1,
 *     nvme0n1p2) is a partition, of the disk its parent names.  A disk
 *     under a virtio, Xen (vbd-) or Hyper-V (VMBUS:) device is a virtual
 *     disk: cloud, whatever its rotational flag says (most say 1 whatever
 *     backs them).  A disk named nvme* is nvme.
 *  3. Otherwise the disk's queue/rotational (the partition's parent's):
 *     1 is hdd, 0 is ssd.  A loop or device-mapper device has its own,
 *     which the kernel sets from the devices under it (and root may set).
 *  4. In a virtual machine, nvme and ssd are cloud (below).
 *  Any call that fails: unknown.
 *
 * A virtual machine's disks are virtual, whatever controller the
 * hypervisor shows the guest: the cloud volumes of the largest clouds
 * are NVMe namespaces (AWS's EBS on Nitro, Google's Persistent Disk on
 * its newer machines, Azure's remote disks behind its NVMe accelerator)
 * or disks that say they are solid-state, and they have a cloud volume's
 * IOPS, not an NVMe drive's.  Read at the nvme gap, llvm-o2 takes 860
 * reads, 287 ms at a 3,000 IOPS baseline, where the cloud gap takes 299;
 * on the bench's cloud profile at read_ahead_kb 128 it was then slower
 * than demand paging (0.89x), and 1.10x faster at the cloud gap
 * (bench/RESULTS.md).  So in a virtual machine a disk that step 2 or 3
 * calls nvme or ssd is cloud.  A local drive passed through to the guest
 * (an instance store) is then read at gap 10 instead of 1 or 6: up to 9
 * pages more per read on a device that reads them in microseconds.  A
 * disk that says it is rotational stays hdd: too small a gap is what
 * hurts (above).  Whether the process runs in a virtual machine is CPUID
 * leaf 1's bit 31 of ECX, which hypervisors set and processors leave
 * clear (Intel SDM, AMD APM): one instruction, no system call, so no
 * sandbox refuses it; a hypervisor traps it (1.3 us on this VM), so it
 * is asked only when the answer matters.  Elsewhere than on x86 no
 * virtual machine is told.
 *
 * A loop device (major 7, the kernel's LOOP_MAJOR) skips step 2: it is
 * virtual, its sysfs entry is always /sys/devices/virtual/block/loopN,
 * and that link says nothing step 3 does not, so its queue/rotational is
 * read at once.  That saves one of three calls where images are mounted
 * (snaps, the bench's profiles), though less than the call costs alone:
 * the first walk through sysfs in a fresh process pays for the ones
 * after it, so the read of queue/rotational then takes longer (side by
 * side, bench/device-cost.c, the first lookup of 410 fresh processes: a
 * median of 40 us instead of 44).  A partition of one (7:N with the loop
 * module's max_part) has no queue/ of its own; its read fails and the
 * steps above run as for any other device.
 *
 * A reader that makes the calls (the runtime with raw system calls, the
 * launcher with the C library's) passes them in a struct pbitmap_sysfs;
 * the steps are here, once, so that both choose alike.  */

enum pbitmap_device
{
  PBITMAP_DEVICE_UNKNOWN,
  PBITMAP_DEVICE_NVME,
  PBITMAP_DEVICE_SSD,
  PBITMAP_DEVICE_CLOUD,
  PBITMAP_DEVICE_HDD
};

/* The gap of a device that cannot be told.  */
#define PBITMAP_GAP_UNKNOWN 32u

/* A class's random-read IOPS, sequential bytes per second and name
   (switches, not a table: the runtime's data may not yet be relocated
   when it runs).  */
static inline uint64_t
pbitmap_device_iops (enum pbitmap_device d)
{
  switch (d)
    {
    case PBITMAP_DEVICE_NVME: return 500000;
    case PBITMAP_DEVICE_SSD: return 20000;
    case PBITMAP_DEVICE_CLOUD: return 3000;
    case PBITMAP_DEVICE_HDD: return 200;
    default: return 0;
    }
}

static inline uint64_t
pbitmap_device_bandwidth (enum pbitmap_device d)
{
  switch (d)
    {
    case PBITMAP_DEVICE_NVME: return 3000000000u;
    case PBITMAP_DEVICE_SSD: return 500000000;
    case PBITMAP_DEVICE_CLOUD: return 125000000;
    case PBITMAP_DEVICE_HDD: return 100000000;
    default: return 0;
    }
}

static inline const char *
pbitmap_device_name (enum pbitmap_device d)
{
  switch (d)
    {
    case PBITMAP_DEVICE_NVME: return "nvme";
    case PBITMAP_DEVICE_SSD: return "ssd";
    case PBITMAP_DEVICE_CLOUD: return "cloud";
    case PBITMAP_DEVICE_HDD: return "hdd";
    default: return "unknown";
    }
}

static inline uint32_t
pbitmap_device_gap (enum pbitmap_device d)
{
  uint64_t iops = pbitmap_device_iops (d);
  if (iops == 0)
    return PBITMAP_GAP_UNKNOWN;
  return (uint32_t) (pbitmap_device_bandwidth (d)
                     / (iops * PBITMAP_PAGE_SIZE));
}

/* The least and the greatest gap of the classes, the unknown device's
   included: the range a reader that has not looked yet knows the gap to
   lie in.  */
static inline void
pbitmap_device_gap_range (uint64_t *lo, uint64_t *hi)
{
  *lo = *hi = PBITMAP_GAP_UNKNOWN;
  for (int d = PBITMAP_DEVICE_UNKNOWN; d <= PBITMAP_DEVICE_HDD; d++)
    {
      uint64_t g = pbitmap_device_gap ((enum pbitmap_device) d);
      *lo = g < *lo ? g : *lo;
      *hi = g > *hi ? g : *hi;
    }
}

/* The calls the classification makes, as the reader makes them.  */
struct pbitmap_sysfs
{
  /* readlink (PATH) into BUF of SIZE bytes: its length, or negative.  */
  long (*readlink) (void *ctx, const char *path, char *buf,
                    unsigned long size);
  /* The first byte of the file PATH into *BYTE: 0, or negative.  */
  int (*first_byte) (void *ctx, const char *path, char *byte);
  void *ctx;
};

/* The block major of loop devices (LOOP_MAJOR in <linux/major.h>).  */
#define PBITMAP_LOOP_MAJOR 7u

/* Longest sysfs link target looked at; a longer one is unknown.  */
#define PBITMAP_SYSFS_LINK_MAX 256u

static inline char *
pbitmap_sysfs_put (char *p, const char *s)
{
  while (*s != '\0')
    *p++ = *s++;
  *p = '\0';
  return p;
}

static inline char *
pbitmap_sysfs_put_u32 (char *p, uint32_t v)
{
  char digits[10];
  unsigned n = 0;
  do
    digits[n++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0)
    *p++ = digits[--n];
  *p = '\0';
  return p;
}

/* Whether the LEN bytes at S contain the string NEEDLE.  */
static inline int
pbitmap_sysfs_contains (const char *s, unsigned long len, const char *needle)
{
  for (unsigned long i = 0; i < len; i++)
    {
      unsigned long j = 0;
      while (needle[j] != '\0' && i + j < len && s[i + j] == needle[j])
        j++;
      if (needle[j] == '\0')
        return 1;
    }
  return 0;
}

/* Whether NAME (LEN bytes) is the partition name of disk DISK (DLEN
   bytes): DISK, then an optional 'p', then digits.  */
static inline int
pbitmap_sysfs_partition_of (const char *name, unsigned long len,
                            const char *disk, unsigned long dlen)
{
  if (dlen == 0 || len <= dlen)
    return 0;
  for (unsigned long i = 0; i < dlen; i++)
    if (name[i] != disk[i])
      return 0;
  unsigned long i = dlen + (name[dlen] == 'p');
  if (i == len)
    return 0;
  for (; i < len; i++)
    if (name[i] < '0' || name[i] > '9')
      return 0;
  return 1;
}

/* Whether this process runs in a virtual machine (CPUID.1:ECX[31]).  */
static inline int
pbitmap_virtual_machine (void)
{
#if defined __x86_64__ || defined __i386__
  uint32_t eax = 1, ebx, ecx = 0, edx;
  __asm__ volatile ("cpuid" : "+a" (eax), "=b" (ebx), "+c" (ecx), "=d" (edx));
  return (int) (ecx >> 31);
#else
  return 0;
#endif
}

/* Step 4: the class D of a disk in a virtual machine.  */
static inline enum pbitmap_device
pbitmap_device_virtual (enum pbitmap_device d)
{
  if ((d == PBITMAP_DEVICE_NVME || d == PBITMAP_DEVICE_SSD)
      && pbitmap_virtual_machine ())
    return PBITMAP_DEVICE_CLOUD;
  return d;
}

/* The class a disk's queue/rotational says by its first byte, BYTE.  */
static inline enum pbitmap_device
pbitmap_device_rotational (char byte)
{
  return byte == '1' ? PBITMAP_DEVICE_HDD
         : byte == '0' ? pbitmap_device_virtual (PBITMAP_DEVICE_SSD)
         : PBITMAP_DEVICE_UNKNOWN;
}

/* The class of block device MAJOR:MINOR, by the steps above.  */
static inline enum pbitmap_device
pbitmap_device_classify (uint32_t major, uint32_t minor,
                         const struct pbitmap_sysfs *sys)
{
  char path[64], link[PBITMAP_SYSFS_LINK_MAX];
  if (major == 0)
    return PBITMAP_DEVICE_UNKNOWN;
  char *end = pbitmap_sysfs_put (path, "/sys/dev/block/");
  end = pbitmap_sysfs_put_u32 (end, major);
  *end++ = ':';
  end = pbitmap_sysfs_put_u32 (end, minor);
  char byte;
  if (major == PBITMAP_LOOP_MAJOR)
    {
      pbitmap_sysfs_put (end, "/queue/rotational");
      if (sys->first_byte (sys->ctx, path, &byte) == 0)
        return pbitmap_device_rotational (byte);
      *end = '\0';
    }
  long len = sys->readlink (sys->ctx, path, link, sizeof link);
  if (len <= 0 || (unsigned long) len >= sizeof link)
    return PBITMAP_DEVICE_UNKNOWN;

  /* The last component, NAME, and its parent, DISK.  */
  unsigned long n = (unsigned long) len, name = n, disk;
  while (name > 0 && link[name - 1] != '/')
    name--;
  disk = name > 0 ? name - 1 : 0;
  while (disk > 0 && link[disk - 1] != '/')
    disk--;
  unsigned long dlen = name > 0 ? name - 1 - disk : 0;
  int partition = pbitmap_sysfs_partition_of (link + name, n - name,
                                              link + disk, dlen);
  unsigned long whole = partition ? disk : name;

  if (pbitmap_sysfs_contains (link, n, "/virtio")
      || pbitmap_sysfs_contains (link, n, "/vbd-")
      || pbitmap_sysfs_contains (link, n, "/VMBUS:"))
    return PBITMAP_DEVICE_CLOUD;
  if (n - whole >= 4 && link[whole] == 'n' && link[whole + 1] == 'v'
      && link[whole + 2] == 'm' && link[whole + 3] == 'e')
    return pbitmap_device_virtual (PBITMAP_DEVICE_NVME);

  pbitmap_sysfs_put (end, partition ? "/../queue/rotational"
                                    : "/queue/rotational");
  if (sys->first_byte (sys->ctx, path, &byte) != 0)
    return PBITMAP_DEVICE_UNKNOWN;
  return pbitmap_device_rotational (byte);
}

#endif /* PBITMAP_PLAN_H */
