/* options.c: what the runtime learns of its process before anything else
 * (step 1 of runtime/prefetch.c): the options in PBITMAP and
 * PBITMAP_DEBUG, the auxiliary vector on the initial stack (AT_SECURE,
 * AT_PHDR, AT_EXECFN), and whether the process has waited for the disk.
 *
 * Strings are compared by hand, with no table: a table of pointers would
 * need relocations, and the entry stub of a static PIE runs this before
 * the program has relocated itself.
 */

#include "rt.h"
#include "sys.h"

/* If S starts with PREFIX, the rest of S; else null.  */
static const char *
skip_prefix (const char *s, const char *prefix)
{
  for (; *prefix != '\0'; s++, prefix++)
    if (*s != *prefix)
      return NULL;
  return s;
}

static int
str_equal (const char *a, const char *b)
{
  for (; *a == *b; a++, b++)
    if (*a == '\0')
      return 1;
  return 0;
}

/* "", "0" and "off" mean no.  */
static int
value_is_off (const char *v)
{
  return *v == '\0' || str_equal (v, "0") || str_equal (v, "off");
}

/* The mode bits PBITMAP=V asks for: off, willneed, populate or full,
   each of the last three optionally followed by "-nocheck"; anything
   else is the default.  No table of strings: it would need relocations,
   and this may run before a static PIE has relocated itself.  */
static unsigned
mode_option (const char *v)
{
  const char *rest;
  unsigned mode;
  if (value_is_off (v))
    return MODE_OFF;
  if ((rest = skip_prefix (v, "willneed")) != NULL)
    mode = MODE_WILLNEED;
  else if ((rest = skip_prefix (v, "populate")) != NULL)
    mode = MODE_POPULATE;
  else if ((rest = skip_prefix (v, "full")) != NULL)
    mode = MODE_FULL;
  else
    return MODE_WILLNEED;
  if (*rest == '\0')
    return mode;
  if (str_equal (rest, "-nocheck"))
    return mode | OPT_NOCHECK;
  return MODE_WILLNEED;
}

unsigned
rt_env_options (char *const *envp)
{
  unsigned opts = 0;
  if (envp == NULL)
    return 0;
  for (; *envp != NULL; envp++)
    {
      const char *v = skip_prefix (*envp, "PBITMAP");
      if (v == NULL)
        continue;
      const char *w;
      if ((w = skip_prefix (v, "=")) != NULL)
        opts = (opts & ~(unsigned) (OPT_MODE | OPT_NOCHECK))
               | mode_option (w) | OPT_SEEN;
      else if ((w = skip_prefix (v, "_DEBUG=")) != NULL)
        {
          opts |= OPT_SEEN;
          opts = value_is_off (w) ? opts & ~OPT_DEBUG : opts | OPT_DEBUG;
        }
    }
  return opts;
}


/* The value of auxiliary vector entry TYPE, or 0.  */
unsigned long
rt_auxv_value (const struct proc *pr, unsigned long type)
{
  const unsigned long *a = pr->auxv;
  for (size_t i = 0; a != NULL && i + 1 < RT_AUXV_WORDS && a[i] != AT_NULL;
       i += 2)
    if (a[i] == type)
      return a[i + 1];
  return 0;
}

/* The auxiliary vector on the initial stack: after ARGV's null, the
   environment array the kernel put there and its null, and, when unsetenv
   has removed variables from that array, the nulls it left behind.  The
   kernel always gives AT_PAGESZ; a vector without it was not found.  */
static const unsigned long *
auxv_find (int argc, char **argv)
{
  if (argc < 0 || argv == NULL || argv[argc] != NULL)
    return NULL;
  char **p = argv + argc + 1;
  while (*p != NULL)
    p++;
  for (unsigned holes = 0; *p == NULL; p++)
    if (++holes > RT_ENV_HOLES_MAX)
      return NULL;
  struct proc pr = { 0, (const unsigned long *) p, -1, 0, 0 };
  return rt_auxv_value (&pr, AT_PAGESZ) == RT_PAGE ? pr.auxv : NULL;
}

/* Whether AT_SECURE is set; a process whose vector was not found counts
   as secure.  */
int
rt_proc_secure (const struct proc *pr)
{
  return pr->auxv == NULL || rt_auxv_value (pr, AT_SECURE) != 0;
}

/* The options in effect (none under AT_SECURE), from the hook's
   arguments.  */
void
rt_proc_init (struct proc *pr, int argc, char **argv, char **envp)
{
  pr->auxv = auxv_find (argc, argv);
  pr->majflt = -1;
  pr->dev = 0;
  pr->opts = rt_env_options (envp);
  if (pr->opts != 0 && rt_proc_secure (pr))
    pr->opts = 0;
}

/* Whether the process has had to wait for the disk in a page fault yet:
   then the start is cold, and a residency sample would only cost.  A
   getrusage the kernel refuses counts as cold.  */
int
rt_proc_cold (struct proc *pr)
{
  if (pr->majflt < 0)
    {
      struct rt_rusage ru;
      pr->majflt = rt_getrusage (RT_RUSAGE_SELF, &ru) != 0 || ru.ru_majflt != 0;
    }
  return pr->majflt;
}
