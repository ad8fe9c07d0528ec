# shellcheck shell=bash
# ci/ecosystem.d/backends.bash: what ci/ecosystem needs beyond ci/lib/backends.bash
# (source that first): the virtualenv of third-party savers, a throwaway
# MariaDB and a throwaway redis-server, in the style of ci/lib/backends.bash
# (temporary data directory, a free port on 127.0.0.1, stopped on exit,
# the Debian package installed with apt-get when missing and root).
#
#   ck_eco_venv NAME LOCK   # a venv of savers from a hashed lock
#   ck_start_mariadb        # exports CHECKPOINTKIT_MYSQL_URI (root, no password)
#   ck_start_redis          # exports CHECKPOINTKIT_REDIS_URL
#   ck_eco_cleanup          # stops both (ci/ecosystem calls it on exit)

CK_ECO_DIR="$CK_ROOT/ci/ecosystem.d"
# CK_ECO_VENVS holds the savers' virtualenvs (under out/, which git ignores).
CK_ECO_VENVS="$CK_ROOT/out/ecosystem/venvs"

CK_MARIA_TMP=""
CK_MARIA_PID=""
CK_REDIS_TMP=""
CK_REDIS_PID=""

# ck_eco_venv NAME LOCK [NODEPS_LOCK] creates the virtualenv
# $CK_ECO_VENVS/NAME with Python 3.11 and installs the hashed LOCK into it
# (pip --require-hashes --no-deps: nothing is resolved at install time),
# then NODEPS_LOCK with --ignore-requires-python (a saver whose metadata
# asks for a newer Python than its code needs), unless the venv already
# matches both. bridge/python and ci/ecosystem.d (the factories) go on its
# path through a .pth file. The savers' venvs are:
#   venv       requirements.lock + requirements-nodeps.lock (LangGraph 1.x,
#              langgraph-checkpoint 4.3.2)
#   venv-lg2   requirements-lg2.lock (langgraph-checkpoint 2.x)
ck_eco_venv() {
  local venv="$CK_ECO_VENVS/$1" lock="$CK_ECO_DIR/$2" nodeps="${3:+$CK_ECO_DIR/$3}"
  local t0 want stamp py site pip
  stamp="$venv/.checkpointkit-lock"
  want=$(cat "$lock" ${nodeps:+"$nodeps"} | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
    return 0
  fi
  py=$(command -v python3.11 || command -v python3 || true)
  [ -n "$py" ] || ck_die "python3 not found: install Python 3.11"
  "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
    ck_die "$py is not Python 3.11 (ci/ecosystem's locks are for 3.11)"
  t0=$(ck_now)
  ck_log "ecosystem: creating $venv from $2${3:+ and $3}"
  rm -rf "$venv"
  mkdir -p "$CK_ECO_VENVS"
  "$py" -m venv "$venv" >&2 || return 1
  pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps)
  "${pip[@]}" --only-binary=:all: -r "$lock" >&2 || return 1
  if [ -n "$nodeps" ]; then
    "${pip[@]}" --ignore-requires-python -r "$nodeps" >&2 || return 1
  fi
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  printf '%s\n%s\n' "$CK_ROOT/bridge/python" "$CK_ECO_DIR" >"$site/checkpointkit-ecosystem.pth"
  echo "$want" >"$stamp"
  ck_log "ecosystem: $1 installed in $(ck_since "$t0")"
}

# ck_find_mariadbd prints the mariadbd binary, installing Debian's
# mariadb-server first when it is missing and we are root; or fails.
ck_find_mariadbd() {
  local b
  for b in mariadbd /usr/sbin/mariadbd mysqld /usr/sbin/mysqld; do
    if command -v "$b" >/dev/null; then
      command -v "$b"
      return 0
    fi
  done
  ck_apt_install mariadb-server >/dev/null || return 1
  command -v /usr/sbin/mariadbd
}

# ck_start_mariadb starts a throwaway MariaDB (a new data directory, utf8mb4
# as in Debian's packaged configuration (--no-defaults drops it), root
# without a password over TCP on 127.0.0.1 at a free port, durability off)
# and exports CHECKPOINTKIT_MYSQL_URI, unless that variable is already set.
# As root the server runs as the `mysql` user of the Debian package.
ck_start_mariadb() {
  if [ -n "${CHECKPOINTKIT_MYSQL_URI:-}" ]; then
    ck_log "MariaDB: using CHECKPOINTKIT_MYSQL_URI from the environment"
    return 0
  fi
  local t0 bin port attempt deadline user=()
  t0=$(ck_now)
  bin=$(ck_find_mariadbd) || ck_die "MariaDB not found (apt-get install mariadb-server) and CHECKPOINTKIT_MYSQL_URI not set"
  CK_MARIA_TMP=$(mktemp -d "${TMPDIR:-/tmp}/checkpointkit-mariadb.XXXXXX")
  chmod 755 "$CK_MARIA_TMP"
  if [ "$(id -u)" = 0 ]; then
    chown mysql: "$CK_MARIA_TMP"
    user=(--user=mysql)
  fi
  mariadb-install-db --no-defaults "${user[@]}" --datadir="$CK_MARIA_TMP/data" \
    --auth-root-authentication-method=normal --skip-test-db >"$CK_MARIA_TMP/install.log" 2>&1 ||
    { cat "$CK_MARIA_TMP/install.log" >&2; ck_die "mariadb-install-db failed"; }
  for attempt in 1 2 3 4 5; do
    port=$(ck_free_port)
    "$bin" --no-defaults "${user[@]}" --datadir="$CK_MARIA_TMP/data" --port="$port" \
      --bind-address=127.0.0.1 --socket="$CK_MARIA_TMP/mysqld.sock" --pid-file="$CK_MARIA_TMP/mysqld.pid" \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
      --skip-name-resolve --skip-log-bin --max-connections=1000 --innodb-buffer-pool-size=128M \
      --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --sync-binlog=0 \
      >"$CK_MARIA_TMP/server.log" 2>&1 &
    CK_MARIA_PID=$!
    deadline=$(($(ck_now) + 60000))
    while kill -0 "$CK_MARIA_PID" 2>/dev/null && ! ck_port_in_use "$port"; do
      if [ "$(ck_now)" -gt "$deadline" ]; then
        ck_die "MariaDB did not listen on port $port within 60s; see $CK_MARIA_TMP/server.log"
      fi
      sleep 0.05
    done
    if kill -0 "$CK_MARIA_PID" 2>/dev/null; then
      break
    fi
    wait "$CK_MARIA_PID" 2>/dev/null || true
    CK_MARIA_PID=""
    ck_log "MariaDB: start on port $port failed (attempt $attempt), retrying"
    tail -n 5 "$CK_MARIA_TMP/server.log" >&2 || true
  done
  [ -n "$CK_MARIA_PID" ] || ck_die "MariaDB did not start; see $CK_MARIA_TMP/server.log"
  export CHECKPOINTKIT_MYSQL_URI="mysql://root@127.0.0.1:$port/"
  ck_log "MariaDB $("$bin" --version | awk '{print $3}') started on 127.0.0.1:$port in $(ck_since "$t0") (pid $CK_MARIA_PID)"
}

