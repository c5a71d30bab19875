# symbol-offset.awk: from `llvm-readelf -lW --syms`, print the file
# offset of the symbol NAME (-v name=...): its value, moved from
# the address of the PT_LOAD that maps it to that PT_LOAD's file offset.
$1 == "LOAD" { n++; off[n] = hex($2); vaddr[n] = hex($3); filesz[n] = hex($5) }
$NF == name && $2 ~ /^[0-9a-f]+$/ { value = hex("0x" $2) }
END {
  for (i = 1; i <= n; i++)
    if (value >= vaddr[i] && value < vaddr[i] + filesz[i]) {
      print value - vaddr[i] + off[i]
      exit
    }
  exit 1
}
function hex(s,   i, v) {
  v = 0
  for (i = 3; i <= length(s); i++)
    v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
  return v
}
