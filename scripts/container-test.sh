#!/usr/bin/env bash
# `npm run test:container` (issue 34): builds the image from the Dockerfile and runs compose.yaml,
# both unchanged, with podman, then proves against the running containers what a self-hoster
# relies on: ready on /readyz, the first operator made with one `exec` of the CLI, a JSON and a
# SOAP lookup that answer and debit, the data kept across `down` and `up`, no debit lost when
# SIGTERM stops the service under load, a non-root service, a run image without compilers.
#
# No image registry is reachable on the machines this runs on, so the three official base images
# the Dockerfile and compose.yaml name are stand-ins made here: a minimal Debian bookworm root
# file system (debootstrap, from Debian's own mirror) plus this machine's Node 20 (for
# node:20-bookworm-slim), Debian's postgresql (postgres:15-bookworm) or redis-server
# (redis:7-bookworm), imported with `podman import` under the official names. Only the stand-in
# node image gets this machine's CA bundle (the package registry needs it); the project's
# Dockerfile never does. Where the real images can be pulled, nothing here is needed.
#
# Usage: scripts/container-test.sh [--check]
#   --check  only say whether this machine can run the test (exit 0) or why not (exit 1)
# Environment: CONTAINER_TEST_CACHE (default /var/cache/vehicle-lookup-container) keeps the root
# file systems between runs; DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${CONTAINER_TEST_CACHE:-/var/cache/vehicle-lookup-container}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
STANDIN_LABEL=vehicle-lookup.container-test.stand-in
IMAGE=localhost/vehicle-lookup:container-test
PROJECT=vlct$$
STARTED_AT=$(date +%s)

log() { printf '\n== [%ss] %s\n' "$(( $(date +%s) - STARTED_AT ))" "$*"; }
fail() { printf '\nFAIL: %s\n' "$*" >&2; exit 1; }
pass() { printf '   ok: %s\n' "$*"; }

# ---- can this machine run it? ------------------------------------------------------------------
cannot_run() {
  [ "$(id -u)" = 0 ] || { echo "not root (debootstrap and rootful podman need root)"; return; }
  local tool
  for tool in podman runc debootstrap podman-compose; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool is not installed (apt-get install podman runc debootstrap podman-compose)"; return; }
  done
  # podman here works only with runc and raised limits (crun and the defaults fail), as below.
  podman --runtime runc info >/dev/null 2>&1 || { echo "podman cannot run here (podman info failed)"; return; }
}
if [ "${1:-}" = --check ]; then
  reason=$(cannot_run)
  if [ -n "$reason" ]; then echo "$reason"; exit 1; fi
  echo "podman can run here"
  exit 0
fi
reason=$(cannot_run)
[ -z "$reason" ] || fail "cannot run the container test: $reason"

