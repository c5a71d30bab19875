/* sparse.c: the demo program.  A stand-in for a large program whose start-up
 * touches a few pages scattered over a big text segment: each of 40
 * functions jumps over SPARSE_GAP bytes of padding, so the code a run needs
 * is 80 pages spread over 40 MiB.  Cold, every fault that misses reads a
 * read-ahead window around it; with pbitmap the 80 pages are read up front.
 */
#include <stdio.h>

#ifndef SPARSE_GAP
#define SPARSE_GAP (1 << 20)
#endif

#define FN(n)                                                           \
  __attribute__ ((noinline)) static int f##n (int x)                    \
  {                                                                     \
    __asm__ volatile ("jmp 1f\n\t.skip %c0, 0xcc\n1:" : : "i" (SPARSE_GAP)); \
    return x * 3 + n;                                                   \
  }
#define TEN(p) FN (p##0) FN (p##1) FN (p##2) FN (p##3) FN (p##4) \
               FN (p##5) FN (p##6) FN (p##7) FN (p##8) FN (p##9)
TEN (1) TEN (2) TEN (3) TEN (4)

#define CALL(n) sum = f##n (sum);
#define CALLTEN(p) CALL (p##0) CALL (p##1) CALL (p##2) CALL (p##3) CALL (p##4) \
                   CALL (p##5) CALL (p##6) CALL (p##7) CALL (p##8) CALL (p##9)

int
main (void)
{
  int sum = 0;
  CALLTEN (1) CALLTEN (2) CALLTEN (3) CALLTEN (4)
  printf ("sparse: checksum %d\n", sum);
  return 0;
}
