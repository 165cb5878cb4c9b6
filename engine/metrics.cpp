#include "engine/metrics.hpp"

namespace sluice {

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
                 .ticks_coalesced = m.ticks_coalesced.get()};
  for (size_t i = 0; i < m.operators.size(); ++i) {
    const uint64_t out = i + 1 < m.operators.size() ? m.operators[i + 1].records_in.get()
                                                    : m.records_written.get();
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
