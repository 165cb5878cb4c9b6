#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `cdc`: the mysql-cdc source's snapshot and binlog, into a blackhole and
/// into MySQL next to LOAD DATA of the same rows, and the latency from a
/// commit on the source to the row visible in the target.
Benchmark cdc_benchmark();

/// `database`: mysql-to-mysql of several tables (source.tables) applying
/// sysbench's write-only changes to the rows of 100 prepared tables of a
/// sysbench-like schema, against the same rows in one table, and the
/// memory each run peaks at.
Benchmark database_benchmark();

/// `database-from-empty`: the same, the rows inserted into new tables
/// (whose files the server grows as they fill) and then updated.
Benchmark database_from_empty_benchmark();

}  // namespace sluice
