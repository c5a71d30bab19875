# shellcheck shell=bash
# throttle.sh: sourced by bench/cold-start, io-floor, read-order, store,
# throttle-burst and paced (bash).
#
# They emulate slow devices: an ext4 image on a loop device with direct
# I/O (so the host's page cache does not serve it), mounted, and read by
# processes in a cgroup v1 blkio group whose read IOPS and bytes per
# second are throttled (paced instead serves a FUSE mount).  All change
# read_ahead_kb, and all pause the kernel's own reclaim: each calls
# pause_damon itself, at top level, after sourcing this file, which does
# not pause on its own so that the lit tests that source it leave the
# machine's DAMON alone (test/source/bench-pause-damon.test checks the
# call is there).
# None of this may outlive the script: every change pushes the command
# that undoes it on a stack, and the exit trap runs the stack backwards,
# also on failure or Ctrl-C.  The sourcing script defines say (its
# messages) and src (bench/).  The benches that issue read plans by
# hand build io-floor-tool and turn a trace into its input here too
# (io_floor_tool, trace_pages).
#
# The loop device's largest request, max_sectors_kb, is pinned to 1280
# KiB (or its max_hw_sectors_kb, if less): the block layer's default cap
# for a device whose driver sets none (this VM's virtio disk allows
# 4096).  What a new loop device gets depends on the kernel: 1280 on
# some this VM has run, 128 on others (bench/RESULTS.md, "What
# remains", says which runs had which).  At 128 every
# request is cut to 128 KiB, so a prefetch that reads through gaps costs
# the IOPS throttle four requests for a 512 KiB read, which the emulated
# devices would serve in one, and at read_ahead_kb 128 one WILLNEED call
# reads only 128 KiB (include/pbitmap-plan.h).

