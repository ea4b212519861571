# PostgreSQL and NATS JetStream for the test suites that need them. Sourced by .ci/run.
#
#   services_start   exports DATABASE_URL and NATS_URL: the servers already running (given in the
#                    environment, or at 127.0.0.1:5432 database "test" and 127.0.0.1:4222 with
#                    JetStream), else Debian's postgresql and nats-server, installed if missing
#                    and started on free loopback ports in a temporary directory
#   services_stop    stops what services_start started and removes its directory
#
# Tests create their own schemas, roles and streams (named with a run id) and drop them, so the
# servers may be shared. Under CI=true a suite whose server is missing fails (never skips), so a
# server that cannot be had shows up as failing tests, with the reason.

SVC_DIR=""

svc_note() { echo "services: $*" >&2; }

# The first line a server sends on connect (NATS: INFO {...}), empty when nothing answers.
svc_greeting() {
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2; head -n1 <&3" 2>/dev/null || true
}

svc_port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

svc_free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

svc_as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

svc_pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

svc_install() {
  command -v apt-get >/dev/null 2>&1 || { svc_note "no apt-get: cannot install $*"; return 1; }
  svc_note "installing $* from Debian's packages"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@") >/dev/null 2>&1 \
    || { svc_note "could not install $*"; return 1; }
}

svc_start_nats() {
  command -v nats-server >/dev/null 2>&1 || svc_install nats-server || return 0
  mkdir -p "$SVC_DIR/nats"
  # JetStream takes 75 % of memory and disk unless told otherwise.
  printf 'jetstream { store_dir: "%s", max_memory_store: 256MB, max_file_store: 2GB }\n' "$SVC_DIR/nats/js" >"$SVC_DIR/nats/nats.conf"
  nats-server -c "$SVC_DIR/nats/nats.conf" -a 127.0.0.1 -p -1 --ports_file_dir "$SVC_DIR/nats" -P "$SVC_DIR/nats.pid" >"$SVC_DIR/nats/log" 2>&1 &
  local ports=""
  for _ in $(seq 200); do
    ports=$(ls "$SVC_DIR"/nats/*.ports 2>/dev/null | head -1 || true)
    [ -n "$ports" ] && break
    sleep 0.05
  done
  if [ -z "$ports" ]; then svc_note "nats-server did not start: $(tail -3 "$SVC_DIR/nats/log")"; return 0; fi
  NATS_URL=$(grep -o 'nats://[^"]*' "$ports" | head -1)
  svc_note "started nats-server at $NATS_URL"
}

svc_start_postgres() {
  [ -n "$(svc_pg_bin)" ] || svc_install postgresql || return 0
  local bin port
  bin=$(svc_pg_bin)
  port=$(svc_free_port)
  if [ "$(id -u)" = 0 ]; then install -d -o postgres -g postgres "$SVC_DIR/pg"; else mkdir -p "$SVC_DIR/pg"; fi
  svc_as_postgres "$bin/initdb" -D "$SVC_DIR/pg/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$SVC_DIR/pg.init.log" 2>&1 \
    || { svc_note "initdb failed: $(tail -3 "$SVC_DIR/pg.init.log")"; return 0; }
  svc_as_postgres "$bin/pg_ctl" -D "$SVC_DIR/pg/data" -l "$SVC_DIR/pg/log" -w -s start \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $SVC_DIR/pg -c fsync=off -c synchronous_commit=off -c max_connections=200" \
    || { svc_note "postgres did not start: $(tail -3 "$SVC_DIR/pg/log" 2>/dev/null)"; return 0; }
  "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qAtc 'CREATE DATABASE test' >/dev/null
  DATABASE_URL="postgresql://postgres@127.0.0.1:$port/test"
  svc_note "started PostgreSQL at $DATABASE_URL"
}

services_start() {
  SVC_DIR=$(mktemp -d)
  chmod 755 "$SVC_DIR"
  if [ -z "${NATS_URL:-}" ] && svc_greeting 127.0.0.1 4222 | grep -q '"jetstream":true'; then
    NATS_URL="nats://127.0.0.1:4222"
    svc_note "using the NATS server at $NATS_URL"
  fi
  if [ -z "${DATABASE_URL:-}" ] && svc_port_open 127.0.0.1 5432; then
    DATABASE_URL="postgresql://postgres@127.0.0.1:5432/test"
    svc_note "using the PostgreSQL server at 127.0.0.1:5432"
  fi
  [ -n "${NATS_URL:-}" ] || svc_start_nats
  [ -n "${DATABASE_URL:-}" ] || svc_start_postgres
  export NATS_URL DATABASE_URL
}

services_stop() {
  [ -n "$SVC_DIR" ] && [ -d "$SVC_DIR" ] || return 0
  if [ -f "$SVC_DIR/nats.pid" ]; then kill "$(cat "$SVC_DIR/nats.pid")" 2>/dev/null || true; fi
  if [ -d "$SVC_DIR/pg/data" ]; then svc_as_postgres "$(svc_pg_bin)/pg_ctl" -D "$SVC_DIR/pg/data" -m fast -w -s stop >/dev/null 2>&1 || true; fi
  rm -rf "$SVC_DIR"
  SVC_DIR=""
}
