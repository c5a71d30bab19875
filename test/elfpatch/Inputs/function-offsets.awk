# function-offsets.awk: the file offsets (decimal, one a line) of the
# starts that other tools say a linked file's functions have, each
# address moved from the PT_LOAD that maps it to that PT_LOAD's offset.
# Input, chosen by -v from=:
#   from=symbols  `llvm-readelf -lW --syms`: every defined FUNC symbol
#   from=frames   `readelf -lW --debug-dump=frames`: every FDE's pc=
# Sort the output with sort -n -u to compare it.
$1 == "LOAD" { n++; off[n] = hex($2); vaddr[n] = hex($3); filesz[n] = hex($5) }
from == "symbols" && $4 == "FUNC" && $7 != "UND" { addr[++m] = hex("0x" $2) }
from == "frames" && $4 == "FDE" {
  split($6, pc, /[=.]+/)
  addr[++m] = hex("0x" pc[2])
}
END {
  for (j = 1; j <= m; j++) {
    found = 0
    for (i = 1; i <= n && !found; i++)
      if (addr[j] >= vaddr[i] && addr[j] < vaddr[i] + filesz[i]) {
        print addr[j] - vaddr[i] + off[i]
        found = 1
      }
    if (!found)
      exit 1
  }
}
function hex(s,   i, v) {
  v = 0
  for (i = 3; i <= length(s); i++)
    v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
  return v
}
