// The CLI, killed with SIGKILL and run again, resumes from its checkpoints.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
using sluice::testing::run_command;

namespace {

const std::string kCli = SLUICE_CLI;

// The last "count sum" printed per key: an upsert view of the printed changelog.
std::map<std::string, std::string> last_results(const std::string& output) {
  std::map<std::string, std::string> results;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 4 || line[0] != '+' || line[2] != '[' || line.back() != ']') continue;
    const std::string body = line.substr(3, line.size() - 4);
    const size_t comma = body.find(", ");
    results[body.substr(0, comma)] = body.substr(comma + 2);
  }
  return results;
}

// How many changelog rows ("+I[...]" and the like) `output` holds.
size_t changelog_lines(const std::string& output) {
  size_t n = 0;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    n += line.size() >= 4 && (line[0] == '+' || line[0] == '-') && line[2] == '[' &&
         line.back() == ']';
  }
  return n;
}

}  // namespace

TEST_CASE("a job killed and rerun resumes its file at the checkpointed offset", "[resume]") {
  testing::TempDir dir;
  // 20000 inserts over 50 groups: group g ends with count 400, sum 400*g.
  std::string csv = "op,id,grp,v\n";
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 20000; ++i)
    csv += "+I," + std::to_string(i) + "," + std::to_string(i % 50) + "," + std::to_string(i % 50) +
           "\n";
  for (int g = 0; g < 50; ++g) expected[std::to_string(g)] = "400, " + std::to_string(400 * g);
  const std::string file = dir.write("changes.csv", csv);
  const std::string command =
      kCli + " run aggregate --set source.kind=changelog-file --set source.path=" + file +
      " --set 'source.schema=id BIGINT, grp BIGINT, v BIGINT, PRIMARY KEY (id)'"
      " --set aggregate.key=grp --set aggregate.value=v"
      " --set checkpoint.interval=100ms --set checkpoint.dir=" +
      dir.path().string();

  // Throttled to 10000 records/s, killed once its first checkpoint completed.
  const CheckpointStorage storage(dir.path(), "aggregate");
  testing::BackgroundCommand throttled(command + " --set source.rate=10000");
  CHECK(testing::wait_until([&] { return storage.latest().has_value(); }));
  const auto killed = throttled.kill();
  CHECK(killed.status == 137);
  const auto left = storage.resumable();
  REQUIRE(left);
  CHECK_FALSE(storage.read(*left).final);

  const auto resumed = run_command(command);
  REQUIRE(resumed.status == 0);
  CHECK_THAT(resumed.output, Catch::Contains("resuming from checkpoint " + std::to_string(*left)));
  CHECK_THAT(resumed.output, Catch::Contains("resuming at byte"));
  // Replayed records reprint results the first run printed; the last result
  // per group is the state at the end: nothing missing, nothing twice.
  CHECK(last_results(killed.output + resumed.output) == expected);
  // The second run read on from the checkpoint's line, no earlier: for each
  // record from there the aggregate prints -U and +U of its group, or +I for
  // the first record of a group (there are 50, one per record at first).
  std::smatch at;
  REQUIRE(std::regex_search(resumed.output, at,
                            std::regex("resuming at byte [0-9]+ \\(line ([0-9]+)\\)")));
  const int first = std::stoi(at[1]) - 2;  // records before it: its line less the header and 1
  CHECK(first > 0);
  size_t expected_lines = 0;
  for (int i = first; i < 20000; ++i) expected_lines += i >= 50 ? 2 : 1;
  CHECK(changelog_lines(resumed.output) == expected_lines);
}

TEST_CASE("SIGKILL at random instants always leaves a loadable latest checkpoint", "[resume]") {
  testing::TempDir dir;
  const std::string command = kCli +
                              " run aggregate --set source.rows=0 --set checkpoint.interval=20ms"
                              " --set checkpoint.dir=" +
                              dir.path().string() + " > /dev/null";
  const CheckpointStorage storage(dir.path(), "aggregate");
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> delay_ms(50, 500);
  int with_checkpoint = 0;
  std::optional<int64_t> previous;
  for (int trial = 0; trial < 50; ++trial) {
    const int delay = delay_ms(random);
    INFO("trial " << trial << ", killed after " << delay << " ms");
    // Each run restores what the previous kill left: a checkpoint that does
    // not load would fail the run at once instead of being killed.
    const auto result =
        run_command("timeout -s KILL " + std::to_string(delay / 1000.0) + " " + command);
    CHECK(result.status == 137);
    const auto latest = storage.latest();
    if (previous) REQUIRE(latest);
    if (!latest) continue;
    CHECK(latest >= previous);
    CHECK_NOTHROW(storage.verify(*latest));
    previous = latest;
    ++with_checkpoint;
  }
  CHECK(with_checkpoint >= 40);
}

TEST_CASE("a second run of a finished job on new input reads all of it, and fails on its bad line",
          "[resume]") {
  testing::TempDir dir;
  const auto changes = [](int first, int count) {
    std::string csv = "op,id,grp,v\n";
    for (int i = first; i < first + count; ++i) {
      csv += "+I," + std::to_string(i) + "," + std::to_string(i % 5) + ",1\n";
    }
    return csv;
  };
  const std::string command =
      kCli +
      " run aggregate --set source.kind=changelog-file"
      " --set 'source.schema=id BIGINT, grp BIGINT, v BIGINT, PRIMARY KEY (id)'"
      " --set aggregate.key=grp --set aggregate.value=v --set job.name=twice"
      " --set restart.attempts=2 --set restart.delay=10ms"
      " --set checkpoint.interval=50ms --set checkpoint.dir=" +
      dir.path().string() + " --set source.path=";
  const auto first = run_command(command + dir.write("a.csv", changes(0, 2000)));
  REQUIRE(first.status == 0);

  // B's first data line is malformed. A restart must not resume A's final
  // checkpoint at A's offset inside B, skip the bad line and exit 0.
  std::string bad = changes(2000, 2000);
  bad.insert(bad.find('\n') + 1, "+I,oops,1,1\n");
  const auto second = run_command(command + dir.write("b.csv", bad));
  CHECK(second.status == 1);
  CHECK_THAT(second.output, Catch::Contains("b.csv:2: column 'id'"));
  CHECK_THAT(second.output, !Catch::Contains("restarting (") && Catch::Contains("not restarting"));

  // Without the bad line every row of B is counted: 400 per group.
  const auto third = run_command(command + dir.write("c.csv", changes(4000, 2000)));
  REQUIRE(third.status == 0);
  std::map<std::string, std::string> expected;
  for (int g = 0; g < 5; ++g) expected[std::to_string(g)] = "400, 400";
  CHECK(last_results(third.output) == expected);
}

TEST_CASE("a state directory that refuses writes fails the job cleanly; a rerun with room finishes",
          "[resume]") {
  testing::TempDir dir;
  const std::string command = kCli +
                              " run aggregate --set source.rows=100000 --set checkpoint.interval=1h"
                              " --set restart.delay=10ms --set checkpoint.dir=" +
                              dir.path().string();
  // No file may grow past 16 KiB (EFBIG, as ENOSPC on a full disk); the
  // final checkpoint's state is larger. SIGXFSZ ignored, so writes fail
  // with an error rather than killing the process.
  const auto limited = run_command("trap '' XFSZ; ulimit -f 16; " + command);
  CHECK(limited.status == 1);  // not 134: RocksDB must not be driven into an assertion
  CHECK_THAT(limited.output,
             Catch::Contains("File too large") && Catch::Contains(dir.path().string()));
  const auto rerun = run_command(command);
  CHECK(rerun.status == 0);
}
