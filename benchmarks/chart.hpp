#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sluice {

/// An SVG bar chart of `sluice bench` results (its JSON): for every benchmark
/// with a baseline, each scenario's median throughput as a multiple of the
/// first baseline of its group.
std::string bench_chart_svg(const nlohmann::json& results);

}  // namespace sluice
