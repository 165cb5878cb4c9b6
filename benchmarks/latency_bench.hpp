#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `latency`: source-to-sink latency at a fixed rate (p50, p99), and, with
/// MySQL, how long a row from an idle source takes to become visible in the
/// table, against the flush interval.
Benchmark latency_benchmark();

}  // namespace sluice
