#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/metrics.hpp"
#include "sluice/engine/graph/runtime_options.hpp"

namespace sluice {

class CheckpointStorage;
struct PhysicalPlan;

/// How a run ended.
struct JobResult {
  enum class Status { kFinished, kFailed, kCancelled };

  Status status = Status::kFinished;
  /// kFailed: "operator 'parse' (subtask 2 of 4) failed: <what it threw>",
  /// or why the job could not start.
  std::string error;
  /// kFailed: the operator that threw first (empty if the job could not
  /// start), and what it threw.
  std::string failed_operator;
  std::exception_ptr exception;
  /// The counters of the last attempt; checkpoints of every attempt.
  JobMetrics metrics;
  std::chrono::nanoseconds duration{0};
  /// The checkpoint the first attempt resumed from, if any.
  std::optional<int64_t> restored_from;
  /// Per attempt, first to last, the checkpoint it restored (nullopt: none).
  std::vector<std::optional<int64_t>> attempts_restored;
  /// In-process restarts after failures.
  int restarts = 0;

  bool finished() const { return status == Status::kFinished; }
};

/// Runs job graphs: one thread per task, one timer thread for flush ticks
/// and checkpoints. A failed run is restarted up to `restart_attempts` times,
/// from the latest checkpoint this run completed, or else the one it started
/// from (never another run's); a failure that would repeat (is_permanent())
/// is not restarted. One run at a time per executor; cancel() and
/// metrics() may be called from other threads while it runs.
class Executor {
 public:
  explicit Executor(RuntimeOptions options = {});
  ~Executor();

  /// Runs `graph` to its end. Never throws: everything that goes wrong is in
  /// the result, also a graph that is not valid or cannot resume from the
  /// checkpoint asked for (a failed result without failed_operator, whose
  /// exception is the ConfigError): the caller reports it.
  /// Every thread it started has been joined when it returns.
  JobResult run(const JobGraph& graph);

  /// The checkpoint run() would resume `job` from with `options`; nullopt for
  /// a fresh start. Throws ConfigError for a restore id that does not exist.
  static std::optional<int64_t> restore_point(const RuntimeOptions& options,
                                              const std::string& job);

  /// Asks the run in progress to stop; run() then returns kCancelled.
  void cancel();
  /// The counters of the attempt in progress, with the checkpoints of the
  /// run's earlier attempts (empty between runs).
  JobMetrics metrics() const;

  const RuntimeOptions& options() const { return options_; }

 private:
  struct Attempt;

  JobResult run_attempts(const JobGraph& graph);
  JobResult run_attempt(const JobGraph& graph, const PhysicalPlan& plan,
                        const CheckpointStorage& storage, std::optional<int64_t> restore);

  RuntimeOptions options_;
  mutable std::mutex mutex_;
  Attempt* attempt_ = nullptr;
  // Of the run in progress, guarded by mutex_: what its earlier attempts did.
  std::vector<CheckpointStats> earlier_checkpoints_;
  int restarts_ = 0;
  std::optional<int64_t> started_from_;
  std::atomic<bool> cancel_requested_{false};
};

}  // namespace sluice
