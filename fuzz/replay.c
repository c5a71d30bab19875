/* replay: runs a libFuzzer harness on the files named on its command line,
   without libFuzzer, so that the crashes the fuzzers found stay fixed in
   every build: `make check` builds the runtime-region harness with the
   ordinary compiler and this main, and test/fuzz/ replays each crash
   input through it.  A crash is a signal, which lit reports as a failure;
   a clean replay prints one line per file.  Built with FUZZ_REPLAY, the
   runtime-region harness also writes the runtime's debug lines to
   standard error, so that test/fuzz/ can check what it planned.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
replay (const char *name)
{
  FILE *f = fopen (name, "rb");
  if (f == NULL)
    {
      perror (name);
      return 1;
    }
  uint8_t *data = NULL;
  size_t size = 0, cap = 0, got;
  do
    {
      if (size == cap)
        {
          cap = cap ? 2 * cap : 65536;
          uint8_t *grown = realloc (data, cap);
          if (grown == NULL)
            {
              perror (name);
              free (data);
              fclose (f);
              return 1;
            }
          data = grown;
        }
      got = fread (data + size, 1, cap - size, f);
      size += got;
    }
  while (got > 0);
  int failed = ferror (f);
  fclose (f);
  if (failed)
    perror (name);
  else
    {
      LLVMFuzzerTestOneInput (data, size);
      printf ("%s: replayed %zu bytes\n", name, size);
    }
  free (data);
  return failed;
}

int
main (int argc, char **argv)
{
  int status = 0;
  for (int i = 1; i < argc; i++)
    status |= replay (argv[i]);
  return status;
}
