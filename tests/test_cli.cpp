#include <catch2/catch.hpp>
#include <fstream>

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

TEST_CASE("describe lists a job's options also when no database is there to build its graph",
          "[cli]") {
  // Nothing listens on port 1: the job cannot read its table's columns.
  const auto result = run_command(kCli +
                                  " describe changelog-to-mysql --set sink.table=t"
                                  " --set sink.url=mysql://u@127.0.0.1:1/db 2>&1");
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("graph: not shown, it cannot be built") &&
                                Catch::Contains("Can't connect") &&
                                Catch::Contains("sink.primary-key") &&
                                Catch::Contains("source.path"));
}

TEST_CASE("a changelog file that cannot be read exits 2 before the job starts", "[cli]") {
  sluice::testing::TempDir dir;
  const std::string missing = (dir.path() / "missing.csv").string();
  const auto result = run_command(
      kCli + " run aggregate --set source.kind=changelog-file --set source.path=" + missing +
      " --set 'source.schema=id BIGINT, customer BIGINT, amount DECIMAL(10,2), PRIMARY KEY (id)'" +
      " --set checkpoint.dir=" + dir.path().string() + " 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("source.path: cannot read the changelog file " +
                                            missing + ": No such file or directory") &&
                                !Catch::Contains("job aggregate failed"));
}

TEST_CASE("an option of other jobs is reported as one this job does not use", "[cli]") {
  const auto result = run_command(kCli + " run aggregate --set sink.url=mysql://u@h/db 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("option 'sink.url': job 'aggregate' does not use it") &&
                                Catch::Contains("orders-demo") && !Catch::Contains("did you mean"));
}

TEST_CASE("sluice run asked to resume a checkpoint that does not exist exits 2 saying so",
          "[cli]") {
  sluice::testing::TempDir dir;
  const auto result = run_command(kCli + " run aggregate --set restore=999 --set checkpoint.dir=" +
                                  dir.path().string() + " 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output,
             Catch::Contains("restore=999") && Catch::Contains("no such completed checkpoint"));
}

TEST_CASE("sluice run of an unknown job exits 2 naming it", "[cli]") {
  const auto result = run_command(kCli + " run no-such-job");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("unknown job 'no-such-job'"));
}

TEST_CASE("sluice list names the bundled jobs", "[cli]") {
  const auto result = run_command(kCli + " list");
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("example"));
}

TEST_CASE("sluice run finishes the example job and prints its summary", "[cli]") {
  sluice::testing::TempDir dir;
  const auto result = run_command(kCli + " run example --set source.rows=50 --set checkpoint.dir=" +
                                  dir.path().string());
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("+I[") && Catch::Contains("finished in"));
  CHECK_THAT(result.output, Catch::Matches("(.|\\n)*orders +1 +0 +50 (.|\\n)*"));
}

TEST_CASE("an unknown key or a bad value exits 2 naming the key", "[cli]") {
  auto result = run_command(kCli + " run example --set engine.flush.intervall=1s");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("unknown option 'engine.flush.intervall'") &&
                                Catch::Contains("did you mean 'engine.flush.interval'"));
  result = run_command(kCli + " run example --set engine.flush.interval=often");
  CHECK(result.status == 2);
  CHECK_THAT(result.output,
             Catch::Contains("'engine.flush.interval'") && Catch::Contains("a duration"));
}

TEST_CASE("describe shows the graph and that --set wins over --config", "[cli]") {
  sluice::testing::TempDir dir;
  const std::string config = dir.write("job.conf", "parallelism=3\nsource.rows=7\n");
  const auto result =
      run_command(kCli + " describe example --config " + config + " --set parallelism=2");
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("orders -> paid -> with-shipping -> print") &&
                                Catch::Contains("(parallelism 2)"));
  CHECK_THAT(result.output, Catch::Matches("(.|\\n)*source.rows +7\\n(.|\\n)*"));
  CHECK_THAT(result.output, Catch::Matches("(.|\\n)*engine.chaining +true  \\(default\\)(.|\\n)*"));
  const auto dot = run_command(kCli + " describe example --dot");
  CHECK(dot.status == 0);
  CHECK_THAT(dot.output, Catch::StartsWith("digraph"));
}

TEST_CASE("the README's options table is what the option table says", "[cli]") {
  std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- options:begin (sluice options) -->\n";
  const std::string end = "<!-- options:end -->";
  const size_t from = readme.find(begin);
  const size_t to = readme.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const auto generated = run_command(kCli + " options");
  REQUIRE(generated.status == 0);
  // After adding an option, regenerate the README's table with `build/sluice options`.
  CHECK(readme.substr(from + begin.size(), to - from - begin.size()) == generated.output);
}

TEST_CASE("the README's C++ example is examples/readme_job.cpp, which the tests build", "[cli]") {
  const auto read = [](const std::string& path) {
    std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/" + path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string readme = read("README.md");
  const std::string marker = "<!-- example: examples/readme_job.cpp -->\n```cpp\n";
  const size_t from = readme.find(marker);
  REQUIRE(from != std::string::npos);
  const size_t start = from + marker.size();
  const size_t end = readme.find("```", start);
  CHECK(readme.substr(start, end - start) == read("examples/readme_job.cpp"));
}
