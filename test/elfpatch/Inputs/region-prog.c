/* A program with a pbitmap region made without the linker plugin, so that
   elfpatch's tests on real programs do not depend on the plugin: the note
   below is what the plugin reserves (capacity 16384 pages, region 2144
   bytes), 16-aligned so that ld gives it a PT_NOTE of its own, which
   flip-note.c then turns into PT_PRESENT_BITMAP.  */
#include <stdio.h>

__asm__ (".section .note.pbitmap,\"a\",@note\n"
         ".balign 16\n"
         ".long 8, 2124, 1\n"           /* namesz, descsz, type */
         ".asciz \"pbitmap\"\n"
         ".long 0x50424d31\n"           /* magic */
         ".short 1, 96\n"               /* version, header_size */
         ".long 12\n"                   /* page_shift */
         ".quad 16384\n"                /* capacity */
         ".zero 56 + 2048\n"            /* the rest of the header, bits */
         ".previous\n");

int
main (void)
{
  puts ("region-prog ran");
  return 0;
}
