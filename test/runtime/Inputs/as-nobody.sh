#!/bin/sh
# as-nobody.sh MODE PROG [FILE...]: copy PROG (and FILEs) into a fresh
# directory every user can reach, give PROG mode MODE (owner root), and run
# it as user and group 65534 with PBITMAP_DEBUG=1, passing the directory as
# its argument.  Prints what it prints and "status=S"; removes the copy.
set -u
mode=$1
prog=$2
shift 2
# Not under $TMPDIR: lit points it at a directory only root can enter.
dir=$(mktemp -d /tmp/pbitmap-setuid.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
case $(findmnt -no OPTIONS -T "$dir") in
  *nosuid*) echo "as-nobody.sh: $dir is on a nosuid mount" >&2; exit 1 ;;
esac
cp "$prog" "$dir/prog" && chown root:root "$dir/prog" && chmod "$mode" "$dir/prog" || exit 1
for f; do cp "$f" "$dir/" && chmod 644 "$dir/$(basename "$f")" || exit 1; done
setpriv --reuid=65534 --regid=65534 --clear-groups \
  env PBITMAP_DEBUG=1 PBITMAP=1 "$dir/prog" "$dir" 2>&1
echo "status=$?"
