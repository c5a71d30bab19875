/* report.c: the debug line (PBITMAP_DEBUG), one per object, written to
 * standard error with one write and built without the C library: the
 * name, what was done, and the counts of runtime/prefetch.c's step 7.
 */

#include "rt.h"
#include "sys.h"

struct line
{
  char buf[2 * RT_NAME_MAX + 128];
  size_t len;
};

/* Appends at most MAX bytes of the string S.  */
static void
line_str (struct line *l, const char *s, size_t max)
{
  for (size_t i = 0; i < max && s[i] != '\0' && l->len < sizeof l->buf; i++)
    l->buf[l->len++] = s[i];
}

static void
line_u64 (struct line *l, uint64_t v)
{
  char digits[20];
  size_t n = 0;
  do
    {
      digits[n++] = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v != 0);
  while (n > 0 && l->len < sizeof l->buf)
    l->buf[l->len++] = digits[--n];
}

static void
line_field (struct line *l, const char *key, uint64_t v)
{
  line_str (l, key, 16);
  line_u64 (l, v);
}

/* Starts L as "TOOL: NAME: ".  */
static void
line_head (struct line *l, const char *tool, const char *name,
           size_t name_max)
{
  l->len = 0;
  line_str (l, tool, 32);
  line_str (l, ": ", 2);
  line_str (l, name, name_max);
  line_str (l, ": ", 2);
}

/* Ends L with a newline, cut where the buffer is full, and writes it.  */
static void
line_emit (struct line *l)
{
  if (l->len == sizeof l->buf)
    l->len--;
  l->buf[l->len++] = '\n';
  rt_write (2, l->buf, l->len);
}

/* Prints the one line for an object, with one write.  NAME may be null.
   VIA, when not null, names the program whose runtime did the work for
   this object (a library prefetched by the executable).  */
void
rt_report (const char *tool, const char *name, size_t name_max,
           const struct outcome *o, const char *label, const char *tail)
{
  struct line l;
  line_head (&l, tool, name != NULL ? name : "?", name_max);
  switch (o->st)
    {
    case ST_WILLNEED:
    case ST_POPULATE:
    case ST_FULL:
      line_str (&l, o->st == ST_WILLNEED ? "willneed"
                    : o->st == ST_POPULATE ? "populate" : "full", 16);
      line_field (&l, " pages=", o->n.pages);
      line_field (&l, " runs=", o->n.runs);
      line_field (&l, " reads=", o->n.reads);
      line_field (&l, " us=", o->us);
      if (o->gap.device != GAP_PINNED)
        {
          line_field (&l, " gap=", o->gap.pages);
          line_str (&l, " (", 16);
          line_str (&l, pbitmap_device_name ((enum pbitmap_device)
                                             o->gap.device), 16);
          line_str (&l, ")", 1);
        }
      break;
    case ST_CACHED:
      line_str (&l, "cached", 16);
      line_field (&l, " pages=", o->n.pages);
      line_field (&l, " runs=", o->n.runs);
      line_field (&l, " us=", o->us);
      break;
    case ST_EMPTY:
      line_str (&l, "empty bitmap", 32);
      break;
    case ST_INVALID:
      line_str (&l, "no valid bitmap", 32);
      break;
    case ST_OFF:
      line_str (&l, "off", 32);
      break;
    }
  if (tail != NULL)
    {
      line_str (&l, " ", 1);
      line_str (&l, label, 16);
      line_str (&l, " ", 1);
      line_str (&l, tail, sizeof l.buf);
    }
  line_emit (&l);
}

void
rt_say (const char *tool, const char *name, const char *what,
        const char *detail)
{
  struct line l;
  line_head (&l, tool, name, RT_NAME_MAX);
  line_str (&l, what, 64);
  if (detail != NULL)
    line_str (&l, detail, sizeof l.buf);
  line_emit (&l);
}

uint64_t
rt_now_ns (void)
{
  struct rt_timespec ts;
  if (rt_clock_gettime (RT_CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static uint64_t
us_since (uint64_t t0)
{
  uint64_t t1 = rt_now_ns ();
  return t1 > t0 ? (t1 - t0) / 1000 : 0;
}

void
rt_report_finish (struct proc *pr, const char *path, uint64_t t0,
                  struct outcome *o)
{
  o->us = us_since (t0);
  if (o->gap.device == GAP_OPEN)
    rt_gap_look_up (pr, path, &o->gap);
}
