#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `pipeline`: datagen -> map -> filter -> blackhole over rows of two BIGINTs,
/// chained, across one thread boundary and with a keyed exchange at
/// parallelism 2, against a single-thread loop and a two-thread SPSC
/// pipeline that move the same rows.
Benchmark pipeline_benchmark();

/// `flush-signal`: the pipeline across one thread boundary with FlushSignals
/// every 10 ms against none.
Benchmark flush_signal_benchmark();

}  // namespace sluice
