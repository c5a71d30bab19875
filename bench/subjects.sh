# shellcheck shell=bash
# The benchmark subjects (bench/build-subjects) as the scripts that run
# them see them, sourced by bench/cold-start and bench/paced.  WORK is
# the directory they were built in.
#
# files_of SUBJECT: its files, the executable first.  A shared subject's
# executable finds its library through $ORIGIN, so the files run from any
# directory that holds them all.
files_of () {
  case $1 in
    llvm-o2-shared) echo "llvm-o2-shared libllvm-o2.so" ;;
    llvm-o2-shared-ordered) echo "llvm-o2-shared-ordered libllvm-o2-ordered.so" ;;
    llvm-o2-shared-relr) echo "llvm-o2-shared-relr libllvm-o2-relr.so" ;;
    *) echo "$1" ;;
  esac
}

# args_of SUBJECT: its arguments (in WORK, set by the sourcing script).
# shellcheck disable=SC2154
args_of () {
  case $1 in
    wordfreq) echo "$work/input.ll" ;;
    llvm-o2-tu|llvm-o2-tu-ordered) echo "$work/tu.ll $work/out.o" ;;
    *) echo "$work/input.ll $work/out.o" ;;
  esac
}
