#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

/// A counter with one writing thread and any number of readers. The writer
/// adds with a plain load and store, not a locked instruction, so counting on
/// a hot path stays cheap; readers see a recent value.
class Counter {
 public:
  void add(uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

/// Live counters of one operator within a task. What an operator emits is
/// what the next one in the chain receives, so only inputs are counted.
struct OperatorMetrics {
  std::string name;
  Counter records_in;
};

/// Live counters of one task (a chain of operators on one thread), written by
/// the task's thread; ticks_coalesced is written by the timer thread.
struct TaskMetrics {
  std::string name;  ///< the chain: "datagen -> map -> sink"
  int subtask = 0;
  int parallelism = 1;
  std::vector<OperatorMetrics> operators;  ///< in chain order

  Counter records_written;  ///< records the chain's last operator handed to output channels
  Counter batches_in;
  Counter batches_out;
  Counter blocked_ns;       ///< time waiting for room in a full output channel
  Counter flush_seen;       ///< FlushSignals that arrived on inputs or were emitted by the source
  Counter flush_acted;      ///< ticks acted on: flush action run (sink) or signal forwarded
  Counter flush_emitted;    ///< sources: FlushSignals injected into the outputs
  Counter ticks_offered;    ///< sources: ticks the timer offered while the task ran
  Counter ticks_coalesced;  ///< sources: ticks that found one still pending
};

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
  uint64_t ticks_offered = 0;
  uint64_t ticks_coalesced = 0;
};

TaskSnapshot snapshot(const TaskMetrics& metrics);

/// Counters of a whole job.
struct JobMetrics {
  std::vector<TaskSnapshot> tasks;
  uint64_t ticks_fired = 0;  ///< flush ticks the engine timer fired

  /// Sums `records_in`/`records_out` over every subtask of the operator `name`.
  uint64_t records_in(const std::string& name) const;
  uint64_t records_out(const std::string& name) const;
  /// The snapshot of the task whose chain contains operator `name` (subtask `subtask`).
  const TaskSnapshot* task_of(const std::string& name, int subtask = 0) const;
};

}  // namespace sluice
