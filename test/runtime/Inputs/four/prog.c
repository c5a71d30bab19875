#include <stdio.h>
/* 8 MiB of read-only data, so that the bits lie far from the pages
   start-up touches.  */
static const unsigned char big[8 << 20] __attribute__ ((used)) = { 1 };
int
main (int argc, char **argv)
{
  (void) argv;
  printf ("prog %d %d\n", argc, big[argc << 12]);
  return 3;
}
