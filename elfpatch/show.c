/* show.c: print binaries' regions for people and for tools
 * (elfpatch --show [--json] [--traces TRACE...] FILE...).
 *
 * The output answers the questions one has about a bitmap: where is the
 * region, how much of the file can it describe, was it filled, how much
 * of the file will be read at start-up and in how many pieces, and which
 * parts of the program that is.  The numbers are computed from the bits
 * themselves; when the header's cached pages_set or runs disagree (a
 * damaged or hand-edited file), the header's value is shown next to it.
 *
 *     BINARY:
 *       region:    offset 0x2c0, vaddr 0x2c0, size 1136 bytes
 *       capacity:  8320 pages (32.5 MiB)
 *       filled:    yes
 *       pages set: 25 (100 KiB), 1% of the file's 1900 pages
 *       runs:      7
 *       max gap:   0 pages
 *       identity:  build-id 0123...      (or: size N fnv1a64 H)
 *       relocs:    7.8 MiB, 336609 of them relative, read before any runtime runs; -z pack-relative-relocs would make them 249 KiB
 *       sections:  set pages of each allocated section, in address order
 *         .interp          1 of 1
 *         .note.gnu.build-id    - (its pages count for larger sections)
 *         .text           12 of 30
 *         (no section)     0 of 1
 *       segments:  one character per 4 pages: # all set, + half or more, - some, . none, x past the capacity
 *         LOAD r--             0  #
 *         LOAD r-x          1-31  #+-......-
 *       reads:     23 set pages in 6 runs inside PT_LOADs, read at each gap as:
 *         this bitmap, gap 0:       6 reads of      23 pages (92 KiB)
 *         nvme, gap 1:              5 reads of      24 pages (96 KiB)
 *         ssd, gap 6:               2 reads of      31 pages (124 KiB)
 *         hdd, gap 122:             1 read  of      40 pages (160 KiB)
 *
 * The share is of the file's pages; set pages past the file's end (a
 * trace of a bigger file could not set them, a hand-made bitmap can) are
 * counted apart.  A file longer than the capacity has pages no fill can
 * set: a "beyond:" line counts them and names the capacity to relink
 * with, and the segment strips show them as x.
 *
 * A page counts for the section that holds most of it, so small sections
 * sharing one page (the notes, .interp) do not add up to more than the
 * total: a section all of whose pages count for larger ones says so, and
 * the pages of no section (the ELF and program
 * headers, padding) are the last row.  Sections without file contents
 * (SHT_NOBITS) or of size 0 are not listed.
 *
 * The strips draw each PT_LOAD's file pages, one character per N pages,
 * N a power of two that keeps the longest strip within 64 characters, so
 * one sees at a glance where in the program the start-up pages lie.
 *
 * The reads say how contiguous the set is, which is what a start from a
 * slow device pays for: the planner the runtime and --run use (plan.c)
 * makes them from the set pages inside the PT_LOADs, at the region's own
 * max_gap and at each device profile's, so one can see what a fill for
 * another device, or a better layout (elfpatch --order), would read.
 * "Runs" are runs of adjacent set pages everywhere (the header's field,
 * this output, PBITMAP_DEBUG and --run -v; include/pbitmap-plan.h).
 *
 * Two more lines say when the region is not what the runtime reads: a
 * "stale:" line when a post-link tool left PT_PRESENT_BITMAP pointing
 * away from the note (the region shown is the note), and a "debug:" line
 * for a separate debug file, whose region is a copy that counts the
 * program's pages, so its sections and segments are not listed.
 *
 * The "relocs:" line is there when packing the file's relative
 * relocations (-z pack-relative-relocs) would take at least a read-around
 * window (32 pages) off what the dynamic linker reads before any runtime
 * runs (relocs.c): the bitmap cannot prefetch those pages.
 *
 * With --traces, the bitmap is checked against runs: for each trace, how
 * many of the pages it recorded for this build are set (the recall of the
 * bitmap on that run), and how many of the set pages the run used (its
 * precision):
 *
 *       traces:    pages of each trace the bitmap covers
 *         run1.trace  1180 of 1200 (98.3%), 20 missed; 1180 of 1300 set pages used (90.8%)
 *
 * A trace recorded on another build is refused as --fill refuses it.  The
 * arguments are split into traces and files as --fill splits them.
 *
 * Everything is computed, and every file and trace read and checked,
 * before anything is printed: an error prints only itself, never half a
 * report.  --json prints the same numbers as one JSON array with an
 * object per file (doc: elfpatch(1)); both forms print from one summary,
 * so their totals agree.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfpatch.h"

/* The longest segment strip, in characters.  */
#define STRIP_MAX 64

