# retry.sh N COMMAND: runs the shell command COMMAND up to N times, a
# second apart, until it succeeds; fails when it never does.  For checks
# of a warm start: a test that evicts files may run beside this one
# (elfpatch --record evicts every file the recorded program maps, the C
# library's pages no process maps included), and a page it dropped
# makes a start cold for a moment.  A runtime or module whose warm path
# is broken fails every time.
n=$1
i=1
while ! sh -c "$2"; do
  [ "$i" -ge "$n" ] && exit 1
  i=$((i + 1))
  sleep 1
done
