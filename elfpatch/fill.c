/* fill.c: turn traces into the bits of a region, and clear them.
 *
 * A fill replaces the bitmap: a page is set when any of the given traces
 * recorded it for this very build of the binary.  The result depends on
 * the traces only, never on what the region held before, so the same
 * traces always give the same bytes (reproducible builds).  Traces name
 * many files (the program, its libraries); only the blocks whose identity
 * equals the binary's count.  A trace with no such block is refused as a
 * whole: it was recorded on another build, or on another program, and
 * quietly filling nothing would hide that.
 *
 * Pages at or past the region's capacity cannot be marked (the plugin
 * sized the bitmap for the file it linked; a bigger file means the trace
 * is not for this file or the sizing was wrong), so they are dropped and
 * counted in one warning.
 *
 * The fill writes pages_set and runs (caches of what the bits say, so the
 * runtime can skip an empty bitmap), sets PBITMAP_F_FILLED, zeroes the
 * padding after the bits, and sets max_gap for the device (device.c);
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
          if (trace_block_add_range (d, first > capacity ? first : capacity, last) != 0)
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

/* Applies the blocks of trace PATH that belong to IMG.  */
static int
apply_trace (const char *path, struct image *img, unsigned char *bits,
             dropped_pages *d)
{
  struct trace t;
  if (trace_read (path, &t) != 0)
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
  trace_free (&t);
  return rc;
}

/* Puts BITS (the new bitmap), what it says, FLAGS and MAX_GAP into the
   region of IMG.  Returns whether anything changed.  */
static int
store_bits (struct image *img, const unsigned char *bits, uint32_t flags,
            uint32_t max_gap)
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
  image_store_header (img);

  int changed = memcmp (before, area, area_size) != 0;
  free (before);
  return changed;
}

static int
write_if_changed (struct image *img, int changed)
{
  if (changed < 0)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  if (!changed)
    {
      elfpatch_note ("%s: unchanged", img->path);
      return 0;
    }
  return update_write_back (img);
}

/* Replaces the bitmap of BINARY: with the pages of TRACES and the gap GAP
   asks for in a fill, with nothing for a clear (GAP null).  */
static int
rewrite_bitmap (const char *binary, char **traces, size_t n_traces,
                const struct gap_choice *gap)
{
  struct image img;
  unsigned char *bits = NULL;
  dropped_pages d = { 0 };
  int status = 1;

  if (image_open (binary, 1, &img) != 0)
    goto out;
  bits = calloc ((size_t) pbitmap_bits_size (img.region.hdr.capacity) + 1, 1);
  if (bits == NULL)
    {
      error (0, errno, "error: %s", binary);
      goto out;
    }
  for (size_t i = 0; i < n_traces; i++)
    if (apply_trace (traces[i], &img, bits, &d) != 0)
      goto out;

  uint64_t lost = dropped_count (&d);
  if (lost > 0)
    elfpatch_warn ("%s: %" PRIu64 " recorded page%s at or past the bitmap's "
                   "capacity of %" PRIu64 " pages dropped", binary, lost,
                   lost == 1 ? "" : "s", img.region.hdr.capacity);

  uint32_t flags = 0, max_gap = 0;
  if (gap != NULL)
    {
      char why[256];
      flags = img.region.hdr.flags | PBITMAP_F_FILLED;
      max_gap = device_choose_gap (gap, img.st.st_dev, why, sizeof why);
      elfpatch_note ("%s: max gap %" PRIu32 " pages (%s)", binary, max_gap,
                     why);
    }
  if (write_if_changed (&img, store_bits (&img, bits, flags, max_gap)) != 0)
    goto out;
  elfpatch_note ("%s: %" PRIu64 " pages set in %" PRIu64 " runs", binary,
                 img.region.hdr.pages_set, img.region.hdr.runs);
  status = 0;

out:
  free (d.ranges);
  free (bits);
  image_close (&img);
  return status;
}

int
fill_command (char **traces, size_t n_traces, const char *binary,
              const struct gap_choice *gap)
{
  return rewrite_bitmap (binary, traces, n_traces, gap);
}

int
clear_command (const char *binary)
{
  return rewrite_bitmap (binary, NULL, 0, NULL);
}
