#include <dlfcn.h>
#include <stdio.h>
int
main (int argc, char **argv)
{
  void *h = argc > 1 ? dlopen (argv[1], RTLD_NOW) : NULL;
  int (*lib) (int) = h != NULL ? (int (*) (int)) dlsym (h, "lib") : NULL;
  if (lib == NULL)
    return 1;
  printf ("dlopen %d\n", lib (argc));
  return 5;
}
