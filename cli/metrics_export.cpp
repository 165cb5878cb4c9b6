#include "sluice/cli/metrics_export.hpp"

#include <cstdio>
#include <ctime>
#include <map>
#include <optional>

#include "sluice/cli/job_page.hpp"
#include "sluice/engine/graph/node_def.hpp"

namespace sluice {
namespace {

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// "2026-12-06T09:44:48.123Z"; null for a time never set.
nlohmann::json utc_time(std::chrono::system_clock::time_point t) {
  if (t.time_since_epoch().count() == 0) return nullptr;
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(t);
  const std::time_t whole = std::chrono::system_clock::to_time_t(ms);
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char text[40];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof(text) - n, ".%03dZ",
                static_cast<int>(ms.time_since_epoch().count() % 1000));
  return text;
}

const char* status_name(JobResult::Status status) {
  switch (status) {
    case JobResult::Status::kFinished:
      return "finished";
    case JobResult::Status::kFailed:
      return "failed";
    case JobResult::Status::kCancelled:
      return "cancelled";
  }
  return "?";
}

// Flink's standard connector metrics (FLIP-33) and Flink CDC's source
// metrics, which operators count under these names; see flink_metric().
struct FlinkMetric {
  const char* name;
  const char* help;
};
constexpr FlinkMetric kFlinkMetrics[] = {
    {"numRecordsSend", "Records the sink sent to the external system."},
    {"numBytesSend", "Bytes the sink sent to the external system."},
    {"numRecordsSendErrors", "Records the sink failed to send."},
    {"currentSendTime", "Milliseconds the sink's last send took."},
    // Flink CDC's source metrics.
    {"currentFetchEventTimeLag",
     "Milliseconds between the server writing the last binlog event read and the source reading "
     "it."},
    {"currentEmitEventTimeLag",
     "Milliseconds between the server writing the last change emitted and the source emitting "
     "it."},
    {"sourceIdleTime", "Milliseconds since the source last emitted a change."}};

// The operator of counter "<operator>.<metric>" when <metric> is one of
// Flink's standard ones.
std::optional<std::string> flink_metric(const std::string& counter) {
  for (const FlinkMetric& metric : kFlinkMetrics) {
    const std::string suffix = std::string(".") + metric.name;
    if (counter.size() > suffix.size() && counter.ends_with(suffix)) {
      return counter.substr(0, counter.size() - suffix.size());
    }
  }
  return std::nullopt;
}

// Label values escape backslash, quote and newline.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    out.push_back(c == '\n' ? 'n' : c);
  }
  return out;
}

}  // namespace

std::vector<OperatorTotals> operator_totals(const JobGraph& graph, const JobMetrics& metrics) {
  std::vector<OperatorTotals> totals;
  for (const auto& node : graph.nodes()) {
    OperatorTotals t{node.name, 0, metrics.records_in(node.name), metrics.records_out(node.name)};
    for (const auto& task : metrics.tasks) {
      for (const auto& op : task.operators) t.subtasks += op.name == node.name;
    }
    totals.push_back(t);
  }
  return totals;
}

