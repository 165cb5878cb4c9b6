#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `cdc`: the mysql-cdc source's snapshot and binlog, into a blackhole and
/// into MySQL next to LOAD DATA of the same rows, and the latency from a
/// commit on the source to the row visible in the target.
Benchmark cdc_benchmark();

/// `database`: mysql-to-mysql of several tables (source.tables) applying
/// the same rows spread over 100 tables of a sysbench-like schema against
/// one table, and the memory each run peaks at.
Benchmark database_benchmark();

}  // namespace sluice
