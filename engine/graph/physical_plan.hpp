#pragma once

#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/graph/runtime_options.hpp"

namespace sluice {

/// Operators that run together on one thread per subtask.
struct PlanChain {
  std::vector<int> nodes;  ///< node indexes into JobGraph::nodes(), upstream first
  int parallelism = 1;
};

/// A thread boundary: channels from every subtask of one chain to the
/// subtasks of another.
struct PlanEdge {
  int from_chain = 0;
  int to_chain = 0;
  Partitioning partitioning = Partitioning::kForward;
  std::vector<std::string> key_columns;  ///< kHash only
  std::vector<size_t> key_indexes;       ///< the same, as indexes into the records
  std::vector<KeyImage> key_images;      ///< per key column, or empty (SinkDef::key_images)

  /// "forward", "rebalance" or "hash(a, b)".
  std::string partitioning_name() const;
};

/// How a graph runs: its chains (tasks) and the channels between them.
struct PhysicalPlan {
  std::vector<PlanChain> chains;
  std::vector<PlanEdge> edges;

  /// "datagen -> map -> blackhole".
  std::string chain_name(const JobGraph& graph, int chain) const;
  /// A readable listing of tasks, parallelism and edges.
  std::string describe(const JobGraph& graph) const;
  /// The same as a Graphviz digraph.
  std::string dot(const JobGraph& graph) const;
};

/// Chains operators and resolves the partitioning of every thread boundary:
/// a forward edge between different parallelisms becomes a rebalance; a sink
/// with key columns and parallelism > 1 is always fed hash-partitioned by
/// them. The graph must be valid.
PhysicalPlan build_plan(const JobGraph& graph, const RuntimeOptions& options);

}  // namespace sluice
