#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `cdc`: the mysql-cdc source's snapshot and binlog, into a blackhole and
/// into MySQL next to LOAD DATA of the same rows, and the latency from a
/// commit on the source to the row visible in the target.
Benchmark cdc_benchmark();

}  // namespace sluice
