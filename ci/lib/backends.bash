# shellcheck shell=bash
# ci/lib/backends.bash: start and stop the database servers that
# checkpointkit's tests run against. Source it from a bash script that uses
# `set -euo pipefail`, then:
#
#   ck_backends_init                # installs the EXIT/INT/TERM traps
#   ck_start_postgres               # unless CHECKPOINTKIT_POSTGRES_DSN is set
#   ck_start_pgbouncer              # unless CHECKPOINTKIT_PGBOUNCER_DSN is set
#   ck_start_mongo                  # unless CHECKPOINTKIT_MONGO_URI is set
#   ... run tests ...               # servers stop when the script exits
#
# PostgreSQL: a throwaway cluster (initdb into a temporary directory, trust
# auth, 127.0.0.1 on a free port, fsync off) from the server binaries found
# in $CHECKPOINTKIT_PG_BIN, /usr/lib/postgresql/<newest>/bin, `pg_config
# --bindir` or PATH. initdb refuses to run as root, so as root the cluster
# runs as the `postgres` user (via runuser).
#
# MongoDB: the FerretDB launcher of ci/ferretdb (its own Go module), built
# into ci/bin/ferretdb and rebuilt only when its sources or the Go version
# change, serving on 127.0.0.1 on a free port with a temporary SQLite data
# directory.
#
# PgBouncer: in transaction mode in front of that PostgreSQL, for the
# PostgreSQL adapter's pooler test; installed with apt-get when missing and
# running as root (the Debian package), run as the `postgres` user.
#
# PostgreSQL for the faults group: a second throwaway cluster that the
# PostgreSQL adapter's faults specs restart for real
# (CHECKPOINTKIT_POSTGRES_FAULTS_DSN, CHECKPOINTKIT_POSTGRES_RESTART).
#
# Exported: CHECKPOINTKIT_POSTGRES_DSN, CHECKPOINTKIT_PGBOUNCER_DSN,
# CHECKPOINTKIT_MONGO_URI, CHECKPOINTKIT_FERRETDB_BIN and
# CHECKPOINTKIT_REQUIRE_BACKENDS=1 (adapter tests then fail instead of
# skipping when their server is missing).

# CK_ROOT is the repository root.
CK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Things to undo on exit, filled in by the start functions.
CK_PG_BIN_DIR=""
CK_PG_TMP=""
CK_PG_STARTED=""
CK_PGF_TMP=""
CK_PGF_STARTED=""
CK_FDB_PID=""
CK_FDB_TMP=""
CK_BOUNCER_TMP=""
CK_BOUNCER_STARTED=""

# ck_log prints a progress message on stderr.
ck_log() {
  printf 'ci: %s\n' "$*" >&2
}

# ck_die prints an error on stderr and exits non-zero.
ck_die() {
  printf 'ci: error: %s\n' "$*" >&2
  exit 1
}

# ck_now prints the time in milliseconds since the epoch.
ck_now() {
  local s
  s=$(date +%s%N)
  echo $((s / 1000000))
}

# ck_since MS prints the seconds elapsed since MS (from ck_now), e.g. "1.3s".
ck_since() {
  local d=$(($(ck_now) - $1))
  printf '%d.%ds' $((d / 1000)) $((d % 1000 / 100))
}

# ck_backends_init makes the script stop every server it started when it
# exits, also on failure or on Ctrl-C, and asks adapter tests to fail rather
# than skip when a backend is missing.
ck_backends_init() {
  trap ck_backends_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  export CHECKPOINTKIT_REQUIRE_BACKENDS=1
}

# ck_backends_cleanup stops the servers this script started and removes
# their temporary directories. It keeps the exit status of the script.
ck_backends_cleanup() {
  local status=$?
  set +e
  ck_stop_mongo
  ck_stop_pgbouncer
  ck_stop_postgres
  return "$status"
}

# ck_port_in_use PORT succeeds when something accepts TCP connections on
# 127.0.0.1:PORT.
ck_port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ck_free_port prints a TCP port on 127.0.0.1 that nothing listens on. It
# draws from 20000-31999, below Linux's ephemeral range, so outgoing
# connections never hold it. The caller must still handle a lost race.
ck_free_port() {
  local port _
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 12000))
    if ! ck_port_in_use "$port"; then
      echo "$port"
      return 0
    fi
  done
  ck_die "no free TCP port found on 127.0.0.1"
}

