#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `checkpoint`: the pipeline with a keyed RocksDB aggregate over 100k keys,
/// with checkpoints every second against the same run without.
Benchmark checkpoint_benchmark();

}  // namespace sluice
