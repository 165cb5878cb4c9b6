#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// What the pipeline benchmark measures the engine against: the same map
/// (value + 1) and filter (id % 8 != 0) over `struct {int64_t id, value;}`,
/// in one hand-written loop, and across two threads in batches of 256
/// through a Boost SPSC queue.
BenchSample typed_single_thread_loop(uint64_t rows);
BenchSample typed_two_thread_spsc(uint64_t rows);

/// The two batch layouts considered for the data plane (docs/data-plane.md),
/// each across one thread boundary with recycled batches: columns per type
/// with a selection vector, and fixed-width binary rows with a variable-width
/// area; rows of two BIGINTs, and of two BIGINTs and a STRING.
Benchmark batch_layout_benchmark();

}  // namespace sluice
