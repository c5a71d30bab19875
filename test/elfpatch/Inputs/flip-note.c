/* Gives the PT_NOTE that holds the "pbitmap" note the type
   PT_PRESENT_BITMAP, as the linker plugin does after a link.  A test
   helper: 64-bit files in the host's byte order only.  */
#include <elf.h>
#include <stdio.h>
#include <string.h>

int
main (int argc, char **argv)
{
  FILE *f = argc == 2 ? fopen (argv[1], "r+b") : NULL;
  Elf64_Ehdr eh;
  if (f == NULL || fread (&eh, sizeof eh, 1, f) != 1)
    return 1;
  for (int i = 0; i < eh.e_phnum; i++)
    {
      Elf64_Phdr ph;
      char name[8];
      long at = (long) (eh.e_phoff + i * sizeof ph);
      if (fseek (f, at, SEEK_SET) != 0 || fread (&ph, sizeof ph, 1, f) != 1)
        return 1;
      if (ph.p_type != PT_NOTE
          || fseek (f, (long) ph.p_offset + 12, SEEK_SET) != 0
          || fread (name, sizeof name, 1, f) != 1
          || memcmp (name, "pbitmap", sizeof name) != 0)
        continue;
      ph.p_type = 0x64706d62;
      if (fseek (f, at, SEEK_SET) != 0 || fwrite (&ph, sizeof ph, 1, f) != 1)
        return 1;
      return fclose (f) != 0;
    }
  fprintf (stderr, "flip-note: %s: no PT_NOTE with a pbitmap note\n", argv[1]);
  return 1;
}
