#include "sluice/engine/graph/metrics.hpp"

#include <algorithm>

namespace sluice {

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
