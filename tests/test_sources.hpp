#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "engine/job_graph.hpp"

namespace sluice::testing {

/// What a rows_source waits for after its rows before it ends: by default
/// nothing. Conditions, never a span of time, so that a loaded machine
/// changes only how long a test takes.
struct IdleUntil {
  /// Completed checkpoints it has heard of since its last row.
  int checkpoints = 0;
  /// Set by the test when the source may end.
  std::shared_ptr<std::atomic<bool>> released;
};

/// A source that emits `rows`, in order, then idles until `idle` holds.
SourceDef rows_source(const Schema& schema, ChangelogMode mode, std::vector<Row> rows,
                      IdleUntil idle = {});

}  // namespace sluice::testing