# ck_stop_mariadb stops the MariaDB started by ck_start_mariadb, if any,
# and removes its data directory.
ck_stop_mariadb() {
  local i
  if [ -n "$CK_MARIA_PID" ]; then
    kill -TERM "$CK_MARIA_PID" 2>/dev/null || true
    for i in $(seq 200); do
      kill -0 "$CK_MARIA_PID" 2>/dev/null || break
      if [ "$i" = 200 ]; then kill -KILL "$CK_MARIA_PID" 2>/dev/null || true; fi
      sleep 0.05
    done
    wait "$CK_MARIA_PID" 2>/dev/null || true
    CK_MARIA_PID=""
    ck_log "MariaDB stopped"
  fi
  if [ -n "$CK_MARIA_TMP" ]; then
    rm -rf "$CK_MARIA_TMP"
    CK_MARIA_TMP=""
  fi
}

# ck_start_redis starts a throwaway redis-server (no persistence, a free
# port on 127.0.0.1) and exports CHECKPOINTKIT_REDIS_URL, unless that
# variable is already set. Debian's redis-server is installed when missing.
ck_start_redis() {
  if [ -n "${CHECKPOINTKIT_REDIS_URL:-}" ]; then
    ck_log "Redis: using CHECKPOINTKIT_REDIS_URL from the environment"
    return 0
  fi
  local t0 attempt port deadline
  t0=$(ck_now)
  command -v redis-server >/dev/null || ck_apt_install redis-server >/dev/null ||
    ck_die "redis-server not found (apt-get install redis-server) and CHECKPOINTKIT_REDIS_URL not set"
  CK_REDIS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/checkpointkit-redis.XXXXXX")
  for attempt in 1 2 3 4 5; do
    port=$(ck_free_port)
    redis-server --bind 127.0.0.1 --port "$port" --dir "$CK_REDIS_TMP" --save '' --appendonly no \
      --protected-mode no --maxclients 2000 >"$CK_REDIS_TMP/server.log" 2>&1 &
    CK_REDIS_PID=$!
    deadline=$(($(ck_now) + 30000))
    while kill -0 "$CK_REDIS_PID" 2>/dev/null && ! ck_port_in_use "$port"; do
      if [ "$(ck_now)" -gt "$deadline" ]; then
        ck_die "redis-server did not listen on port $port within 30s; see $CK_REDIS_TMP/server.log"
      fi
      sleep 0.05
    done
    if kill -0 "$CK_REDIS_PID" 2>/dev/null; then
      break
    fi
    wait "$CK_REDIS_PID" 2>/dev/null || true
    CK_REDIS_PID=""
    ck_log "Redis: start on port $port failed (attempt $attempt), retrying"
  done
  [ -n "$CK_REDIS_PID" ] || ck_die "redis-server did not start; see $CK_REDIS_TMP/server.log"
  export CHECKPOINTKIT_REDIS_URL="redis://127.0.0.1:$port/0"
  ck_log "Redis $(redis-server --version | awk '{print $3}' | tr -d 'v=') started on 127.0.0.1:$port in $(ck_since "$t0") (pid $CK_REDIS_PID)"
}

# ck_stop_redis stops the redis-server started by ck_start_redis, if any.
ck_stop_redis() {
  if [ -n "$CK_REDIS_PID" ]; then
    kill -TERM "$CK_REDIS_PID" 2>/dev/null || true
    wait "$CK_REDIS_PID" 2>/dev/null || true
    CK_REDIS_PID=""
    ck_log "Redis stopped"
  fi
  if [ -n "$CK_REDIS_TMP" ]; then
    rm -rf "$CK_REDIS_TMP"
    CK_REDIS_TMP=""
  fi
}

# ck_eco_cleanup stops what ck_start_mariadb and ck_start_redis started and
# then what ci/lib/backends.bash started; for ci/ecosystem's EXIT trap.
ck_eco_cleanup() {
  local status=$?
  set +e
  ck_stop_mariadb
  ck_stop_redis
  ck_stop_mongo
  ck_stop_pgbouncer
  ck_stop_postgres
  return "$status"
}