# ck_find_pg_bin prints the directory holding initdb, pg_ctl, pg_isready and
# createdb, or fails.
ck_find_pg_bin() {
  local d
  if [ -n "${CHECKPOINTKIT_PG_BIN:-}" ]; then
    [ -x "$CHECKPOINTKIT_PG_BIN/initdb" ] || ck_die "CHECKPOINTKIT_PG_BIN=$CHECKPOINTKIT_PG_BIN has no initdb"
    echo "$CHECKPOINTKIT_PG_BIN"
    return 0
  fi
  # Newest installed major version first.
  for d in $(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -x "$d/initdb" ]; then
      echo "$d"
      return 0
    fi
  done
  if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
    return 0
  fi
  if command -v initdb >/dev/null; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

# ck_postgres_available succeeds when a PostgreSQL server can be had: a DSN
# is given or the server binaries are installed.
ck_postgres_available() {
  [ -n "${CHECKPOINTKIT_POSTGRES_DSN:-}" ] || ck_find_pg_bin >/dev/null
}

# ck_as_pg runs a command as the cluster's owner: the postgres user when
# running as root (initdb refuses root), else the current user.
ck_as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# ck_start_postgres starts a throwaway PostgreSQL cluster and exports
# CHECKPOINTKIT_POSTGRES_DSN, unless that variable is already set.
ck_start_postgres() {
  if [ -n "${CHECKPOINTKIT_POSTGRES_DSN:-}" ]; then
    ck_log "PostgreSQL: using CHECKPOINTKIT_POSTGRES_DSN from the environment"
    return 0
  fi
  local t0 port attempt
  t0=$(ck_now)
  CK_PG_BIN_DIR=$(ck_find_pg_bin) ||
    ck_die "PostgreSQL server binaries not found (install postgresql, set CHECKPOINTKIT_PG_BIN to their directory, or set CHECKPOINTKIT_POSTGRES_DSN)"
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    ck_die "running as root but there is no 'postgres' user to own the throwaway cluster"
  fi
  CK_PG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/checkpointkit-pg.XXXXXX")
  chmod 755 "$CK_PG_TMP"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$CK_PG_TMP"
  fi
  ck_as_pg "$CK_PG_BIN_DIR/initdb" -D "$CK_PG_TMP/data" -U postgres --auth=trust \
    -E UTF8 --locale=C.UTF-8 --no-sync >"$CK_PG_TMP/initdb.log" 2>&1 ||
    { cat "$CK_PG_TMP/initdb.log" >&2; ck_die "initdb failed"; }
  # Another process may take the port between the probe and the bind:
  # try a few ports.
  for attempt in 1 2 3 4 5; do
    port=$(ck_free_port)
    if ck_as_pg "$CK_PG_BIN_DIR/pg_ctl" -D "$CK_PG_TMP/data" -l "$CK_PG_TMP/server.log" -w -t 60 \
      -o "-p $port -k $CK_PG_TMP -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >"$CK_PG_TMP/pg_ctl.log" 2>&1; then
      CK_PG_STARTED=1
      break
    fi
    ck_log "PostgreSQL: start on port $port failed (attempt $attempt), retrying"
    tail -n 5 "$CK_PG_TMP/server.log" >&2 || true
  done
  [ -n "$CK_PG_STARTED" ] || ck_die "PostgreSQL did not start; see $CK_PG_TMP/server.log"
  "$CK_PG_BIN_DIR/pg_isready" -q -h 127.0.0.1 -p "$port" -t 30 ||
    ck_die "PostgreSQL on port $port does not accept connections"
  "$CK_PG_BIN_DIR/createdb" -h 127.0.0.1 -p "$port" -U postgres checkpointkit
  export CHECKPOINTKIT_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/checkpointkit?sslmode=disable"
  ck_log "PostgreSQL $("$CK_PG_BIN_DIR/pg_ctl" --version | awk '{print $3}') started on 127.0.0.1:$port in $(ck_since "$t0") (data in $CK_PG_TMP)"
  ck_start_postgres_faults
}

# ck_start_postgres_faults starts a second throwaway cluster, for the
# PostgreSQL adapter's faults group only, and exports
# CHECKPOINTKIT_POSTGRES_FAULTS_DSN and CHECKPOINTKIT_POSTGRES_RESTART (a
# command that restarts it: pg_ctl restart, fast shutdown), unless
# CHECKPOINTKIT_POSTGRES_RESTART is already set. The faults group restarts
# this server in the middle of a run; a cluster of its own keeps that from
# disturbing the other tests and matrix columns. ck_start_postgres calls it
# after starting the main cluster (so with a server from the environment
# there is no real restart, and the spec says "not supported").
ck_start_postgres_faults() {
  if [ -n "${CHECKPOINTKIT_POSTGRES_RESTART:-}" ]; then
    return 0
  fi
  local t0 port attempt as_pg=""
  t0=$(ck_now)
  CK_PGF_TMP=$(mktemp -d "${TMPDIR:-/tmp}/checkpointkit-pg-faults.XXXXXX")
  chmod 755 "$CK_PGF_TMP"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$CK_PGF_TMP"
    as_pg="runuser -u postgres -- "
  fi
  ck_as_pg "$CK_PG_BIN_DIR/initdb" -D "$CK_PGF_TMP/data" -U postgres --auth=trust \
    -E UTF8 --locale=C.UTF-8 --no-sync >"$CK_PGF_TMP/initdb.log" 2>&1 ||
    { cat "$CK_PGF_TMP/initdb.log" >&2; ck_die "initdb (faults cluster) failed"; }
  for attempt in 1 2 3 4 5; do
    port=$(ck_free_port)
    if ck_as_pg "$CK_PG_BIN_DIR/pg_ctl" -D "$CK_PGF_TMP/data" -l "$CK_PGF_TMP/server.log" -w -t 60 \
      -o "-p $port -k $CK_PGF_TMP -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >"$CK_PGF_TMP/pg_ctl.log" 2>&1; then
      CK_PGF_STARTED=1
      break
    fi
    ck_log "PostgreSQL (faults): start on port $port failed (attempt $attempt), retrying"
  done
  [ -n "$CK_PGF_STARTED" ] || ck_die "PostgreSQL (faults) did not start; see $CK_PGF_TMP/server.log"
  "$CK_PG_BIN_DIR/createdb" -h 127.0.0.1 -p "$port" -U postgres checkpointkit
  export CHECKPOINTKIT_POSTGRES_FAULTS_DSN="postgres://postgres@127.0.0.1:$port/checkpointkit?sslmode=disable"
  export CHECKPOINTKIT_POSTGRES_RESTART="${as_pg}$CK_PG_BIN_DIR/pg_ctl -D $CK_PGF_TMP/data -l $CK_PGF_TMP/server.log -m fast -w -t 60 restart >/dev/null"
  ck_log "PostgreSQL for the faults group started on 127.0.0.1:$port in $(ck_since "$t0") (restarted by the tests)"
}

# ck_stop_postgres stops the cluster started by ck_start_postgres, if any,
# and removes its directory.
ck_stop_postgres() {
  if [ -n "$CK_PGF_STARTED" ]; then
    ck_as_pg "$CK_PG_BIN_DIR/pg_ctl" -D "$CK_PGF_TMP/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
      ck_log "PostgreSQL (faults): pg_ctl stop failed; see $CK_PGF_TMP"
    CK_PGF_STARTED=""
  fi
  if [ -n "$CK_PGF_TMP" ]; then
    rm -rf "$CK_PGF_TMP"
    CK_PGF_TMP=""
  fi
  if [ -n "$CK_PG_STARTED" ]; then
    ck_as_pg "$CK_PG_BIN_DIR/pg_ctl" -D "$CK_PG_TMP/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
      ck_log "PostgreSQL: pg_ctl stop failed; see $CK_PG_TMP"
    CK_PG_STARTED=""
    ck_log "PostgreSQL stopped"
  fi
  if [ -n "$CK_PG_TMP" ]; then
    rm -rf "$CK_PG_TMP"
    CK_PG_TMP=""
  fi
}

# ck_apt_install PKG... installs Debian packages with apt-get, running
# apt-get update first when the package lists are stale. It fails when not
# root or without apt-get, so callers can say what to install by hand.
ck_apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    return 1
  fi
  ck_log "installing the Debian package(s): $*"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2; then
    apt-get update -q >&2 || return 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2 || return 1
  fi
}

