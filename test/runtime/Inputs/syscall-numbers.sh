#!/bin/sh
# syscall-numbers.sh LIST: the x86-64 numbers of the system calls named in
# LIST (one name a line, "#" lines are comments), from the kernel's
# <asm/unistd_64.h>; names x86-64 does not have (other architectures'
# calls in a portable list) are left out.  For test/tools/seccomp-exec.
set -eu
header=$(echo '#include <asm/unistd_64.h>' | ${CC:-cc} -E -dM - 2>/dev/null | grep '^#define __NR_') || {
  echo "syscall-numbers.sh: no <asm/unistd_64.h>" >&2
  exit 1
}
echo "$header" | awk -v list="$1" '
  BEGIN { while ((getline line < list) > 0) if (line !~ /^#/ && line != "") want[line] = 1 }
  { name = substr($2, 6); if (name in want) print $3 }' | sort -n
