#!/bin/sh
# Stand-in for the official redis image's docker-entrypoint.sh, for scripts/container-test.sh
# only: redis-server runs as the redis user in /data and, given no configuration file, with
# protected mode off (the official image does the same; the network is the protection).
set -eu
if [ "${1:-}" = redis-server ]; then
  chown redis:redis /data
  shift
  case "${1:-}" in
    *.conf) exec setpriv --reuid redis --regid redis --init-groups redis-server "$@" ;;
  esac
  exec setpriv --reuid redis --regid redis --init-groups redis-server --protected-mode no "$@"
fi
exec "$@"
