# read-order-rank.awk: orders a plan by a trace's first-touch order.
#   awk -v blocks=0|1 -f read-order-rank.awk TOUCH PLAN
# TOUCH: "PAGE POSITION" lines, POSITION the page's place in the trace's
# 'order' (1 first).  PLAN: "START COUNT ..." chunks (io-floor-tool plan).
# Prints each line of PLAN after its rank and START, for
# `sort -k1,1n -k2,2n | cut -d' ' -f3-` to order: with blocks=0 a chunk's
# rank is the least POSITION of its pages; with blocks=1 it is the least
# POSITION of the pages of the aligned 128-page block its START lies in.
# A chunk without a ranked page goes last.
NR == FNR {
  pos[$1] = $2
  b = int($1 / 128)
  if (!(b in block) || $2 < block[b]) block[b] = $2
  next
}
{
  rank = 1e18
  if (blocks) {
    b = int($1 / 128)
    if (b in block) rank = block[b]
  } else
    for (p = $1; p < $1 + $2; p++)
      if (p in pos && pos[p] < rank) rank = pos[p]
  printf "%.0f %d %s\n", rank, $1, $0
}