# ck_install_lgjs installs bridge/js's npm packages (LangGraph.js, its
# savers and its validation suite) with `npm ci` from the committed
# package-lock.json, unless node_modules already matches that lockfile.
# better-sqlite3's install script builds it from source when its prebuilt
# binary cannot be downloaded; it is rebuilt only if it still fails to load.
ck_install_lgjs() {
  local dir="$CK_ROOT/bridge/js" t0 want stamp
  stamp="$dir/node_modules/.checkpointkit-lock"
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  command -v npm >/dev/null || ck_die "npm not found: install Node.js 20 or newer"
  t0=$(ck_now)
  # node-gyp must not download Node's headers (nothing but the registries
  # is reachable): point it at the installed ones unless npm already is.
  if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then
    export npm_config_nodedir=/usr
  fi
  ck_log "bridge/js: npm ci"
  (cd "$dir" && npm ci --no-audit --no-fund) >&2 || return 1
  if ! (cd "$dir" && node -e "new (require('better-sqlite3'))(':memory:').close()") 2>/dev/null; then
    ck_log "bridge/js: npm rebuild better-sqlite3"
    (cd "$dir" && npm rebuild better-sqlite3) >&2 || return 1
  fi
  echo "$want" >"$stamp"
  ck_log "bridge/js: installed in $(ck_since "$t0")"
}