struct section_row
{
  const char *name;
  uint64_t addr;
  size_t index;
  uint64_t offset, size;        /* in the file */
  uint64_t first_page;
  uint64_t last_page;           /* inclusive */
  uint64_t pages;               /* that count for it */
  uint64_t set;                 /* of those */
};

struct segment_row
{
  uint64_t first_page, last_page;
  uint32_t flags;               /* PF_R, PF_W, PF_X */
  char *strip;
};

struct plan_row
{
  const char *label;
  uint32_t gap;
  struct plan_count count;
};

#define N_PLANS (1 + PBITMAP_DEVICE_HDD)

struct trace_cover
{
  const char *path;
  uint64_t used, covered;
};

/* What one file's report says, computed before any of it is printed.  */
struct summary
{
  struct image img;
  const unsigned char *bits;
  uint64_t capacity, file_pages, set, set_in_file, runs, past;
  struct section_row *sections;
  size_t n_sections;
  int no_shdrs;                 /* no section headers at all */
  uint64_t other_pages, other_set;      /* pages of no section */
  struct segment_row *segments;
  size_t n_segments;
  uint64_t strip_pages;         /* pages per strip character */
  uint64_t planned, plan_runs, outside;
  const char *unplanned;        /* why the runtime plans nothing, or null */
  struct plan_row plans[N_PLANS];
  struct trace_cover *covers;
  size_t n_covers;
  struct reloc_count relocs;
};

