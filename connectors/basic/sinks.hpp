#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

/// Discards every record (for benchmarks); the engine still counts them.
SinkDef blackhole_sink();

/// Prints every record to standard output as "+I[1, abc]"; with parallelism
/// above 1 each line starts with the subtask number, "2> +I[...]", as in Flink.
SinkDef print_sink();

/// Records gathered by collect_sink(), readable once the job has ended.
class CollectedRows {
 public:
  void add(Row row);
  std::vector<Row> rows() const;
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Row> rows_;
};

/// Keeps every record in `into` (for tests and small jobs).
SinkDef collect_sink(std::shared_ptr<CollectedRows> into);

}  // namespace sluice
