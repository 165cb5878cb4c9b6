#!/usr/bin/env bash
# scripts/mariadb: starting twice leaves one server, the test user can log in
# with what `env` prints, and stop stops that server and no other.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export SLUICE_MARIADB_DIR
SLUICE_MARIADB_DIR=$(mktemp -d)
export SLUICE_MARIADB_PORT=$((20000 + RANDOM % 10000))
data="$SLUICE_MARIADB_DIR/data"
cleanup() {
  "$root/scripts/mariadb" stop >/dev/null 2>&1 || true
  rm -rf "$SLUICE_MARIADB_DIR"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ours() { { pgrep -f -- "--datadir=$data" || true; } | wc -l; }
all_servers() { { pgrep -x mariadbd || true; } | wc -l; }

others=$(all_servers)
"$root/scripts/mariadb" start
"$root/scripts/mariadb" start
[ "$(ours)" = 1 ] || fail "expected one server after two starts, found $(ours)"
"$root/scripts/mariadb" status >/dev/null || fail "status says it is not running"

eval "$("$root/scripts/mariadb" env)"
[ "$(mariadb --no-defaults -h127.0.0.1 -P"$SLUICE_MARIADB_PORT" -usluice -p"$SLUICE_MYSQL_PASSWORD" \
  -N -e 'SELECT DATABASE()' sluice)" = sluice ] || fail "the test user cannot log in"
case "$SLUICE_MYSQL_URL" in
  "mysql://sluice@127.0.0.1:$SLUICE_MARIADB_PORT/sluice") ;;
  *) fail "unexpected SLUICE_MYSQL_URL $SLUICE_MYSQL_URL" ;;
esac

"$root/scripts/mariadb" stop
[ "$(ours)" = 0 ] || fail "the server still runs after stop"
[ "$(all_servers)" = "$others" ] || fail "stop touched another server"
if "$root/scripts/mariadb" status >/dev/null; then fail "status says it runs after stop"; fi
echo "ok"
