/* argfile.c: the linker's arguments with its response files read.
 *
 * A linker argument @FILE names a response file: the linker reads FILE
 * and takes the arguments written in it in the place of @FILE.  GCC's
 * driver, when it was itself given an @FILE, passes the link's object
 * files and its -Wl, and -Xlinker options to the linker in a response
 * file of its own (a temporary @/tmp/ccXXXXXX), and build tools write
 * one when a link's command line grows long.  So what the plugin and
 * pbitmap-ld read of the link's command line (-z max-page-size, the
 * inputs pbitmap-ld sizes, its own options) may be in one.
 *
 * The rules are libiberty's expandargv and buildargv, which ld.bfd and
 * gold use: a FILE that cannot be read leaves @FILE as it is (the linker
 * will then complain of it); arguments are separated by whitespace; a
 * backslash takes the next character as it is, inside quotes too; single
 * or double quotes group what is between them and are removed; a file of
 * only whitespace holds no argument; a response file may name others,
 * read in turn, up to ARGFILE_LIMIT of them (the rest stay as they are,
 * so a file that names itself ends).  The writer quotes as libiberty's
 * writeargv does: a backslash before each whitespace, quote and
 * backslash, one argument a line.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin.h"

/* As many response files as libiberty reads before it gives up. */
#define ARGFILE_LIMIT 2000

static bool
is_space (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f'
         || c == '\r';
}

/* Appends ARG (taken over: freed on failure) from argument ORIGIN to A.
 * Returns 0, or -1 when out of memory. */
static int
push (struct argfile_args *a, char *arg, int origin)
{
  if (arg == NULL)
    return -1;
  if (a->count + 1 >= a->room)
    {
      size_t room = a->room ? 2 * a->room : 16;
      char **args = realloc (a->args, room * sizeof *args);
      int *origins = args != NULL ? realloc (a->origin,
                                             room * sizeof *origins) : NULL;

      if (args != NULL)
        a->args = args;
      if (origins == NULL)
        {
          free (arg);
          return -1;
        }
      a->origin = origins;
      a->room = room;
    }
  a->origin[a->count] = origin;
  a->args[a->count++] = arg;
  a->args[a->count] = NULL;
  return 0;
}

/* The whole of the regular file PATH, NUL-terminated, or NULL when it
 * cannot be read (to be freed). */
static char *
read_whole (const char *path)
{
  FILE *f = fopen (path, "re");
  struct stat st;
  char *text = NULL;

  if (f != NULL && fstat (fileno (f), &st) == 0 && S_ISREG (st.st_mode)
      && (text = malloc (st.st_size + 1)) != NULL)
    {
      size_t got = fread (text, 1, st.st_size, f);

      if (ferror (f))
        {
          free (text);
          text = NULL;
        }
      else
        text[got] = '\0';
    }
  if (f != NULL)
    fclose (f);
  return text;
}

/* Splits TEXT into arguments (buildargv's rules, above), pushed to A as
 * from ORIGIN.  Returns 0, or -1 when out of memory. */
static int
split (struct argfile_args *a, const char *text, int origin)
{
  char *arg = malloc (strlen (text) + 1);
  const char *p = text;
  int rc = arg != NULL ? 0 : -1;

  while (rc == 0)
    {
      char *out = arg, quote = '\0';

      while (is_space (*p))
        p++;
      if (*p == '\0')
        break;
      for (; *p != '\0' && (quote != '\0' || !is_space (*p)); p++)
        if (*p == '\\' && p[1] != '\0')
          *out++ = *++p;
        else if (*p == '\\')
          ;
        else if (quote != '\0' && *p == quote)
          quote = '\0';
        else if (quote == '\0' && (*p == '\'' || *p == '"'))
          quote = *p;
        else
          *out++ = *p;
      *out = '\0';
      rc = push (a, strdup (arg), origin);
    }
  free (arg);
  return rc;
}

int
argfile_expand (int argc, char *const *argv, struct argfile_args *a)
{
  struct argfile_args pending = { 0 };
  unsigned files = 0;
  int rc = 0;

  memset (a, 0, sizeof *a);
  a->read = calloc (argc > 0 ? argc : 1, sizeof *a->read);
  if (a->read == NULL)
    return -1;
  /* PENDING holds, last first, the arguments still to be looked at. */
  for (int i = argc - 1; i >= 0 && rc == 0; i--)
    rc = push (&pending, strdup (argv[i]), i);
  while (rc == 0 && pending.count > 0)
    {
      char *arg = pending.args[--pending.count];
      int origin = pending.origin[pending.count];
      char *text = NULL;
      struct argfile_args inner = { 0 };

      pending.args[pending.count] = NULL;
      if (arg[0] == '@' && files < ARGFILE_LIMIT
          && (text = read_whole (arg + 1)) != NULL)
        {
          files++;
          a->read[origin] = true;
          rc = split (&inner, text, origin);
          for (size_t j = inner.count; rc == 0 && j > 0; j--)
            {
              rc = push (&pending, inner.args[j - 1], origin);
              inner.args[j - 1] = NULL;
            }
          argfile_free (&inner);
          free (text);
          free (arg);
        }
      else
        rc = push (a, arg, origin);
    }
  argfile_free (&pending);
  if (rc != 0)
    argfile_free (a);
  return rc;
}

void
argfile_free (struct argfile_args *a)
{
  for (size_t i = 0; i < a->count; i++)
    free (a->args[i]);
  free (a->args);
  free (a->origin);
  free (a->read);
  memset (a, 0, sizeof *a);
}

int
argfile_write (FILE *f, char *const *args, size_t count)
{
  for (size_t i = 0; i < count; i++)
    {
      for (const char *c = args[i]; *c != '\0'; c++)
        if ((is_space (*c) || *c == '\\' || *c == '\'' || *c == '"'
             ? putc ('\\', f) == EOF : false)
            || putc (*c, f) == EOF)
          return -1;
      if (putc ('\n', f) == EOF)
        return -1;
    }
  return fflush (f) == 0 ? 0 : -1;
}