# CK_PY_VENV is the virtualenv that holds LangGraph Python for bridge/python
# (created by ck_install_lgpy); CHECKPOINTKIT_PYTHON names its interpreter.
CK_PY_VENV="$CK_ROOT/bridge/python/.venv"

# ck_install_lgpy creates the virtualenv $CK_PY_VENV with the Python 3.11 on
# PATH (python3.11 or python3) and installs bridge/python's dependencies
# into it from the hashed lock bridge/python/requirements.lock
# (pip --require-hashes --no-deps: exactly the locked files, nothing
# resolved at install time), unless the venv already matches that lock
# (pyproject.toml states the same pins; the lock is what installs).
# bridge/python itself is put on the venv's path with a .pth file, so its
# sources are used in place. Exports CHECKPOINTKIT_PYTHON.
ck_install_lgpy() {
  local dir="$CK_ROOT/bridge/python" t0 want stamp py site
  stamp="$CK_PY_VENV/.checkpointkit-lock"
  want=$(sha256sum "$dir/requirements.lock" | cut -d" " -f1)
  export CHECKPOINTKIT_PYTHON="$CK_PY_VENV/bin/python"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$CHECKPOINTKIT_PYTHON" ]; then
    return 0
  fi
  py=$(command -v python3.11 || command -v python3 || true)
  [ -n "$py" ] || ck_die "python3 not found: install Python 3.11"
  "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
    ck_die "$py is not Python 3.11 (bridge/python's lock is for 3.11)"
  t0=$(ck_now)
  ck_log "bridge/python: creating $CK_PY_VENV and installing requirements.lock"
  rm -rf "$CK_PY_VENV"
  "$py" -m venv "$CK_PY_VENV" >&2 || return 1
  "$CHECKPOINTKIT_PYTHON" -m pip install --quiet --disable-pip-version-check \
    --require-hashes --no-deps --only-binary=:all: -r "$dir/requirements.lock" >&2 || return 1
  site=$("$CHECKPOINTKIT_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$dir" >"$site/checkpointkit-bridge.pth"
  echo "$want" >"$stamp"
  ck_log "bridge/python: installed in $(ck_since "$t0")"
}

# ck_pytest_counts FILE prints "passed failed skipped" from the summary
# line pytest -q ends FILE with ("3 passed, 1 skipped in 2.1s"; errors
# count as failures), or "0 0 0".
ck_pytest_counts() {
  local line p f e s
  line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$1" 2>/dev/null | tail -n 1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | cut -d' ' -f1)
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | cut -d' ' -f1)
  e=$(grep -oE '[0-9]+ errors?' <<<"$line" | cut -d' ' -f1)
  s=$(grep -oE '[0-9]+ skipped' <<<"$line" | cut -d' ' -f1)
  echo "${p:-0} $((${f:-0} + ${e:-0})) ${s:-0}"
}

# ck_find_pgbouncer prints the pgbouncer binary, installing the Debian
# package first when it is missing and we are root; or fails.
ck_find_pgbouncer() {
  local b
  for b in "$(command -v pgbouncer 2>/dev/null || true)" /usr/sbin/pgbouncer; do
    if [ -n "$b" ] && [ -x "$b" ]; then
      echo "$b"
      return 0
    fi
  done
  if ck_apt_install pgbouncer && [ -x /usr/sbin/pgbouncer ]; then
    echo /usr/sbin/pgbouncer
    return 0
  fi
  return 1
}

