/* show.c: print a binary's region for people (elfpatch --show).
 *
 * The output answers the questions one has about a bitmap: where is the
 * region, how much of the file can it describe, was it filled, how much
 * will be read at start-up and in how many pieces, and which parts of the
 * program that is.  The numbers are computed from the bits themselves;
 * when the header's cached pages_set or runs disagree (a damaged or
 * hand-edited file), the header's value is shown next to it.
 *
 *     BINARY:
 *       region:    offset 0x2c0, vaddr 0x2c0, size 1136 bytes
 *       capacity:  8320 pages (32.5 MiB)
 *       filled:    yes
 *       pages set: 25 (100 KiB)
 *       runs:      7
 *       max gap:   0 pages
 *       identity:  build-id 0123...      (or: size N fnv1a64 H)
 *       sections:  set pages of each allocated section, in address order
 *         .interp          1 of 1
 *         .text           12 of 30
 *       reads:     23 set pages in 6 runs inside PT_LOADs, read at each gap as:
 *         this bitmap, gap 0:       6 reads of      23 pages (92 KiB)
 *         nvme, gap 1:              5 reads of      24 pages (96 KiB)
 *         ssd, gap 6:               2 reads of      31 pages (124 KiB)
 *         hdd, gap 122:             1 read  of      40 pages (160 KiB)
 *
 * A page counts for every section that overlaps it, so the per-section
 * numbers may add up to more than "pages set".  Sections without file
 * contents (SHT_NOBITS) or of size 0 are not listed.
 *
 * The reads say how contiguous the set is, which is what a start from a
 * slow device pays for: the planner the runtime and --run use (plan.c)
 * makes them from the set pages inside the PT_LOADs, at the region's own
 * max_gap and at each device profile's, so one can see what a fill for
 * another device, or a better layout (elfpatch --order), would read.
 *
 * Two more lines say when the region is not what the runtime reads: a
 * "stale:" line when a post-link tool left PT_PRESENT_BITMAP pointing
 * away from the note (the region shown is the note), and a "debug:" line
 * for a separate debug file, whose region is a copy that counts the
 * program's pages, so its sections are not listed.
 *
 * With --traces, the bitmap is checked against runs: for each trace, how
 * many of the pages it recorded for this build are set (the recall of the
 * bitmap on that run), and how many of the set pages the run used (its
 * precision):
 *
 *       traces:    pages of each trace the bitmap covers
 *         run1.trace  1180 of 1200 (98.3%), 20 missed; 1180 of 1300 set pages used (90.8%)
 *
 * A trace recorded on another build is refused as --fill refuses it.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfpatch.h"

struct section_row
{
  const char *name;
  uint64_t addr;
  size_t index;
  uint64_t first_page;
  uint64_t last_page;           /* inclusive */
};

static int
row_cmp (const void *a, const void *b)
{
  const struct section_row *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* PAGES pages of 4 KiB as KiB, or MiB or GiB with one decimal.  */
static void
print_amount (uint64_t pages)
{
  uint64_t kib = pages * (PBITMAP_PAGE_SIZE / 1024);
  const char *unit = "MiB";
  uint64_t base = 1024;
  if (kib < 1024)
    {
      printf ("%" PRIu64 " KiB", kib);
      return;
    }
  if (kib >= 1024 * 1024)
    {
      unit = "GiB";
      base = 1024 * 1024;
    }
  uint64_t tenths = (kib * 10 + base / 2) / base;
  printf ("%" PRIu64 ".%" PRIu64 " %s", tenths / 10, tenths % 10, unit);
}

/* The allocated sections with file contents, in address order.  */
static size_t
collect_sections (struct image *img, struct section_row **out)
{
  size_t shnum = 0, shstrndx;
  *out = NULL;
  if (elf_getshdrnum (img->elf, &shnum) != 0 || shnum == 0
      || elf_getshdrstrndx (img->elf, &shstrndx) != 0)
    return 0;
  struct section_row *rows = calloc (shnum, sizeof *rows);
  if (rows == NULL)
    return 0;

  size_t n = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (img->elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC)
          || sh.sh_type == SHT_NOBITS || sh.sh_size == 0
          || sh.sh_offset > UINT64_MAX - sh.sh_size)
        continue;
      const char *name = elf_strptr (img->elf, shstrndx, sh.sh_name);
      rows[n].name = name != NULL ? name : "?";
      rows[n].addr = sh.sh_addr;
      rows[n].index = elf_ndxscn (scn);
      rows[n].first_page = sh.sh_offset >> PBITMAP_PAGE_SHIFT;
      rows[n].last_page = (sh.sh_offset + sh.sh_size - 1) >> PBITMAP_PAGE_SHIFT;
      n++;
    }
  qsort (rows, n, sizeof *rows, row_cmp);
  *out = rows;
  return n;
}

