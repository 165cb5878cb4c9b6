#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <sstream>

#include "sluice/cli/run_cli.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/tests/support.hpp"

using sluice::testing::run_command;

namespace {

const std::string kCli = SLUICE_CLI;
const std::string kReadmeJob = SLUICE_README_JOB;

bool has_timestamp(const std::string& text) {
  return std::regex_search(text, std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}"));
}

}  // namespace

TEST_CASE("sluice --version and --help exit 0", "[cli]") {
  const auto version = run_command(kCli + " --version");
  CHECK(version.status == 0);
  CHECK_THAT(version.output, Catch::StartsWith("sluice "));
  const auto help = run_command(kCli + " --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.output,
             Catch::Contains("list") && Catch::Contains("describe") && Catch::Contains("run"));
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
  const auto result = run_command(kCli + " run aggregate --set transform.columns=id 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output,
             Catch::Contains("option 'transform.columns': job 'aggregate' does not use it") &&
                 Catch::Contains("mysql-to-mysql") && !Catch::Contains("did you mean"));
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
  const auto result = run_command(
      kCli + " run example --set source.rows=50 --set checkpoint.dir=" + dir.path().string());
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("+I[") && Catch::Contains("finished in"));
  CHECK_THAT(result.output, Catch::Matches("(.|\\n)*orders +1 +0 +50 (.|\\n)*"));
}

TEST_CASE("sluice run writes the rows on stdout and its summary and logs on stderr", "[cli]") {
  sluice::testing::TempDir dir;
  const std::string run =
      kCli + " run example --set source.rows=50 --set checkpoint.dir=" + dir.path().string();
  const auto rows = run_command("(" + run + " 2>/dev/null)");
  REQUIRE(rows.status == 0);
  std::istringstream lines(rows.output);
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    INFO(line);
    CHECK_THAT(line, Catch::Matches(R"([+-][IUD]\[.*\])"));
  }
  CHECK(count > 0);
  const auto diagnostics = run_command("(" + run + " 2>&1 >/dev/null)");
  CHECK_THAT(diagnostics.output, Catch::Contains("finished in") && Catch::Contains("operator"));
  CHECK_THAT(diagnostics.output, !Catch::Contains("+I["));
  // A log line: where the metrics are served.
  const std::string logged = kCli + " run example --set source.rows=1 --set metrics.port=" +
                             std::to_string(sluice::testing::free_port()) +
                             " --set checkpoint.dir=" + dir.path().string();
  CHECK_THAT(run_command("(" + logged + " 2>&1 >/dev/null)").output,
             Catch::Contains("info the job's page: http://"));
  CHECK_THAT(run_command("(" + logged + " 2>/dev/null)").output,
             !Catch::Contains("the job's page"));
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

