# shellcheck shell=bash
# rounds.sh: the order of the modes within a round, sourced by
# bench/cold-start, io-floor, paced, read-order and store (bash).
#
# Those benches run their modes interleaved, every mode once per round,
# so that a drift of the machine touches all modes alike, and their
# reports pair each round's runs (bench/paired.py).  In one fixed order a
# mode would always run in the same place of a round, right after the
# same mode, and whatever that place does to a run (what the run before
# left in the page cache, the device's queue or the throttle's slice;
# the machine's state at that moment) would fall on that mode in every
# round, where pairing cannot cancel it and it passes as the mode's own.
# So round R runs the modes rotated by R - 1: round 1 in the order given,
# round 2 from the second mode on with the first last, and so on; in as
# many rounds as there are modes, each mode takes each place once.
# test/bench/round-order.test checks the rotation and that each bench
# runs its modes in it.

# round_order R MODE...: the MODEs in round R's order, one per line.
round_order () {
  local r=$1 i
  shift
  local -a list=("$@")
  for ((i = 0; i < ${#list[@]}; i++)); do
    echo "${list[(i + r - 1) % ${#list[@]}]}"
  done
}
