/* fill.c: turn traces into the bits of a region, and clear them.
 *
 * A fill replaces the bitmap with a prediction: which pages will the next
 * start need?  Each trace is one run; a page's count is the number of
 * runs that used it.  The merge rule picks the pages:
 *
 *   or     a page any run used (the union; right for one trace, or for
 *          runs that are all alike);
 *   and    a page every run used;
 *   share  a page at least a fraction F of the runs used (--min-share),
 *          compared exactly in millionths: count * 10^6 >= F * 10^6 * runs.
 *          With fewer than 1/F runs this is the union.
 *
 * A budget (--budget) then keeps the most used pages up to a size, the
 * lower page first among equals.  By default the rule is share with F =
 * FILL_DEFAULT_SHARE: pages of rare modes and one-off paths (an error
 * path, a rarely used option) drop out once they are rare among many
 * runs; bench/predict measured the choice.
 *
 * The result depends on the traces and options only, never on what the
 * region held before, so the same traces always give the same bytes
 * (reproducible builds).  The one exception is asked for: --age=W ages
 * the bitmap the binary holds into the new one.  A bitmap has one bit per
 * page and no counts, so its history is one pseudo-run of weight W that
 * used every set page: with N new traces, a page only the old bitmap has
 * counts W of N + W runs.  Under share it survives while W >= F (N + W),
 * so knowledge that no new run confirms fades as runs accumulate; under
 * or it is kept; under and it is dropped unless every run has it.  An
 * unfilled bitmap adds nothing.
 *
 * Traces name many files (the program, its libraries); only the blocks
 * whose identity equals the binary's count.  A trace with no such block
 * is refused as a whole: it was recorded on another build, or on another
 * program, and quietly filling nothing would hide that.
 *
 * Pages at or past the region's capacity cannot be marked (the plugin
 * sized the bitmap for the file it linked and a -flto link can outgrow
 * it; a bigger file means the sizing was wrong).  The fill then fails,
 * leaving the file as it was, and names the capacity to relink with,
 * spelled as the compiler driver takes it; with --allow-truncate the
 * pages are dropped and counted in one warning.
 *
 * The fill writes pages_set and runs (caches of what the bits say, so the
 * runtime can skip an empty bitmap), sets PBITMAP_F_FILLED, zeroes the
 * padding after the bits, and either sets PBITMAP_F_GAP_AUTO (each
 * reader chooses the gap for its device; the default) or clears it and
 * pins max_gap (--device, --max-gap; device.c);
 * entry and mark stay as they are.  A clear zeroes the bits, pages_set,
 * runs, flags and max_gap: it undoes a fill, leaving the region as the
 * linker wrote it.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfpatch.h"

/* The pages that did not fit are kept as a block's ranges (in trace
   order, not sorted) for one count at the end.  */
typedef struct trace_block dropped_pages;

/* Distinct pages in D; several traces may drop the same ones.  */
static uint64_t
dropped_count (dropped_pages *d)
{
  if (d->n_ranges > 1)
    qsort (d->ranges, d->n_ranges, sizeof *d->ranges, page_range_cmp);
  uint64_t count = 0, next = 0;       /* pages below NEXT are counted */
  for (size_t i = 0; i < d->n_ranges; i++)
    {
      uint64_t first = d->ranges[i].first, last = d->ranges[i].last;
      if (first < next)
        first = next;
      if (first <= last)
        {
          count += last - first + 1;
          next = last + 1;
        }
    }
  return count;
}

/* Says what D, the pages past IMG's capacity, costs: -1 after an error
   unless POLICY allows dropping them, else 0 (after a warning).  The
   capacity to relink with covers the file and the pages.  */
