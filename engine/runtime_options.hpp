#pragma once

#include <chrono>
#include <cstddef>

#include "engine/options.hpp"

namespace sluice {

/// How the engine runs a graph.
struct RuntimeOptions {
  /// Subtasks of every operator that sets no parallelism of its own. Default: 1.
  int parallelism = 1;
  /// Period of the FlushSignals injected at the sources; zero turns them off.
  /// Default: 1s.
  std::chrono::milliseconds flush_interval{1000};
  /// Fuse operators on forward edges of equal parallelism into one task.
  /// Default: true.
  bool chaining = true;
  /// Records per batch handed from one task to the next. Default: 256.
  size_t batch_size = 256;
  /// Batches a channel holds before its producer blocks. Default: 16.
  size_t channel_capacity = 16;

  /// Reads `parallelism` and the `engine.*` keys.
  static RuntimeOptions from(const Config& config);
};

}  // namespace sluice
