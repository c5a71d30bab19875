/* trace.c: read and write trace files.
 *
 * A trace is text, one statement per line, so that people can read, diff
 * and merge traces and so that a trace survives being mailed around:
 *
 *     pbitmap-trace 3
 *     command /usr/bin/demo --flag
 *     file /usr/bin/demo
 *     build-id 4f1c0e5b...            (or: size N fnv1a64 H)
 *     pagesize 4096
 *     pages 0-3,7,12-40
 *     order 12,13,0,7,1              (version 2)
 *     calls 49216,53344,1120         (version 2)
 *     end
 *
 * Blank lines and lines starting with '#' are comments.  In a 'file' path
 * "\\" stands for a backslash and "\n" for a newline; everything else is
 * literal, spaces included.  Page lists are ascending and never overlap,
 * also across the several 'pages' lines of one block.  'order' (pages in
 * first-touch order: of executable mappings in version 2, all of the
 * block's from version 3) and 'calls' (file offsets of
 * function entries in first-call order) are lists in which order matters:
 * single numbers, each at most once per block, and every 'order' page is
 * one of the block's 'pages'.  Those two checks need the whole block, so
 * they run at its 'end', naming the line that holds the bad entry.
 *
 * The version rule: a statement that a reader may ignore (a fill needs
 * only 'pages') bumps the version; a reader accepts every version up to
 * its own and refuses newer ones, and refuses a statement newer than the
 * version the trace declares; so does a wider meaning of one (version 3's
 * 'order').  Writers write version 1 when no block has 'order' or
 * 'calls', so that older readers still take those traces.
 *
 * Traces come from other machines and other people, so the reader trusts
 * nothing: lines are read with a length limit, a NUL byte anywhere and a
 * carriage return at the end of a line (comments included) are refused,
 * every number is overflow-checked, and every error names the line.  A
 * trace with any error is refused as a whole; a half-read trace would
 * silently fill half a bitmap.
 *
 * Memory.  A fill needs only the blocks of one build, and a trace may be
 * large (many files, many runs, or hostile).  Read for one identity, the
 * reader keeps only the blocks with that identity: the others are checked
 * line by line as they are read (syntax, bounds, pages ascending, against
 * the last page alone) and then dropped, without their 'order' and
 * 'calls' checks that need the whole list (repeats, pages in 'pages').
 * So the memory grows with the pages of that build, not with the trace.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfpatch.h"

/* Longer lines are refused rather than read into unbounded memory.  */
#define TRACE_LINE_MAX (1u << 20)

/* Writers start a new 'pages' line when one would pass this width.  */
#define TRACE_WRAP 70

/* The newest version this reader knows.  */
#define TRACE_VERSION_MAX 3

struct reader
{
  const char *path;
  const struct identity *keep;  /* only blocks of it kept; null: all */
  FILE *f;
  unsigned line;
  char *buf;
  size_t size;                  /* of BUF: grows with the longest line */
  size_t len;                   /* of the line in BUF, NULs included */
  uint64_t version;             /* from the 'pbitmap-trace' line */
};

enum read_result { LINE_OK, LINE_EOF, LINE_ERROR };