static int
report_dropped (const struct image *img, dropped_pages *d,
                const struct fill_policy *policy)
{
  uint64_t lost = dropped_count (d), need = 0;

  if (lost == 0)
    return 0;
  for (size_t i = 0; i < d->n_ranges; i++)
    if (d->ranges[i].last + 1 > need)
      need = d->ranges[i].last + 1;
  uint64_t file_pages = (img->size + PBITMAP_PAGE_SIZE - 1) / PBITMAP_PAGE_SIZE;
  if (file_pages > need)
    need = file_pages;
  if (policy->allow_truncate)
    {
      elfpatch_warn ("%s: %" PRIu64 " recorded page%s at or past the "
                     "bitmap's capacity of %" PRIu64 " pages dropped; "
                     "relink with -Wl,-plugin-opt=capacity=%" PRIu64
                     " to keep them", img->path, lost, lost == 1 ? "" : "s",
                     img->region.hdr.capacity, need);
      return 0;
    }
  error (0, 0, "error: %s: %" PRIu64 " recorded page%s at or past the "
         "bitmap's capacity of %" PRIu64 " pages; relink with "
         "-Wl,-plugin-opt=capacity=%" PRIu64 ", or drop them with "
         "--allow-truncate", img->path, lost, lost == 1 ? "" : "s",
         img->region.hdr.capacity, need);
  return -1;
}

/* Sets the pages of block B in BITS; the part past CAPACITY goes to D.  */
static int
apply_block (const struct trace_block *b, unsigned char *bits,
             uint64_t capacity, dropped_pages *d)
{
  for (size_t i = 0; i < b->n_ranges; i++)
    {
      uint64_t first = b->ranges[i].first, last = b->ranges[i].last;
      if (last >= capacity)
        {
          uint64_t past = first > capacity ? first : capacity;
          if (trace_block_add_range (d, past, last) != 0)
            return -1;
          if (first >= capacity)
            continue;
          last = capacity - 1;
        }
      for (uint64_t page = first; page <= last; page++)
        pbitmap_set (bits, page);
    }
  return 0;
}

/* Sets in BITS the pages that trace PATH recorded for IMG (the union of
   its blocks with IMG's identity), the part past the capacity going to
   D, and shows VISIT (when not null) those blocks.  A trace with no such
   block is refused.  */
int
trace_pages (const char *path, const struct image *img, unsigned char *bits,
             struct trace_block *d, trace_visit_fn *visit, void *arg)
{
  struct trace t;
  if (trace_read_for (path, &img->id, &t) != 0)
    return -1;

  size_t matched = 0;
  int rc = 0;
  for (size_t i = 0; i < t.n_blocks && rc == 0; i++)
    if (identity_equal (&t.blocks[i].id, &img->id))
      {
        matched++;
        if (apply_block (&t.blocks[i], bits, img->region.hdr.capacity, d) != 0)
          {
            error (0, errno, "error: %s", path);
            rc = -1;
          }
      }
  if (rc == 0 && matched == 0)
    {
      char id[IDENTITY_TEXT_MAX];
      identity_format (&img->id, id, sizeof id);
      error (0, 0, "error: %s: no pages recorded for this build of %s "
             "(its %s is %s)", path, img->path,
             img->id.build_id_len ? "build-id" : "identity",
             id + (img->id.build_id_len ? strlen ("build-id ") : 0));
      rc = -1;
    }
  else if (rc == 0)
    elfpatch_note ("%s: %zu matching block%s in %s", img->path, matched,
                   matched == 1 ? "" : "s", path);
  if (rc == 0 && visit != NULL)
    rc = visit (path, &t, arg);
  trace_free (&t);
  return rc;
}

/* How many runs saw each page: the traces, and with --age the bitmap
   the binary held, counted as WEIGHT runs that saw each of its pages.  */
struct tally
{
  uint64_t capacity;
  uint32_t *count;              /* per page */
  uint64_t runs;
};

static void
tally_add (struct tally *t, const unsigned char *bits, uint32_t weight)
{
  for (uint64_t page = 0; page < t->capacity; page++)
    if (pbitmap_test (bits, page))
      t->count[page] += weight;
  t->runs += weight;
}

/* Whether a page seen in COUNT of RUNS runs is kept before the budget:
   share compares in millionths, so the same options give the same bits
   on every machine.  */
int
fill_kept (const struct fill_policy *p, uint64_t count, uint64_t runs)
{
  if (count == 0)
    return 0;
  switch (p->merge)
    {
    case MERGE_AND:
      return count == runs;
    case MERGE_SHARE:
      return count * FILL_SHARE_ONE >= (uint64_t) p->min_share * runs;
    case MERGE_OR:
    default:
      return 1;
    }
}

