#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `memory`: peak resident memory while a source offers 10M records to a
/// stalled sink: backpressure keeps it bounded and flat.
Benchmark memory_benchmark();

}  // namespace sluice