static int
row_cmp (const void *a, const void *b)
{
  const struct section_row *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* KIB KiB as KiB, or MiB or GiB with one decimal.  */
static void
print_kib (uint64_t kib)
{
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

/* PAGES pages of 4 KiB, as print_kib says it.  */
static void
print_amount (uint64_t pages)
{
  print_kib (pages * (PBITMAP_PAGE_SIZE / 1024));
}

/* Set pages of S's bitmap in [FIRST, LAST] (pages past the capacity are
   never set).  */
static uint64_t
set_between (const struct summary *s, uint64_t first, uint64_t last)
{
  if (first >= s->capacity || first > last)
    return 0;
  return bits_count (s->bits, first, last < s->capacity ? last + 1
                                                       : s->capacity);
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
      rows[n].offset = sh.sh_offset;
      rows[n].size = sh.sh_size;
      rows[n].first_page = sh.sh_offset >> PBITMAP_PAGE_SHIFT;
      rows[n].last_page = (sh.sh_offset + sh.sh_size - 1) >> PBITMAP_PAGE_SHIFT;
      n++;
    }
  qsort (rows, n, sizeof *rows, row_cmp);
  *out = rows;
  return n;
}

/* The bytes of file page PAGE that section R holds.  */
static uint64_t
bytes_on_page (const struct section_row *r, uint64_t page)
{
  uint64_t from = page * PBITMAP_PAGE_SIZE, to = from + PBITMAP_PAGE_SIZE;
  uint64_t end = r->offset + r->size;
  return (end < to ? end : to) - (r->offset > from ? r->offset : from);
}

/* Counts each file page for the section that holds most of it (the one
   first in address order among equals), the rest for no section.  */
static int
count_sections (struct summary *s)
{
  size_t shnum = 0;
  s->n_sections = collect_sections (&s->img, &s->sections);
  s->no_shdrs = elf_getshdrnum (s->img.elf, &shnum) != 0 || shnum == 0;
  if (s->n_sections == 0)
    return 0;
  size_t n = (size_t) s->file_pages + 1;
  uint32_t *owner = calloc (n, sizeof *owner), *most = calloc (n, sizeof *most);
  if (owner == NULL || most == NULL)
    {
      error (0, errno, "error: %s", s->img.path);
      free (owner);
      free (most);
      return -1;
    }
  for (size_t i = 0; i < s->n_sections; i++)
    {
      const struct section_row *r = &s->sections[i];
      for (uint64_t p = r->first_page; p <= r->last_page && p < s->file_pages;
           p++)
        if (bytes_on_page (r, p) > most[p])
          {
            most[p] = (uint32_t) bytes_on_page (r, p);
            owner[p] = (uint32_t) i + 1;
          }
    }
  for (uint64_t p = 0; p < s->file_pages; p++)
    {
      uint64_t set = set_between (s, p, p);
      if (owner[p] == 0)
        {
          s->other_pages++;
          s->other_set += set;
          continue;
        }
      s->sections[owner[p] - 1].pages++;
      s->sections[owner[p] - 1].set += set;
    }
  free (owner);
  free (most);
  return 0;
}

/* The character for the pages [FIRST, LAST] of a strip.  */
static char
strip_char (const struct summary *s, uint64_t first, uint64_t last)
{
  if (first >= s->capacity)
    return 'x';
  uint64_t usable = (last < s->capacity ? last : s->capacity - 1) - first + 1;
  uint64_t set = set_between (s, first, last);
  if (set == 0)
    return '.';
  if (set == usable)
    return '#';
  return 2 * set >= usable ? '+' : '-';
}

/* The PT_LOADs with file contents and their strips.  */
static int
draw_segments (struct summary *s)
{
  size_t phnum;
  if (elf_getphdrnum (s->img.elf, &phnum) != 0)
    {
      error (0, 0, "error: %s: %s", s->img.path, elf_errmsg (-1));
      return -1;
    }
  s->segments = calloc (phnum + 1, sizeof *s->segments);
  if (s->segments == NULL)
    goto nomem;
  uint64_t longest = 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (s->img.elf, (int) i, &ph) == NULL
          || ph.p_type != PT_LOAD || ph.p_filesz == 0
          || ph.p_offset > UINT64_MAX - ph.p_filesz)
        continue;
      struct segment_row *g = &s->segments[s->n_segments++];
      g->first_page = ph.p_offset >> PBITMAP_PAGE_SHIFT;
      g->last_page = (ph.p_offset + ph.p_filesz - 1) >> PBITMAP_PAGE_SHIFT;
      g->flags = ph.p_flags;
      if (g->last_page - g->first_page + 1 > longest)
        longest = g->last_page - g->first_page + 1;
    }
  s->strip_pages = 1;
  while (longest > s->strip_pages * STRIP_MAX)
    s->strip_pages *= 2;
  for (size_t i = 0; i < s->n_segments; i++)
    {
      struct segment_row *g = &s->segments[i];
      uint64_t n = (g->last_page - g->first_page) / s->strip_pages + 1;
      g->strip = malloc ((size_t) n + 1);
      if (g->strip == NULL)
        goto nomem;
      for (uint64_t k = 0; k < n; k++)
        {
          uint64_t first = g->first_page + k * s->strip_pages;
          uint64_t last = first + s->strip_pages - 1;
          g->strip[k] = strip_char (s, first, last < g->last_page
                                              ? last : g->last_page);
        }
      g->strip[n] = '\0';
    }
  return 0;

nomem:
  error (0, errno, "error: %s", s->img.path);
  return -1;
}

static void
count_chunk (void *ctx, uint64_t first, uint64_t npages)
{
  plan_count_chunk (ctx, first, npages);
}

/* The order table of S's region (version 2; see pbitmap_order_len).  */
static const unsigned char *
show_order (const struct summary *s)
{
  return s->img.buf + s->img.region.offset
         + pbitmap_order_offset (s->img.region.hdr.capacity);
}

/* The reads the runtime plans from the set pages (include/pbitmap-plan.h)
   at the bitmap's own max_gap (pinned, or the unknown device's when the
   reader chooses) and at each device class's.  */
