# pause-damon.awk: names every input file that sources bench/throttle.sh
# (a line '. "$src/throttle.sh"') but has no top-level line 'pause_damon'
# after it, then prints how many files sourced it; exits 1 when it named
# one.
function check() {
  if (sources && !paused) { print file ": sources throttle.sh without pause_damon"; bad = 1 }
}
FNR == 1 { check(); file = FILENAME; sources = paused = 0 }
/^\. "\$src\/throttle\.sh"$/ { sources = 1; sourcing++ }
sources && /^pause_damon$/ { paused = 1 }
END { check(); print "sourcing: " sourcing + 0; exit bad }
