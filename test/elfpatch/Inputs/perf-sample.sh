#!/bin/sh
# perf-sample.sh SAMPLE DATA: the checked-in `perf script' output SAMPLE
# as if perf had recorded it here: @DATA@ stands for DATA, and the device
# and inode of the data file perf saw (fe:00 10986671) become DATA's.
id=$(stat -c '%Hd %Ld %i' "$2" | awk '{ printf "%02x:%02x %s", $1, $2, $3 }')
sed -e "s|@DATA@|$2|g" -e "s|fe:00 10986671 |$id |" "$1"