static int
plan_reads (struct summary *s)
{
  struct page_range *loads;
  long n_loads = load_ranges (s->img.elf, &loads, &s->unplanned);
  if (n_loads < 0)
    {
      error (0, 0, "error: %s: %s", s->img.path, elf_errmsg (-1));
      return -1;
    }
  const struct pbitmap_header *h = &s->img.region.hdr;
  s->plans[0].label = h->flags & PBITMAP_F_GAP_AUTO ? "unknown"
                                                    : "this bitmap";
  s->plans[0].gap = h->max_gap;
  for (enum pbitmap_device d = PBITMAP_DEVICE_NVME; d <= PBITMAP_DEVICE_HDD;
       d++)
    {
      s->plans[d].label = pbitmap_device_name (d);
      s->plans[d].gap = pbitmap_device_gap (d);
    }
  struct plan_order order = { show_order (s), pbitmap_order_len (h),
                              s->img.msb };
  for (size_t i = 0; i < N_PLANS; i++)
    {
      struct pbitmap_chunker chunker;
      pbitmap_chunker_init (&chunker, s->plans[i].gap, count_chunk,
                            &s->plans[i].count);
      s->planned = plan_bitmap (loads, (size_t) n_loads, s->bits,
                                s->capacity, &order, &chunker);
      s->plan_runs = chunker.runs;
    }
  s->outside = s->set - s->planned;
  free (loads);
  return 0;
}

/* How much of trace PATH's pages for this build S's bitmap covers.  */
static int
cover_trace (struct summary *s, const char *path, struct trace_cover *c)
{
  size_t nbytes = (size_t) pbitmap_bits_size (s->capacity) + 1;
  unsigned char *run = calloc (nbytes, 1);
  struct trace_block past = { 0 };
  int rc = -1;
  c->path = path;
  if (run == NULL)
    error (0, errno, "error: %s", s->img.path);
  else if (trace_pages (path, &s->img, run, &past, NULL, NULL) == 0)
    {
      for (uint64_t page = 0; page < s->capacity; page++)
        if (pbitmap_test (run, page))
          {
            c->used++;
            c->covered += (uint64_t) pbitmap_test (s->bits, page);
          }
      rc = 0;
    }
  free (past.ranges);
  free (run);
  return rc;
}

static void
summary_free (struct summary *s)
{
  for (size_t i = 0; i < s->n_segments; i++)
    free (s->segments[i].strip);
  free (s->segments);
  free (s->sections);
  free (s->covers);
  image_close (&s->img);
}

/* Reads FILE and everything its report says into S; -1 after a message.  */
static int
summarize (struct summary *s, const char *file, char **traces,
           size_t n_traces)
{
  memset (s, 0, sizeof *s);
  if (image_open (file, IMAGE_STALE, &s->img) != 0)
    return -1;
  const struct region *r = &s->img.region;
  s->bits = image_bits (&s->img);
  s->capacity = r->hdr.capacity;
  s->file_pages = (s->img.size + PBITMAP_PAGE_SIZE - 1) / PBITMAP_PAGE_SIZE;
  s->set = bits_count (s->bits, 0, s->capacity);
  s->set_in_file = s->file_pages ? set_between (s, 0, s->file_pages - 1) : 0;
  s->runs = bits_runs (s->bits, s->capacity);
  s->past = s->file_pages > s->capacity ? s->file_pages - s->capacity : 0;
  if (!s->img.debug_file
      && (count_sections (s) != 0 || draw_segments (s) != 0
          || plan_reads (s) != 0))
    return -1;
  if (!s->img.debug_file && relocs_count (s->img.elf, &s->relocs) != 0)
    {
      error (0, errno, "error: %s", file);
      return -1;
    }
  s->covers = calloc (n_traces + 1, sizeof *s->covers);
  if (s->covers == NULL)
    {
      error (0, errno, "error: %s", file);
      return -1;
    }
  for (; s->n_covers < n_traces; s->n_covers++)
    if (cover_trace (s, traces[s->n_covers], &s->covers[s->n_covers]) != 0)
      return -1;
  return 0;
}

/* ---- the report for people -------------------------------------------- */

/* Tenths of a percent of PART in WHOLE, for "98.3%".  */
static uint64_t
per_mille (uint64_t part, uint64_t whole)
{
  return whole == 0 ? 1000 : (part * 1000 + whole / 2) / whole;
}

