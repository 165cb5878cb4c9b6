#include "sluice/benchmarks/bench.hpp"

#include <spdlog/spdlog.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "sluice/benchmarks/batch_layout_bench.hpp"
#include "sluice/benchmarks/cdc_bench.hpp"
#include "sluice/benchmarks/chart.hpp"
#include "sluice/benchmarks/checkpoint_bench.hpp"
#include "sluice/benchmarks/file_bench.hpp"
#include "sluice/benchmarks/latency_bench.hpp"
#include "sluice/benchmarks/memory_bench.hpp"
#include "sluice/benchmarks/mysql_bench.hpp"
#include "sluice/benchmarks/pipeline_bench.hpp"
#include "sluice/benchmarks/replication_bench.hpp"
#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

std::vector<Benchmark> all_benchmarks() {
  std::vector<Benchmark> all = {
      pipeline_benchmark(),      checkpoint_benchmark(), flush_signal_benchmark(),
      latency_benchmark(),       memory_benchmark(),     mysql_upsert_benchmark(),
      mysql_hotkey_benchmark(),  mysql_xa_benchmark(),   batch_layout_benchmark(),
      cdc_benchmark(),           database_benchmark(),   database_from_empty_benchmark(),
      changelog_file_benchmark()};
  for (Benchmark& b : replication_benchmarks()) all.push_back(std::move(b));
  return all;
}

// Whether `name` selects `benchmark`: its own name, or its group's.
bool selects(const std::string& name, const Benchmark& benchmark) {
  return name == benchmark.name || (!benchmark.group.empty() && name == benchmark.group);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct ScenarioResult {
  std::string name;
  bool baseline = false;
  std::vector<double> rates;  // records per second, one per repetition
  std::map<std::string, std::vector<double>> extras;

  double median() const { return median_of(rates); }
  double min() const { return *std::min_element(rates.begin(), rates.end()); }
  double max() const { return *std::max_element(rates.begin(), rates.end()); }
};

std::string machine_description() {
  std::string cpu = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  utsname os{};
  uname(&os);
  return cpu + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores, " +
         os.sysname + " " + os.release + ", g++ " + __VERSION__;
}

std::string rate_text(double rate) {
  char buf[32];
  if (rate >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.2fM", rate / 1e6);
  } else if (rate >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.1fk", rate / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f", rate);
  }
  return buf;
}

}  // namespace

Rss read_rss() {
  Rss rss;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss.now = std::stoull(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0) rss.peak = std::stoull(line.substr(6)) * 1024;
  }
  return rss;
}

// Linux resets the peak when "5" is written to clear_refs.
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

double percentile(std::vector<int64_t>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return static_cast<double>(
      values[static_cast<size_t>(p * static_cast<double>(values.size() - 1))]);
}

int run_benchmarks(const BenchOptions& options) {
  std::vector<Benchmark> selected;
  for (const auto& benchmark : all_benchmarks()) {
    if (options.names.empty() ||
        std::any_of(options.names.begin(), options.names.end(),
                    [&](const std::string& name) { return selects(name, benchmark); })) {
      selected.push_back(benchmark);
    }
  }
  for (const auto& name : options.names) {
    if (std::none_of(selected.begin(), selected.end(),
                     [&](const Benchmark& b) { return selects(name, b); })) {
      std::string known;
      std::string group;
      for (const auto& b : all_benchmarks()) {
        if (!b.group.empty() && b.group == group) continue;
        group = b.group;
        known +=
            (known.empty() ? "" : ", ") + (group.empty() ? b.name : group + " (" + b.name + ", …)");
      }
      throw ConfigError("unknown benchmark '" + name + "'; the benchmarks are: " + known);
    }
  }

  const BenchSettings settings{.quick = options.quick,
                               .repetitions = options.runs.value_or(options.quick ? 3 : 5)};
  const std::string machine = machine_description();
  std::printf("machine: %s\n", machine.c_str());
  nlohmann::json json = {{"machine", machine},
                         {"quick", options.quick},
                         {"runs", settings.repetitions},
                         {"benchmarks", nlohmann::json::array()}};

  for (const auto& benchmark : selected) {
    if (benchmark.unavailable) {
      if (const std::string reason = benchmark.unavailable(); !reason.empty()) {
        std::printf("\n%s: skipped: %s\n", benchmark.name.c_str(), reason.c_str());
        json["benchmarks"].push_back({{"name", benchmark.name}, {"skipped", reason}});
        continue;
      }
    }
    std::vector<BenchScenario> scenarios = benchmark.scenarios(settings);
    std::vector<ScenarioResult> results;
    for (const auto& s : scenarios) results.push_back({s.name, s.baseline, {}});
    // Repetitions go round all scenarios, so that a noisy moment of the
    // machine spreads over them instead of hitting one.
    for (int r = 0; r < settings.repetitions; ++r) {
      for (size_t i = 0; i < scenarios.size(); ++i) {
        const BenchSample sample = scenarios[i].run();
        results[i].rates.push_back(static_cast<double>(sample.records) / sample.seconds);
        for (const auto& [name, value] : sample.extras) results[i].extras[name].push_back(value);
      }
    }

    std::printf("\n%s: %s (%d runs each, records/s)\n", benchmark.name.c_str(),
                benchmark.description.c_str(), settings.repetitions);
    std::printf("  %-52s %10s %10s %10s", "scenario", "median", "min", "max");
    for (const auto& base : results) {
      if (base.baseline)
        std::printf("  %22s", ("vs " + base.name.substr(base.name.find(':') + 2)).c_str());
    }
    std::printf("\n");
    nlohmann::json scenarios_json = nlohmann::json::array();
    for (const auto& result : results) {
      std::printf("  %-52s %10s %10s %10s", result.name.c_str(), rate_text(result.median()).c_str(),
                  rate_text(result.min()).c_str(), rate_text(result.max()).c_str());
      nlohmann::json ratios = nlohmann::json::object();
      for (const auto& base : results) {
        if (!base.baseline) continue;
        const double ratio = result.median() / base.median();
        ratios[base.name] = ratio;
        std::printf("  %21.2fx", ratio);
      }
      std::printf("\n");
      nlohmann::json extras = nlohmann::json::object();
      for (const auto& [name, values] : result.extras) extras[name] = median_of(values);
      scenarios_json.push_back({{"name", result.name},
                                {"baseline", result.baseline},
                                {"median_records_per_s", result.median()},
                                {"min_records_per_s", result.min()},
                                {"max_records_per_s", result.max()},
                                {"ratio_to", ratios},
                                {"extras", extras}});
    }
    for (const auto& result : results) {
      for (const auto& [name, values] : result.extras) {
        std::printf("  %s: %s %.1f (median of runs)\n", result.name.c_str(), name.c_str(),
                    median_of(values));
      }
    }
    json["benchmarks"].push_back({{"name", benchmark.name},
                                  {"description", benchmark.description},
                                  {"scenarios", scenarios_json}});
  }

  const auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    if (!out) throw Error("cannot write " + path);
  };
  if (options.json_path) write(*options.json_path, json.dump(2) + "\n");
  if (options.chart_path) write(*options.chart_path, bench_chart_svg(json));
  return 0;
}

}  // namespace sluice
