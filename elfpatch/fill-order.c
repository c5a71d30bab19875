/* fill-order.c: the read order a fill stores (doc/format.md, Read order).
 *
 * A prefetch whose reads queue on a slow device (a throttled cloud
 * volume, a disk) gets its pages in the order it asks for them, and a
 * start does not need them in file order: it touches code, read-only
 * data and RELRO data interleaved.  Issued in the order a recorded start
 * first touched them, the same reads made the bench's ordered program
 * start 10% faster at cloud 128 than in ascending order, and faster than
 * demand paging (bench/results/read-order-llvm-o2-ordered-3000.md).
 *
 * The order comes from the traces' 'order' lists that rank every page of
 * the block (trace version 3; a version-2 list ranks only code, which
 * would put the data last, as ascending order does).  It is kept per
 * block of PBITMAP_BLOCK_PAGES pages, the longest read: a block's rank
 * in one trace is the position of its first-touched page in that trace's
 * list, and its rank over several traces the mean of the ranks of the
 * traces that rank it (the lower block number first among equals).  The
 * table lists the blocks with a page the fill keeps, by rank; readers
 * read the other blocks after them, in ascending order.  A region of
 * version 1 has no room for a table.
 */

#include <errno.h>
#include <error.h>
#include <stdlib.h>

#include "elfpatch.h"

int
read_order_init (struct read_order *o, const struct image *img)
{
  const struct pbitmap_header *h = &img->region.hdr;
  o->n_blocks = h->version >= 2 ? h->order_size : 0;
  o->rank_sum = calloc ((size_t) o->n_blocks + 1, sizeof *o->rank_sum);
  o->ranked = calloc ((size_t) o->n_blocks + 1, sizeof *o->ranked);
  o->first = calloc ((size_t) o->n_blocks + 1, sizeof *o->first);
  o->traces = 0;
  if (o->rank_sum == NULL || o->ranked == NULL || o->first == NULL)
    {
      error (0, errno, "error: %s", img->path);
      read_order_free (o);
      return -1;
    }
  return 0;
}

void
read_order_free (struct read_order *o)
{
  free (o->rank_sum);
  free (o->ranked);
  free (o->first);
  o->rank_sum = NULL;
  o->ranked = NULL;
  o->first = NULL;
}

int
read_order_visit (const char *path, const struct trace *t, void *arg)
{
  struct read_order *o = arg;
  (void) path;
  const struct trace_block *b = NULL;
  for (size_t i = 0; i < t->n_blocks && b == NULL; i++)
    if (t->blocks[i].order_all)
      b = &t->blocks[i];
  if (b == NULL)
    return 0;
  o->traces++;
  for (uint64_t k = 0; k < o->n_blocks; k++)
    o->first[k] = UINT64_MAX;
  for (size_t i = 0; i < b->n_order; i++)
    {
      uint64_t k = b->order[i] / PBITMAP_BLOCK_PAGES;
      if (k < o->n_blocks && o->first[k] == UINT64_MAX)
        o->first[k] = i;
    }
  for (uint64_t k = 0; k < o->n_blocks; k++)
    if (o->first[k] != UINT64_MAX)
      {
        o->rank_sum[k] += (double) o->first[k];
        o->ranked[k]++;
      }
  return 0;
}

/* Orders block numbers by their mean rank in the read_order ARG, then
   by number (qsort_r).  */
static int
by_rank (const void *a, const void *b, void *arg)
{
  const struct read_order *o = arg;
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  double rx = o->rank_sum[x] / o->ranked[x];
  double ry = o->rank_sum[y] / o->ranked[y];
  if (rx != ry)
    return rx < ry ? -1 : 1;
  return x < y ? -1 : x > y;
}

uint64_t
read_order_write (struct read_order *o, struct image *img,
                  const unsigned char *bits)
{
  struct region *r = &img->region;
  uint64_t n = 0;
  for (uint64_t k = 0; k < o->n_blocks; k++)
    {
      uint64_t last = (k + 1) * PBITMAP_BLOCK_PAGES;
      last = last < r->hdr.capacity ? last : r->hdr.capacity;
      if (o->ranked[k] > 0
          && bits_count (bits, k * PBITMAP_BLOCK_PAGES, last) > 0)
        o->first[n++] = k;
    }
  qsort_r (o->first, (size_t) n, sizeof *o->first, by_rank, o);
  unsigned char *table = img->buf + r->offset
                         + pbitmap_order_offset (r->hdr.capacity);
  for (uint64_t i = 0; i < n; i++)
    put_u16 (table + 2 * i, (uint16_t) o->first[i], img->msb);
  r->hdr.order_len = (uint32_t) n;
  return n;
}
