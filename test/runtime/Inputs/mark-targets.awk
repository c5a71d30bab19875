# mark-targets.awk: from `llvm-readelf -lW --syms` of the library in
# shared-mark-corrupt.test, print shell assignments of the values that
# point the region's mark field (region address + 72) at each decoy:
# ro, relro, unaligned (one byte into two_unaligned) and rw.
$1 == "<unknown>:" && $2 == "0x64706d62" { field = hex($4) + 72 }
$NF == "two_ro" { ro = hex("0x" $2) }
$NF == "two_relro" { relro = hex("0x" $2) }
$NF == "two_unaligned" { unaligned = hex("0x" $2) + 1 }
$NF == "two_rw" { rw = hex("0x" $2) }
END {
  if (!field || !ro || !relro || !unaligned || !rw)
    exit 1
  printf "ro=%d\nrelro=%d\nunaligned=%d\nrw=%d\n", ro - field, relro - field,
    unaligned - field, rw - field
}
function hex(s,   i, v) {
  v = 0
  for (i = 3; i <= length(s); i++)
    v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
  return v
}
