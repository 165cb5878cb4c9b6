#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support.hpp"

using sluice::testing::run_command;

// A smoke run: the benchmark works end to end and reports every scenario
// with its ratios. The numbers themselves are not checked: they depend on
// the machine.
TEST_CASE("sluice bench pipeline --quick reports every scenario against both baselines",
          "[bench]") {
  sluice::testing::TempDir dir;
  const std::string json_path = (dir.path() / "bench.json").string();
  const auto result = run_command(std::string(SLUICE_CLI) + " bench pipeline --quick --json " + json_path);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("unchained (one thread boundary)"));

  std::ifstream in(json_path);
  const auto json = nlohmann::json::parse(in);
  const auto& scenarios = json.at("benchmarks").at(0).at("scenarios");
  REQUIRE(scenarios.size() == 5);
  for (const auto& scenario : scenarios) {
    CHECK(scenario.at("median_records_per_s").get<double>() > 0);
    CHECK(scenario.at("ratio_to").contains("baseline: single-thread loop"));
    CHECK(scenario.at("ratio_to").contains("baseline: two-thread SPSC"));
  }
}
