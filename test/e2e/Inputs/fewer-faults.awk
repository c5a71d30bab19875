# Input: 3 runstat lines of demand-paging runs, then 3 of pbitmap runs.
# Prints a verdict line, and the counts so a failure explains itself.
{
  split($1, kv, "=")
  if (NR <= 3) { if (NR == 1 || kv[2] < best_demand) best_demand = kv[2] }
  else if (NR == 4 || kv[2] > worst_pbitmap) worst_pbitmap = kv[2]
}
END {
  if (NR != 6) { print "expected 6 runs, got " NR; exit 1 }
  verdict = (worst_pbitmap < best_demand) ? "fewer" : "NOT fewer"
  printf "%s major faults with pbitmap: demand paging at least %d, pbitmap at most %d\n",
    verdict, best_demand, worst_pbitmap
}
