/* elf-image.c: libFuzzer harness for elfpatch's ELF reading.
 *
 * Every ELF file elfpatch reads may come from anywhere, so every byte of
 * it is hostile.  The harness feeds one fuzzed file through the very
 * functions the commands use, linked from elfpatch's own objects:
 *
 *   --show    show_command: image_open, the region and identity checks,
 *             the section table and the bit counts, printed to /dev/null;
 *   --fill    image_open for an update, then fill_image with a trace
 *             bound to the file's identity (so that its pages are set,
 *             some of them past the capacity) under a policy the input
 *             picks, then a clear; after each, the region must still be
 *             found and valid in the buffer that update_write_back would
 *             write; and --show --traces with that trace;
 *   --record  identity_compute on an open descriptor, as --record
 *             identifies the files a program maps, and function_starts,
 *             as it finds the function starts of a traced file (the
 *             starts must be ascending, without repeats);
 *   --resync  on a file whose program header is stale: after the
 *             re-sync the buffer must hold a region found through its
 *             program header, where the note was, and the same identity.
 *
 * The file lives in a memfd and is named by its /proc/self/fd path, so
 * elfpatch opens, locks and reads it as it would any file, without disk
 * I/O.  Nothing is written back.  elfpatch's messages go to standard
 * error; run with -close_fd_mask=2 to keep them out of the fuzzer's log.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfpatch.h"
#include "memfile.h"

int elfpatch_verbose;
int elfpatch_quiet = 1;

static struct memfile elf_file, trace_file;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  memfile_open (&elf_file, "elf");
  memfile_open (&trace_file, "trace");
  if (freopen ("/dev/null", "w", stdout) == NULL)
    abort ();
  elf_version (EV_CURRENT);
  return 0;
}

/* The region in IMG's buffer must still check out after a fill or a
   clear: a fill that broke it would write a damaged file.  */
static void
region_still_valid (struct image *img)
{
  struct region r;
  char why[256];
  if (region_find (img->elf, img->buf, -1, img->size, &r, why, sizeof why)
      != 0
      || r.offset != img->region.offset || r.size != img->region.size
      || r.hdr.pages_set != img->region.hdr.pages_set
      || r.hdr.runs != img->region.hdr.runs
      || r.hdr.pages_set != bits_count (image_bits (img), 0, r.hdr.capacity))
    {
      fprintf (stderr, "region damaged by a fill or clear: %s\n", why);
      abort ();
    }
}

/* A trace for IMG with pages picked from DATA, and the pages around the
   capacity, so that both the bits and the dropped-page count are run.  */
static int
trace_for (const struct image *img, const uint8_t *data, size_t size)
{
  struct trace t = { 0 };
  struct trace_block *b = trace_add_block (&t, img->path);
  if (b == NULL)
    abort ();
  b->id = img->id;
  uint64_t cap = img->region.hdr.capacity;
  uint64_t page = 0;
  for (size_t i = 0; i < size && i < 64; i++)
    {
      page += data[i] % 8;
      if (page < cap && trace_block_add_range (b, page, page) != 0)
        abort ();
      page++;
    }
  if (page < cap && cap > 0 && trace_block_add_range (b, cap - 1, cap + 2) != 0)
    abort ();
  int rc = trace_write (trace_file.path, &t);
  trace_free (&t);
  return rc;
}

/* A fill with the trace given twice, so that the pages are counted
   across traces, and the policy picked by the first bytes; then --show
   --traces on the filled file, as far as the buffer goes; then a clear.  */
static void
fill_and_clear (const uint8_t *data, size_t size)
{
  struct image img;
  if (image_open (elf_file.path, IMAGE_UPDATE, &img) == 0
      && trace_for (&img, data, size) == 0)
    {
      char *traces[] = { trace_file.path, trace_file.path };
      struct gap_choice gap = { .explicit_gap = 1, .max_gap = 8 };
      struct fill_policy policy = {
        .merge = size > 0 ? (enum merge_rule) (data[0] % 3) : MERGE_SHARE,
        .min_share = FILL_DEFAULT_SHARE,
        .budget_given = size > 1 && (data[1] & 1),
        .budget_pages = size > 1 ? data[1] : 0,
        .age_weight = size > 2 ? data[2] % 3 : 0,
      };
      if (fill_image (&img, traces, 2, &policy, &gap) >= 0)
        region_still_valid (&img);
      if (fill_image (&img, NULL, 0, NULL, NULL) >= 0)
        region_still_valid (&img);
      char *show_args[] = { trace_file.path, elf_file.path };
      show_command (show_args, 2, 1, 0);
    }
  image_close (&img);
}

static void
resync_stale (void)
{
  struct image img;
  if (image_open (elf_file.path, IMAGE_UPDATE | IMAGE_STALE, &img) == 0
      && img.region.stale && image_resync (&img) == 0)
    {
      /* A fresh libelf handle: the image's may have cached the old
         program headers.  */
      Elf *elf = elf_memory ((char *) img.buf, img.size);
      struct region r;
      struct identity id;
      char why[512] = "";
      if (elf == NULL
          || region_find (elf, img.buf, -1, img.size, &r, why, sizeof why)
             != 0
          || r.offset != img.region.offset || r.size != img.region.size
          || identity_compute (elf_file.path, elf, img.buf, -1, img.size,
                               &id) != 0
          || !identity_equal (&id, &img.id))
        {
          fprintf (stderr, "re-sync left no valid region or changed the "
                   "identity: %s\n", why);
          abort ();
        }
      elf_end (elf);
    }
  image_close (&img);
}

static void
check_function_starts (Elf *elf)
{
  uint64_t *starts;
  size_t n;
  if (function_starts (elf, elf_file.path, &starts, &n) != 0)
    return;
  for (size_t i = 1; i < n; i++)
    if (starts[i] <= starts[i - 1])
      {
        fprintf (stderr, "function starts not ascending\n");
        abort ();
      }
  free (starts);
}

static void
record_identity (size_t size)
{
  Elf *elf = elf_begin (elf_file.fd, ELF_C_READ_MMAP, NULL);
  int is_elf = elf != NULL && elf_kind (elf) == ELF_K_ELF;
  struct identity id;
  identity_compute (elf_file.path, is_elf ? elf : NULL, NULL, elf_file.fd,
                    size, &id);
  if (is_elf)
    check_function_starts (elf);
  if (elf != NULL)
    elf_end (elf);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  memfile_set (&elf_file, data, size);
  char *show_args[] = { elf_file.path };
  show_command (show_args, 1, 0, 0);
  fill_and_clear (data, size);
  resync_stale ();
  record_identity (size);
  return 0;
}
