#include <stdio.h>
int lib (int);
int
main (int argc, char **argv)
{
  (void) argv;
  printf ("needs %d\n", lib (argc));
  return 4;
}
