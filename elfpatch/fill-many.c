/* fill-many.c: --fill TRACE... [FILE...], the files a fill is for.
 *
 * A trace names every file its run mapped: the program, its libraries,
 * the dynamic linker, data files.  A project builds several of them with
 * the plugin (a program and its own libraries; a libtool build hides both
 * under .libs/ behind a wrapper script), so one trace fills them all.
 *
 * The arguments are traces first, then files: the first is always a
 * trace; after it, an argument is a trace while it reads as one (its
 * first statement is 'pbitmap-trace', trace.c), and everything from the
 * first that does not is a file.  So "--fill T1 T2 BINARY" means what it
 * always meant, and "--fill T FILE1 FILE2" fills two files.
 *
 * With files, each one is filled from all the traces as fill.c does it,
 * each on its own: one that fails (no region, another build) does not
 * stop the others, and the exit status is 1.  A script among them (a
 * libtool wrapper) is named as such, with the way out.
 *
 * Without files, the traces are read whole and every file they name is
 * considered once, in the order the traces name them.  A file is filled
 * from the traces that hold a block of its build; it is skipped, with a
 * line on standard output that says why, when it is gone, is not ELF,
 * has no region (not linked with the plugin: the C library, the dynamic
 * linker), or has changed since every trace that names it was recorded.
 * Each filled file gets a line too.  Skipping is not an error; a file
 * that cannot be filled (unreadable, damaged, pages past the capacity) is,
 * and so is a set of traces that names no file with a region.
 */

#include <errno.h>
#include <error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfpatch.h"

/* The traces, read whole, for the many-files form.  */
struct trace_set
{
  char **paths;
  struct trace *traces;
  size_t n;
};

static void
trace_set_free (struct trace_set *s)
{
  for (size_t i = 0; i < s->n; i++)
    trace_free (&s->traces[i]);
  free (s->traces);
}

/* Whether trace T holds a block with identity ID.  */
static int
trace_has_build (const struct trace *t, const struct identity *id)
{
  for (size_t i = 0; i < t->n_blocks; i++)
    if (identity_equal (&t->blocks[i].id, id))
      return 1;
  return 0;
}

/* Whether PATH was named by a block before block B of trace T.  */
static int
named_before (const struct trace_set *s, size_t t, size_t b, const char *path)
{
  for (size_t i = 0; i <= t; i++)
    for (size_t j = 0; j < (i == t ? b : s->traces[i].n_blocks); j++)
      if (strcmp (s->traces[i].blocks[j].path, path) == 0)
        return 1;
  return 0;
}

/* Why PATH is not filled, or null when it is to be: then USE (of S->n)
   marks the traces of its build.  -1 in *FAILED after a message when it
   cannot be read.  */
static const char *
skip_reason (const struct trace_set *s, const char *path, char **use,
             size_t *n_use, int *failed)
{
  struct stat st;
  if (stat (path, &st) != 0 && errno == ENOENT)
    return "no longer there";
  if (starts_with (path, ELFMAG, SELFMAG) == 0)
    return "not an ELF file";

  struct image img;
  const char *why = NULL;
  if (image_open (path, IMAGE_ANY_REGION, &img) != 0)
    *failed = -1;
  else if (img.region.size == 0)
    why = "no bitmap region (not linked with the pbitmap plugin)";
  else
    {
      *n_use = 0;
      for (size_t i = 0; i < s->n; i++)
        if (trace_has_build (&s->traces[i], &img.id))
          use[(*n_use)++] = s->paths[i];
      if (*n_use == 0)
        why = "another build than the traces recorded (rebuilt since?)";
    }
  image_close (&img);
  return why;
}

/* Fills every file the traces of S name that can be filled.  */
static int
fill_named (const struct trace_set *s, const struct fill_policy *policy,
            const struct gap_choice *gap)
{
  char **use = calloc (s->n, sizeof *use);
  size_t filled = 0, failed = 0;
  if (use == NULL)
    {
      error (0, errno, "error: %s", s->paths[0]);
      return 1;
    }
  for (size_t t = 0; t < s->n; t++)
    for (size_t b = 0; b < s->traces[t].n_blocks; b++)
      {
        const char *path = s->traces[t].blocks[b].path;
        size_t n_use = 0;
        int bad = 0;
        if (named_before (s, t, b, path))
          continue;
        const char *why = skip_reason (s, path, use, &n_use, &bad);
        if (bad)
          failed++;
        else if (why != NULL)
          printf ("skipped %s: %s\n", path, why);
        else if (fill_binary (path, use, n_use, policy, gap) != 0)
          failed++;
        else
          {
            printf ("filled %s (from %zu of %zu trace%s)\n", path, n_use,
                    s->n, s->n == 1 ? "" : "s");
            filled++;
          }
      }
  free (use);
  if (filled == 0 && failed == 0)
    error (0, 0, "error: %s: nothing filled; every file %s was skipped",
           s->paths[0], s->n == 1 ? "it names" : "the traces name");
  return filled > 0 && failed == 0 ? 0 : 1;
}

static int
fill_all_named (char **traces, size_t n_traces,
                const struct fill_policy *policy, const struct gap_choice *gap)
{
  struct trace_set s = { .paths = traces };
  int status = 1;
  s.traces = calloc (n_traces, sizeof *s.traces);
  if (s.traces == NULL)
    {
      error (0, errno, "error: %s", traces[0]);
      return 1;
    }
  for (; s.n < n_traces; s.n++)
    if (trace_read (traces[s.n], &s.traces[s.n]) != 0)
      goto out;
  status = fill_named (&s, policy, gap);
  fflush (stdout);

out:
  trace_set_free (&s);
  return status;
}

/* Fills FILE from the traces; a script is named as one.  */
static int
fill_file (const char *file, char **traces, size_t n_traces,
           const struct fill_policy *policy, const struct gap_choice *gap)
{
  if (starts_with (file, "#!", 2) > 0)
    {
      error (0, 0, "error: %s: a script, not an ELF file (a libtool wrapper? "
             "--fill with the traces alone fills every file they name)",
             file);
      return -1;
    }
  return fill_binary (file, traces, n_traces, policy, gap);
}

size_t
trace_args (char **args, size_t n_args)
{
  size_t n_traces = 1;
  while (n_traces < n_args && trace_sniff (args[n_traces]))
    n_traces++;
  return n_traces;
}

int
fill_command (char **args, size_t n_args, const struct fill_policy *policy,
              const struct gap_choice *gap)
{
  size_t n_traces = trace_args (args, n_args);
  if (n_traces == n_args)
    return fill_all_named (args, n_traces, policy, gap);

  int status = 0;
  for (size_t i = n_traces; i < n_args; i++)
    if (fill_file (args[i], args, n_traces, policy, gap) != 0)
      status = 1;
  return status;
}