namespace {

nlohmann::json plan_json(const JobGraph& graph, const PhysicalPlan* plan) {
  if (plan == nullptr) return nullptr;
  nlohmann::json tasks = nlohmann::json::array();
  for (size_t c = 0; c < plan->chains.size(); ++c) {
    nlohmann::json operators = nlohmann::json::array();
    for (int node : plan->chains[c].nodes) operators.push_back(graph.nodes()[node].name);
    tasks.push_back({{"name", plan->chain_name(graph, static_cast<int>(c))},
                     {"operators", operators},
                     {"parallelism", plan->chains[c].parallelism}});
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const PlanEdge& edge : plan->edges) {
    edges.push_back({{"from", edge.from_chain},
                     {"to", edge.to_chain},
                     {"partitioning", edge.partitioning_name()}});
  }
  return {{"tasks", tasks}, {"edges", edges}};
}

// What a running and a finished job's JSON share: the plan and the
// counters, and the last `last_checkpoints` checkpoints.
nlohmann::json counters_json(const JobGraph& graph, const PhysicalPlan* plan, const JobMetrics& m,
                             size_t last_checkpoints) {
  nlohmann::json operators = nlohmann::json::array();
  for (const auto& t : operator_totals(graph, m)) {
    operators.push_back({{"name", t.name},
                         {"subtasks", t.subtasks},
                         {"records_in", t.records_in},
                         {"records_out", t.records_out}});
  }
  nlohmann::json tasks = nlohmann::json::array();
  std::map<std::string, uint64_t> counters;
  for (const auto& t : m.tasks) {
    tasks.push_back({{"name", t.name},
                     {"subtask", t.subtask},
                     {"batches_in", t.batches_in},
                     {"batches_out", t.batches_out},
                     {"blocked_s", seconds(std::chrono::nanoseconds(t.blocked_ns))},
                     {"flush_signals_seen", t.flush_seen},
                     {"flush_signals_acted", t.flush_acted},
                     {"flush_signals_emitted", t.flush_emitted},
                     {"flush_signals_on_idle", t.flush_on_idle},
                     {"flush_ticks_coalesced", t.ticks_coalesced},
                     {"counters", t.counters}});
    for (const auto& [name, value] : t.counters) counters[name] += value;
  }
  nlohmann::json checkpoints = nlohmann::json::array();
  const size_t first = m.checkpoints.size() - std::min(m.checkpoints.size(), last_checkpoints);
  for (size_t i = first; i < m.checkpoints.size(); ++i) {
    const CheckpointStats& c = m.checkpoints[i];
    checkpoints.push_back({{"id", c.id},
                           {"triggered", utc_time(c.triggered)},
                           {"completed", c.completed},
                           {"final", c.final},
                           {"duration_s", seconds(c.duration)},
                           {"alignment_s", seconds(c.alignment)},
                           {"pause_s", seconds(c.pause)},
                           {"state_bytes", c.state_bytes}});
  }
  return {{"plan", plan_json(graph, plan)},
          {"flush_ticks_fired", m.ticks_fired},
          {"operators", operators},
          {"tasks", tasks},
          {"checkpoints_completed", m.checkpoints_completed()},
          {"checkpoints_aborted", m.checkpoints_aborted()},
          {"checkpoints", checkpoints},
          {"counters", counters}};
}

}  // namespace

nlohmann::json metrics_json(const JobGraph& graph, const PhysicalPlan* plan,
                            const JobResult& result) {
  nlohmann::json json = {
      {"job", graph.name()},
      {"status", status_name(result.status)},
      {"error", result.error},
      {"duration_s", seconds(result.duration)},
      {"restarts", result.restarts},
      {"restored_from",
       result.restored_from ? nlohmann::json(*result.restored_from) : nlohmann::json()}};
  json.update(counters_json(graph, plan, result.metrics, result.metrics.checkpoints.size()));
  return json;
}

nlohmann::json running_metrics_json(const JobGraph& graph, const PhysicalPlan* plan,
                                    const JobMetrics& metrics,
                                    std::chrono::nanoseconds running_for) {
  nlohmann::json json = {
      {"job", graph.name()},
      {"status", "running"},
      {"error", ""},
      {"duration_s", seconds(running_for)},
      {"restarts", metrics.restarts},
      {"restored_from",
       metrics.restored_from ? nlohmann::json(*metrics.restored_from) : nlohmann::json()}};
  json.update(counters_json(graph, plan, metrics, kRunningCheckpoints));
  return json;
}

