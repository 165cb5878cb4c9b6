#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "engine/job_graph.hpp"

namespace sluice::testing {

/// A source that emits `rows`, in order, then idles for `idle` before it ends.
SourceDef rows_source(const Schema& schema, ChangelogMode mode, std::vector<Row> rows,
                      std::chrono::milliseconds idle = std::chrono::milliseconds(0));

}  // namespace sluice::testing
