#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sluice {

/// A counter with one writing thread and any number of readers. The writer
/// adds with a plain load and store, not a locked instruction, so counting on
/// a hot path stays cheap; readers see a recent value.
class Counter {
 public:
  void add(uint64_t n) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  /// For a gauge, whose value is the latest one rather than a sum.
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

/// What an operator's own metric is; see OperatorContext::counter().
enum class MetricKind { kCounter, kGauge, kMillisecondsSince };

/// A copy of one operator's counters at one instant.
struct OperatorSnapshot {
  std::string name;
  int subtask = 0;
  uint64_t records_in = 0;
  uint64_t records_out = 0;
};

/// A copy of one task's counters at one instant.
struct TaskSnapshot {
  std::string name;
  int subtask = 0;
  int parallelism = 1;
  std::vector<OperatorSnapshot> operators;
  uint64_t batches_in = 0;
  uint64_t batches_out = 0;
  uint64_t blocked_ns = 0;
  uint64_t flush_seen = 0;
  uint64_t flush_acted = 0;
  uint64_t flush_emitted = 0;
  uint64_t flush_on_idle = 0;
  uint64_t ticks_offered = 0;
  uint64_t ticks_coalesced = 0;
  std::map<std::string, uint64_t> counters;  ///< the operators' own counters and gauges
  std::set<std::string> gauges;              ///< which of `counters` are gauges
};

/// How one checkpoint went.
struct CheckpointStats {
  int64_t id = 0;
  bool completed = false;                 ///< false: aborted
  bool final = false;                     ///< taken after every source reached its end
  std::chrono::nanoseconds duration{0};   ///< from trigger to completion or abort
  std::chrono::nanoseconds alignment{0};  ///< the longest a task waited for barriers
  std::chrono::nanoseconds pause{0};      ///< the longest a task stopped processing to snapshot
  uint64_t state_bytes = 0;
  std::chrono::system_clock::time_point triggered{};  ///< when the coordinator triggered it
};

/// Counters of a whole job.
struct JobMetrics {
  std::vector<TaskSnapshot> tasks;
  uint64_t ticks_fired = 0;                  ///< flush ticks the engine timer fired
  std::vector<CheckpointStats> checkpoints;  ///< of every attempt, in order
  int restarts = 0;                          ///< attempts before the one running
  std::optional<int64_t> restored_from;      ///< the checkpoint the run started from

  size_t checkpoints_completed() const;
  size_t checkpoints_aborted() const;

  /// Sums `records_in`/`records_out` over every subtask of the operator `name`.
  uint64_t records_in(const std::string& name) const;
  uint64_t records_out(const std::string& name) const;
  /// An operator's own counter ("<operator>.<name>"), summed over its subtasks.
  uint64_t counter(const std::string& name) const;
  /// The snapshot of the task whose chain contains operator `name` (subtask `subtask`).
  const TaskSnapshot* task_of(const std::string& name, int subtask = 0) const;
};

}  // namespace sluice