static void
print_sections (const struct summary *s)
{
  if (s->n_sections == 0)
    {
      printf ("  sections:  none (%s)\n", s->no_shdrs ? "no section headers"
              : "no allocated sections with contents");
      return;
    }
  printf ("  sections:  set pages of each allocated section, in address "
          "order\n");
  int width = (int) strlen ("(no section)");
  for (size_t i = 0; i < s->n_sections; i++)
    if ((int) strlen (s->sections[i].name) > width)
      width = (int) strlen (s->sections[i].name);
  for (size_t i = 0; i < s->n_sections; i++)
    if (s->sections[i].pages == 0)
      printf ("    %-*s %6s (its pages count for larger sections)\n", width,
              s->sections[i].name, "-");
    else
      printf ("    %-*s %6" PRIu64 " of %" PRIu64 "\n", width,
              s->sections[i].name, s->sections[i].set, s->sections[i].pages);
  printf ("    %-*s %6" PRIu64 " of %" PRIu64 "\n", width, "(no section)",
          s->other_set, s->other_pages);
}

static void
print_segments (const struct summary *s)
{
  if (s->n_segments == 0)
    return;
  char per[32] = "";
  if (s->strip_pages > 1)
    snprintf (per, sizeof per, "%" PRIu64 " ", s->strip_pages);
  printf ("  segments:  one character per %spage%s: # all set, + half or "
          "more, - some, . none, x past the capacity\n", per,
          s->strip_pages == 1 ? "" : "s");
  for (size_t i = 0; i < s->n_segments; i++)
    {
      const struct segment_row *g = &s->segments[i];
      char range[48];
      if (g->first_page == g->last_page)
        snprintf (range, sizeof range, "%" PRIu64, g->first_page);
      else
        snprintf (range, sizeof range, "%" PRIu64 "-%" PRIu64, g->first_page,
                  g->last_page);
      printf ("    LOAD %c%c%c %13s  %s\n", g->flags & PF_R ? 'r' : '-',
              g->flags & PF_W ? 'w' : '-', g->flags & PF_X ? 'x' : '-',
              range, g->strip);
    }
}

static void
print_reads (const struct summary *s)
{
  if (s->img.debug_file)
    {
      printf ("  reads:     none planned (a debug file is never read)\n");
      return;
    }
  if (s->set == 0)
    {
      printf ("  reads:     none (no page set)\n");
      return;
    }
  if (s->unplanned != NULL)
    {
      printf ("  reads:     none planned (%s)\n", s->unplanned);
      return;
    }
  printf ("  reads:     %" PRIu64 " set page%s in %" PRIu64 " run%s inside "
          "PT_LOADs", s->planned, s->planned == 1 ? "" : "s", s->plan_runs,
          s->plan_runs == 1 ? "" : "s");
  if (s->outside > 0)
    printf (" (%" PRIu64 " outside, never read)", s->outside);
  printf (", read at each gap as:\n");
  for (size_t i = 0; i < N_PLANS; i++)
    {
      const struct plan_row *p = &s->plans[i];
      char head[64];
      snprintf (head, sizeof head, "%s, gap %" PRIu32 ":", p->label, p->gap);
      printf ("    %-20s %6" PRIu64 " read%s of %7" PRIu64 " pages (", head,
              p->count.reads, p->count.reads == 1 ? " " : "s",
              p->count.pages);
      print_amount (p->count.pages);
      printf (")\n");
    }
}

static void
print_traces (const struct summary *s)
{
  if (s->n_covers == 0)
    return;
  printf ("  traces:    pages of each trace the bitmap covers\n");
  for (size_t i = 0; i < s->n_covers; i++)
    {
      const struct trace_cover *c = &s->covers[i];
      uint64_t recall = per_mille (c->covered, c->used);
      uint64_t precision = per_mille (c->covered, s->set);
      printf ("    %s  %" PRIu64 " of %" PRIu64 " (%" PRIu64 ".%" PRIu64
              "%%), %" PRIu64 " missed; %" PRIu64 " of %" PRIu64 " set pages "
              "used (%" PRIu64 ".%" PRIu64 "%%)\n", c->path, c->covered,
              c->used, recall / 10, recall % 10, c->used - c->covered,
              c->covered, s->set, precision / 10, precision % 10);
    }
}

