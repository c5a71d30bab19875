#!/bin/sh
# expand-filter.sh SET: the system calls of a systemd system call filter set
# such as @system-service, every @group in it expanded, one name a line,
# sorted; how system-service-252.syscalls was made.
expand () {
  systemd-analyze syscall-filter "$1" 2>/dev/null |
    awk '/^ +[^ #]/ { print $1 }' |
    while read -r name; do
      case $name in
        @*) expand "$name" ;;
        *) echo "$name" ;;
      esac
    done
}
expand "${1:?usage: expand-filter.sh SET}" | sort -u