# ---- podman's settings for this run only (the machine's own files are left alone) -------------
WORK=$(mktemp -d /tmp/vehicle-lookup-ct.XXXXXX)
cat > "$WORK/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
cat > "$WORK/registries.conf" <<'CONF'
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
CONF
export CONTAINERS_CONF=$WORK/containers.conf CONTAINERS_REGISTRIES_CONF=$WORK/registries.conf
ULIMITS=(--ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
COMPOSE=(podman-compose -p "$PROJECT" -f "$ROOT/compose.yaml")
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
export VEHICLE_LOOKUP_PORT=$PORT VEHICLE_LOOKUP_IMAGE=$IMAGE BASE_URL=http://127.0.0.1:$PORT
BASE=http://127.0.0.1:$PORT
APP=${PROJECT}_vehicle-lookup_1
PG=${PROJECT}_postgres_1
REDIS=${PROJECT}_redis_1

cleanup() {
  local status=$?
  if [ $status -ne 0 ] && podman container exists "$APP" 2>/dev/null; then
    echo "--- the service's last log lines"
    podman logs --tail 40 "$APP" 2>&1 || true
  fi
  "${COMPOSE[@]}" down -v >/dev/null 2>&1 || true
  podman volume ls -q | grep "^${PROJECT}_" | xargs -r podman volume rm -f >/dev/null 2>&1 || true
  podman network ls -q | grep "^${PROJECT}_" | xargs -r podman network rm -f >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit $status
}
trap cleanup EXIT

# ---- the stand-in base images (cached) ---------------------------------------------------------
# Only ever replaces an image this script made (its label), never a real one pulled on purpose.
needs_standin() {
  local name=$1
  podman image exists "$name" || return 0
  [ "$(podman image inspect --format "{{ index .Labels \"$STANDIN_LABEL\" }}" "$name" 2>/dev/null)" = "$(standin_version)" ] && return 1
  [ -n "$(podman image inspect --format "{{ index .Labels \"$STANDIN_LABEL\" }}" "$name" 2>/dev/null)" ] && return 0
  return 1
}
# Made anew when the entrypoints change, this machine's Node changes, or STANDIN_REVISION is
# bumped (after changing how they are made). Every new stand-in Node image makes the image's
# build start from scratch (npm ci, the native module), so nothing else changes it.
STANDIN_REVISION=1
standin_version() {
  { echo "$STANDIN_REVISION"; cat "$ROOT/scripts/container-test/"*-entrypoint.sh; node --version; } | sha256sum | cut -c1-16
}

base_rootfs() {
  if [ ! -d "$CACHE/base" ]; then
    log "debootstrap: a minimal Debian $SUITE root file system (cached in $CACHE/base)"
    mkdir -p "$CACHE"
    rm -rf "$CACHE/base.tmp"
    debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$CACHE/base.tmp" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
      || { tail -20 "$WORK/debootstrap.log"; fail "debootstrap failed"; }
    mv "$CACHE/base.tmp" "$CACHE/base"
  fi
}

# A copy of the base with Debian packages added (cached as $CACHE/<name>).
derived_rootfs() {
  local name=$1; shift
  if [ ! -d "$CACHE/$name" ]; then
    log "root file system $name: the base plus $*"
    rm -rf "$CACHE/$name.tmp"
    cp -a "$CACHE/base" "$CACHE/$name.tmp"
    cp /etc/resolv.conf "$CACHE/$name.tmp/etc/resolv.conf"
    # No package may start its daemon in the chroot: it would be this machine's PostgreSQL or
    # Redis port that it took.
    printf '#!/bin/sh\nexit 101\n' > "$CACHE/$name.tmp/usr/sbin/policy-rc.d"
    chmod 755 "$CACHE/$name.tmp/usr/sbin/policy-rc.d"
    chroot "$CACHE/$name.tmp" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $* >/dev/null && apt-get clean && rm -rf /var/lib/apt/lists/*" \
      || fail "installing $* into the $name root file system failed"
    rm -f "$CACHE/$name.tmp/usr/sbin/policy-rc.d"
    mv "$CACHE/$name.tmp" "$CACHE/$name"
  fi
}

import_rootfs() {
  local dir=$1 name=$2; shift 2
  tar -C "$dir" --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . \
    | podman import --change "LABEL $STANDIN_LABEL=$(standin_version)" "$@" - "$name" >/dev/null
  for tag in "${STANDIN_TAGS[@]:1}"; do podman tag "$name" "$tag"; done
}

make_standins() {
  local node_names=(docker.io/library/node:20-bookworm-slim localhost/node:20-bookworm-slim)
  local pg_names=(docker.io/library/postgres:15-bookworm localhost/postgres:15-bookworm)
  local redis_names=(docker.io/library/redis:7-bookworm localhost/redis:7-bookworm)

  if needs_standin "${node_names[0]}"; then
    base_rootfs
    log "stand-in ${node_names[0]}: the base plus this machine's Node $(node --version)"
    local dir="$WORK/node-rootfs"
    cp -a "$CACHE/base" "$dir"
    # The official image's layout: node and npm under /usr/local, the headers too (node-gyp
    # builds against them instead of downloading them), a `node` user with uid 1000.
    install -m 755 "$(command -v node)" "$dir/usr/local/bin/node"
    mkdir -p "$dir/usr/local/lib/node_modules" "$dir/usr/local/include"
    cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$dir/usr/local/lib/node_modules/npm"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir/usr/local/bin/npx"
    [ -d /usr/include/node ] && cp -a /usr/include/node "$dir/usr/local/include/node"
    chroot "$dir" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
    # As slim as the official image: no package archives or lists left by debootstrap.
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
    # This machine's CA bundle (it holds the certificate the package registry is reached
    # through): in the stand-in only.
    cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$dir/etc/ssl/certs/ca-certificates.crt"
    STANDIN_TAGS=("${node_names[@]}")
    import_rootfs "$dir" "${node_names[0]}" \
      --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
      --change 'ENV npm_config_cafile=/etc/ssl/certs/ca-certificates.crt' \
      --change 'ENV npm_config_nodedir=/usr/local' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["node"]'
    rm -rf "$dir"
  fi

  if needs_standin "${pg_names[0]}"; then
    base_rootfs
    derived_rootfs postgres postgresql
    log "stand-in ${pg_names[0]}: Debian's PostgreSQL"
    local dir="$WORK/pg-rootfs"
    cp -a "$CACHE/postgres" "$dir"
    install -m 755 "$ROOT/scripts/container-test/postgres-entrypoint.sh" "$dir/usr/local/bin/docker-entrypoint.sh"
    STANDIN_TAGS=("${pg_names[@]}")
    import_rootfs "$dir" "${pg_names[0]}" \
      --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV PGDATA=/var/lib/postgresql/data' \
      --change 'VOLUME /var/lib/postgresql/data' \
      --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
      --change 'STOPSIGNAL SIGINT' \
      --change 'EXPOSE 5432' \
      --change 'CMD ["postgres"]'
    rm -rf "$dir"
  fi

  if needs_standin "${redis_names[0]}"; then
    base_rootfs
    derived_rootfs redis redis-server
    log "stand-in ${redis_names[0]}: Debian's redis-server"
    local dir="$WORK/redis-rootfs"
    cp -a "$CACHE/redis" "$dir"
    mkdir -p "$dir/data"
    install -m 755 "$ROOT/scripts/container-test/redis-entrypoint.sh" "$dir/usr/local/bin/docker-entrypoint.sh"
    STANDIN_TAGS=("${redis_names[@]}")
    import_rootfs "$dir" "${redis_names[0]}" \
      --change 'WORKDIR /data' \
      --change 'VOLUME /data' \
      --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
      --change 'EXPOSE 6379' \
      --change 'CMD ["redis-server"]'
    rm -rf "$dir"
  fi
}

# ---- helpers against the running containers ------------------------------------------------------
# Runs a compose healthcheck (podman runs them on a systemd timer, absent here) until it passes.
wait_healthy() {
  local container=$1 tries=${2:-60}
  for _ in $(seq 1 "$tries"); do
    podman healthcheck run "$container" >/dev/null 2>&1 && return 0
    sleep 2
  done
  fail "$container did not become healthy"
}
wait_ready() {
  local tries=${1:-150}
  for _ in $(seq 1 "$tries"); do
    curl -fsS "$BASE/readyz" 2>/dev/null | grep -q '"ready"' && return 0
    sleep 1
  done
  fail "the service did not answer ready on /readyz"
}
# Seconds since the service's container started (its own start-up, without the database's).
since_service_started() {
  local started
  started=$(podman inspect --format '{{.State.StartedAt}}' "$APP" | sed 's/ [A-Z]*$//')
  echo $(( $(date +%s) - $(date -d "$started" +%s) ))
}
psql_app() { podman exec "$PG" psql -U vehicle -d vehicle -At -c "$1"; }
credits_of() { psql_app "select credits from accounts where username = '$1'"; }
compose_up() {
  # podman-compose 1.0 starts the services in depends_on order but does not wait for
  # `condition: service_healthy`; Docker Compose does. So the store and Redis are started and
  # their compose health checks awaited first, then the service, as Docker Compose would.
  "${COMPOSE[@]}" up -d postgres redis >"$WORK/compose-up.log" 2>&1 || { cat "$WORK/compose-up.log"; fail "compose up (postgres, redis) failed"; }
  wait_healthy "$PG"
  wait_healthy "$REDIS"
  "${COMPOSE[@]}" up -d >>"$WORK/compose-up.log" 2>&1 || { cat "$WORK/compose-up.log"; fail "compose up failed"; }
}

# ---- the run -----------------------------------------------------------------------------------
make_standins

log "podman build --pull=never (the Dockerfile unchanged)"
build_started=$(date +%s)
# Docker's image format: OCI's has no HEALTHCHECK, and podman would drop the Dockerfile's.
podman build --pull=never --format docker --runtime runc "${ULIMITS[@]}" --network host -t "$IMAGE" "$ROOT" >"$WORK/build.log" 2>&1 \
  || { tail -40 "$WORK/build.log"; fail "podman build failed"; }
pass "image built in $(( $(date +%s) - build_started )) s"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
pass "image size $(( size / 1000000 )) MB ($size bytes)"

log "no compiler in the run image, and it runs as a non-root user"
compilers=$(podman run --rm --runtime runc "${ULIMITS[@]}" --entrypoint /bin/sh "$IMAGE" -c 'for c in cc gcc g++ c++ clang make python3 tsc tsx; do command -v $c || true; done; ls /app/node_modules/.bin 2>/dev/null | grep -xE "tsc|tsx" || true')
[ -z "$compilers" ] || fail "the run image holds build tools: $compilers"
pass "no cc, gcc, g++, make, python3, tsc or tsx"
run_user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
[ -n "$run_user" ] && [ "$run_user" != root ] && [ "$run_user" != 0 ] || fail "the image runs as '$run_user'"

log "compose up (port $PORT)"
up_started=$(date +%s)
compose_up
wait_ready
startup=$(( $(date +%s) - up_started ))
first_service=$(since_service_started)
pass "/readyz ready ${startup} s after compose up, ${first_service} s after the service's container started (first start: migrations, the VIN database unpacked into the volume)"
wait_healthy "$APP" 30
pass "the image's HEALTHCHECK (/healthz) passes"
uid=$(podman exec "$APP" id -u)
[ "$uid" != 0 ] || fail "the service runs as root"
pass "the service runs as uid $uid ($(podman exec "$APP" id -un))"
podman exec "$APP" sh -c 'ls /data/vin/*.sqlite' >/dev/null || fail "the VIN database is not in the DATA_DIR volume"
pass "the offline VIN database is unpacked into the /data volume"

log "the first operator, with one exec of the CLI"
admin_out=$(podman exec "$APP" vehicle-lookup admin create admin --json) || fail "admin create failed: $admin_out"
admin_password=$(node -e 'console.log(JSON.parse(process.argv[1]).password)' "$admin_out")
[ -n "$admin_password" ] || fail "no one-time password in: $admin_out"
login_status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$BASE/admin/api/login" -H 'content-type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$admin_password\"}")
[ "$login_status" = 200 ] || fail "the operator's first login answered $login_status"
pass "admin created; its one-time password logs in"

log "a JSON and a SOAP lookup answer and debit"
account_out=$(podman exec "$APP" vehicle-lookup accounts create loadtest --credits 100000 --json)
key=$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey)' "$account_out")
before=$(credits_of loadtest)
json=$(curl -fsS -u "loadtest:$key" "$BASE/api/json.aspx/CheckFrance/FK482TR") || fail "the JSON lookup failed"
echo "$json" | grep -q '"CarMake"' || fail "the JSON lookup answered: $json"
soap=$(curl -fsS -u "loadtest:$key" -X POST "$BASE/api/reg.asmx" -H 'content-type: text/xml; charset=utf-8' \
  -H 'SOAPAction: "http://regcheck.org.uk/CheckFrance"' \
  --data '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>FK482TR</RegistrationNumber><username>loadtest</username></CheckFrance></soap:Body></soap:Envelope>') \
  || fail "the SOAP lookup failed"
echo "$soap" | grep -q 'vehicleJson' || fail "the SOAP lookup answered: $soap"
after=$(credits_of loadtest)
[ "$after" = $(( before - 2 )) ] || fail "two lookups took $(( before - after )) credits, not 2"
pass "both answered; credits $before -> $after"

log "the data survives compose down and up"
ledger_before=$(psql_app "select count(*) from ledger")
"${COMPOSE[@]}" down >"$WORK/compose-down.log" 2>&1 || { cat "$WORK/compose-down.log"; fail "compose down failed"; }
restart_started=$(date +%s)
compose_up
wait_ready
restart=$(( $(date +%s) - restart_started ))
later_service=$(since_service_started)
[ "$(credits_of loadtest)" = "$after" ] || fail "the balance changed across down and up"
[ "$(psql_app "select count(*) from ledger")" = "$ledger_before" ] || fail "the ledger changed across down and up"
curl -fsS -u "loadtest:$key" "$BASE/api/json.aspx/CheckFrance/FK482TR" >/dev/null || fail "the key does not work after up"
login_status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$BASE/admin/api/login" -H 'content-type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$admin_password\"}")
[ "$login_status" = 200 ] || fail "the operator cannot log in after up ($login_status)"
pass "accounts, keys, ledger and operator kept; ready again ${restart} s after up, ${later_service} s after the service's container started (a later start)"

log "SIGTERM under load loses no debit"
debits_before=$(psql_app "select count(*) from ledger l join accounts a on a.id = l.account_id where a.username = 'loadtest' and l.delta < 0")
node "$ROOT/scripts/container-test/load.js" "$BASE" loadtest "$key" >"$WORK/load.json" 2>"$WORK/load.err" &
load_pid=$!
for _ in $(seq 1 60); do grep -q 'load running' "$WORK/load.err" && break; sleep 1; done
grep -q 'load running' "$WORK/load.err" || fail "the load did not start: $(cat "$WORK/load.err")"
sleep 2
podman stop -t 30 "$APP" >/dev/null
wait "$load_pid" || fail "the load client failed: $(cat "$WORK/load.err")"
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$APP")
[ "$exit_code" = 0 ] || fail "the service exited with $exit_code on SIGTERM, not 0"
podman exec "$PG" psql -U vehicle -d vehicle -At -c \
  "select request_id from ledger l join accounts a on a.id = l.account_id where a.username = 'loadtest' and l.delta < 0" >"$WORK/debited.txt"
node -e '
  const fs = require("fs");
  const load = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  const debited = new Set(fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean));
  const missing = load.answered.filter((id) => !debited.has(id));
  console.log(`   ${load.answered.length} answered 200, refused meanwhile: ${JSON.stringify(load.refused)}`);
  if (load.answered.length < 10) { console.error("too few lookups under load to prove anything"); process.exit(1); }
  if (missing.length > 0) { console.error(`${missing.length} answered lookups have no debit: ${missing.slice(0, 5).join(" ")}`); process.exit(1); }
  // And nothing else was charged: a request refused while stopping (503, a closed connection) costs nothing.
  const charged = debited.size - Number(process.argv[3]);
  if (charged !== load.answered.length) { console.error(`${charged} debits during the load for ${load.answered.length} answers`); process.exit(1); }
' "$WORK/load.json" "$WORK/debited.txt" "$debits_before" || fail "debits lost on SIGTERM"
pass "every 200 has its debit row and nothing else was charged; the service exited 0"
podman start "$APP" >/dev/null
wait_ready
pass "started again after the stop"

log "passed in $(( $(date +%s) - STARTED_AT )) s: image $(( size / 1000000 )) MB, first start ${startup} s (service ${first_service} s), later start ${restart} s (service ${later_service} s)"
