#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

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
/// GET /api/job serves it: "status" is "running", and "restarts" and
/// "restored_from", known at the end, are null.
nlohmann::json running_metrics_json(const JobGraph& graph, const PhysicalPlan* plan,
                                    const JobMetrics& metrics,
                                    std::chrono::nanoseconds running_for);

/// Current metrics in Prometheus' text exposition format.
std::string prometheus_text(const std::string& job, const JobMetrics& metrics);

}  // namespace sluice