TEST_CASE("describe with both --dot and --as is a usage error", "[cli]") {
  const auto result = run_command(kCli + " describe example --dot --as flink-sql 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("--dot excludes --as"));
}

TEST_CASE("a usage error prints as 'error: ...' without a log timestamp", "[cli]") {
  for (const char* args : {" run example --set source.rowz=1", " run no-such-job",
                           " describe example --config /nonexistent/job.conf"}) {
    INFO(args);
    const auto result = run_command(kCli + args + " 2>&1");
    CHECK(result.status == 2);
    CHECK_THAT(result.output, Catch::StartsWith("error: "));
    CHECK_FALSE(has_timestamp(result.output));
  }
}

TEST_CASE("describe prints no Markdown", "[cli]") {
  for (const char* job : {"orders-demo", "changelog-to-mysql", "aggregate", "example"}) {
    INFO(job);
    const auto result = run_command(kCli + " describe " + job + " 2>&1");
    CHECK(result.status == 0);
    CHECK(result.output.find('`') == std::string::npos);
  }
}

TEST_CASE("SIGINT and SIGTERM cancel a running job, which exits 130 or 143 after its summary",
          "[cli]") {
  const int signal = GENERATE(SIGINT, SIGTERM);
  // The metrics server's threads, too, must leave the signals to the job.
  const bool metrics = GENERATE(false, true);
  const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
  INFO(name << (metrics ? ", with metrics.port" : ""));
  sluice::testing::TempDir dir;
  sluice::testing::BackgroundCommand job(
      kCli + " run example --set source.rows=0 --set source.rate=500 --set checkpoint.dir=" +
      dir.path().string() +
      (metrics ? " --set metrics.port=" + std::to_string(sluice::testing::free_port()) : ""));
  REQUIRE(sluice::testing::wait_until([&] {
    const std::string output = job.output();
    return output.find("+I[") != std::string::npos &&
           (!metrics || output.find("the job's page") != std::string::npos);
  }));
  const auto result = job.signal(signal);
  CHECK(result.status == 128 + signal);
  CHECK_THAT(result.output,
             Catch::Contains(name + ": cancelling the job") && Catch::Contains("cancelled in"));
}

TEST_CASE("run_cli gives a job of one's own the CLI: options, describe, usage errors", "[cli]") {
  // examples/readme_job.cpp: a main() that is run_cli() over a build function.
  const auto describe = run_command(kReadmeJob + " describe");
  CHECK(describe.status == 0);
  CHECK_THAT(describe.output,
             Catch::Contains("job revenue-per-customer:") && Catch::Contains("orders -> add-fee") &&
                 Catch::Matches("(.|\\n)*orders +2000  \\(default\\)(.|\\n)*") &&
                 Catch::Matches("(.|\\n)*checkpoint.interval +500ms  \\(default\\)(.|\\n)*"));
  CHECK_THAT(run_command(kReadmeJob + " describe --dot").output, Catch::StartsWith("digraph"));
  const auto options = run_command(kReadmeJob + " options");
  CHECK_THAT(options.output, Catch::Contains("| `orders` | `2000` | changes to generate |"));

  auto result = run_command(kReadmeJob + " --set orders=many 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::StartsWith("error: option 'orders' expects"));
  result = run_command(kReadmeJob + " run --set order=5 2>&1");
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("did you mean 'orders'?") &&
                                Catch::Contains("('readme_job describe' lists the options)"));
  // Its source and sink describe themselves; the operators between are named.
  result = run_command(kReadmeJob + " describe --as flink-sql 2>&1");
  CHECK(result.status == 0);
  CHECK_THAT(result.output,
             Catch::Contains("CREATE TABLE `orders`") &&
                 Catch::Contains("'connector' = 'datagen'") &&
                 Catch::Contains("'connector' = 'print'") &&
                 Catch::Contains("-- Not translated: the operators `add-fee`, `revenue` between "
                                 "`orders` and `print`") &&
                 Catch::Contains("INSERT INTO `print`\nSELECT `customer`"));

  sluice::testing::TempDir dir;
  const std::string metrics = (dir.path() / "metrics.json").string();
  result =
      run_command(kReadmeJob + " --set orders=300 --set checkpoint.dir=" + dir.path().string() +
                  " --metrics-file " + metrics + " 2>&1");
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("finished in"));
  std::ifstream in(metrics);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(json, Catch::Contains("\"revenue\""));
}

TEST_CASE("run_cli reports an invalid graph as a usage error, never by terminating", "[cli]") {
  const sluice::JobDefinition broken{
      .name = "broken",
      .summary = "a graph whose filter reads a column its input lacks",
      .build = [](const sluice::Config&, sluice::JobGraph& graph) {
        const sluice::Schema numbers({{"n", sluice::DataType::bigint()}}, {"n"});
        sluice::Stream source =
            graph.source("numbers", {.output = {numbers}, .create = [](const sluice::SubtaskInfo&) {
                                       return std::unique_ptr<sluice::Source>();
                                     }});
        const auto missing = source.column<int64_t>("missing");
        source.filter("odd", [missing](sluice::RowRef row) { return row[missing] % 2 == 1; })
            .sink("none", {.create = [](const sluice::SubtaskInfo&) {
                    return std::unique_ptr<sluice::Sink>();
                  }});
      }};
  char program[] = "broken";
  char* argv[] = {program, nullptr};
  CHECK(sluice::run_cli(1, argv, broken) == 2);
}