restore=()
restore_all () {
  local i
  for ((i = ${#restore[@]} - 1; i >= 0; i--)); do
    eval "${restore[i]}" || echo "$(basename "$0"): could not undo: ${restore[i]}" >&2
  done
  restore=()
}
trap restore_all EXIT
trap 'exit 130' INT TERM

# set_queue DEVICE ATTRIBUTE VALUE: DEVICE's queue/ATTRIBUTE set to
# VALUE, the old value put back on exit.
set_queue () {
  local f=/sys/block/$1/queue/$2 old
  old=$(cat "$f")
  [ "$old" = "$3" ] && return 0
  echo "$3" > "$f" || return 1
  restore+=("echo $old > $f")
}

set_read_ahead () { set_queue "$1" read_ahead_kb "$2"; }   # DEVICE KB

set_rotational () { set_queue "$1" rotational "$2"; }   # DEVICE 0|1: what the device says it is

# set_max_sectors DEVICE KB: DEVICE's largest request, KB or its
# max_hw_sectors_kb if that is less.
set_max_sectors () {
  local kb=$2 hw
  hw=$(cat "/sys/block/$1/queue/max_hw_sectors_kb")
  [ "$hw" -lt "$kb" ] && kb=$hw
  set_queue "$1" max_sectors_kb "$kb"
}

# pause_damon: stops every DAMON worker (kdamond) that is running, and
# starts it again on exit.  A kernel may run DAMON schemes that reclaim
# memory on their own; this VM's kernel runs one that pages out unmapped
# page cache in regions idle for a minute (kdamonds/0: action pageout,
# an "unmapped" filter, age >= 12 aggregations of 5 s, applied every
# 5 s).  The pages a prefetch reads are exactly such pages until the
# program maps them: DAMON tracks physical regions, and a fresh
# read-ahead page in a region idle for a minute is paged out with it.
# So a run that spans one of its passes loses part of its prefetch,
# which the program's faults then read again, and demand paging, whose
# pages are mapped as they arrive, loses little (bench/RESULTS.md).
# A worker it cannot pause (not root) is named; with no DAMON it does
# nothing.  DAMON_ADMIN names the sysfs directory (default
# /sys/kernel/mm/damon/admin).
pause_damon () {
  local admin=${DAMON_ADMIN:-/sys/kernel/mm/damon/admin} s k
  for s in "$admin"/kdamonds/[0-9]*/state; do
    [ -f "$s" ] && [ "$(cat "$s")" = on ] || continue
    k=$(basename "$(dirname "$s")")
    if echo off 2> /dev/null > "$s"; then
      restore+=("echo on > '$s'")
      say "DAMON kdamond $k paused for the run"
    else
      say "cannot pause DAMON kdamond $k: its reclaim may drop prefetched pages"
    fi
  done
}

block_device_of () {   # FILE -> sys block name (vda), whole disk
  local dev
  dev=$(findmnt -n -o SOURCE --target "$1")
  dev=$(basename "$(readlink -f "$dev")")
  if [ -e "/sys/class/block/$dev/partition" ]; then
    dev=$(basename "$(readlink -f "/sys/class/block/$dev/..")")
  fi
  echo "$dev"
}

# loop_setup IMAGE MIB MOUNTPOINT CGROUP_NAME: a fresh ext4 image of MIB
# MiB on a loop device whose requests may be loop_max_sectors_kb long,
# mounted, and an empty blkio cgroup.  Sets loop_dev
# (/dev/loopN), loop_block (loopN), loop_majmin and loop_cg.  Returns 1,
# after saying why, when one of them cannot be made.
loop_dev='' loop_block='' loop_majmin='' loop_cg='' loop_max_sectors_kb=1280
loop_setup () {
  local img=$1 mib=$2 mnt=$3
  [ "$(id -u)" = 0 ] || { say "cannot make a throttled loop device: not root"; return 1; }
  [ -d /sys/fs/cgroup/blkio ] || { say "cannot make a throttled loop device: no cgroup v1 blkio"; return 1; }
  truncate -s "${mib}M" "$img"
  restore+=("rm -f '$img'")
  mkfs.ext4 -q -F "$img"
  loop_dev=$(losetup --find --show --direct-io=on "$img") ||
    { say "cannot make a throttled loop device: no loop device"; return 1; }
  restore+=("losetup -d $loop_dev")
  loop_block=$(basename "$loop_dev")
  set_max_sectors "$loop_block" "$loop_max_sectors_kb" ||
    { say "cannot set $loop_block's max_sectors_kb to $loop_max_sectors_kb"; return 1; }
  say "$loop_block: max_sectors_kb $(cat "/sys/block/$loop_block/queue/max_sectors_kb"), read_ahead_kb $(cat "/sys/block/$loop_block/queue/read_ahead_kb")"
  mkdir -p "$mnt"
  mount "$loop_dev" "$mnt"
  restore+=("umount '$mnt'")
  loop_majmin=$(cat "/sys/class/block/$loop_block/dev")
  loop_cg=/sys/fs/cgroup/blkio/$4.$$
  mkdir "$loop_cg"
  restore+=("rmdir '$loop_cg'")
}

# throttle IOPS BYTES_PER_SECOND: the loop device's read limits in the
# cgroup; 0 0 lifts them.
throttle () {
  echo "$loop_majmin $1" > "$loop_cg/blkio.throttle.read_iops_device"
  echo "$loop_majmin $2" > "$loop_cg/blkio.throttle.read_bps_device"
}

# read_aheads DEFAULT: the read_ahead_kb values a profile runs at, one a
# line: the device's DEFAULT, then 128 (the common distribution default)
# unless DEFAULT is 128.
read_aheads () {
  printf '%s\n' "$1" 128 | awk '!seen[$0]++'
}

# in_cgroup COMMAND ARGS...: COMMAND (a function, usually) in a subshell
# that joins the cgroup, so that every run, eviction and read of it and
# its children is throttled, and that stops on Ctrl-C (hyperfine handles
# SIGINT and returns; a shell without a trap would go on).  Set
# read_ahead_kb out here, where the exit trap sees it.
in_cgroup () {
  (trap 'exit 130' INT TERM
   echo "$BASHPID" > "$loop_cg/cgroup.procs"
   "$@")
}

# cg_reads io_serviced|io_service_bytes: the read requests (or bytes) the
# loop device has served to the cgroup so far.
cg_reads () {
  awk -v dev="$loop_majmin" '$1 == dev && $2 == "Read" { n += $3 } END { print n + 0 }' \
    "$loop_cg/blkio.throttle.$1"
}

# throttle_idle: returns once the cgroup has been served no read for 300
# ms (at most 10 s; then it says so, and the run goes on).  The throttle
# (block/blk-throttle.c) grants a group a slice's budget, 100 ms of its
# rate, and a group whose slice has not ended when it reads again spends
# what is left of that slice: a cold run that starts just after a run
# that read a lot (mode full, or any prefetch) finds the budget spent,
# and its first reads wait up to a slice (bench/throttle-burst: 1.9 MiB
# of a 12.2 MiB plan arrived in the first 20 ms right after a whole-file
# read, 11.6 MiB after an idle second).  A device has no such memory of
# the run before, and a cold start in a fresh VM reads from an idle
# volume, so every cold run on a throttled profile waits here first.
# 300 ms is three slices: the last slice is over, and reads that were
# still queued (a prefetch outliving its program) would have been
# served and counted in that time.
throttle_idle () {
  local served now waited=0
  served=$(cg_reads io_serviced)
  while :; do
    sleep 0.3
    now=$(cg_reads io_serviced)
    [ "$now" = "$served" ] && return 0
    served=$now waited=$((waited + 300))
    if [ "$waited" -ge 10000 ]; then
      say "the throttled device is still reading after 10 s; a run may start on a spent budget"
      return 0
    fi
  done
}

# io_floor_tool TOOL: TOOL built from bench/io-floor-tool.c unless it is
# newer than its source.  The benches that issue a read plan by hand
# (cold-start's disk_device, io-floor, read-order, throttle-burst) share
# one build in the work directory.
io_floor_tool () {
  [ "$1" -nt "$src/io-floor-tool.c" ] ||
    ${CC:-gcc} -std=gnu11 -O2 -Wall -o "$1" "$src/io-floor-tool.c"
}

# trace_pages TRACE FILE: the pages TRACE recorded of FILE (the "pages"
# lines of FILE's blocks; a recording names every file the run mapped,
# its libraries too) as the "PAGE MS CPU" lines io-floor-tool plans
# from, with no times (0 0).  Fails, saying so, when TRACE has no page
# of FILE.
trace_pages () {
  local file
  file=$(realpath "$2") || return 1
  awk -v file="$file" '
    $1 == "file" { mine = substr($0, 6) == file }
    $1 == "end" { mine = 0 }
    mine && $1 == "pages" {
      n = split($2, range, ",")
      for (i = 1; i <= n; i++) {
        split(range[i], bound, "-")
        first = bound[1] + 0
        last = bound[2] == "" ? first : bound[2] + 0
        for (p = first; p <= last; p++) print p, 0, 0
        found = 1
      }
    }
    END { exit !found }' "$1" ||
    { say "$1 records no page of $file" >&2; return 1; }
}
