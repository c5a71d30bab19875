#!/bin/sh
# build.sh DIR CC [LINK-FLAG]...: the four programs the sandbox tests run,
# in DIR, linked with the plugin by the LINK-FLAGs, filled by hand
# (../region.sh):
#
#   pie      a PIE with 8 MiB of read-only data, bits far into it
#   static   the same, static
#   needs    a program with a filled DT_NEEDED library, liblib.so
#   dlopen   a plain program (no plugin) that dlopens DIR/liblib.so
#
# Each takes DIR/liblib.so as its argument and exits with its own status
# (pie and static 3, needs 4, dlopen 5).  The bitmaps leave the gap to the
# reader (flags FILLED and GAP_AUTO, as a default fill writes them), so
# that a cold start also looks up the device the files are on.
set -eu
dir=$1 cc=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
"$cc" -O2 "$src/prog.c" -o "$dir/pie" "$@"
"$cc" -O2 -static "$src/prog.c" -o "$dir/static" "$@"
"$cc" -O2 -fPIC -shared -Wl,-soname,liblib.so "$src/lib.c" -o "$dir/liblib.so" "$@"
"$cc" -O2 "$src/needs.c" -o "$dir/needs" "$dir/liblib.so" -Wl,-rpath,"$dir" "$@"
"$cc" -O2 "$src/dlopen.c" -o "$dir/dlopen" -ldl
region="$src/../region.sh"
sh "$region" "$dir/pie" fill 100-200 1000-1010
sh "$region" "$dir/static" fill 100-200 1000-1010
sh "$region" "$dir/liblib.so" fill 50-150
sh "$region" "$dir/needs" fill 0-last
for f in pie static liblib.so needs; do
  sh "$region" "$dir/$f" set 56 4 3
done
