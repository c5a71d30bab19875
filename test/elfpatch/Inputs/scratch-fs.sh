#!/bin/sh
# scratch-fs.sh KIND DIR CMD [ARG...]: run CMD with a file system (ext4,
# or btrfs when FSTYPE=btrfs is in the environment) mounted on DIR/mnt
# that lives on a block device stack made for it, and
# take the stack down again afterwards, whatever CMD or a step here does.
#
# The --device=auto tests need real loop, partition and device-mapper
# devices; a test that fails half-way must not leave a mount, a dm device
# or a loop device behind, and lit stops a test at its first failing RUN
# line.  So one RUN line runs this script, which builds the stack, runs
# CMD, and tears the stack down from an EXIT trap.  The image is DIR/img,
# a sparse file of 128 MiB (btrfs' least).  KIND is
#
#   loop  the file system on a loop device over DIR/img
#   part  on the first partition of a partitioned loop device (losetup -P)
#         over DIR/img
#   dm    on a device-mapper linear target over a loop device over
#         DIR/img
#   loop-on-loop  on a loop device over a loop device over DIR/img
#
# CMD sees MNT (the mount point) and LOOP, PART, DM, UPPER (the sysfs
# names of the devices it was given: loop3, loop3p1, dm-0, and the upper
# loop device of loop-on-loop; empty when not used), and they are written
# to DIR/devices as NAME=VALUE lines.  The
# exit status is CMD's, or 1 when the stack cannot be built.
set -u

kind=$1 dir=$2
shift 2
MNT=$dir/mnt LOOP= PART= DM= UPPER=
dm_name=pbitmap-test-$$
loop_dev= dm_made= upper_dev=

# A step of the teardown that fails makes the script fail too: a device
# left behind is a defect of the test.
cleanup ()
{
  status=$?
  if mountpoint -q "$MNT" 2>/dev/null; then
    umount "$MNT" || { umount -l "$MNT"; status=1; }
  fi
  if [ -n "$upper_dev" ]; then
    losetup -d "$upper_dev" || status=1
  fi
  if [ -n "$dm_made" ]; then
    dmsetup remove --retry "$dm_name" || status=1
  fi
  if [ -n "$loop_dev" ]; then
    losetup -d "$loop_dev" || status=1
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

fail ()
{
  echo "scratch-fs.sh: $*" >&2
  exit 1
}

mkdir -p "$MNT" && rm -f "$dir/img" && truncate -s 128M "$dir/img" ||
  fail "cannot make $dir/img"
case $kind in
  loop|dm|loop-on-loop)
    loop_dev=$(losetup -f --show "$dir/img") || fail "losetup failed"
    fs_dev=$loop_dev
    ;;
  part)
    # One Linux partition from 1 MiB to the end.
    echo 'start=2048, type=83' | sfdisk -q "$dir/img" >/dev/null ||
      fail "sfdisk failed"
    loop_dev=$(losetup -f -P --show "$dir/img") || fail "losetup -P failed"
    fs_dev=${loop_dev}p1
    # A kernel without a parser for the table (no CONFIG_MSDOS_PARTITION)
    # finds no partition; partx reads the table itself and adds it.
    [ -b "$fs_dev" ] || partx -a "$loop_dev" || fail "partx -a failed"
    [ -b "$fs_dev" ] || fail "no partition $fs_dev"
    PART=${fs_dev#/dev/}
    ;;
  *)
    fail "unknown kind $kind"
    ;;
esac
LOOP=${loop_dev#/dev/}
if [ "$kind" = loop-on-loop ]; then
  upper_dev=$(losetup -f --show "$loop_dev") || fail "losetup failed"
  fs_dev=$upper_dev
  UPPER=${upper_dev#/dev/}
fi
if [ "$kind" = dm ]; then
  sectors=$(blockdev --getsz "$loop_dev") || fail "blockdev failed"
  dm_made=1
  echo "0 $sectors linear $loop_dev 0" | dmsetup create "$dm_name" ||
    { dm_made=; fail "dmsetup create failed"; }
  DM=$(dmsetup info -c --noheadings -o blkdevname "$dm_name") ||
    fail "dmsetup info failed"
  fs_dev=/dev/$DM
fi
case ${FSTYPE:-ext4} in
  ext4) mkfs.ext4 -q -F "$fs_dev" ;;
  btrfs) mkfs.btrfs -q -f "$fs_dev" ;;
  *) false ;;
esac >/dev/null 2>&1 || fail "mkfs.${FSTYPE:-ext4} $fs_dev failed"
mount "$fs_dev" "$MNT" || fail "mount $fs_dev failed"
printf 'LOOP=%s\nPART=%s\nDM=%s\nUPPER=%s\n' "$LOOP" "$PART" "$DM" "$UPPER" \
  > "$dir/devices"
export MNT LOOP PART DM UPPER
"$@"
