#pragma once

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {

/// While a job runs, rewrites one line on the terminal every second:
/// records/s in and out, checkpoints completed, time since the last flush,
/// share of time tasks spent blocked by backpressure; then a CDC source's
/// snapshot as a bar with its percent and ETA, or its binlog lag.
class ProgressLine {
 public:
  /// Draws on `out` only if it is a terminal.
  ProgressLine(const Executor& executor, const JobGraph& graph, FILE* out = stderr);
  ~ProgressLine();

 private:
  void run();

  const Executor& executor_;
  const JobGraph& graph_;
  FILE* out_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// What the progress line rates: records the sources emitted, and records
/// the sinks wrote — what a sink counts as sent on (Flink's numRecordsSend:
/// an upsert sink writes each key's last change only), else what it took.
struct ProgressCounts {
  uint64_t in = 0;
  uint64_t out = 0;
};
ProgressCounts progress_counts(const JobGraph& graph, const JobMetrics& metrics);

/// A change-data-capture source's snapshot while it reads (its "phase"
/// gauge is 1): the rows read of those the server estimated, over its
/// tables; nullopt when no snapshot is being read.
struct SnapshotProgress {
  uint64_t read = 0;
  uint64_t estimated = 0;  ///< at least `read`
};
std::optional<SnapshotProgress> snapshot_progress(const JobMetrics& metrics);
/// "snapshot [#######-------------]  35% ETA 42 s", as the progress line
/// shows it; without the ETA while the rate is not known (0).
std::string snapshot_bar(const SnapshotProgress& progress, double rows_per_second);

/// The table printed when a job ends: per operator, per checkpoint, totals.
void print_summary(const JobGraph& graph, const JobResult& result, FILE* out = stderr);

}  // namespace sluice
