#!/bin/sh
# state.sh: print what a post-link tool must keep of a program's pbitmap
# region, one item a line, so that a test can compare a program before and
# after the tool with diff.
#
#   state.sh PROGRAM
#
#   phdr   OFFSET VADDR FILESZ    the PT_PRESENT_BITMAP program header
#   note   HEX...                 the region's bytes 0-63 and 80 to its
#                                 end: note header, pbitmap header and bits
#   links  HEX...                 bytes 64-79, entry and mark, which are
#                                 relative to the region's own address
#   run    willneed pages=N ...   the runtime's debug line, without the
#                                 program's name and the time it took
#
# A file without a PT_PRESENT_BITMAP prints "phdr none" and nothing else.
set -eu
prog=$1

set -- $(llvm-readelf -lW "$prog" |
         awk '$1 == "<unknown>:" && $2 == "0x64706d62" { print $3, $4, $6 }')
if [ $# -eq 0 ]; then
  echo "phdr none"
  exit 0
fi
echo "phdr $1 $2 $3"
off=$(($1))
size=$(($3))

bytes () {
  dd if="$prog" bs=1 skip=$((off + $1)) count=$2 2>/dev/null |
    od -An -v -tx1 | tr -s ' \n' ' '
  echo
}
echo "note $(bytes 0 64)$(bytes 80 $((size - 80)))"
echo "links $(bytes 64 16)"
printf 'run '
env PBITMAP=willneed-nocheck PBITMAP_DEBUG=1 "$prog" 2>&1 >/dev/null |
  sed -e 's/^pbitmap: [^:]*: //' -e 's/ us=[0-9]*//'