static void
print_head (const struct summary *s)
{
  const struct region *r = &s->img.region;
  printf ("%s:\n", s->img.path);
  printf ("  region:    offset 0x%" PRIx64 ", vaddr 0x%" PRIx64 ", size %"
          PRIu64 " bytes\n", r->offset, r->vaddr, r->size);
  if (r->stale)
    printf ("  stale:     PT_PRESENT_BITMAP says offset 0x%" PRIx64 ", so "
            "the runtime finds no bitmap; elfpatch --resync fixes that\n",
            r->phdr_offset);
  if (s->img.debug_file)
    printf ("  debug:     a separate debug file; this region is a copy of "
            "the program's, whose file pages its bits count\n");
  printf ("  capacity:  %" PRIu64 " pages (", s->capacity);
  print_amount (s->capacity);
  printf (")\n");
  if (s->past > 0 && !s->img.debug_file)
    printf ("  beyond:    %" PRIu64 " of the file's %" PRIu64 " pages lie "
            "past the capacity, where no page can be set; relink with "
            "-Wl,-plugin-opt=capacity=%" PRIu64 "\n", s->past, s->file_pages,
            s->file_pages);
  printf ("  filled:    %s\n", r->hdr.flags & PBITMAP_F_FILLED ? "yes" : "no");
}

void
show_read_order (const struct pbitmap_header *h, const unsigned char *table,
                 int msb)
{
  uint64_t len = pbitmap_order_len (h);
  if (h->version < 2)
    printf ("ascending (a version-%u region has no read order)",
            h->version);
  else if (len == 0)
    printf ("ascending (no read order stored)");
  else
    {
      printf ("%" PRIu64 " block%s of %u pages first, in first-touch order, "
              "then the others ascending; first pages", len,
              len == 1 ? "" : "s", PBITMAP_BLOCK_PAGES);
      for (uint64_t i = 0; i < len && i < 8; i++)
        printf ("%s%" PRIu64, i ? "," : " ",
                (uint64_t) pbitmap_order_get (table, i, msb)
                * PBITMAP_BLOCK_PAGES);
      if (len > 8)
        printf (",...");
    }
}

/* Packing saves less than one read-around window (read_ahead_kb 128, 32
   pages) below this: one fault's read, not worth a line.  */
#define RELOCS_LINE_PAGES 32

/* The relocs: line, when packing the relative relocations would take
   RELOCS_LINE_PAGES or more off what the dynamic linker reads.  */
static void
print_relocs (const struct summary *s)
{
  const struct reloc_count *rc = &s->relocs;
  if (rc->packed
      || rc->bytes - rc->packed_bytes < RELOCS_LINE_PAGES * PBITMAP_PAGE_SIZE)
    return;
  printf ("  relocs:    ");
  print_kib ((rc->bytes + 1023) / 1024);
  printf (", %" PRIu64 " of them relative, read before any runtime runs; "
          "-z pack-relative-relocs would make them ", rc->relative);
  print_kib ((rc->packed_bytes + 1023) / 1024);
  printf ("\n");
}

static void
print_plain (const struct summary *s)
{
  const struct region *r = &s->img.region;
  print_head (s);
  printf ("  pages set: %" PRIu64 " (", s->set);
  print_amount (s->set);
  printf (")");
  if (s->set != r->hdr.pages_set)
    printf (" (the header says %" PRIu64 ")", r->hdr.pages_set);
  if (!s->img.debug_file)
    {
      uint64_t share = per_mille (s->set_in_file, s->file_pages);
      printf (", %" PRIu64 "%% of the file's %" PRIu64 " pages",
              (share + 5) / 10, s->file_pages);
      if (s->set > s->set_in_file)
        printf (", %" PRIu64 " past its end", s->set - s->set_in_file);
    }
  printf ("\n  runs:      %" PRIu64, s->runs);
  if (s->runs != r->hdr.runs)
    printf (" (the header says %" PRIu64 ")", r->hdr.runs);
  printf ("\n  max gap:   %" PRIu32 " pages", r->hdr.max_gap);
  if (r->hdr.flags & PBITMAP_F_GAP_AUTO)
    printf (" where the device cannot be told; the reader chooses for its "
            "device");
  printf ("\n  order:     ");
  show_read_order (&r->hdr, show_order (s), s->img.msb);
  char id[IDENTITY_TEXT_MAX];
  identity_format (&s->img.id, id, sizeof id);
  printf ("\n  identity:  %s\n", id);
  print_relocs (s);
  if (s->img.debug_file)
    printf ("  sections:  not listed (the program's, not this file's, "
            "pages are counted)\n");
  else
    {
      print_sections (s);
      print_segments (s);
    }
  print_reads (s);
  print_traces (s);
}

