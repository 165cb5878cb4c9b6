#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "sluice/cli/metrics_server.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/physical_plan.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {

/// Per-operator totals, summed over subtasks, in graph order.
struct OperatorTotals {
  std::string name;
  int subtasks = 0;
  uint64_t records_in = 0;
  uint64_t records_out = 0;
};
std::vector<OperatorTotals> operator_totals(const JobGraph& graph, const JobMetrics& metrics);

/// The final metrics of a run, for --metrics-file, with the plan it ran
/// ("plan": its tasks, each with its operators and parallelism, and the
/// edges between them; null for a graph that could not run).
nlohmann::json metrics_json(const JobGraph& graph, const PhysicalPlan* plan,
                            const JobResult& result);
/// The same for a job still running, `running_for` since it started, as
/// GET /api/job serves it: "status" is "running", "restarts" counts the
/// attempts so far, and "checkpoints" lists the last kRunningCheckpoints
/// (a job that runs for days takes thousands).
constexpr size_t kRunningCheckpoints = 100;
nlohmann::json running_metrics_json(const JobGraph& graph, const PhysicalPlan* plan,
                                    const JobMetrics& metrics,
                                    std::chrono::nanoseconds running_for);

/// Current metrics in Prometheus' text exposition format.
std::string prometheus_text(const std::string& job, const JobMetrics& metrics);

/// What a running job serves on metrics.port: its page at /, itself as JSON
/// at /api/job (running_metrics_json(), timed from now), Prometheus text at
/// /metrics. The arguments must outlive the routes.
std::vector<HttpRoute> job_routes(const JobGraph& graph, const PhysicalPlan* plan,
                                  const Executor& executor);

}  // namespace sluice