struct ranked_page
{
  uint64_t page;
  uint32_t count;
};

/* Most frequent first; among equals the lower page, for reproducible
   bits.  */
static int
ranked_cmp (const void *a, const void *b)
{
  const struct ranked_page *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->page < y->page ? -1 : x->page > y->page;
}

/* Sets in BITS the pages of T that policy P keeps.  */
static int
tally_select (const struct tally *t, const struct fill_policy *p,
              unsigned char *bits, const char *binary)
{
  struct ranked_page *kept = NULL;
  size_t n = 0, alloc = 0;
  for (uint64_t page = 0; page < t->capacity; page++)
    if (fill_kept (p, t->count[page], t->runs))
      {
        if (array_reserve ((void **) &kept, &alloc, n, sizeof *kept) != 0)
          {
            error (0, errno, "error: %s", binary);
            free (kept);
            return -1;
          }
        kept[n].page = page;
        kept[n++].count = t->count[page];
      }
  if (p->budget_given && n > p->budget_pages)
    {
      qsort (kept, n, sizeof *kept, ranked_cmp);
      elfpatch_note ("%s: budget of %" PRIu64 " pages leaves out %" PRIu64
                     " of %zu pages", binary, p->budget_pages,
                     (uint64_t) n - p->budget_pages, n);
      n = (size_t) p->budget_pages;
    }
  for (size_t i = 0; i < n; i++)
    pbitmap_set (bits, kept[i].page);
  free (kept);
  return 0;
}

int
fill_select (struct image *img, char **traces, size_t n_traces,
             const struct fill_policy *p, unsigned char *bits,
             trace_visit_fn *visit, void *arg)
{
  size_t nbytes = (size_t) pbitmap_bits_size (img->region.hdr.capacity) + 1;
  struct tally t = { .capacity = img->region.hdr.capacity };
  t.count = calloc ((size_t) t.capacity + 1, sizeof *t.count);
  unsigned char *one = malloc (nbytes);
  dropped_pages d = { 0 };
  int rc = -1;
  if (t.count == NULL || one == NULL)
    {
      error (0, errno, "error: %s", img->path);
      goto out;
    }
  for (size_t i = 0; i < n_traces; i++)
    {
      memset (one, 0, nbytes);
      if (trace_pages (traces[i], img, one, &d, visit, arg) != 0)
        goto out;
      tally_add (&t, one, 1);
    }
  if (report_dropped (img, &d, p) != 0)
    goto out;
  if (p->age_weight > 0 && (img->region.hdr.flags & PBITMAP_F_FILLED))
    {
      tally_add (&t, image_bits (img), p->age_weight);
      elfpatch_note ("%s: the bitmap it held counts as %" PRIu32 " run%s",
                     img->path, p->age_weight, p->age_weight == 1 ? "" : "s");
    }
  rc = tally_select (&t, p, bits, img->path);

out:
  free (d.ranges);
  free (one);
  free (t.count);
  return rc;
}

/* Warns when the runtime will read nothing of IMG's bitmap, whatever it
   holds (include/pbitmap-plan.h, the PT_LOADs read from).  */
static void
warn_unplanned (const struct image *img)
{
  const char *unplanned = loads_unplanned (img->elf);
  if (unplanned != NULL)
    elfpatch_warn ("%s: %s: neither the runtime nor --run reads its bitmap",
                   img->path, unplanned);
}

/* Puts BITS (the new bitmap), what it says, FLAGS, MAX_GAP and the read
   order of ORDER (none when null) into the region of IMG.  Returns
   whether anything changed.  */
