#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `mysql-upsert`: the sink writing 200k distinct-key upserts, next to LOAD
/// DATA LOCAL INFILE and row-by-row autocommit upserts of the same rows.
Benchmark mysql_upsert_benchmark();
/// `mysql-hotkey`: a changelog of many updates to few keys; the reduce buffer
/// writes one row per distinct key per flush.
Benchmark mysql_hotkey_benchmark();
/// `mysql-xa`: the same changelog exactly-once against at-least-once.
Benchmark mysql_xa_benchmark();

}  // namespace sluice
