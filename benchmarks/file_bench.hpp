#pragma once

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `changelog-file`: the changelog-file source reading a file of a million
/// lines (CSV, and Debezium JSON) into a blackhole sink, against a loop
/// that reads the same CSV file's lines and splits them at the commas.
Benchmark changelog_file_benchmark();

}  // namespace sluice
