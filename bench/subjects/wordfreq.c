/* wordfreq: the small benchmark subject, an ordinary C program of a few
 * pages.  It counts the words of a file in a hash table and prints the
 * most frequent one, so a run reads its input and does a little work:
 * the pbitmap runtime's cost on a program that has almost nothing to
 * prefetch.  */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SIZE 65536u

struct entry
{
  char *word;
  unsigned long count;
};

static struct entry table[TABLE_SIZE];

static unsigned
hash (const char *s)
{
  unsigned h = 2166136261u;
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char) *s) * 16777619u;
  return h;
}

/* Counts WORD; returns 0, or -1 when the table is full.  */
static int
count_word (const char *word)
{
  for (unsigned i = hash (word), n = 0; n < TABLE_SIZE; i++, n++)
    {
      struct entry *e = &table[i % TABLE_SIZE];
      if (e->word == NULL)
        {
          e->word = strdup (word);
          if (e->word == NULL)
            return -1;
        }
      if (strcmp (e->word, word) == 0)
        {
          e->count++;
          return 0;
        }
    }
  return -1;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: wordfreq FILE\n");
      return 64;
    }
  FILE *f = fopen (argv[1], "r");
  if (f == NULL)
    {
      perror (argv[1]);
      return 1;
    }
  char word[256];
  size_t len = 0;
  int c;
  while ((c = getc (f)) != EOF)
    {
      if (isalnum (c) || c == '_')
        {
          if (len + 1 < sizeof word)
            word[len++] = (char) c;
          continue;
        }
      if (len == 0)
        continue;
      word[len] = '\0';
      len = 0;
      if (count_word (word) != 0)
        break;
    }
  fclose (f);
  const struct entry *best = NULL;
  for (unsigned i = 0; i < TABLE_SIZE; i++)
    if (table[i].word != NULL && (best == NULL || table[i].count > best->count))
      best = &table[i];
  if (best != NULL)
    printf ("%s %lu\n", best->word, best->count);
  return 0;
}
