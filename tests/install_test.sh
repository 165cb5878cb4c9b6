#!/usr/bin/env bash
# Installs Sluice into a temporary prefix, checks that every installed header
# compiles on its own, then builds examples/custom-job against the install
# from a separate build directory, runs it and checks what it prints.
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
for header in $headers; do
  echo "#include \"$header\"" |
    g++ -std=c++20 -fsyntax-only -Wall -Wextra -I"$work/prefix/include/sluice" -x c++ - ||
    fail "$header does not compile on its own"
done
# What a job author must not touch stays out.
for internal in engine/runtime/task.hpp engine/runtime/channel.hpp engine/checkpoint/checkpoint_coordinator.hpp \
                connectors/mysql_connection.hpp; do
  [ ! -e "$work/prefix/include/sluice/$internal" ] || fail "$internal was installed"
done

cmake -S "$source_dir/examples/custom-job" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j"$(nproc)" >/dev/null
output=$(cd "$work" && ./build/custom_job)
echo "$output"
# 1² + 2² + … + 1000² = 1000·1001·2001/6
grep -q "custom-job: sum of squares 333833500" <<<"$output" || fail "wrong sum"
grep -Eq "custom-job: 1000 rows, [1-9][0-9]* flushes, [1-9][0-9]* checkpoints" <<<"$output" ||
  fail "no flushes or checkpoints"
echo ok
