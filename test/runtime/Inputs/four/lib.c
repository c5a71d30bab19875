static const unsigned char lib_big[1 << 20] __attribute__ ((used)) = { 1 };
int
lib (int i)
{
  return lib_big[i << 12] + 40;
}
