# tables.awk: the tables of bench/read-order, bench/store,
# bench/throttle-burst and bench/paced, from their runs (a TSV file with
# a header line), on standard output.
#
#     awk -v table=read-order -f bench/tables.awk RUNS.tsv
#         columns ra_kb mode round ms; one markdown table per read_ahead_kb
#     awk -v table=store -f bench/tables.awk RUNS.tsv
#         columns profile ra_kb mode round wall_ms; one line per profile
#     awk -v table=throttle-burst -f bench/tables.awk ROWS.tsv
#         columns profile subject round, then eight measures; one markdown
#         row per profile and subject, each measure's median over the
#         rounds that have it (a negative value is none)
#     awk -v table=paced -f bench/tables.awk RUNS.tsv
#         columns profile ra_kb subject mode round ms, modes warm demand
#         pbitmap; one markdown row per profile, read_ahead_kb and subject
#
# Times are medians over the rounds.  Every ratio of two times is the
# median of the ratios of the same round's runs (paired), as bench/report
# makes its own: the modes of one round run next to each other, and this
# VM drifts between rounds (whole rounds a third slower), a drift that
# cancels in a ratio of neighbours but not in a ratio of two medians.

# The median of the numbers in the space-separated list S.
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  if (n == 0)
    return 0
  for (i = 1; i <= n; i++)
    for (j = i + 1; j <= n; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# The median, over the rounds both ran, of the time of key A over that of
# key B in the same round: T[key, round] holds the times, ROUNDS[key] the
# rounds key ran, space-separated.  0 when they share no round.
function paired(a, b,   r, n, i, s) {
  n = split(rounds[a], r, " ")
  s = ""
  for (i = 1; i <= n; i++)
    if ((b SUBSEP r[i]) in t && t[b SUBSEP r[i]] > 0)
      s = s " " t[a SUBSEP r[i]] / t[b SUBSEP r[i]]
  return median(s)
}

# Keeps the time MS of key K in round R, and K in first-seen order.
function keep(k, r, ms) {
  t[k SUBSEP r] = ms
  rounds[k] = rounds[k] " " r
  times[k] = times[k] " " ms
  if (!(k in seen)) { seen[k] = 1; key[++nkeys] = k }
}

BEGIN { FS = "\t" }
NR == 1 { next }
table == "read-order" { keep($1 "\t" $2, $3, $4) }
table == "store" { keep($1 "\t" $2 "\t" $3, $4, $5) }
table == "paced" {
  keep($1 "\t" $2 "\t" $3 "\t" $4, $5, $6)
  k = $1 "\t" $2 "\t" $3
  if (!(k in cell)) { cell[k] = 1; cells[++ncells] = k }
}
table == "throttle-burst" {
  k = $1 "\t" $2
  if (!(k in seen)) { seen[k] = 1; key[++nkeys] = k }
  for (c = 4; c <= NF; c++)
    if ($c + 0 >= 0)
      col[k, c] = col[k, c] " " $c
}

# read-order: per read_ahead_kb, each mode's median, how many times faster
# than demand paging and how much slower than ascending order it is; the
# runs in round order.
function read_order(   i, p, ra, m) {
  for (i = 1; i <= nkeys; i++) {
    split(key[i], p, "\t")
    if (p[1] != ra) {
      ra = p[1]
      printf "\n## read_ahead_kb %s\n\n| mode | ms | x | vs ascend | runs |\n|---|---:|---:|---:|---|\n", ra
    }
    m = median(times[key[i]])
    printf "| %s | %.0f | %.2f | %+.1f%% | %s |\n", p[2], m,
      paired(ra "\tdemand", key[i]), (paired(key[i], ra "\tascend") - 1) * 100,
      substr(times[key[i]], 2)
  }
}

# store: per profile and read_ahead_kb, the modes' medians, demand paging
# over each mode and the in-image runtime over the audit module.
function store(   i, p, k, done) {
  for (i = 1; i <= nkeys; i++) {
    split(key[i], p, "\t")
    k = p[1] "\t" p[2]
    if (k in done)
      continue
    done[k] = 1
    printf "%-6s %6s %9.1f %9.1f %9.1f %9.1f   %-8.2f %-8.2f %-8.2f %.2f\n", p[1], p[2],
      median(times[k "\tdemand"]), median(times[k "\taudit"]),
      median(times[k "\tlauncher"]), median(times[k "\tinimage"]),
      paired(k "\tdemand", k "\taudit"), paired(k "\tdemand", k "\tlauncher"),
      paired(k "\tdemand", k "\tinimage"), paired(k "\tinimage", k "\taudit")
  }
}

# throttle-burst: per profile and subject, the median of each measure:
# plan MiB, reads, MiB by 10, 50 and 100 ms, all ms, nominal ms, pause ms
# (-1 where no round has it).
function throttle_burst(   i, p, c, m) {
  for (i = 1; i <= nkeys; i++) {
    split(key[i], p, "\t")
    for (c = 4; c <= 11; c++)
      m[c] = (key[i], c) in col ? median(col[key[i], c]) : -1
    printf "| %s | %s | %.1f | %d | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f |\n",
      p[1], p[2], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11]
  }
}

# paced: per profile, read_ahead_kb and subject, the modes' medians,
# demand paging over pbitmap and pbitmap over warm.
function paced(   i, p, k) {
  for (i = 1; i <= ncells; i++) {
    k = cells[i]
    split(k, p, "\t")
    printf "| %s | %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n", p[1], p[2], p[3],
      median(times[k "\twarm"]), median(times[k "\tdemand"]), median(times[k "\tpbitmap"]),
      paired(k "\tdemand", k "\tpbitmap"), paired(k "\tpbitmap", k "\twarm")
  }
}

END {
  if (table == "read-order")
    read_order()
  else if (table == "store")
    store()
  else if (table == "throttle-burst")
    throttle_burst()
  else if (table == "paced")
    paced()
  else {
    print "tables.awk: table must be read-order, store, throttle-burst or paced" > "/dev/stderr"
    exit 64
  }
}
