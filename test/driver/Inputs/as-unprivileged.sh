# Runs the command as an unprivileged user: as itself when not root, as
# nobody otherwise.
if [ "$(id -u)" = 0 ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
fi
exec "$@"