std::string prometheus_text(const std::string& job, const JobMetrics& m) {
  std::string out;
  const std::string job_label = "job=\"" + label(job) + "\"";
  const auto family = [&](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  const auto sample = [&](const char* name, const std::string& labels, double value) {
    char number[32];
    std::snprintf(number, sizeof(number), "%.17g", value);
    out += std::string(name) + "{" + labels + "} " + number + "\n";
  };
  family("sluice_records_in_total", "counter", "Records an operator subtask received.");
  for (const auto& t : m.tasks) {
    for (const auto& op : t.operators) {
      sample("sluice_records_in_total",
             job_label + ",operator=\"" + label(op.name) + "\",subtask=\"" +
                 std::to_string(t.subtask) + "\"",
             static_cast<double>(op.records_in));
    }
  }
  family("sluice_records_out_total", "counter", "Records an operator subtask emitted.");
  for (const auto& t : m.tasks) {
    for (const auto& op : t.operators) {
      sample("sluice_records_out_total",
             job_label + ",operator=\"" + label(op.name) + "\",subtask=\"" +
                 std::to_string(t.subtask) + "\"",
             static_cast<double>(op.records_out));
    }
  }
  const auto per_task = [&](const char* name, const char* help, auto value) {
    family(name, "counter", help);
    for (const auto& t : m.tasks) {
      sample(name,
             job_label + ",task=\"" + label(t.name) + "\",subtask=\"" + std::to_string(t.subtask) +
                 "\"",
             value(t));
    }
  };
  per_task("sluice_backpressure_seconds_total",
           "Time a task waited for room in a full output channel.",
           [](const TaskSnapshot& t) { return static_cast<double>(t.blocked_ns) / 1e9; });
  per_task(
      "sluice_flush_signals_seen_total", "FlushSignals that reached a task.",
      [](const TaskSnapshot& t) { return static_cast<double>(t.flush_seen + t.flush_emitted); });
  per_task("sluice_flush_signals_acted_total",
           "Flush ticks a task acted on (flushed or forwarded).",
           [](const TaskSnapshot& t) { return static_cast<double>(t.flush_acted); });
  per_task("sluice_flush_ticks_coalesced_total",
           "Flush ticks that replaced one still pending at a source.",
           [](const TaskSnapshot& t) { return static_cast<double>(t.ticks_coalesced); });
  family("sluice_checkpoints_total", "counter", "Checkpoints by outcome.");
  sample("sluice_checkpoints_total", job_label + ",outcome=\"completed\"",
         static_cast<double>(m.checkpoints_completed()));
  sample("sluice_checkpoints_total", job_label + ",outcome=\"aborted\"",
         static_cast<double>(m.checkpoints_aborted()));
  if (!m.checkpoints.empty()) {
    family("sluice_last_checkpoint_duration_seconds", "gauge",
           "How long the last checkpoint took.");
    sample("sluice_last_checkpoint_duration_seconds", job_label,
           seconds(m.checkpoints.back().duration));
  }
  family("sluice_operator_counter_total", "counter", "Counters operators keep of their own.");
  std::map<std::string, uint64_t> counters;
  for (const auto& t : m.tasks) {
    for (const auto& [name, value] : t.counters) {
      if (!flink_metric(name) && !t.gauges.contains(name)) counters[name] += value;
    }
  }
  for (const auto& [name, value] : counters) {
    sample("sluice_operator_counter_total", job_label + ",name=\"" + label(name) + "\"",
           static_cast<double>(value));
  }
  // Gauges go up and down (a lag, a position): each subtask's value.
  family("sluice_operator_gauge", "gauge", "Gauges operators keep of their own, per subtask.");
  for (const auto& t : m.tasks) {
    for (const auto& [name, value] : t.counters) {
      if (flink_metric(name) || !t.gauges.contains(name)) continue;
      sample(
          "sluice_operator_gauge",
          job_label + ",name=\"" + label(name) + "\",subtask=\"" + std::to_string(t.subtask) + "\"",
          static_cast<double>(value));
    }
  }
  // Flink's standard connector metrics, named and labelled as Flink's
  // Prometheus reporter shows an operator's (every metric as a gauge), so
  // that dashboards made for Flink's sinks read them.
  for (const FlinkMetric& metric : kFlinkMetrics) {
    const std::string name = std::string("flink_taskmanager_job_task_operator_") + metric.name;
    bool any = false;
    for (const auto& t : m.tasks) {
      for (const auto& [counter, value] : t.counters) {
        const auto op = flink_metric(counter);
        if (!op || counter.substr(op->size() + 1) != metric.name) continue;
        if (!any) family(name.c_str(), "gauge", metric.help);
        any = true;
        sample(name.c_str(),
               "job_name=\"" + label(job) + "\",task_name=\"" + label(t.name) +
                   "\",operator_name=\"" + label(*op) + "\",subtask_index=\"" +
                   std::to_string(t.subtask) + "\"",
               static_cast<double>(value));
      }
    }
  }
  return out;
}

std::vector<HttpRoute> job_routes(const JobGraph& graph, const PhysicalPlan* plan,
                                  const Executor& executor) {
  const auto started = std::chrono::steady_clock::now();
  return {{"/", "text/html; charset=utf-8", [] { return std::string(job_page()); }},
          {"/api/job", "application/json",
           [&graph, plan, &executor, started] {
             return running_metrics_json(graph, plan, executor.metrics(),
                                         std::chrono::steady_clock::now() - started)
                 .dump();
           }},
          {"/metrics", "text/plain; version=0.0.4",
           [&graph, &executor] { return prometheus_text(graph.name(), executor.metrics()); }}};
}

}  // namespace sluice