static void
show_sections (struct image *img, const unsigned char *bits)
{
  struct section_row *rows;
  size_t shnum = 0;
  size_t n = collect_sections (img, &rows);
  if (n == 0)
    {
      elf_getshdrnum (img->elf, &shnum);
      printf ("  sections:  none (%s)\n", shnum == 0 ? "no section headers"
              : "no allocated sections with contents");
      free (rows);
      return;
    }
  printf ("  sections:  set pages of each allocated section, in address "
          "order\n");
  int width = 0;
  for (size_t i = 0; i < n; i++)
    if ((int) strlen (rows[i].name) > width)
      width = (int) strlen (rows[i].name);
  uint64_t capacity = img->region.hdr.capacity;
  for (size_t i = 0; i < n; i++)
    {
      uint64_t first = rows[i].first_page, last = rows[i].last_page;
      uint64_t set = 0;
      if (first < capacity)
        set = bits_count (bits, first, last < capacity ? last + 1 : capacity);
      printf ("    %-*s %6" PRIu64 " of %" PRIu64 "\n", width, rows[i].name,
              set, last - first + 1);
    }
  free (rows);
}

static void
count_chunk (void *ctx, uint64_t first, uint64_t npages)
{
  plan_count_chunk (ctx, first, npages);
}

/* One line of the reads: what the planner makes of BITS at gap GAP.  */
static void
show_plan (const char *label, uint32_t gap, const struct page_range *loads,
           size_t n_loads, const unsigned char *bits, uint64_t capacity)
{
  struct plan_count count = { 0 };
  struct pbitmap_chunker chunker;
  pbitmap_chunker_init (&chunker, gap, count_chunk, &count);
  plan_bitmap (loads, n_loads, bits, capacity, &chunker);
  char head[64];
  snprintf (head, sizeof head, "%s, gap %" PRIu32 ":", label, gap);
  printf ("    %-20s %6" PRIu64 " read%s of %7" PRIu64 " pages (", head,
          count.reads, count.reads == 1 ? " " : "s", count.pages);
  print_amount (count.pages);
  printf (")\n");
}

/* How contiguous the set pages are: the reads the runtime plans from
   them (include/pbitmap-plan.h) at the bitmap's own max_gap (pinned, or
   the unknown device's when the reader chooses) and at each device
   class's.  */
static int
show_reads (struct image *img, const unsigned char *bits)
{
  uint64_t capacity = img->region.hdr.capacity;
  struct page_range *loads;
  long n_loads = load_ranges (img->elf, &loads);
  if (n_loads < 0)
    {
      error (0, 0, "error: %s: %s", img->path, elf_errmsg (-1));
      return -1;
    }
  struct plan_count count = { 0 };
  struct pbitmap_chunker chunker;
  pbitmap_chunker_init (&chunker, 0, count_chunk, &count);
  uint64_t planned = plan_bitmap (loads, (size_t) n_loads, bits, capacity,
                                  &chunker);
  uint64_t outside = bits_count (bits, 0, capacity) - planned;
  printf ("  reads:     %" PRIu64 " set page%s in %" PRIu64 " run%s inside "
          "PT_LOADs", planned, planned == 1 ? "" : "s", chunker.runs,
          chunker.runs == 1 ? "" : "s");
  if (outside > 0)
    printf (" (%" PRIu64 " outside, never read)", outside);
  printf (", read at each gap as:\n");
  show_plan (img->region.hdr.flags & PBITMAP_F_GAP_AUTO ? "unknown"
             : "this bitmap", img->region.hdr.max_gap, loads,
             (size_t) n_loads, bits, capacity);
  for (enum pbitmap_device d = PBITMAP_DEVICE_NVME; d <= PBITMAP_DEVICE_HDD;
       d++)
    show_plan (pbitmap_device_name (d), pbitmap_device_gap (d), loads,
               (size_t) n_loads, bits, capacity);
  free (loads);
  return 0;
}

/* Tenths of a percent of PART in WHOLE, for "98.3%".  */
static uint64_t
per_mille (uint64_t part, uint64_t whole)
{
  return whole == 0 ? 1000 : (part * 1000 + whole / 2) / whole;
}