static void
parse_error (const struct reader *r, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Messages quote bytes of the trace; a control character among them
   (an escape sequence) would reach the user's terminal, so every byte
   that is not printable ASCII is shown as \xNN.  */
static void
parse_error (const struct reader *r, const char *fmt, ...)
{
  char msg[512], shown[4 * sizeof msg];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  char *out = shown;
  for (const unsigned char *c = (const unsigned char *) msg; *c != '\0'; c++)
    if (*c >= 0x20 && *c < 0x7f)
      *out++ = (char) *c;
    else
      out += sprintf (out, "\\x%02x", *c);
  *out = '\0';
  error (0, 0, "error: %s:%u: %s", r->path, r->line, shown);
}

/* Doubles R->buf, up to TRACE_LINE_MAX bytes and the NUL: most traces
   have short lines, and a megabyte for each would be wasted.  */
static int
grow_line (struct reader *r)
{
  size_t size = r->size * 2 > TRACE_LINE_MAX + 1 ? TRACE_LINE_MAX + 1
                                                 : r->size * 2;
  char *buf = realloc (r->buf, size);
  if (buf == NULL)
    {
      error (0, errno, "error: %s", r->path);
      return -1;
    }
  r->buf = buf;
  r->size = size;
  return 0;
}

/* Reads the next line into R->buf, without its newline.  */
static enum read_result
next_line (struct reader *r)
{
  size_t len = 0;
  int c;
  while ((c = getc_unlocked (r->f)) != EOF && c != '\n')
    {
      if (len == TRACE_LINE_MAX)
        {
          r->line++;
          parse_error (r, "line is longer than %u bytes", TRACE_LINE_MAX);
          return LINE_ERROR;
        }
      if (len + 1 == r->size && grow_line (r) != 0)
        return LINE_ERROR;
      r->buf[len++] = (char) c;
    }
  if (ferror (r->f))
    {
      error (0, errno, "error: %s", r->path);
      return LINE_ERROR;
    }
  if (c == EOF && len == 0)
    return LINE_EOF;
  r->line++;
  r->buf[len] = '\0';
  r->len = len;
  return LINE_OK;
}

/* Parses a decimal number at *P, advancing P.  */
static int
parse_u64 (const char **p, uint64_t *out)
{
  const char *s = *p;
  uint64_t v = 0;
  if (*s < '0' || *s > '9')
    return -1;
  for (; *s >= '0' && *s <= '9'; s++)
    {
      unsigned d = (unsigned) (*s - '0');
      if (v > (UINT64_MAX - d) / 10)
        return -2;
      v = v * 10 + d;
    }
  *p = s;
  *out = v;
  return 0;
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

static int
parse_build_id (struct reader *r, const char *arg, struct identity *id)
{
  size_t len = strlen (arg);
  if (len == 0 || len % 2 != 0 || len / 2 > IDENTITY_BUILD_ID_MAX)
    goto bad;
  for (size_t i = 0; i < len; i += 2)
    {
      int hi = hex_value (arg[i]), lo = hex_value (arg[i + 1]);
      if (hi < 0 || lo < 0)
        goto bad;
      id->build_id[i / 2] = (unsigned char) (hi << 4 | lo);
    }
  id->build_id_len = len / 2;
  return 0;

bad:
  parse_error (r, "bad build-id (expected an even number of lowercase hex "
               "digits, at most %u)", 2 * IDENTITY_BUILD_ID_MAX);
  return -1;
}

/* "N fnv1a64 H".  */
static int
parse_size_hash (struct reader *r, const char *arg, struct identity *id)
{
  const char *p = arg;
  int rc = parse_u64 (&p, &id->size);
  if (rc == 0 && strncmp (p, " fnv1a64 ", 9) == 0 && strlen (p + 9) == 16)
    {
      uint64_t h = 0;
      p += 9;
      for (; *p != '\0'; p++)
        {
          int d = hex_value (*p);
          if (d < 0)
            break;
          h = h << 4 | (uint64_t) d;
        }
      if (*p == '\0')
        {
          id->fnv1a64 = h;
          id->build_id_len = 0;
          return 0;
        }
    }
  if (rc == -2)
    parse_error (r, "file size too large");
  else
    parse_error (r, "expected 'size BYTES fnv1a64 HASH' (HASH: 16 lowercase "
                 "hex digits)");
  return -1;
}

/* Undoes the escapes of a 'file' path.  */
static char *
parse_path (struct reader *r, const char *arg)
{
  if (*arg == '\0')
    {
      parse_error (r, "empty path after 'file'");
      return NULL;
    }
  char *path = malloc (strlen (arg) + 1);
  if (path == NULL)
    {
      error (0, errno, "error: %s", r->path);
      return NULL;
    }
  char *out = path;
  for (const char *p = arg; *p != '\0'; p++)
    {
      if (*p != '\\')
        {
          *out++ = *p;
          continue;
        }
      p++;
      if (*p == '\\')
        *out++ = '\\';
      else if (*p == 'n')
        *out++ = '\n';
      else
        {
          parse_error (r, "bad escape in path (only \\\\ and \\n are known)");
          free (path);
          return NULL;
        }
    }
  *out = '\0';
  return path;
}

struct trace_block *
trace_add_block (struct trace *t, const char *path)
{
  if (array_reserve ((void **) &t->blocks, &t->alloc, t->n_blocks,
                     sizeof *t->blocks) != 0)
    return NULL;
  struct trace_block *b = &t->blocks[t->n_blocks];
  memset (b, 0, sizeof *b);
  b->path = strdup (path);
  if (b->path == NULL)
    return NULL;
  t->n_blocks++;
  return b;
}

/* Appends [FIRST, LAST]; the caller keeps ranges ascending.  Adjacent
   ranges are merged so that a block's list is canonical.  */
int
trace_block_add_range (struct trace_block *b, uint64_t first, uint64_t last)
{
  if (b->n_ranges > 0 && b->ranges[b->n_ranges - 1].last + 1 == first)
    {
      b->ranges[b->n_ranges - 1].last = last;
      return 0;
    }
  if (array_reserve ((void **) &b->ranges, &b->alloc, b->n_ranges,
                     sizeof *b->ranges) != 0)
    return -1;
  b->ranges[b->n_ranges].first = first;
  b->ranges[b->n_ranges].last = last;
  b->n_ranges++;
  return 0;
}

/* Where each line of an 'order' or 'calls' list started in the block's
   list, so that a check at 'end' can name the line of an entry.  */
struct list_line
{
  unsigned line;
  size_t first;                 /* index of the line's first entry */
};

struct list_lines
{
  struct list_line *v;
  size_t n, alloc;
};

/* State of the block being read.  */
struct block_state
{
  struct trace_block *block;    /* null outside a block */
  int have_identity;
  int have_pagesize;
  int skip;                     /* of another identity: checked, not kept */
  int have_page;                /* LAST_PAGE is set */
  uint64_t last_page;           /* the block's highest page so far */
  struct list_lines order_lines, calls_lines;
};

/* One page number of a 'pages' list.  */
static int
parse_page (struct reader *r, const char **p, uint64_t *page)
{
  const char *start = *p;
  int rc = parse_u64 (p, page);
  if (rc == 0 && *page <= TRACE_PAGE_MAX)
    return 0;
  if (rc == -1)
    {
      const char *end = start + strcspn (start, ",-");
      if (end == start)
        parse_error (r, "empty page number in list");
      else
        parse_error (r, "bad page number '%.*s'", (int) (end - start > 40
                                                          ? 40 : end - start),
                     start);
    }
  else
    parse_error (r, "page number too large (at most %" PRIu64 ")",
                 TRACE_PAGE_MAX);
  return -1;
}

/* "A,B-C,..." appended to the block of S (unless it is skipped), whose
   earlier pages must all lie below these.  */
static int
parse_pages (struct reader *r, const char *arg, struct block_state *s)
{
  const char *p = arg;
  for (;;)
    {
      uint64_t first, last;
      if (parse_page (r, &p, &first) != 0)
        return -1;
      last = first;
      if (*p == '-')
        {
          p++;
          if (parse_page (r, &p, &last) != 0)
            return -1;
          if (last < first)
            {
              parse_error (r, "page range %" PRIu64 "-%" PRIu64
                           " is reversed", first, last);
              return -1;
            }
        }
      if (s->have_page && first <= s->last_page)
        {
          parse_error (r, "pages not ascending (%" PRIu64 " after %" PRIu64
                       ")", first, s->last_page);
          return -1;
        }
      s->have_page = 1;
      s->last_page = last;
      if (!s->skip && trace_block_add_range (s->block, first, last) != 0)
        {
          error (0, errno, "error: %s", r->path);
          return -1;
        }
      if (*p == '\0')
        return 0;
      if (*p != ',')
        {
          parse_error (r, "unexpected '%c' in page list (expected ',' or "
                       "'-')", *p);
          return -1;
        }
      p++;
    }
}

int
trace_list_append (uint64_t **v, size_t *n, size_t *alloc, uint64_t value)
{
  if (array_reserve ((void **) v, alloc, *n, sizeof **v) != 0)
    return -1;
  (*v)[(*n)++] = value;
  return 0;
}

/* One of the two ordered lists of a block.  */
struct ordered_list
{
  const char *keyword;          /* "order" or "calls" */
  const char *noun;             /* "page" or "offset" */
  uint64_t max;                 /* largest value */
  uint64_t **v;
  size_t *n, *alloc;
  struct list_lines *lines;
  int keep;                     /* 0: checked line by line, not kept */
};

static void
block_state_reset (struct block_state *s)
{
  free (s->order_lines.v);
  free (s->calls_lines.v);
  memset (s, 0, sizeof *s);
}

/* The 'order' (KW "order") or 'calls' list of the block of S.  */
static struct ordered_list
ordered_list (struct block_state *s, const char *kw)
{
  struct trace_block *b = s->block;
  if (strcmp (kw, "order") == 0)
    return (struct ordered_list) { "order", "page", TRACE_PAGE_MAX,
                                   &b->order, &b->n_order, &b->order_alloc,
                                   &s->order_lines, !s->skip };
  return (struct ordered_list) { "calls", "offset", UINT64_MAX, &b->calls,
                                 &b->n_calls, &b->calls_alloc,
                                 &s->calls_lines, !s->skip };
}

/* "A,B,..." appended to list L (unless it is not kept): single numbers,
   no ranges.  */
static int
parse_ordered (struct reader *r, const char *arg, struct ordered_list *l)
{
  struct list_lines *ll = l->lines;
  if (l->keep && array_reserve ((void **) &ll->v, &ll->alloc, ll->n,
                                sizeof *ll->v) != 0)
    {
      error (0, errno, "error: %s", r->path);
      return -1;
    }
  if (l->keep)
    {
      ll->v[ll->n].line = r->line;
      ll->v[ll->n++].first = *l->n;
    }
  for (const char *p = arg;; p++)
    {
      const char *start = p;
      uint64_t value;
      int rc = parse_u64 (&p, &value);
      if (rc == -1)
        {
          const char *end = start + strcspn (start, ",");
          if (end == start)
            parse_error (r, "empty %s in '%s' list", l->noun, l->keyword);
          else
            parse_error (r, "bad %s '%.*s' in '%s' list", l->noun,
                         (int) (end - start > 40 ? 40 : end - start), start,
                         l->keyword);
          return -1;
        }
      if (rc == -2 || value > l->max)
        {
          parse_error (r, "%s too large in '%s' list (at most %" PRIu64 ")",
                       l->noun, l->keyword, l->max);
          return -1;
        }
      if (l->keep && trace_list_append (l->v, l->n, l->alloc, value) != 0)
        {
          error (0, errno, "error: %s", r->path);
          return -1;
        }
      if (*p == '\0')
        return 0;
      if (*p != ',')
        {
          parse_error (r, "unexpected '%c' in '%s' list (expected ','%s)",
                       *p, l->keyword, *p == '-' ? "; no ranges: order "
                       "matters" : "");
          return -1;
        }
    }
}

/* Sets R->line to the line that holds entry I of list L.  */
static void
entry_line (struct reader *r, const struct ordered_list *l, size_t i)
{
  size_t lo = 0, hi = l->lines->n;
  while (hi - lo > 1)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (l->lines->v[mid].first <= i)
        lo = mid;
      else
        hi = mid;
    }
  r->line = l->lines->v[lo].line;
}

/* Refuses a value that list L holds twice, naming the line of its
   earliest repeat.  */
static int
check_repeats (struct reader *r, const struct ordered_list *l)
{
  size_t n = *l->n;
  if (n < 2)
    return 0;
  struct indexed *sorted = malloc (n * sizeof *sorted);
  if (sorted == NULL)
    {
      error (0, errno, "error: %s", r->path);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    sorted[i] = (struct indexed) { (*l->v)[i], i };
  qsort (sorted, n, sizeof *sorted, indexed_cmp);
  size_t repeat = n;
  for (size_t i = 1; i < n; i++)
    if (sorted[i].value == sorted[i - 1].value && sorted[i].index < repeat)
      repeat = sorted[i].index;
  free (sorted);
  if (repeat == n)
    return 0;
  entry_line (r, l, repeat);
  parse_error (r, "%s %" PRIu64 " repeated in '%s' (each at most once per "
               "block)", l->noun, (*l->v)[repeat], l->keyword);
  return -1;
}

int
trace_block_has_page (const struct trace_block *b, uint64_t page)
{
  size_t lo = 0, hi = b->n_ranges;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (b->ranges[mid].last < page)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < b->n_ranges && b->ranges[lo].first <= page;
}

/* At 'end': the checks of 'order' and 'calls' that need the whole block.
   R->line is the line of 'end' again afterwards.  */
static int
check_ordered (struct reader *r, struct block_state *s)
{
  unsigned end_line = r->line;
  struct ordered_list order = ordered_list (s, "order");
  struct ordered_list calls = ordered_list (s, "calls");
  const struct trace_block *b = s->block;
  if (check_repeats (r, &order) != 0 || check_repeats (r, &calls) != 0)
    return -1;
  for (size_t i = 0; i < b->n_order; i++)
    if (!trace_block_has_page (b, b->order[i]))
      {
        entry_line (r, &order, i);
        parse_error (r, "page %" PRIu64 " in 'order' is not in the block's "
                     "'pages'", b->order[i]);
        return -1;
      }
  r->line = end_line;
  return 0;
}

static int
statement_in_block (struct reader *r, struct block_state *s, const char *kw,
                    const char *arg)
{
  struct trace_block *b = s->block;
  if (strcmp (kw, "build-id") == 0 || strcmp (kw, "size") == 0)
    {
      if (s->have_identity)
        {
          parse_error (r, "second identity line ('build-id' or 'size') in "
                       "one block");
          return -1;
        }
      s->have_identity = 1;
      if (arg == NULL)
        {
          parse_error (r, "'%s' needs a value", kw);
          return -1;
        }
      int rc = kw[0] == 'b' ? parse_build_id (r, arg, &b->id)
                            : parse_size_hash (r, arg, &b->id);
      s->skip = r->keep != NULL && !identity_equal (&b->id, r->keep);
      return rc;
    }
  if (strcmp (kw, "pagesize") == 0)
    {
      uint64_t size;
      const char *p = arg;
      if (s->have_pagesize)
        {
          parse_error (r, "second 'pagesize' line in one block");
          return -1;
        }
      s->have_pagesize = 1;
      if (p == NULL || parse_u64 (&p, &size) != 0 || *p != '\0')
        {
          parse_error (r, "expected 'pagesize 4096'");
          return -1;
        }
      if (size != PBITMAP_PAGE_SIZE)
        {
          parse_error (r, "unsupported page size %" PRIu64 " (expected %u)",
                       size, PBITMAP_PAGE_SIZE);
          return -1;
        }
      return 0;
    }
  if (strcmp (kw, "pages") == 0 || strcmp (kw, "order") == 0
      || strcmp (kw, "calls") == 0)
    {
      if (kw[0] != 'p' && r->version < 2)
        {
          parse_error (r, "'%s' needs trace version 2 (this trace is "
                       "version %" PRIu64 ")", kw, r->version);
          return -1;
        }
      if (!s->have_identity || !s->have_pagesize)
        {
          parse_error (r, "'%s' before the block's %s line", kw,
                       !s->have_identity ? "'build-id' or 'size'"
                                         : "'pagesize'");
          return -1;
        }
      if (arg == NULL)
        {
          parse_error (r, "'%s' needs a list", kw);
          return -1;
        }
      if (kw[0] == 'p')
        return parse_pages (r, arg, s);
      if (kw[0] == 'o')
        b->order_all = r->version >= 3;
      struct ordered_list l = ordered_list (s, kw);
      return parse_ordered (r, arg, &l);
    }
  if (strcmp (kw, "end") == 0)
    {
      if (arg != NULL)
        {
          parse_error (r, "unexpected text after 'end'");
          return -1;
        }
      if (!s->have_identity || !s->have_pagesize)
        {
          parse_error (r, "block of '%s' has no %s line", b->path,
                       !s->have_identity ? "'build-id' or 'size'"
                                         : "'pagesize'");
          return -1;
        }
      if (!s->skip && check_ordered (r, s) != 0)
        return -1;
      block_state_reset (s);
      return 0;
    }
  if (strcmp (kw, "file") == 0)
    {
      parse_error (r, "'file' inside the block of '%s' (missing 'end'?)",
                   b->path);
      return -1;
    }
  parse_error (r, "unknown keyword '%.40s'", kw);
  return -1;
}

static void
block_free (struct trace_block *b)
{
  free (b->path);
  free (b->ranges);
  free (b->order);
  free (b->calls);
}

/* Forgets the last block of T.  */
static void
drop_last_block (struct trace *t)
{
  block_free (&t->blocks[--t->n_blocks]);
}

static int
statement (struct reader *r, struct trace *t, struct block_state *s,
           char *line)
{
  char *space = strchr (line, ' ');
  const char *arg = NULL;
  if (space != NULL)
    {
      *space = '\0';
      arg = space + 1;
    }
  const char *kw = line;

  if (strcmp (kw, "pbitmap-trace") == 0)
    {
      parse_error (r, "'pbitmap-trace' repeated");
      return -1;
    }
  if (strcmp (kw, "command") == 0)
    {
      free (t->command);
      t->command = strdup (arg ? arg : "");
      return 0;
    }
  if (s->block != NULL)
    {
      int skip = s->skip;
      if (statement_in_block (r, s, kw, arg) != 0)
        return -1;
      /* A block of another identity, closed: checked, not kept.  */
      if (skip && s->block == NULL)
        drop_last_block (t);
      return 0;
    }

  if (strcmp (kw, "file") == 0)
    {
      char *path = parse_path (r, arg ? arg : "");
      if (path == NULL)
        return -1;
      s->block = trace_add_block (t, path);
      free (path);
      if (s->block == NULL)
        {
          error (0, errno, "error: %s", r->path);
          return -1;
        }
      s->block->line = r->line;
      return 0;
    }
  if (strcmp (kw, "build-id") == 0 || strcmp (kw, "size") == 0
      || strcmp (kw, "pagesize") == 0 || strcmp (kw, "pages") == 0
      || strcmp (kw, "order") == 0 || strcmp (kw, "calls") == 0
      || strcmp (kw, "end") == 0)
    {
      parse_error (r, "'%s' outside a file block", kw);
      return -1;
    }
  parse_error (r, "unknown keyword '%.40s'", kw);
  return -1;
}

static int
version_line (struct reader *r, const char *line)
{
  const char *p = line + strlen ("pbitmap-trace ");
  uint64_t version;
  if (strncmp (line, "pbitmap-trace ", strlen ("pbitmap-trace ")) != 0
      || parse_u64 (&p, &version) != 0 || *p != '\0'
      || strlen (line) != r->len)
    {
      parse_error (r, "expected 'pbitmap-trace 1' (not a pbitmap trace?)");
      return -1;
    }
  if (version < 1 || version > TRACE_VERSION_MAX)
    {
      parse_error (r, "unsupported trace version %" PRIu64 " (this elfpatch "
                   "reads 1 to %d)", version, TRACE_VERSION_MAX);
      return -1;
    }
  r->version = version;
  return 0;
}

static int
read_lines (struct reader *r, struct trace *t, struct block_state *s)
{
  int seen_version = 0;
  enum read_result res;
  while ((res = next_line (r)) == LINE_OK)
    {
      int comment = r->len == 0 || r->buf[0] == '#';
      /* The first statement says whether this is a trace at all.  */
      if (!comment && !seen_version)
        {
          if (version_line (r, r->buf) != 0)
            return -1;
          seen_version = 1;
          continue;
        }
      /* The byte rules hold for every other line, comments included.  */
      if (strlen (r->buf) != r->len)
        {
          parse_error (r, "line contains a NUL byte");
          return -1;
        }
      if (r->len > 0 && r->buf[r->len - 1] == '\r')
        {
          parse_error (r, "line ends in a carriage return (lines end in "
                       "\\n alone)");
          return -1;
        }
      if (!comment && statement (r, t, s, r->buf) != 0)
        return -1;
    }
  if (res == LINE_ERROR)
    return -1;
  if (!seen_version)
    {
      error (0, 0, "error: %s: empty trace (expected 'pbitmap-trace 1')",
             r->path);
      return -1;
    }
  if (s->block != NULL)
    {
      r->line = s->block->line;
      parse_error (r, "missing 'end' (the block of '%s' is not closed)",
                   s->block->path);
      return -1;
    }
  return 0;
}

static int
read_statements (struct reader *r, struct trace *t)
{
  struct block_state s = { 0 };
  int rc = read_lines (r, t, &s);
  block_state_reset (&s);
  return rc;
}

int
trace_read (const char *path, struct trace *t)
{
  return trace_read_for (path, NULL, t);
}

int
trace_read_for (const char *path, const struct identity *keep,
                struct trace *t)
{
  struct reader r = { .path = path, .keep = keep };
  memset (t, 0, sizeof *t);
  r.f = fopen (path, "re");
  if (r.f == NULL)
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  r.size = 4096;
  r.buf = malloc (r.size);
  int rc = -1;
  if (r.buf == NULL)
    error (0, errno, "error: %s", path);
  else
    rc = read_statements (&r, t);
  free (r.buf);
  fclose (r.f);
  if (rc != 0)
    trace_free (t);
  return rc;
}

void
trace_free (struct trace *t)
{
  for (size_t i = 0; i < t->n_blocks; i++)
    block_free (&t->blocks[i]);
  free (t->blocks);
  free (t->command);
  memset (t, 0, sizeof *t);
}

static void
write_escaped (FILE *f, const char *s)
{
  for (; *s != '\0'; s++)
    if (*s == '\\')
      fputs ("\\\\", f);
    else if (*s == '\n')
      fputs ("\\n", f);
    else
      fputc (*s, f);
}

/* Writes the items of one list statement, starting a new line of
   KEYWORD when one would pass TRACE_WRAP.  */
struct wrapped
{
  FILE *f;
  const char *keyword;
  size_t width;                 /* of the current line; 0: none open */
};

static void
wrapped_item (struct wrapped *w, const char *item)
{
  size_t n = strlen (item);
  if (w->width == 0 || w->width + 1 + n > TRACE_WRAP)
    {
      fprintf (w->f, w->width == 0 ? "%s " : "\n%s ", w->keyword);
      w->width = strlen (w->keyword) + 1;
    }
  else
    {
      fputc (',', w->f);
      w->width++;
    }
  fputs (item, w->f);
  w->width += n;
}

static void
wrapped_end (struct wrapped *w)
{
  if (w->width != 0)
    fputc ('\n', w->f);
}

static void
write_ordered (FILE *f, const char *keyword, const uint64_t *v, size_t n)
{
  struct wrapped w = { f, keyword, 0 };
  for (size_t i = 0; i < n; i++)
    {
      char item[24];
      snprintf (item, sizeof item, "%" PRIu64, v[i]);
      wrapped_item (&w, item);
    }
  wrapped_end (&w);
}

static void
write_block (FILE *f, const struct trace_block *b)
{
  char id[IDENTITY_TEXT_MAX];
  identity_format (&b->id, id, sizeof id);
  fputs ("file ", f);
  write_escaped (f, b->path);
  fprintf (f, "\n%s\npagesize %u\n", id, PBITMAP_PAGE_SIZE);

  struct wrapped w = { f, "pages", 0 };
  for (size_t i = 0; i < b->n_ranges; i++)
    {
      char item[48];
      const struct page_range *pr = &b->ranges[i];
      if (pr->first == pr->last)
        snprintf (item, sizeof item, "%" PRIu64, pr->first);
      else
        snprintf (item, sizeof item, "%" PRIu64 "-%" PRIu64, pr->first,
                  pr->last);
      wrapped_item (&w, item);
    }
  wrapped_end (&w);
  write_ordered (f, "order", b->order, b->n_order);
  write_ordered (f, "calls", b->calls, b->n_calls);
  fputs ("end\n", f);
}

int
trace_write (const char *path, const struct trace *t)
{
  FILE *f = fopen (path, "we");
  if (f == NULL)
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  trace_print (f, t);
  int failed = ferror (f);
  if (fclose (f) != 0 || failed)
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  return 0;
}

void
trace_print (FILE *f, const struct trace *t)
{
  int version = 1;
  for (size_t i = 0; i < t->n_blocks; i++)
    if (t->blocks[i].order_all)
      version = 3;
    else if ((t->blocks[i].n_order > 0 || t->blocks[i].n_calls > 0)
             && version < 2)
      version = 2;
  fprintf (f, "pbitmap-trace %d\n", version);
  if (t->command != NULL)
    {
      fputs ("command ", f);
      write_escaped (f, t->command);
      fputc ('\n', f);
    }
  for (size_t i = 0; i < t->n_blocks; i++)
    write_block (f, &t->blocks[i]);
}

/* Whether PATH reads as a trace: its first line that is not blank or a
   comment (within the first few KiB) starts with 'pbitmap-trace '.  An
   ELF file, a script or a file that cannot be read does not.  */
int
trace_sniff (const char *path)
{
  char buf[8192];
  ssize_t got = read_head (path, buf, sizeof buf - 1);
  if (got < 0)
    return 0;
  size_t len = (size_t) got;
  buf[len] = '\0';
  static const char magic[] = "pbitmap-trace ";
  for (const char *line = buf; line < buf + len;)
    {
      const char *nl = memchr (line, '\n', (size_t) (buf + len - line));
      if (*line != '\n' && *line != '#')
        return strncmp (line, magic, sizeof magic - 1) == 0;
      if (nl == NULL)
        return 0;
      line = nl + 1;
    }
  return 0;
}
