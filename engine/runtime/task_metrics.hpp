#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sluice/engine/graph/metrics.hpp"

namespace sluice {

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
  Counter flush_on_idle;    ///< sources: of those, emitted on running dry, not for a tick
  Counter ticks_offered;    ///< sources: ticks the timer offered while the task ran
  Counter ticks_coalesced;  ///< sources: ticks that found one still pending

  /// A counter an operator names itself ("<operator>.<name>"), or a gauge,
  /// created on first use; the task's thread writes it.
  Counter& custom(const std::string& counter_name, MetricKind kind = MetricKind::kCounter);
  /// Their values now: a kMillisecondsSince one as the time since its moment.
  std::map<std::string, uint64_t> custom_values() const;
  std::set<std::string> gauge_names() const;

 private:
  mutable std::mutex custom_mutex_;
  std::map<std::string, std::unique_ptr<Counter>> custom_;
  std::set<std::string> gauges_;  // of custom_, the gauges
  std::set<std::string> since_;   // of gauges_, the kMillisecondsSince ones
};

TaskSnapshot snapshot(const TaskMetrics& metrics);

}  // namespace sluice
