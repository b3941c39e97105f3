#!/bin/sh
# Stand-in for the official postgres image's docker-entrypoint.sh, for scripts/container-test.sh
# only (no registry is reachable on the test machine): the same contract for what compose.yaml
# uses. POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB make the cluster on first start in
# PGDATA; the server then runs as the postgres user, listening on every address, passwords
# required from other hosts (scram-sha-256).
set -eu
if [ "${1:-}" = postgres ]; then
  : "${PGDATA:=/var/lib/postgresql/data}"
  : "${POSTGRES_USER:=postgres}"
  : "${POSTGRES_DB:=$POSTGRES_USER}"
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "error: POSTGRES_PASSWORD is not set (as the official image requires)" >&2
    exit 1
  fi
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  as_postgres() { setpriv --reuid postgres --regid postgres --init-groups "$@"; }
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    chown postgres "$pwfile"
    as_postgres initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
      as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
      as_postgres psql -q -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
      as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "stand-in postgres: database cluster made in $PGDATA"
  fi
  shift
  exec setpriv --reuid postgres --regid postgres --init-groups postgres -D "$PGDATA" "$@"
fi
exec "$@"
