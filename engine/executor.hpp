#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "engine/job_graph.hpp"
#include "engine/metrics.hpp"
#include "engine/runtime_options.hpp"

namespace sluice {

/// How a run ended.
struct JobResult {
  enum class Status { kFinished, kFailed, kCancelled };

  Status status = Status::kFinished;
  /// kFailed: "operator 'parse' (subtask 2 of 4) failed: <what it threw>".
  std::string error;
  /// kFailed: the operator that threw first, and what it threw.
  std::string failed_operator;
  std::exception_ptr exception;
  JobMetrics metrics;
  std::chrono::nanoseconds duration{0};

  bool finished() const { return status == Status::kFinished; }
};

/// Runs job graphs: one thread per task, one timer thread for the flush
/// ticks. One run at a time per executor; cancel() and metrics() may be
/// called from other threads while it runs.
class Executor {
 public:
  explicit Executor(RuntimeOptions options = {});
  ~Executor();

  /// Runs `graph` to its end. Throws ConfigError if the graph is not valid;
  /// everything that goes wrong while running is in the result. Every thread
  /// it started has been joined when it returns.
  JobResult run(const JobGraph& graph);

  /// Asks the run in progress to stop; run() then returns kCancelled.
  void cancel();
  /// The counters of the run in progress (empty between runs).
  JobMetrics metrics() const;

  const RuntimeOptions& options() const { return options_; }

 private:
  struct Running;

  RuntimeOptions options_;
  mutable std::mutex mutex_;
  Running* running_ = nullptr;
};

}  // namespace sluice
