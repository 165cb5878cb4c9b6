#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "sluice/engine/graph/options.hpp"

namespace sluice {

#ifdef NDEBUG
inline constexpr bool kDebugBuild = false;
#else
inline constexpr bool kDebugBuild = true;
#endif

/// The per-user state directory: $XDG_STATE_HOME/sluice, else
/// ~/.local/state/sluice, else ./sluice-state (no HOME).
std::filesystem::path default_checkpoint_dir();

/// How the engine runs a graph. Each field is bound to one option key (in
/// parentheses); the field's initializer here is that option's default, for
/// a C++ program and for the CLI alike (engine_option_specs() shows these).
/// So a job run from C++ checkpoints every 5s into
/// ~/.local/state/sluice/<job>/ (default_checkpoint_dir()),
/// resumes after a crash, and restarts a failed run in process, as from the
/// CLI; without_checkpoints() runs without state on disk.
struct RuntimeOptions {
  /// Subtasks of every operator that sets no parallelism of its own
  /// (`parallelism`).
  int parallelism = 1;
  /// Period of the FlushSignals injected at the sources; zero turns them off
  /// (`engine.flush.interval`).
  std::chrono::milliseconds flush_interval{1000};
  /// With flush_interval on, a source that has read all there is for now
  /// (its poll found nothing) emits a FlushSignal too, once, if it emitted
  /// records since its last one: the last changes of a burst need not wait
  /// for the next tick, and under load, when a source never runs dry, the
  /// ticks alone flush (`engine.flush.on-idle`).
  bool flush_on_idle = true;
  /// Fuse operators on forward edges of equal parallelism into one task
  /// (`engine.chaining`).
  bool chaining = true;
  /// Check every record a source or transform emits against the changelog
  /// mode it declared: a wrong one fails the job naming the operator,
  /// instead of surprising an operator downstream. (Column types and DECIMAL
  /// precisions are always checked.) On in debug builds (NDEBUG not
  /// defined) (`engine.check-rows`).
  bool check_rows = kDebugBuild;
  /// Records per batch handed from one task to the next (`engine.batch-size`).
  size_t batch_size = 256;
  /// Batches a channel holds before its producer blocks
  /// (`engine.channel-capacity`).
  size_t channel_capacity = 16;

  /// Time between the start of one checkpoint and the next; zero turns
  /// checkpoints off (`checkpoint.interval`).
  std::chrono::milliseconds checkpoint_interval{5000};
  /// A checkpoint not complete after this long is aborted (`checkpoint.timeout`).
  std::chrono::milliseconds checkpoint_timeout{60'000};
  /// Least time between the end of one checkpoint and the start of the next
  /// (`checkpoint.min-pause`).
  std::chrono::milliseconds checkpoint_min_pause{0};
  /// Completed checkpoints kept on disk (`checkpoint.retained`).
  int checkpoints_retained = 3;
  /// Where checkpoints and live state go: <dir>/<job name>/ (`checkpoint.dir`).
  std::filesystem::path checkpoint_dir = default_checkpoint_dir();

  enum class Restore {
    kNone,        ///< start fresh
    kLatest,      ///< resume from the latest completed checkpoint, unless the job finished after it
    kCheckpoint,  ///< resume from restore_checkpoint, which must exist
  };
  /// Where a run starts from (`restore`: none, auto, or a checkpoint id).
  Restore restore = Restore::kLatest;
  int64_t restore_checkpoint = 0;

  /// In-process restarts of a failed job, each from its latest checkpoint
  /// (`restart.attempts`). A failure that would repeat is not restarted.
  int restart_attempts = 3;
  /// Wait before a restart (`restart.delay`).
  std::chrono::milliseconds restart_delay{1000};

  /// The defaults, but no checkpoints, no restore and no restarts (which
  /// would start over from the beginning): a run that keeps no state on disk
  /// and never resumes another's. Flink's default.
  static RuntimeOptions without_checkpoints();

  /// Reads every key bound to a field; a key the config does not set keeps
  /// the default above.
  static RuntimeOptions from(const Config& config);

  bool operator==(const RuntimeOptions&) const = default;
};

/// The engine's option keys: `job.name` and one per RuntimeOptions field,
/// whose defaults are those of RuntimeOptions{}.
const std::vector<OptionSpec>& engine_option_specs();

}  // namespace sluice