# ck_start_pgbouncer starts PgBouncer in transaction mode in front of the
# PostgreSQL of CHECKPOINTKIT_POSTGRES_DSN (a postgres:// URL) and exports
# CHECKPOINTKIT_PGBOUNCER_DSN, unless that variable is already set.
ck_start_pgbouncer() {
  if [ -n "${CHECKPOINTKIT_PGBOUNCER_DSN:-}" ]; then
    ck_log "PgBouncer: using CHECKPOINTKIT_PGBOUNCER_DSN from the environment"
    return 0
  fi
  local t0 bin port attempt user pass host pgport db deadline
  t0=$(ck_now)
  # postgres://user[:password]@host:port/db[?params]
  local re='^postgres(ql)?://([^:@/]+)(:([^@/]*))?@([^:/?]+):([0-9]+)/([^?]+)'
  [[ "${CHECKPOINTKIT_POSTGRES_DSN:-}" =~ $re ]] ||
    ck_die "PgBouncer: cannot read user, host, port and database from CHECKPOINTKIT_POSTGRES_DSN; set CHECKPOINTKIT_PGBOUNCER_DSN"
  user=${BASH_REMATCH[2]} pass=${BASH_REMATCH[4]} host=${BASH_REMATCH[5]}
  pgport=${BASH_REMATCH[6]} db=${BASH_REMATCH[7]}
  bin=$(ck_find_pgbouncer) ||
    ck_die "PgBouncer not found (apt-get install pgbouncer) and CHECKPOINTKIT_PGBOUNCER_DSN not set"
  CK_BOUNCER_TMP=$(mktemp -d "${TMPDIR:-/tmp}/checkpointkit-pgbouncer.XXXXXX")
  chmod 755 "$CK_BOUNCER_TMP"
  printf '"%s" ""\n' "$user" >"$CK_BOUNCER_TMP/userlist.txt"
  for attempt in 1 2 3 4 5; do
    port=$(ck_free_port)
    # Transaction mode with a small pool: consecutive statements of one
    # client land on different server sessions, as behind a real pooler.
    {
      echo "[databases]"
      echo "$db = host=$host port=$pgport dbname=$db user=$user${pass:+ password=$pass}"
      echo "[pgbouncer]"
      echo "listen_addr = 127.0.0.1"
      echo "listen_port = $port"
      echo "unix_socket_dir ="
      echo "auth_type = trust"
      echo "auth_file = $CK_BOUNCER_TMP/userlist.txt"
      echo "pool_mode = transaction"
      echo "default_pool_size = 4"
      echo "max_client_conn = 200"
      echo "logfile = $CK_BOUNCER_TMP/pgbouncer.log"
      echo "pidfile = $CK_BOUNCER_TMP/pgbouncer.pid"
    } >"$CK_BOUNCER_TMP/pgbouncer.ini"
    if [ "$(id -u)" = 0 ]; then
      chown -R postgres: "$CK_BOUNCER_TMP"
    fi
    # pgbouncer refuses to run as root. -d: a daemon, stopped via its pidfile.
    if ck_as_pg "$bin" -d -q "$CK_BOUNCER_TMP/pgbouncer.ini" 2>>"$CK_BOUNCER_TMP/start.log"; then
      CK_BOUNCER_STARTED=1
      deadline=$(($(ck_now) + 30000))
      until ck_port_in_use "$port"; do
        if [ "$(ck_now)" -gt "$deadline" ]; then
          ck_die "PgBouncer did not listen on port $port within 30s; see $CK_BOUNCER_TMP"
        fi
        sleep 0.05
      done
      break
    fi
    ck_log "PgBouncer: start on port $port failed (attempt $attempt), retrying"
    tail -n 3 "$CK_BOUNCER_TMP/start.log" >&2 || true
  done
  [ -n "$CK_BOUNCER_STARTED" ] || ck_die "PgBouncer did not start; see $CK_BOUNCER_TMP"
  export CHECKPOINTKIT_PGBOUNCER_DSN="postgres://$user${pass:+:$pass}@127.0.0.1:$port/$db?sslmode=disable"
  ck_log "PgBouncer $("$bin" --version | awk 'NR==1{print $2}') (transaction mode) started on 127.0.0.1:$port in $(ck_since "$t0")"
}

# ck_stop_pgbouncer stops the PgBouncer started by ck_start_pgbouncer, if
# any, and removes its directory.
ck_stop_pgbouncer() {
  local pid i
  if [ -n "$CK_BOUNCER_STARTED" ]; then
    pid=$(cat "$CK_BOUNCER_TMP/pgbouncer.pid" 2>/dev/null || true)
    if [ -n "$pid" ]; then
      kill -INT "$pid" 2>/dev/null || true # SIGINT: immediate shutdown
      for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        if [ "$i" = 100 ]; then kill -KILL "$pid" 2>/dev/null || true; fi
        sleep 0.05
      done
    fi
    CK_BOUNCER_STARTED=""
    ck_log "PgBouncer stopped"
  fi
  if [ -n "$CK_BOUNCER_TMP" ]; then
    rm -rf "$CK_BOUNCER_TMP"
    CK_BOUNCER_TMP=""
  fi
}

