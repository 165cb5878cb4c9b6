#include "sluice/engine/graph/physical_plan.hpp"

#include <algorithm>

#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

int parallelism_of(const NodeDef& node, const RuntimeOptions& options) {
  if (node.parallelism > 0) return node.parallelism;
  const int cap = node.kind == NodeKind::kSource ? node.source.max_parallelism : 0;
  return cap > 0 ? std::min(cap, options.parallelism) : options.parallelism;
}

}  // namespace

PhysicalPlan build_plan(const JobGraph& graph, const RuntimeOptions& options) {
  const auto& nodes = graph.nodes();
  std::vector<int> downstream_count(nodes.size(), 0);
  for (const auto& node : nodes) {
    for (const auto& edge : node.inputs) ++downstream_count[edge.from];
  }

  PhysicalPlan plan;
  std::vector<int> chain_of(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeDef& node = nodes[i];
    const int parallelism = parallelism_of(node, options);
    if (options.chaining && node.chainable && node.inputs.size() == 1 &&
        node.inputs[0].partitioning == Partitioning::kForward) {
      const NodeDef& up = nodes[node.inputs[0].from];
      const bool keyed_sink =
          node.kind == NodeKind::kSink && !node.sink.key_columns.empty() && parallelism > 1;
      if (up.chainable && downstream_count[node.inputs[0].from] == 1 &&
          parallelism_of(up, options) == parallelism && !keyed_sink) {
        chain_of[i] = chain_of[node.inputs[0].from];
        plan.chains[chain_of[i]].nodes.push_back(static_cast<int>(i));
        continue;
      }
    }
    chain_of[i] = static_cast<int>(plan.chains.size());
    plan.chains.push_back({{static_cast<int>(i)}, parallelism});
    for (const auto& input : node.inputs) {
      const NodeDef& up = nodes[input.from];
      PlanEdge edge{chain_of[input.from], chain_of[i], input.partitioning, input.key_columns, {}};
      if (edge.partitioning == Partitioning::kForward &&
          parallelism_of(up, options) != parallelism) {
        edge.partitioning = Partitioning::kRebalance;
      }
      if (node.kind == NodeKind::kSink && !node.sink.key_columns.empty() && parallelism > 1) {
        edge.partitioning = Partitioning::kHash;
        edge.key_columns = node.sink.key_columns;
        edge.key_images = node.sink.key_images;
      }
      for (const auto& column : edge.key_columns) {
        edge.key_indexes.push_back(up.output.schema.require(column));
      }
      plan.edges.push_back(std::move(edge));
    }
  }
  return plan;
}

std::string PlanEdge::partitioning_name() const {
  switch (partitioning) {
    case Partitioning::kForward:
      return "forward";
    case Partitioning::kRebalance:
      return "rebalance";
    case Partitioning::kHash:
      return "hash(" + join(key_columns) + ")";
  }
  return "?";
}

std::string PhysicalPlan::chain_name(const JobGraph& graph, int chain) const {
  std::string name;
  for (int node : chains[chain].nodes)
    name += (name.empty() ? "" : " -> ") + graph.nodes()[node].name;
  return name;
}

std::string PhysicalPlan::describe(const JobGraph& graph) const {
  std::string out;
  for (size_t c = 0; c < chains.size(); ++c) {
    out += "task " + std::to_string(c + 1) + ": " + chain_name(graph, static_cast<int>(c)) +
           "  (parallelism " + std::to_string(chains[c].parallelism) + ")\n";
  }
  for (const auto& edge : edges) {
    out += "edge: task " + std::to_string(edge.from_chain + 1) + " -> task " +
           std::to_string(edge.to_chain + 1) + "  " + edge.partitioning_name() + "\n";
  }
  return out;
}

std::string PhysicalPlan::dot(const JobGraph& graph) const {
  std::string out = "digraph \"" + graph.name() + "\" {\n  rankdir=LR;\n  node [shape=box];\n";
  for (size_t c = 0; c < chains.size(); ++c) {
    out += "  t" + std::to_string(c + 1) + " [label=\"" + chain_name(graph, static_cast<int>(c)) +
           "\\nparallelism " + std::to_string(chains[c].parallelism) + "\"];\n";
  }
  for (const auto& edge : edges) {
    out += "  t" + std::to_string(edge.from_chain + 1) + " -> t" +
           std::to_string(edge.to_chain + 1) + " [label=\"" + edge.partitioning_name() + "\"];\n";
  }
  return out + "}\n";
}

}  // namespace sluice
