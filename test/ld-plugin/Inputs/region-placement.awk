## Reads `llvm-readelf -lW` output and says where the pbitmap region lies:
## how many PT_PRESENT_BITMAP headers there are and, when there is exactly
## one, whether its file range lies inside the first PT_LOAD and starts in
## the first 8 KiB of the file.  (FileCheck cannot compare numbers.)

function hex(s,    i, v)
{
  v = 0
  s = tolower(s)
  sub(/^0x/, "", s)
  for (i = 1; i <= length(s); i++)
    v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
  return v
}

$1 == "LOAD" && !loads++ {
  load_start = hex($2)
  load_end = load_start + hex($5)
}

$1 == "<unknown>:" && $2 == "0x64706d62" {
  bitmaps++
  start = hex($3)
  end = start + hex($6)
}

END {
  print "present-bitmap headers: " bitmaps + 0
  if (bitmaps != 1)
    exit
  print "inside first load: " (loads && load_start <= start && end <= load_end ? "yes" : "no")
  print "starts below 8 KiB: " (start < 8192 ? "yes" : "no")
}
