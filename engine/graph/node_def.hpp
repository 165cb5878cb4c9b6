#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"

/// How the engine sees a JobGraph's operators (JobGraph::nodes()). A job
/// builds them through JobGraph, Stream and SinkHandle, and needs not read them.
namespace sluice {

struct EdgeDef {
  int from = 0;
  Partitioning partitioning = Partitioning::kForward;
  std::vector<std::string> key_columns;  ///< kHash only
};

enum class NodeKind { kSource, kOperator, kSink };

/// One operator of the graph. Built through JobGraph, Stream and SinkHandle.
struct NodeDef {
  NodeKind kind = NodeKind::kOperator;
  std::string name;
  int parallelism = 0;  ///< 0 = the job's default
  bool chainable = true;
  std::vector<EdgeDef> inputs;
  StreamType output;  ///< what it emits (sinks: nothing)
  SourceDef source;
  OperatorDef op;
  SinkDef sink;
  /// Found while the graph was built (a typed column its output lacks).
  std::vector<std::string> problems;
};

}  // namespace sluice
