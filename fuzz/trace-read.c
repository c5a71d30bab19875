/* trace-read.c: libFuzzer harness for elfpatch's trace parser.
 *
 * Traces are text that users mail around, so trace_read must refuse
 * anything malformed with a message and never misbehave.  The harness
 * parses one fuzzed trace (from a memfd named by its /proc/self/fd path,
 * as --fill opens any trace), and for every trace it accepts checks the
 * round trip --record relies on: trace_write of the parsed blocks, read
 * back, gives the same files, identities, page ranges and 'order' and
 * 'calls' lists.  (The 'command' line is informational and not
 * compared.)  Read again for the identity of its first block, as --fill
 * reads it, the trace must be accepted too and give exactly the blocks
 * of that identity.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfpatch.h"
#include "memfile.h"

int elfpatch_verbose;
int elfpatch_quiet = 1;

static struct memfile in_file, out_file;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  memfile_open (&in_file, "trace-in");
  memfile_open (&out_file, "trace-out");
  return 0;
}

static int
same_array (const void *x, size_t nx, const void *y, size_t ny, size_t size)
{
  return nx == ny && (nx == 0 || memcmp (x, y, nx * size) == 0);
}

static int
block_equal (const struct trace_block *x, const struct trace_block *y)
{
  return strcmp (x->path, y->path) == 0 && identity_equal (&x->id, &y->id)
         && same_array (x->ranges, x->n_ranges, y->ranges, y->n_ranges,
                        sizeof *x->ranges)
         && same_array (x->order, x->n_order, y->order, y->n_order,
                        sizeof *x->order)
         && same_array (x->calls, x->n_calls, y->calls, y->n_calls,
                        sizeof *x->calls);
}

static int
blocks_equal (const struct trace *a, const struct trace *b)
{
  if (a->n_blocks != b->n_blocks)
    return 0;
  for (size_t i = 0; i < a->n_blocks; i++)
    if (!block_equal (&a->blocks[i], &b->blocks[i]))
      return 0;
  return 1;
}

/* Whether KEPT holds exactly the blocks of ALL with identity ID.  */
static int
blocks_kept (const struct trace *all, const struct trace *kept,
             const struct identity *id)
{
  size_t k = 0;
  for (size_t i = 0; i < all->n_blocks; i++)
    if (identity_equal (&all->blocks[i].id, id)
        && (k >= kept->n_blocks
            || !block_equal (&all->blocks[i], &kept->blocks[k++])))
      return 0;
  return k == kept->n_blocks;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct trace t, again;
  memfile_set (&in_file, data, size);
  if (trace_read (in_file.path, &t) != 0)
    return 0;
  if (trace_write (out_file.path, &t) != 0
      || trace_read (out_file.path, &again) != 0)
    {
      fprintf (stderr, "an accepted trace does not survive being written\n");
      abort ();
    }
  if (!blocks_equal (&t, &again))
    {
      fprintf (stderr, "an accepted trace changes when written and read\n");
      abort ();
    }
  trace_free (&again);
  if (t.n_blocks > 0)
    {
      struct identity id = t.blocks[0].id;
      if (trace_read_for (in_file.path, &id, &again) != 0
          || !blocks_kept (&t, &again, &id))
        {
          fprintf (stderr, "read for one identity, an accepted trace does "
                   "not give that identity's blocks\n");
          abort ();
        }
      trace_free (&again);
    }
  trace_free (&t);
  return 0;
}
