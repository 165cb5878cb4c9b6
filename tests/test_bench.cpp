#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sluice/tests/support.hpp"

using sluice::testing::run_command;

// A smoke run: the benchmark works end to end and reports every scenario
// with its ratios. The numbers themselves are not checked: they depend on
// the machine; so one run of each scenario is enough.
TEST_CASE("sluice bench --quick runs every benchmark and reports it against its baselines",
          "[bench][serial]") {
  sluice::testing::TempDir dir;
  const std::string json_path = (dir.path() / "bench.json").string();
  const std::string chart_path = (dir.path() / "bench.svg").string();
  const auto result = run_command(std::string(SLUICE_CLI) + " bench --quick --runs 1 --json " +
                                  json_path + " --chart " + chart_path);
  INFO(result.output);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("unchained (one thread boundary)"));

  std::ifstream in(json_path);
  const auto json = nlohmann::json::parse(in);
  CHECK(json.at("runs") == 1);
  std::vector<std::string> names;
  for (const auto& bench : json.at("benchmarks")) {
    names.push_back(bench.at("name"));
    for (const auto& scenario : bench.value("scenarios", nlohmann::json::array())) {
      CHECK(scenario.at("median_records_per_s").get<double>() > 0);
    }
  }
  CHECK(names == std::vector<std::string>{"pipeline",
                                          "checkpoint",
                                          "flush-signal",
                                          "latency",
                                          "memory",
                                          "mysql-upsert",
                                          "mysql-hotkey",
                                          "mysql-xa",
                                          "batch-layout",
                                          "cdc",
                                          "database",
                                          "database-from-empty",
                                          "changelog-file",
                                          "replication-updates-1000",
                                          "replication-inserts-1000",
                                          "replication-deletes-1000",
                                          "replication-mix-1000",
                                          "replication-updates-1",
                                          "replication-inserts-1",
                                          "replication-deletes-1",
                                          "replication-mix-1",
                                          "replication-snapshot"});
  const auto& pipeline = json.at("benchmarks").at(0).at("scenarios");
  REQUIRE(pipeline.size() == 8);
  // What serving the job's page costs, measured beside the run without it.
  CHECK(std::any_of(pipeline.begin(), pipeline.end(), [](const auto& scenario) {
    return scenario.at("name") == "chained, /api/job polled every 100 ms";
  }));
  for (const auto& scenario : pipeline) {
    for (const char* baseline :
         {"baseline: single-thread loop", "baseline: two-thread SPSC",
          "baseline: typed single-thread loop", "baseline: typed two-thread SPSC"}) {
      CHECK(scenario.at("ratio_to").contains(baseline));
    }
  }
  // Against the server's own ways, and skipped nowhere here.
  for (const auto& bench : json.at("benchmarks")) {
    const std::string name = bench.at("name");
    if (name.rfind("replication-", 0) != 0) continue;
    INFO(name);
    REQUIRE(bench.contains("scenarios"));
    for (const auto& scenario : bench.at("scenarios")) {
      CHECK(scenario.at("ratio_to")
                .contains(name == "replication-snapshot" ? "baseline: mydumper | myloader"
                                                         : "baseline: replica, one SQL thread"));
    }
  }
  std::ifstream chart(chart_path);
  const std::string svg((std::istreambuf_iterator<char>(chart)), std::istreambuf_iterator<char>());
  CHECK_THAT(svg, Catch::StartsWith("<svg") && Catch::Contains("pipeline") &&
                      Catch::Contains("mysql-upsert"));
}

TEST_CASE("sluice bench refuses an unknown name, listing the benchmarks and groups, and no runs",
          "[bench]") {
  const auto result = run_command(std::string(SLUICE_CLI) + " bench no-such-bench");
  INFO(result.output);
  CHECK(result.status != 0);
  CHECK_THAT(result.output, Catch::Contains("unknown benchmark 'no-such-bench'") &&
                                Catch::Contains("cdc, database") &&
                                Catch::Contains("replication (replication-updates-1000, …)"));

  const auto no_runs = run_command(std::string(SLUICE_CLI) + " bench pipeline --runs 0");
  INFO(no_runs.output);
  CHECK(no_runs.status == 2);
  CHECK_THAT(no_runs.output, Catch::Contains("--runs"));
}
