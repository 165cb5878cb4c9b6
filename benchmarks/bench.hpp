#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

/// What `sluice bench` was asked for.
struct BenchOptions {
  /// Benchmarks to run; empty = all.
  std::vector<std::string> names;
  /// Fewer records and repetitions: a smoke run of every scenario.
  bool quick = false;
  /// Runs of each scenario, whose median is reported. Default: 5, or 3
  /// with `quick`.
  std::optional<int> runs;
  /// Where to write the results as JSON, if anywhere.
  std::optional<std::string> json_path;
  /// Where to draw them as an SVG chart, if anywhere.
  std::optional<std::string> chart_path;
};

/// One timed run of a scenario.
struct BenchSample {
  uint64_t records = 0;
  double seconds = 0;
  /// Other figures of the run worth reporting (their medians are printed).
  std::map<std::string, double> extras;
};

/// Something measured: a baseline, or the engine doing the same work.
struct BenchScenario {
  std::string name;
  bool baseline = false;
  std::function<BenchSample()> run;
};

/// Sizes shared by every scenario of one run.
struct BenchSettings {
  bool quick = false;
  int repetitions = 5;
};

/// A named group of scenarios measured side by side in one run: every
/// scenario is reported with its ratio to each baseline of its group.
struct Benchmark {
  std::string name;
  /// Optional: a name that selects this benchmark with others of its group.
  std::string group;
  std::string description;
  std::function<std::vector<BenchScenario>(const BenchSettings&)> scenarios;
  /// Optional: why the benchmark cannot run here (no server); empty = it can.
  std::function<std::string()> unavailable;
};

/// Seconds from `start` to now.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The `p` quantile (0 to 1) of `values`, which it sorts; 0 when empty.
double percentile(std::vector<int64_t>& values, double p);

/// Resident memory of this process and its peak, in bytes, from /proc.
struct Rss {
  uint64_t now = 0;
  uint64_t peak = 0;
};
Rss read_rss();
/// Starts the peak over from the memory resident now.
void reset_peak_rss();

/// Runs the benchmarks, prints a table, writes JSON if asked. Returns the exit status.
int run_benchmarks(const BenchOptions& options);

}  // namespace sluice
