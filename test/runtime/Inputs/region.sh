#!/bin/sh
# region.sh: edit the pbitmap region of a linked file by hand, so that the
# runtime tests control every byte the runtime reads without depending on
# elfpatch.  Offsets are those of include/pbitmap-format.h; values are
# written little-endian (the tests run on x86-64).
#
#   region.sh FILE set OFFSET SIZE VALUE  write VALUE (SIZE bytes) at region
#                                         offset OFFSET
#   region.sh FILE phdr OFFSET SIZE VALUE the same in the PT_PRESENT_BITMAP
#                                         program header
#   region.sh FILE load L OFFSET SIZE VALUE  the same in the L-th PT_LOAD
#                                         program header (from 0)
#   region.sh FILE fill PAGES...          make PAGES the only set bits,
#                                         flags = FILLED, pages_set = their
#                                         number.  A page is N, "last"
#                                         (capacity - 1) or @L+K (the
#                                         first file page of the L-th
#                                         PT_LOAD, from 0, plus K); A-B is
#                                         a range
#   region.sh FILE order BLOCKS...        make BLOCKS (block numbers, of
#                                         128 pages) the read order's
#                                         table and order_len their number
#   region.sh FILE capacity               print capacity=N
#   region.sh FILE dup TYPE               overwrite the first program header
#                                         of TYPE (as llvm-readelf names it)
#                                         with a copy of PT_PRESENT_BITMAP
#
# VALUE is a shell arithmetic expression below 2^63, in which "room" is the
# number of pages the region has room for; "max" writes all ones.
set -eu
file=$1
cmd=$2
shift 2

# Offset of the region and of its program header, from llvm-readelf.
eval "$(llvm-readelf -hlW "$file" | awk -v other_type="${1:-}" '
  /Start of program headers:/ { phoff = $5 }
  /Size of program headers:/ { phent = $5 }
  /^  [A-Z<]/ && seen { n++ }
  /^  Type / { seen = 1 }
  $1 == "LOAD" && seen {
    loads = loads " " int(hex($2) / 4096)
    load_phdrs = load_phdrs " " phoff + (n - 1) * phent
  }
  $1 == other_type && seen && !other {
    other = 1; printf "other=%d\n", phoff + (n - 1) * phent
  }
  $2 == "0x64706d62" && seen && !found {
    found = 1
    printf "region=%s; phdr=%d; room=$(((%s - 96) * 8))\n", $3, phoff + (n - 1) * phent, $6
  }
  END { if (!found) print "region=; phdr="; printf "loads=\"%s\"; load_phdrs=\"%s\"\n", loads, load_phdrs }
  function hex(s,   i, v) {
    v = 0
    for (i = 3; i <= length(s); i++)
      v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v
  }')"
if [ -z "${region:-}" ]; then
  echo "region.sh: $file: no PT_PRESENT_BITMAP" >&2
  exit 1
fi

# write AT SIZE VALUE: VALUE as SIZE little-endian bytes at file offset AT.
write () {
  i=0
  bytes=
  while [ $i -lt "$2" ]; do
    if [ "$3" = max ]; then b=255; else b=$(( (($3) >> (8 * i)) & 255 )); fi
    bytes="$bytes\\$(printf %o $b)"
    i=$((i + 1))
  done
  printf "$bytes" | dd of="$file" bs=1 seek="$1" conv=notrunc status=none
}

capacity () {
  od -An -tu8 -j $((region + 32)) -N8 "$file" | tr -d ' '
}

case $cmd in
  set) write $((region + $1)) "$2" "$3" ;;
  phdr) write $((phdr + $1)) "$2" "$3" ;;
  load)
    at=$(echo $load_phdrs | cut -d' ' -f$(($1 + 1)))
    write $((${at:?no such PT_LOAD} + $2)) "$3" "$4" ;;
  capacity) echo "capacity=$(capacity)" ;;
  order)
    # The table starts after the bits, rounded up to 8 bytes.
    cap=$(capacity)
    at=$((region + 96 + ((cap + 7) / 8 + 7) / 8 * 8))
    n=0
    for b in "$@"; do
      write $((at + 2 * n)) 2 "$b"
      n=$((n + 1))
    done
    write $((region + 84)) 4 $n
    ;;
  dup)
    dd if="$file" of="$file" bs=1 skip="$phdr" seek="${other:?no such program header}" \
      count=56 conv=notrunc status=none ;;
  fill)
    # The whole bitmap as octal escapes, then pages_set and flags.
    echo "$@" | awk -v cap="$(capacity)" -v loads="$loads" '
      function page(s,   r) {
        if (s == "last") return cap - 1
        if (s !~ /^@/) return s + 0
        split(substr(s, 2), r, "+")
        return first[r[1] + 1] + r[2]
      }
      BEGIN { split(loads, first, " ") }
      {
      for (a = 1; a <= NF; a++) {
        lo = $a; hi = $a
        if ($a ~ /-/) { split($a, r, "-"); lo = r[1]; hi = r[2] }
        lo = page(lo); hi = page(hi)
        for (p = lo + 0; p <= hi + 0 && p < cap; p++)
          if (!(p in set)) { set[p] = 1; n++; byte[int(p / 8)] += 2 ^ (p % 8) }
      }
      for (b = 0; b < (cap + 7) / 8; b++) printf "\\%o", byte[b] + 0
      printf " %d\n", n }' > "$file.bits"
    read -r bits n < "$file.bits"
    rm -f "$file.bits"
    printf "$bits" | dd of="$file" bs=4096 seek=$((region + 96)) oflag=seek_bytes \
      conv=notrunc status=none
    write $((region + 40)) 8 "$n"
    write $((region + 56)) 4 1
    ;;
  *) echo "region.sh: unknown command $cmd" >&2; exit 1 ;;
esac
