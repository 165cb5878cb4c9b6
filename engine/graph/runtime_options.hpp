#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "engine/graph/options.hpp"

namespace sluice {

/// How the engine runs a graph. The defaults here suit a plain C++ run (no
/// checkpoints, no restarts, a fresh start); the CLI's come from the option
/// table, through from().
#ifdef NDEBUG
inline constexpr bool kDebugBuild = false;
#else
inline constexpr bool kDebugBuild = true;
#endif

struct RuntimeOptions {
  /// Subtasks of every operator that sets no parallelism of its own. Default: 1.
  int parallelism = 1;
  /// Period of the FlushSignals injected at the sources; zero turns them off.
  /// Default: 1s.
  std::chrono::milliseconds flush_interval{1000};
  /// Fuse operators on forward edges of equal parallelism into one task.
  /// Default: true.
  bool chaining = true;
  /// Check every record a source or transform emits against the columns and
  /// changelog mode it declared: a wrong one fails the job naming the
  /// operator, instead of surprising an operator downstream. Default: on in
  /// debug builds (NDEBUG not defined).
  bool check_rows = kDebugBuild;
  /// Records per batch handed from one task to the next. Default: 256.
  size_t batch_size = 256;
  /// Batches a channel holds before its producer blocks. Default: 16.
  size_t channel_capacity = 16;

  /// Time between the start of one checkpoint and the next; zero turns
  /// checkpoints off. Default: off.
  std::chrono::milliseconds checkpoint_interval{0};
  /// A checkpoint not complete after this long is aborted. Default: 60s.
  std::chrono::milliseconds checkpoint_timeout{60'000};
  /// Least time between the end of one checkpoint and the start of the next.
  /// Default: 0.
  std::chrono::milliseconds checkpoint_min_pause{0};
  /// Completed checkpoints kept on disk. Default: 3.
  int checkpoints_retained = 3;
  /// Where checkpoints and live state go: <dir>/<job name>/. Default: ./sluice-state.
  std::filesystem::path checkpoint_dir = "sluice-state";

  enum class Restore {
    kNone,        ///< start fresh
    kLatest,      ///< resume from the latest completed checkpoint, if there is one
    kCheckpoint,  ///< resume from restore_checkpoint, which must exist
  };
  /// Where a run starts from. Default: kNone.
  Restore restore = Restore::kNone;
  int64_t restore_checkpoint = 0;

  /// In-process restarts of a failed job, each from its latest checkpoint.
  /// Default: 0.
  int restart_attempts = 0;
  /// Wait before a restart. Default: 1s.
  std::chrono::milliseconds restart_delay{1000};

  /// Reads `parallelism` and the `engine.*`, `checkpoint.*`, `restore` and
  /// `restart.*` keys.
  static RuntimeOptions from(const Config& config);
};

}  // namespace sluice