# ck_build_ferretdb builds the FerretDB launcher into ci/bin/ferretdb unless
# the binary there was built from the same sources with the same Go, then
# exports CHECKPOINTKIT_FERRETDB_BIN.
ck_build_ferretdb() {
  local bin="$CK_ROOT/ci/bin/ferretdb" stamp want t0
  want=$(
    cd "$CK_ROOT/ci/ferretdb" || exit 1
    go version
    sha256sum go.mod go.sum ./*.go
  )
  stamp="$bin.stamp"
  if [ ! -x "$bin" ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    t0=$(ck_now)
    ck_log "FerretDB launcher: building ci/bin/ferretdb (a cold build takes 1-2 minutes)"
    mkdir -p "$CK_ROOT/ci/bin"
    rm -f "$stamp"
    go build -C "$CK_ROOT/ci/ferretdb" -o "$bin" .
    printf '%s\n' "$want" >"$stamp"
    ck_log "FerretDB launcher: built in $(ck_since "$t0")"
  fi
  export CHECKPOINTKIT_FERRETDB_BIN="$bin"
}

# ck_start_mongo starts FerretDB and exports CHECKPOINTKIT_MONGO_URI,
# unless that variable is already set; either way it exports
# CHECKPOINTKIT_FERRETDB_BIN.
ck_start_mongo() {
  # The mongo adapter's restart test runs a launcher of its own, also when
  # the tests use a server from the environment.
  if [ -z "${CHECKPOINTKIT_FERRETDB_BIN:-}" ]; then
    ck_build_ferretdb
  fi
  if [ -n "${CHECKPOINTKIT_MONGO_URI:-}" ]; then
    ck_log "MongoDB: using CHECKPOINTKIT_MONGO_URI from the environment"
    return 0
  fi
  local t0 uri="" hostport deadline
  t0=$(ck_now)
  CK_FDB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/checkpointkit-ferretdb.XXXXXX")
  # Port 0: the launcher binds a free port itself and prints the real URI.
  "$CHECKPOINTKIT_FERRETDB_BIN" -listen-addr 127.0.0.1:0 -data-dir "$CK_FDB_TMP/data" \
    >"$CK_FDB_TMP/uri" 2>"$CK_FDB_TMP/server.log" &
  CK_FDB_PID=$!
  deadline=$(($(ck_now) + 60000))
  while :; do
    if [ -s "$CK_FDB_TMP/uri" ]; then
      uri=$(head -n 1 "$CK_FDB_TMP/uri")
      hostport=${uri#mongodb://}
      hostport=${hostport%%/*}
      if ck_port_in_use "${hostport##*:}"; then
        break
      fi
    fi
    if ! kill -0 "$CK_FDB_PID" 2>/dev/null; then
      cat "$CK_FDB_TMP/server.log" >&2
      CK_FDB_PID=""
      ck_die "FerretDB exited before it listened"
    fi
    if [ "$(ck_now)" -gt "$deadline" ]; then
      ck_die "FerretDB did not listen within 60s; see $CK_FDB_TMP/server.log"
    fi
    sleep 0.05
  done
  export CHECKPOINTKIT_MONGO_URI="$uri"
  ck_log "FerretDB started at $uri in $(ck_since "$t0") (pid $CK_FDB_PID)"
}

# ck_stop_mongo stops the FerretDB started by ck_start_mongo, if any, and
# removes its data directory.
ck_stop_mongo() {
  local i
  if [ -n "$CK_FDB_PID" ]; then
    kill -TERM "$CK_FDB_PID" 2>/dev/null || true
    for i in $(seq 100); do
      kill -0 "$CK_FDB_PID" 2>/dev/null || break
      if [ "$i" = 100 ]; then
        ck_log "FerretDB: no exit 10s after SIGTERM, killing it"
        kill -KILL "$CK_FDB_PID" 2>/dev/null || true
      fi
      sleep 0.1
    done
    wait "$CK_FDB_PID" 2>/dev/null || true
    CK_FDB_PID=""
    ck_log "FerretDB stopped"
  fi
  if [ -n "$CK_FDB_TMP" ]; then
    rm -rf "$CK_FDB_TMP"
    CK_FDB_TMP=""
  fi
}
