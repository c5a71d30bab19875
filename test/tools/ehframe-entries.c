/* ehframe-entries: print the function starts elfpatch reads from a
 * file's .eh_frame_hdr (elfpatch/ehframe.c), for the tests to compare
 * with the symbol table and the unwind information other tools print.
 *
 *   ehframe-entries FILE    one file offset per line, decimal, ascending;
 *                           exit 1 after elfpatch's message when the
 *                           table is malformed
 */
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elfpatch.h"

int elfpatch_verbose;
int elfpatch_quiet;

int
main (int argc, char **argv)
{
  /* The messages are elfpatch's, and the tests match them as such.  */
  program_invocation_name = (char *) "elfpatch";
  if (argc != 2)
    error (2, 0, "usage: ehframe-entries FILE");
  elf_version (EV_CURRENT);
  int fd = open (argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    error (1, errno, "error: %s", argv[1]);
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF)
    error (1, 0, "error: %s: not an ELF file", argv[1]);
  uint64_t *offsets;
  size_t n;
  if (ehframe_entries (elf, argv[1], &offsets, &n) != 0)
    return 1;
  for (size_t i = 0; i < n; i++)
    printf ("%" PRIu64 "\n", offsets[i]);
  free (offsets);
  elf_end (elf);
  close (fd);
  return 0;
}
