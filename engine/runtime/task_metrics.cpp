#include "sluice/engine/runtime/task_metrics.hpp"

#include <algorithm>
#include <chrono>

namespace sluice {

Counter& TaskMetrics::custom(const std::string& counter_name, MetricKind kind) {
  std::lock_guard<std::mutex> lock(custom_mutex_);
  if (kind != MetricKind::kCounter) gauges_.insert(counter_name);
  if (kind == MetricKind::kMillisecondsSince) since_.insert(counter_name);
  auto& counter = custom_[counter_name];
  if (!counter) counter = std::make_unique<Counter>();
  return *counter;
}

std::map<std::string, uint64_t> TaskMetrics::custom_values() const {
  std::lock_guard<std::mutex> lock(custom_mutex_);
  std::map<std::string, uint64_t> values;
  for (const auto& [key, counter] : custom_) values[key] = counter->get();
  if (!since_.empty()) {
    const auto now = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count());
    for (const std::string& key : since_) {
      uint64_t& value = values[key];
      value = value == 0 ? 0 : now - std::min(now, value);
    }
  }
  return values;
}

std::set<std::string> TaskMetrics::gauge_names() const {
  std::lock_guard<std::mutex> lock(custom_mutex_);
  return gauges_;
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
                 .flush_on_idle = m.flush_on_idle.get(),
                 .ticks_offered = m.ticks_offered.get(),
                 .ticks_coalesced = m.ticks_coalesced.get(),
                 .counters = m.custom_values(),
                 .gauges = m.gauge_names()};
  for (size_t i = 0; i < m.operators.size(); ++i) {
    const uint64_t out =
        i + 1 < m.operators.size() ? m.operators[i + 1].records_in.get() : m.records_written.get();
    s.operators.push_back({m.operators[i].name, m.subtask, m.operators[i].records_in.get(), out});
  }
  return s;
}

}  // namespace sluice
