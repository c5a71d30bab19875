# region-field.sh: sourced by entry-slot.sh and mark-field.sh, which follow
# a PC-relative header field of the region in $file.  Sets region_off and
# region_va (file offset and address of the region) and e_entry, and
# defines:
#
#   s64 OFFSET      the signed 64-bit value at file offset OFFSET
#   sym NAME        the address (decimal) of symbol NAME from nm, or empty
#   yes A B         "yes" when A equals B, else "no (A != B)"
#   offset_of ADDR  the file offset of address ADDR, from the PT_LOADs
#
# and awk_hex, an awk function hex("0x...") for the scripts' own awk.
#
# Values are read little-endian, as the tests run on x86-64.

s64 () {
  od -An -td8 -j "$1" -N8 "$file" | tr -d ' '
}

sym () {
  a=$(nm "$file" | awk -v s="$1" '$3 == s { print $1; exit }')
  [ -n "$a" ] && echo $((0x$a)) || true
}

awk_hex='
  function hex(s,   i, v) {
    v = 0
    for (i = 3; i <= length(s); i++)
      v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
    return v
  }'

offset_of () {
  llvm-readelf -lW "$file" | awk -v va="$1" "$awk_hex"'
    $1 == "LOAD" && va >= hex($3) && va < hex($3) + hex($5) {
      printf "%d\n", hex($2) + va - hex($3); exit
    }'
}

yes () { if [ "$1" = "$2" ]; then echo yes; else echo "no ($1 != $2)"; fi; }

eval "$(llvm-readelf -hlW "$file" | awk '
  /Entry point address:/ { printf "e_entry=$((%s))\n", $4 }
  $1 == "<unknown>:" && $2 == "0x64706d62" {
    printf "region_off=$((%s)); region_va=$((%s))\n", $3, $4
  }')"
