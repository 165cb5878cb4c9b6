#!/usr/bin/env bash
# Installs Sluice into a temporary prefix, checks that every installed header
# compiles on its own without warnings, then builds examples/custom-job
# against the install from a separate build directory, runs it and checks
# what it prints.
set -euo pipefail
source_dir=$1
build_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
[ -x "$work/prefix/bin/sluice" ] || fail "the CLI was not installed"

headers=$(cd "$work/prefix/include/sluice" && find . -name '*.hpp' | sed 's|^\./||' | sort)
[ -n "$headers" ] || fail "no headers installed"
# Each on its own, and without a warning where a job author's build warns.
export include_dir="$work/prefix/include"
printf '%s\n' $headers | xargs -P "$(nproc)" -I{} bash -c '
  echo "#include <sluice/{}>" |
    g++ -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$include_dir" -x c++ - ||
    { echo "FAIL: {} does not compile on its own without warnings" >&2; exit 1; }' ||
  fail "an installed header does not compile on its own without warnings (above)"
# A type an installed header declares is defined in one, so that nothing a
# job author reads names a type they cannot have; except the engine's own,
# which only its private members and its engine-side constructors name:
# Executor's attempt (CheckpointStorage, PhysicalPlan) and the store behind
# the state handles (LazyStateStore).
engine_internal=" CheckpointStorage PhysicalPlan LazyStateStore "
for declared in $(cd "$work/prefix/include/sluice" &&
                  grep -rhoE '^(class|struct) [A-Za-z_]+;' . | sed -E 's/^(class|struct) //; s/;$//' | sort -u); do
  [[ "$engine_internal" == *" $declared "* ]] && continue
  grep -rqE "^(class|struct) $declared( final)?( [:{]|$)" "$work/prefix/include/sluice" ||
    fail "an installed header declares $declared, which no installed header defines"
done
# What a job author must not touch stays out.
for internal in engine/runtime/task.hpp engine/runtime/channel.hpp engine/checkpoint/checkpoint_coordinator.hpp \
                connectors/mysql/connection.hpp connectors/mysql/sink/sink_connection.hpp \
                connectors/mysql/cdc/captured_tables.hpp cli/flink_sql.hpp; do
  [ ! -e "$work/prefix/include/sluice/$internal" ] || fail "$internal was installed"
done

cmake -S "$source_dir/examples/custom-job" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j"$(nproc)" >/dev/null
job="$work/build/custom_job"
output=$("$job" --set checkpoint.dir="$work/state" 2>"$work/stderr")
diagnostics=$(cat "$work/stderr")
echo "$output"
echo "$diagnostics"
# 1² + 2² + … + 1000² = 1000·1001·2001/6
grep -q "custom-job: sum of squares 333833500" <<<"$output" || fail "wrong sum"
grep -Eq "custom-job: 1000 rows, [1-9][0-9]* flushes, [1-9][0-9]* checkpoints" <<<"$diagnostics" ||
  fail "no flushes or checkpoints"
grep -Eq "^count +1 +0 +1000 " <<<"$diagnostics" || fail "no summary on stderr"
! grep -q "^count " <<<"$output" || fail "the summary on stdout, among the job's output"

# run_cli() gave it the CLI's tooling: --set, describe, usage errors.
output=$("$job" --set count.last=10 --set restore=none --set checkpoint.dir="$work/state")
grep -q "custom-job: sum of squares 385" <<<"$output" || fail "--set count.last=10 not taken"
"$job" describe --dot | grep -q "^digraph" || fail "describe --dot"
"$job" describe | grep -Eq "count.last +1000 +\(default\)" || fail "describe lists no options"
set +e
"$job" --set count.last=ten 2>"$work/err"; status=$?
set -e
[ "$status" = 2 ] || fail "a bad value exited $status, not 2"
grep -q "^error: option 'count.last' expects" "$work/err" || fail "no usage error: $(cat "$work/err")"

# The progress line (on a terminal) and metrics, while it runs for 3 s.
port=$((20000 + RANDOM % 20000))
script -qefc "'$job' --set count.last=3000 --set count.rate=1000 --set restore=none \
  --set checkpoint.dir='$work/state' --set metrics.port=$port --metrics-file '$work/metrics.json'" \
  /dev/null >"$work/terminal" &
runner=$!
metrics=""
for _ in $(seq 50); do
  sleep 0.1
  if exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
    printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
    metrics=$(cat <&3)
    exec 3<&-
    break
  fi
done
wait "$runner" || fail "the run under a terminal failed: $(cat "$work/terminal")"
grep -q "sluice_operator_counter_total{.*name=\"sum.flushes\"}" <<<"$metrics" ||
  fail "no metrics on port $port: $metrics"
grep -q " s | in " "$work/terminal" || fail "no progress line: $(cat "$work/terminal")"
grep -q '"sum"' "$work/metrics.json" || fail "no --metrics-file"
# examples/cdc-job: the mysql-cdc source, a filter and a map, the MySQL
# sink, against the throwaway MariaDB when one runs (scripts/test starts it).
cmake -S "$source_dir/examples/cdc-job" -B "$work/cdc-build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cdc-build" -j"$(nproc)" >/dev/null
if [ -n "${SLUICE_MYSQL_URL:-}" ]; then
  sql() { "$source_dir/scripts/mariadb" sql -N -e "$1"; }
  orders=install_orders_$$
  sql "DROP TABLE IF EXISTS $orders, ${orders}_big;
       CREATE TABLE $orders (id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(12,2));
       CREATE TABLE ${orders}_big LIKE $orders;
       INSERT INTO $orders VALUES (1, 7, 50.00), (2, 7, 150.00), (3, 8, 100.00), (4, 8, NULL)"
  sets=(--set source.url="$SLUICE_MYSQL_URL" --set source.table="$orders"
    --set sink.url="$SLUICE_MYSQL_URL" --set sink.table="${orders}_big"
    --set source.startup-mode=snapshot --set checkpoint.dir="$work/cdc-state")
  "$work/cdc-build/cdc_job" "${sets[@]}" >"$work/cdc.out" 2>&1 ||
    fail "the cdc-job example failed: $(cat "$work/cdc.out")"
  copied=$(sql "SELECT id, customer, amount FROM ${orders}_big ORDER BY id" | tr '\t\n' ', ')
  [ "$copied" = "2,7,151.50 3,8,101.50 " ] || fail "the cdc-job example copied '$copied'"
  "$work/cdc-build/cdc_job" describe --as flink-sql "${sets[@]}" >"$work/cdc.sql" 2>&1 ||
    fail "describe --as flink-sql failed: $(cat "$work/cdc.sql")"
  grep -q "'connector' = 'mysql-cdc'" "$work/cdc.sql" && grep -q "WHERE amount >= 100.00" "$work/cdc.sql" ||
    fail "describe --as flink-sql: $(cat "$work/cdc.sql")"
  sql "DROP TABLE $orders, ${orders}_big"
else
  echo "the cdc-job example was built, not run: no SLUICE_MYSQL_URL"
fi
echo ok
