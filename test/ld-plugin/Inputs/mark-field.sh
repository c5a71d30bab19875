#!/bin/sh
# mark-field.sh FILE: follows the region's mark field as doc/format.md
# describes it and says what it finds, checked against the symbol table
# and the program headers:
#
#   mark field: 0                       (no library runtime), or
#   mark field -> __pbitmap_mark: yes|no
#   mark: aligned writable-load relro=no holds pbm-todo
#   dynamic relocations at the field: N
#
# Values are read little-endian, as the tests run on x86-64.
set -eu
file=$1

. "$(dirname "$0")/region-field.sh"

field=$((region_va + 72))
value=$(s64 $((region_off + 72)))
if [ "$value" = 0 ]; then
  echo "mark field: 0"
else
  mark=$((field + value))
  echo "mark field -> __pbitmap_mark: $(yes $mark "$(sym __pbitmap_mark)")"
  # Where the mark lies: its PT_LOAD and any PT_GNU_RELRO over it.
  where=$(llvm-readelf -lW "$file" | awk -v va="$mark" "$awk_hex"'
    $1 == "LOAD" && va >= hex($3) && va + 8 <= hex($3) + hex($5) {
      load = index($0, " RW ") ? "writable-load" : "read-only-load"
    }
    $1 == "GNU_RELRO" && va + 8 > hex($3) && va < hex($3) + hex($6) { relro = 1 }
    END {
      printf "%s %s relro=%s\n", va % 8 ? "unaligned" : "aligned",
        load ? load : "outside-file-data", relro ? "yes" : "no"
    }')
  holds=$(dd if="$file" bs=1 skip="$(offset_of $mark)" count=8 status=none)
  echo "mark: $where holds $holds"
fi
printf "dynamic relocations at the field: %d\n" \
  "$(llvm-readelf -rW "$file" | awk -v va="$field" "$awk_hex"'
      $1 ~ /^[0-9a-f]+$/ && hex("0x" $1) == va { n++ }
      END { print n + 0 }')"
