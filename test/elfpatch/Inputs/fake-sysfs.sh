# fake-sysfs.sh: made-up block devices for --device=auto, to be sourced.
#
# Some stacks cannot be built on every test machine (no device-mapper or
# md driver in the kernel, no NVMe disk, no two disks of different kinds),
# yet auto's rules for them (the slowest member of a stacked device counts,
# a name starting with nvme is nvme) should be proven everywhere.  These
# functions write a sysfs-like tree under $FAKE; fake_run then runs a
# command in a private mount namespace (unshare -m: its mounts vanish with
# it, nothing to clean up) where that tree is bind-mounted over
# /sys/class/block and /sys/dev/block.  Only what device.c reads is made:
# partition, queue/rotational, slaves/, loop/backing_file.
#
#   fake_disk NAME ROTATIONAL     a disk
#   fake_part DISK NAME           partition NAME of DISK
#   fake_stack NAME MEMBER...     a dm or md device over the MEMBERs
#                                 (called again, it replaces the members)
#   fake_run FILE TOP CMD...      CMD, with FILE's device being TOP

fake_link ()
{
  mkdir -p "$FAKE/class-block" &&
  ln -sfn "$1" "$FAKE/class-block/${1##*/}"
}

fake_disk ()
{
  mkdir -p "$FAKE/devices/$1/queue" "$FAKE/devices/$1/slaves" &&
  echo "$2" > "$FAKE/devices/$1/queue/rotational" &&
  fake_link "$FAKE/devices/$1"
}

fake_part ()
{
  mkdir -p "$FAKE/devices/$1/$2" &&
  echo 1 > "$FAKE/devices/$1/$2/partition" &&
  fake_link "$FAKE/devices/$1/$2"
}

fake_stack ()
{
  name=$1
  shift
  fake_disk "$name" 0 && rm -rf "$FAKE/devices/$name/slaves" &&
  mkdir "$FAKE/devices/$name/slaves" || return 1
  for member; do
    ln -s "$(readlink "$FAKE/class-block/$member")" \
      "$FAKE/devices/$name/slaves/$member" || return 1
  done
}

fake_run ()
{
  file=$1 top=$2
  shift 2
  mkdir -p "$FAKE/dev-block" &&
  ln -sfn "$(readlink "$FAKE/class-block/$top")" \
    "$FAKE/dev-block/$(stat -c %Hd:%Ld "$file")" &&
  unshare -m --propagation private sh -c '
    mount --bind "$1/class-block" /sys/class/block &&
    mount --bind "$1/dev-block" /sys/dev/block && shift && "$@"' \
    sh "$FAKE" "$@"
}
