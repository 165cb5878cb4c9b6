#!/usr/bin/env bash
# scripts/mariadb: starting twice leaves one server, the test user can log in
# with what `env` prints and through `sql`, and stop stops that server and no other: a second
# server, started from another directory, keeps running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
first=$(mktemp -d)
second=$(mktemp -d)
port=$((20000 + RANDOM % 10000))
mariadb_in() { SLUICE_MARIADB_DIR=$1 SLUICE_MARIADB_PORT=$2 "$root/scripts/mariadb" "${@:3}"; }
cleanup() {
  mariadb_in "$first" "$port" stop >/dev/null 2>&1 || true
  mariadb_in "$second" "$((port + 1))" stop >/dev/null 2>&1 || true
  rm -rf "$first" "$second"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
servers_in() { { pgrep -f -- "--datadir=$1/data" || true; } | wc -l; }

mariadb_in "$first" "$port" start
mariadb_in "$first" "$port" start
[ "$(servers_in "$first")" = 1 ] || fail "expected one server after two starts, found $(servers_in "$first")"
mariadb_in "$first" "$port" status >/dev/null || fail "status says it is not running"

eval "$(mariadb_in "$first" "$port" env)"
[ "$(mariadb --no-defaults -h127.0.0.1 -P"$port" -usluice -p"$SLUICE_MYSQL_PASSWORD" \
  -N -e 'SELECT DATABASE()' sluice)" = sluice ] || fail "the test user cannot log in"
[ "$SLUICE_MYSQL_URL" = "mysql://sluice@127.0.0.1:$port/sluice" ] ||
  fail "unexpected SLUICE_MYSQL_URL $SLUICE_MYSQL_URL"
[ "$SLUICE_MARIADB_PORT" = "$port" ] || fail "env does not export the port"
# sql reaches this server, not whatever listens elsewhere.
[ "$(mariadb_in "$first" "$port" sql -N -e 'SELECT @@port')" = "$port" ] ||
  fail "scripts/mariadb sql did not reach the server on port $port"

mariadb_in "$second" "$((port + 1))" start
mariadb_in "$first" "$port" stop
[ "$(servers_in "$first")" = 0 ] || fail "the server still runs after stop"
[ "$(servers_in "$second")" = 1 ] || fail "stop touched another server"
if mariadb_in "$first" "$port" status >/dev/null; then fail "status says it runs after stop"; fi
echo "ok"
