/* llvm-o2-main: the executable of the shared-library subject.  All of
 * llvm-o2 lives in libllvm-o2.so (bench/subjects/llvm-o2.cpp built with
 * LLVM_O2_LIBRARY); this program only calls it, so nearly every page the
 * start-up needs is the library's, prefetched through the library's own
 * bitmap.  */
int llvm_o2_main (int argc, char **argv);

int
main (int argc, char **argv)
{
  return llvm_o2_main (argc, argv);
}
