#pragma once

#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

/// Adds an operator `name` after `input` that keeps `columns` of each record,
/// in that order, and drops the others. The primary key survives when all of
/// its columns are kept. A column the input lacks is reported by validate().
Stream project(Stream input, std::string name, std::vector<std::string> columns);

}  // namespace sluice
