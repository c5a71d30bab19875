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

. "$(dirname "$0")/region-field.sh"

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
