#include "engine/graph/metrics.hpp"

#include <algorithm>

namespace sluice {

Counter& TaskMetrics::custom(const std::string& counter_name) {
  std::lock_guard<std::mutex> lock(custom_mutex_);
  auto& counter = custom_[counter_name];
  if (!counter) counter = std::make_unique<Counter>();
  return *counter;
}

std::map<std::string, uint64_t> TaskMetrics::custom_values() const {
  std::lock_guard<std::mutex> lock(custom_mutex_);
  std::map<std::string, uint64_t> values;
  for (const auto& [key, counter] : custom_) values[key] = counter->get();
  return values;
}

TaskSnapshot snapshot(const TaskMetrics& m) {
  TaskSnapshot s{.name = m.name,
                 .subtask = m.subtask,
                 .parallelism = m.parallelism,
                 .batches_in = m.batches_in.get(),
                 .batches_out = m.batches_out.get(),
                 .blocked_ns = m.blocked_ns.get(),
                 .flush_seen = m.flush_seen.get(),
                 .flush_acted = m.flush_acted.get(),
                 .flush_emitted = m.flush_emitted.get(),
                 .ticks_offered = m.ticks_offered.get(),
                 .ticks_coalesced = m.ticks_coalesced.get(),
                 .counters = m.custom_values()};
  for (size_t i = 0; i < m.operators.size(); ++i) {
    const uint64_t out =
        i + 1 < m.operators.size() ? m.operators[i + 1].records_in.get() : m.records_written.get();
    s.operators.push_back({m.operators[i].name, m.subtask, m.operators[i].records_in.get(), out});
  }
  return s;
}

namespace {

uint64_t sum_over_subtasks(const std::vector<TaskSnapshot>& tasks, const std::string& name,
                           uint64_t OperatorSnapshot::*field) {
  uint64_t total = 0;
  for (const auto& task : tasks) {
    for (const auto& op : task.operators) {
      if (op.name == name) total += op.*field;
    }
  }
  return total;
}

}  // namespace

uint64_t JobMetrics::records_in(const std::string& name) const {
  return sum_over_subtasks(tasks, name, &OperatorSnapshot::records_in);
}

uint64_t JobMetrics::records_out(const std::string& name) const {
  return sum_over_subtasks(tasks, name, &OperatorSnapshot::records_out);
}

uint64_t JobMetrics::counter(const std::string& name) const {
  uint64_t total = 0;
  for (const auto& task : tasks) {
    if (const auto it = task.counters.find(name); it != task.counters.end()) total += it->second;
  }
  return total;
}

size_t JobMetrics::checkpoints_completed() const {
  return static_cast<size_t>(std::count_if(checkpoints.begin(), checkpoints.end(),
                                           [](const CheckpointStats& c) { return c.completed; }));
}

size_t JobMetrics::checkpoints_aborted() const {
  return checkpoints.size() - checkpoints_completed();
}

const TaskSnapshot* JobMetrics::task_of(const std::string& name, int subtask) const {
  for (const auto& task : tasks) {
    if (task.subtask != subtask) continue;
    for (const auto& op : task.operators) {
      if (op.name == name) return &task;
    }
  }
  return nullptr;
}

}  // namespace sluice