static int
show_traces (struct image *img, char **traces, size_t n_traces)
{
  uint64_t capacity = img->region.hdr.capacity;
  size_t nbytes = (size_t) pbitmap_bits_size (capacity) + 1;
  const unsigned char *bits = image_bits (img);
  unsigned char *run = malloc (nbytes);
  struct trace_block past = { 0 };
  int rc = 0;
  if (run == NULL)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  printf ("  traces:    pages of each trace the bitmap covers\n");
  uint64_t set = bits_count (bits, 0, capacity);
  for (size_t i = 0; i < n_traces && rc == 0; i++)
    {
      memset (run, 0, nbytes);
      past.n_ranges = 0;
      if (trace_pages (traces[i], img, run, &past, NULL, NULL) != 0)
        {
          rc = -1;
          break;
        }
      uint64_t used = 0, covered = 0;
      for (uint64_t page = 0; page < capacity; page++)
        if (pbitmap_test (run, page))
          {
            used++;
            covered += (uint64_t) pbitmap_test (bits, page);
          }
      uint64_t recall = per_mille (covered, used);
      uint64_t precision = per_mille (covered, set);
      printf ("    %s  %" PRIu64 " of %" PRIu64 " (%" PRIu64 ".%" PRIu64
              "%%), %" PRIu64 " missed; %" PRIu64 " of %" PRIu64 " set pages "
              "used (%" PRIu64 ".%" PRIu64 "%%)\n", traces[i], covered, used,
              recall / 10, recall % 10, used - covered, covered, set,
              precision / 10, precision % 10);
    }
  free (past.ranges);
  free (run);
  return rc;
}

int
show_command (const char *binary, char **traces, size_t n_traces)
{
  struct image img;
  if (image_open (binary, IMAGE_STALE, &img) != 0)
    {
      image_close (&img);
      return 1;
    }
  const struct region *r = &img.region;
  const unsigned char *bits = image_bits (&img);
  uint64_t set = bits_count (bits, 0, r->hdr.capacity);
  uint64_t runs = bits_runs (bits, r->hdr.capacity);
  char id[IDENTITY_TEXT_MAX];
  identity_format (&img.id, id, sizeof id);

  printf ("%s:\n", binary);
  printf ("  region:    offset 0x%" PRIx64 ", vaddr 0x%" PRIx64 ", size %"
          PRIu64 " bytes\n", r->offset, r->vaddr, r->size);
  if (r->stale)
    printf ("  stale:     PT_PRESENT_BITMAP says offset 0x%" PRIx64 ", so "
            "the runtime finds no bitmap; elfpatch --resync fixes that\n",
            r->phdr_offset);
  if (img.debug_file)
    printf ("  debug:     a separate debug file; this region is a copy of "
            "the program's, whose file pages its bits count\n");
  printf ("  capacity:  %" PRIu64 " pages (", r->hdr.capacity);
  print_amount (r->hdr.capacity);
  printf (")\n  filled:    %s\n", r->hdr.flags & PBITMAP_F_FILLED ? "yes" : "no");
  printf ("  pages set: %" PRIu64 " (", set);
  print_amount (set);
  printf (")");
  if (set != r->hdr.pages_set)
    printf (" (the header says %" PRIu64 ")", r->hdr.pages_set);
  printf ("\n  runs:      %" PRIu64, runs);
  if (runs != r->hdr.runs)
    printf (" (the header says %" PRIu64 ")", r->hdr.runs);
  printf ("\n  max gap:   %" PRIu32 " pages", r->hdr.max_gap);
  if (r->hdr.flags & PBITMAP_F_GAP_AUTO)
    printf (" where the device cannot be told; the reader chooses for its "
            "device");
  printf ("\n");
  printf ("  identity:  %s\n", id);
  if (img.debug_file)
    printf ("  sections:  not listed (the program's, not this file's, "
            "pages are counted)\n");
  else
    show_sections (&img, bits);

  int status = 0;
  if (img.debug_file)
    printf ("  reads:     none planned (a debug file is never read)\n");
  else if (set == 0)
    printf ("  reads:     none (no page set)\n");
  else if (show_reads (&img, bits) != 0)
    status = 1;
  if (n_traces > 0 && show_traces (&img, traces, n_traces) != 0)
    status = 1;
  if (fflush (stdout) != 0 || ferror (stdout))
    {
      error (0, errno, "error: standard output");
      status = 1;
    }
  image_close (&img);
  return status;
}