static int
store_bits (struct image *img, const unsigned char *bits, uint32_t flags,
            uint32_t max_gap, struct read_order *order)
{
  struct region *r = &img->region;
  unsigned char *area = img->buf + r->offset + PBITMAP_OFF_PAGES_SET;
  size_t area_size = (size_t) (r->size - PBITMAP_OFF_PAGES_SET);
  unsigned char *before = malloc (area_size);
  if (before == NULL)
    return -1;
  memcpy (before, area, area_size);

  unsigned char *dest = image_bits (img);
  size_t nbytes = (size_t) pbitmap_bits_size (r->hdr.capacity);
  memcpy (dest, bits, nbytes);
  memset (dest + nbytes, 0, (size_t) (r->size - PBITMAP_HEADER_SIZE) - nbytes);
  r->hdr.pages_set = bits_count (bits, 0, r->hdr.capacity);
  r->hdr.runs = bits_runs (bits, r->hdr.capacity);
  r->hdr.flags = flags;
  r->hdr.max_gap = max_gap;
  r->hdr.order_len = 0;
  if (order != NULL)
    read_order_write (order, img, bits);
  image_store_header (img);

  int changed = memcmp (before, area, area_size) != 0;
  free (before);
  return changed;
}

/* Replaces the bitmap of IMG in its buffer: with the pages of TRACES
   that POLICY selects and the gap GAP asks for in a fill, with nothing
   for a clear (POLICY and GAP null).  Returns whether the bytes changed,
   or -1 after a message.  */
int
fill_image (struct image *img, char **traces, size_t n_traces,
            const struct fill_policy *policy, const struct gap_choice *gap)
{
  unsigned char *bits = NULL;
  int changed = -1;
  struct read_order order = { 0 };

  bits = calloc ((size_t) pbitmap_bits_size (img->region.hdr.capacity) + 1, 1);
  if (bits == NULL)
    {
      error (0, errno, "error: %s", img->path);
      goto out;
    }
  if (policy != NULL
      && (read_order_init (&order, img) != 0
          || fill_select (img, traces, n_traces, policy, bits,
                          read_order_visit, &order) != 0))
    goto out;
  if (policy != NULL)
    warn_unplanned (img);

  uint32_t flags = 0, max_gap = 0;
  if (gap != NULL)
    {
      char why[256];
      int pinned;
      max_gap = device_choose_gap (gap, img->fd, why, sizeof why, &pinned);
      flags = (img->region.hdr.flags & ~PBITMAP_F_GAP_AUTO) | PBITMAP_F_FILLED
              | (pinned ? 0 : PBITMAP_F_GAP_AUTO);
      elfpatch_note ("%s: max gap %" PRIu32 " pages (%s)", img->path, max_gap,
                     why);
    }
  changed = store_bits (img, bits, flags, max_gap,
                        policy != NULL ? &order : NULL);
  if (changed < 0)
    error (0, errno, "error: %s", img->path);
  else if (img->region.hdr.order_len > 0)
    elfpatch_note ("%s: read order: %" PRIu32 " blocks first, by first "
                   "touch", img->path, img->region.hdr.order_len);
  else if (order.traces > 0 && img->region.hdr.version < 2)
    elfpatch_note ("%s: no read order (a version-%u region has no room for "
                   "one; relink)", img->path, img->region.hdr.version);

out:
  read_order_free (&order);
  free (bits);
  return changed;
}

/* Opens BINARY for an update, replaces its bitmap (fill_image) and writes
   it back if that changed anything.  Returns the exit status.  */
static int
rewrite_bitmap (const char *binary, char **traces, size_t n_traces,
                const struct fill_policy *policy, const struct gap_choice *gap)
{
  struct image img;
  int status = 1;

  if (image_open (binary, IMAGE_UPDATE, &img) != 0)
    goto out;
  int changed = fill_image (&img, traces, n_traces, policy, gap);
  if (changed < 0)
    goto out;
  if (!changed)
    elfpatch_note ("%s: unchanged", binary);
  else if (update_write_back (&img) != 0)
    goto out;
  elfpatch_note ("%s: %" PRIu64 " pages set in %" PRIu64 " runs", binary,
                 img.region.hdr.pages_set, img.region.hdr.runs);
  status = 0;

out:
  image_close (&img);
  return status;
}

int
fill_binary (const char *binary, char **traces, size_t n_traces,
             const struct fill_policy *policy, const struct gap_choice *gap)
{
  return rewrite_bitmap (binary, traces, n_traces, policy, gap) == 0 ? 0 : -1;
}

int
clear_command (const char *binary)
{
  return rewrite_bitmap (binary, NULL, 0, NULL, NULL);
}