/* ---- the report for tools --------------------------------------------- */

/* S as a JSON string.  */
static void
json_string (const char *s)
{
  putchar ('"');
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    if (*p == '"' || *p == '\\')
      printf ("\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      printf ("\\u%04x", *p);
    else
      putchar (*p);
  putchar ('"');
}

static void
json_key (const char *indent, const char *key)
{
  printf ("%s", indent);
  json_string (key);
  printf (": ");
}

static void
json_u64 (const char *indent, const char *key, uint64_t v, const char *end)
{
  json_key (indent, key);
  printf ("%" PRIu64 "%s\n", v, end);
}

static void
json_sections (const struct summary *s)
{
  json_key ("    ", "sections");
  printf ("[");
  for (size_t i = 0; i < s->n_sections; i++)
    {
      printf ("%s\n      {\"name\": ", i ? "," : "");
      json_string (s->sections[i].name);
      printf (", \"pages\": %" PRIu64 ", \"set\": %" PRIu64 "}",
              s->sections[i].pages, s->sections[i].set);
    }
  printf ("%s],\n", s->n_sections ? "\n    " : "");
  printf ("    \"no_section\": {\"pages\": %" PRIu64 ", \"set\": %" PRIu64
          "},\n", s->other_pages, s->other_set);
}

static void
json_segments (const struct summary *s)
{
  json_u64 ("    ", "strip_pages", s->strip_pages, ",");
  json_key ("    ", "segments");
  printf ("[");
  for (size_t i = 0; i < s->n_segments; i++)
    {
      const struct segment_row *g = &s->segments[i];
      printf ("%s\n      {\"first_page\": %" PRIu64 ", \"last_page\": %"
              PRIu64 ", \"flags\": \"%c%c%c\", \"strip\": ", i ? "," : "",
              g->first_page, g->last_page, g->flags & PF_R ? 'r' : '-',
              g->flags & PF_W ? 'w' : '-', g->flags & PF_X ? 'x' : '-');
      json_string (g->strip);
      printf ("}");
    }
  printf ("%s],\n", s->n_segments ? "\n    " : "");
}

static void
json_reads (const struct summary *s)
{
  json_u64 ("    ", "planned", s->planned, ",");
  json_u64 ("    ", "planned_runs", s->plan_runs, ",");
  json_u64 ("    ", "outside_loads", s->outside, ",");
  json_key ("    ", "unplanned");
  if (s->unplanned != NULL)
    json_string (s->unplanned);
  else
    printf ("null");
  printf (",\n");
  json_key ("    ", "reads");
  printf ("[");
  for (size_t i = 0; i < N_PLANS && s->set > 0; i++)
    {
      const struct plan_row *p = &s->plans[i];
      printf ("%s\n      {\"label\": ", i ? "," : "");
      json_string (p->label);
      printf (", \"gap\": %" PRIu32 ", \"reads\": %" PRIu64 ", \"pages\": %"
              PRIu64 "}", p->gap, p->count.reads, p->count.pages);
    }
  printf ("%s],\n", s->set > 0 ? "\n    " : "");
}

static void
json_traces (const struct summary *s)
{
  json_key ("    ", "traces");
  printf ("[");
  for (size_t i = 0; i < s->n_covers; i++)
    {
      const struct trace_cover *c = &s->covers[i];
      printf ("%s\n      {\"trace\": ", i ? "," : "");
      json_string (c->path);
      printf (", \"used\": %" PRIu64 ", \"covered\": %" PRIu64 "}", c->used,
              c->covered);
    }
  printf ("%s]\n", s->n_covers ? "\n    " : "");
}

static void
print_json (const struct summary *s, int last)
{
  const struct region *r = &s->img.region;
  char id[IDENTITY_TEXT_MAX];
  identity_format (&s->img.id, id, sizeof id);
  printf ("  {\n");
  json_key ("    ", "file");
  json_string (s->img.path);
  printf (",\n");
  json_u64 ("    ", "region_offset", r->offset, ",");
  json_u64 ("    ", "region_vaddr", r->vaddr, ",");
  json_u64 ("    ", "region_size", r->size, ",");
  printf ("    \"stale\": %s,\n", r->stale ? "true" : "false");
  printf ("    \"debug_file\": %s,\n", s->img.debug_file ? "true" : "false");
  json_u64 ("    ", "capacity", s->capacity, ",");
  json_u64 ("    ", "file_pages", s->file_pages, ",");
  json_u64 ("    ", "past_capacity", s->past, ",");
  printf ("    \"filled\": %s,\n",
          r->hdr.flags & PBITMAP_F_FILLED ? "true" : "false");
  json_u64 ("    ", "pages_set", s->set, ",");
  json_u64 ("    ", "pages_set_in_file", s->set_in_file, ",");
  json_u64 ("    ", "header_pages_set", r->hdr.pages_set, ",");
  json_u64 ("    ", "runs", s->runs, ",");
  json_u64 ("    ", "header_runs", r->hdr.runs, ",");
  json_u64 ("    ", "max_gap", r->hdr.max_gap, ",");
  printf ("    \"gap_auto\": %s,\n",
          r->hdr.flags & PBITMAP_F_GAP_AUTO ? "true" : "false");
  json_u64 ("    ", "version", r->hdr.version, ",");
  json_key ("    ", "order");
  printf ("[");
  for (uint64_t i = 0; i < pbitmap_order_len (&r->hdr); i++)
    printf ("%s%" PRIu32, i ? ", " : "",
            pbitmap_order_get (show_order (s), i, s->img.msb));
  printf ("],\n");
  json_key ("    ", "identity");
  json_string (id);
  printf (",\n");
  json_key ("    ", "relocs");
  printf ("{\"bytes\": %" PRIu64 ", \"relative\": %" PRIu64 ", \"packed\": %s, "
          "\"packed_bytes\": %" PRIu64 "},\n", s->relocs.bytes,
          s->relocs.relative, s->relocs.packed ? "true" : "false",
          s->relocs.packed_bytes);
  json_sections (s);
  json_segments (s);
  json_reads (s);
  json_traces (s);
  printf ("  }%s\n", last ? "" : ",");
}

/* ---- the command ------------------------------------------------------ */

int
show_command (char **args, size_t n_args, int with_traces, int json)
{
  size_t n_traces = with_traces ? trace_args (args, n_args) : 0;
  if (with_traces && n_traces == n_args)
    {
      error (0, 0, "error: %s: a trace; --show --traces needs a binary after "
             "the traces", args[n_args - 1]);
      return 1;
    }
  size_t n_files = n_args - n_traces;
  struct summary *sums = calloc (n_files, sizeof *sums);
  if (sums == NULL)
    {
      error (0, errno, "error: %s", args[n_traces]);
      return 1;
    }
  int status = 0;
  size_t n = 0;
  for (; n < n_files; n++)
    if (summarize (&sums[n], args[n_traces + n], args, n_traces) != 0)
      {
        status = 1;
        n++;
        break;
      }
  if (json && status == 0)
    printf ("[\n");
  for (size_t i = 0; i < n && status == 0; i++)
    if (json)
      print_json (&sums[i], i + 1 == n);
    else
      {
        if (i > 0)
          printf ("\n");
        print_plain (&sums[i]);
      }
  if (json && status == 0)
    printf ("]\n");
  if (fflush (stdout) != 0 || ferror (stdout))
    {
      error (0, errno, "error: standard output");
      status = 1;
    }
  for (size_t i = 0; i < n; i++)
    summary_free (&sums[i]);
  free (sums);
  return status;
}
