#!/bin/sh
# entry-slot.sh FILE: follows the region's entry field as doc/format.md
# describes it and says what it finds, checked against the symbol table:
#
#   entry field: 0                  (no slot), or
#   entry field -> __pbitmap_entry_slot: yes|no
#   slot stub -> __pbitmap_entry: yes|no
#   slot start: 0                   (entry point not redirected), or
#   slot start -> _start: yes|no
#   e_entry: __pbitmap_entry | _start | 0xADDR
#
# Values are read little-endian, as the tests run on x86-64.
set -eu
file=$1

# s64 at file offset $1.
s64 () {
  od -An -td8 -j "$1" -N8 "$file" | tr -d ' '
}

# Symbol address (decimal) of $1 from nm, or empty.
sym () {
  a=$(nm "$file" | awk -v s="$1" '$3 == s { print $1; exit }')
  [ -n "$a" ] && echo $((0x$a)) || true
}

# File offset of virtual address $1, from the PT_LOADs.
offset_of () {
  llvm-readelf -lW "$file" | awk -v va="$1" '
    function hex(s,   i, v) {
      v = 0
      for (i = 3; i <= length(s); i++)
        v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
      return v
    }
    $1 == "LOAD" && va >= hex($3) && va < hex($3) + hex($5) {
      printf "%d\n", hex($2) + va - hex($3); exit
    }'
}

eval "$(llvm-readelf -hlW "$file" | awk '
  /Entry point address:/ { printf "e_entry=$((%s))\n", $4 }
  $1 == "<unknown>:" && $2 == "0x64706d62" {
    printf "region_off=$((%s)); region_va=$((%s))\n", $3, $4
  }')"

yes () { if [ "$1" = "$2" ]; then echo yes; else echo "no ($1 != $2)"; fi; }

entry=$(s64 $((region_off + 64)))
stub_sym=$(sym __pbitmap_entry)
start_sym=$(sym _start)
if [ "$entry" = 0 ]; then
  echo "entry field: 0"
else
  slot=$((region_va + 64 + entry))
  echo "entry field -> __pbitmap_entry_slot: $(yes $slot "$(sym __pbitmap_entry_slot)")"
  slot_off=$(offset_of $slot)
  echo "slot stub -> __pbitmap_entry: $(yes $((slot + $(s64 $slot_off))) "$stub_sym")"
  start=$(s64 $((slot_off + 8)))
  if [ "$start" = 0 ]; then
    echo "slot start: 0"
  else
    echo "slot start -> _start: $(yes $((slot + start)) "$start_sym")"
  fi
fi
if [ "$e_entry" = "$stub_sym" ]; then
  echo "e_entry: __pbitmap_entry"
elif [ "$e_entry" = "$start_sym" ]; then
  echo "e_entry: _start"
else
  printf "e_entry: 0x%x\n" "$e_entry"
fi
