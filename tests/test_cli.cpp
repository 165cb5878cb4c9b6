#include <catch2/catch.hpp>

#include "tests/support.hpp"

using sluice::testing::run_command;

namespace {

const std::string kCli = SLUICE_CLI;

}  // namespace

TEST_CASE("sluice --version and --help exit 0", "[cli]") {
  const auto version = run_command(kCli + " --version");
  CHECK(version.status == 0);
  CHECK_THAT(version.output, Catch::StartsWith("sluice "));
  const auto help = run_command(kCli + " --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.output, Catch::Contains("list") && Catch::Contains("describe") &&
                              Catch::Contains("run"));
}

TEST_CASE("sluice exits 2 on a usage error", "[cli]") {
  CHECK(run_command(kCli).status == 2);
  CHECK(run_command(kCli + " frobnicate").status == 2);
  CHECK(run_command(kCli + " run").status == 2);
}

TEST_CASE("sluice run of an unknown job exits 2 naming it", "[cli]") {
  const auto result = run_command(kCli + " run no-such-job");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("unknown job 'no-such-job'"));
}
