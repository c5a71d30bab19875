# load-pages.awk: from "capacity=N" and `llvm-readelf -lW`, print
# "pages=N": how many distinct file pages below the capacity the PT_LOADs
# map (a page two PT_LOADs share counts once), and "shared=N": how many
# of them more than one PT_LOAD maps.
/^capacity=/ { split($0, c, "="); cap = c[2] + 0 }
$1 == "LOAD" {
  off = hex($2); filesz = hex($5)
  if (filesz == 0) next
  for (p = int(off / 4096); p <= int((off + filesz - 1) / 4096) && p < cap; p++)
    if (seen[p]++ == 1) shared++
}
END { n = 0; for (p in seen) n++; print "pages=" n " shared=" shared + 0 }
function hex(s,   i, v, d) {
  v = 0
  for (i = 3; i <= length(s); i++) {
    d = index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
    v = v * 16 + d
  }
  return v
}
