// Exactly-once into MySQL: XA transactions tied to checkpoints, through crashes.
#include <catch2/catch.hpp>
#include <map>

#include "connectors/datagen.hpp"
#include "connectors/mysql_sink.hpp"
#include "connectors/mysql_xa.hpp"
#include "engine/executor.hpp"
#include "tests/mysql_support.hpp"
#include "tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

// Prepared transactions of `job` that the server still holds.
size_t prepared_of(MySqlConnection& connection, const std::string& job) {
  size_t n = 0;
  for (const Xid& xid : xa_recover(connection)) n += XidScheme::of_job(xid, job);
  return n;
}

// Runs changelog-to-mysql over `rows` insert-only lines into a table without
// a key, once with each fault of `faults` (each kills it once), then once
// more, which must finish: no in-process restart (restart.attempts=0) and no
// second chance. Returns what the table and the server hold then.
struct CrashRun {
  std::map<int, int> copies;  // how many times each row ended up in the table
  size_t left_prepared = 0;   // the job's transactions still prepared afterwards
  std::string rerun;          // what the last run printed
};

CrashRun crash_and_rerun(const std::vector<std::string>& faults, const char* delivery, int rows,
                         const std::string& checkpoint_interval, int parallelism = 1) {
  testing::TempDir dir;
  testing::TestTable table("xa", "seq BIGINT NOT NULL, payload VARCHAR(40)");
  std::string csv = "op,seq,payload\n";
  for (int i = 0; i < rows; ++i) csv += "+I," + std::to_string(i) + ",row " + std::to_string(i) + "\n";
  const std::string job = testing::unique_name("xa-job");
  const testing::PreparedGuard guard(job);
  const std::string command =
      std::string(SLUICE_CLI) + " run changelog-to-mysql --set job.name=" + job +
      " --set source.path=" + dir.write("rows.csv", csv) +
      " --set source.changelog-mode=insert-only" +
      " --set sink.url=" + testing::test_mysql_url_text() + " --set sink.table=" + table.name() +
      " --set sink.delivery=" + delivery + " --set sink.buffer-flush.max-rows=5000" +
      " --set sink.parallelism=" + std::to_string(parallelism) +
      " --set source.rate=20000 --set checkpoint.interval=" + checkpoint_interval +
      " --set checkpoint.dir=" + dir.path().string() + " --set restart.attempts=0";
  for (const std::string& fault : faults) {
    const auto crashed = testing::run_command("SLUICE_FAULT=" + fault + " " + command);
    INFO("SLUICE_FAULT=" << fault << "\n" << crashed.output);
    REQUIRE(crashed.status == 128 + 9);  // killed by the fault point's SIGKILL
  }
  CrashRun run;
  const auto rerun = testing::run_command(command);
  run.rerun = rerun.output;
  INFO(run.rerun);
  REQUIRE(rerun.status == 0);
  for (const auto& row : table.connection().query("SELECT seq, COUNT(*) FROM " +
                                                  quote_identifier(table.name()) + " GROUP BY seq")) {
    run.copies[std::stoi(*row[0])] = std::stoi(*row[1]);
  }
  run.left_prepared = prepared_of(table.connection(), job);
  return run;
}

}  // namespace

TEST_CASE("exactly-once: a crash at any fault point leaves every row exactly once", "[mysql][xa]") {
  // Where it crashes (one run each), and what the last run's recovery then
  // did: commit the transactions its checkpoint lists (counted "recovered",
  // also when a crash had committed them already) and roll back the others.
  using Faults = std::vector<std::string>;
  const auto [faults, recovery] = GENERATE(table<Faults, const char*>({
      {{"mid-flush:3"}, " recovered, 0 rolled back"},
      {{"after-prepare:3"}, " recovered, 1 rolled back"},
      {{"before-commit:3"}, "1 recovered, 0 rolled back"},
      {{"after-commit:3"}, "1 recovered, 0 rolled back"},
      // Checkpoint 2 prepared, its metadata not written: 1 restored, 2 rolled back.
      {{"checkpoint-before-commit:2"}, "1 recovered, 1 rolled back"},
      // Written, the sink not told: the restored 2 commits its transaction.
      {{"checkpoint-after-commit:2"}, "1 recovered, 0 rolled back"},
      {{"final-checkpoint-after-commit"}, " recovered, 0 rolled back"},
      // The source's position saved, checkpoint 2 not complete: 1 restored.
      {{"file-snapshot:2"}, "1 recovered, "},
      // A crash inside the recovery of an earlier crash: the next one redoes it.
      {{"after-prepare:3", "recovery-after-commits"}, " recovered, 1 rolled back"},
  }));
  std::string names;
  for (const auto& f : faults) names += f + " ";
  INFO("SLUICE_FAULT=" << names);
  const CrashRun run = crash_and_rerun(faults, "exactly-once", 50'000, "300ms");
  CHECK(run.copies.size() == 50'000);
  int wrong = 0;
  for (const auto& [seq, n] : run.copies) wrong += n != 1;
  CHECK(wrong == 0);
  CHECK(run.left_prepared == 0);
  CHECK_THAT(run.rerun, Catch::Contains(recovery));
}

TEST_CASE("a fault point named with a subtask fires in that subtask only", "[mysql][xa]") {
  // Sink parallelism 2: subtask 1's third prepare kills the job; a subtask 5
  // that does not exist never reaches its point, and the run finishes.
  const CrashRun run = crash_and_rerun({"after-prepare@1:3"}, "exactly-once", 50'000, "300ms", 2);
  CHECK(run.copies.size() == 50'000);
  int wrong = 0;
  for (const auto& [seq, n] : run.copies) wrong += n != 1;
  CHECK(wrong == 0);
  CHECK(run.left_prepared == 0);
  testing::TempDir dir;
  testing::TestTable table("xa_none", "seq BIGINT NOT NULL, payload VARCHAR(40)");
  const auto unfired = testing::run_command(
      "SLUICE_FAULT=after-prepare@5:1 " + std::string(SLUICE_CLI) +
      " run changelog-to-mysql --set source.path=" +
      dir.write("rows.csv", "op,seq,payload\n+I,1,a\n") +
      " --set source.changelog-mode=insert-only --set sink.url=" + testing::test_mysql_url_text() +
      " --set sink.table=" + table.name() + " --set sink.delivery=exactly-once" +
      " --set sink.parallelism=2 --set checkpoint.interval=100ms --set checkpoint.dir=" +
      dir.path().string() + " --set restart.attempts=0");
  INFO(unfired.output);
  CHECK(unfired.status == 0);
}

TEST_CASE("at-least-once: the same crash leaves duplicates (the check has teeth)", "[mysql][xa]") {
  // No checkpoint completes before the crash: the rerun starts over.
  const CrashRun run = crash_and_rerun({"mid-flush:4"}, "at-least-once", 50'000, "5s");
  CHECK(run.copies.size() == 50'000);
  int duplicated = 0;
  for (const auto& [seq, n] : run.copies) duplicated += n > 1;
  CHECK(duplicated > 0);
}

TEST_CASE("transaction ids fit XA, never repeat across runs and name their job and subtask",
          "[xa]") {
  const std::string long_job(200, 'j');
  XidScheme first(long_job, 3), second(long_job, 3), other_subtask(long_job, 4);
  const Xid a = first.next(7);
  CHECK(a.gtrid.size() <= 64);
  CHECK(a.bqual.size() <= 64);
  CHECK(a.bqual.rfind("3|7|", 0) == 0);
  CHECK_FALSE(a == first.next(7));  // another transaction after the same checkpoint
  CHECK_FALSE(a == second.next(7));  // another run: another epoch
  CHECK(first.owns(a));
  CHECK(second.owns(a));  // the same job and subtask, of an earlier run
  CHECK_FALSE(other_subtask.owns(a));
  CHECK(XidScheme::of_job(a, long_job));
  const Xid prefixed = XidScheme("job|x", 0).next(1);
  CHECK_FALSE(XidScheme("job", 0).owns(prefixed));
  CHECK_FALSE(XidScheme::of_job(prefixed, "job"));
}

TEST_CASE("recovery rolls back its own leftovers and never another job's", "[mysql][xa]") {
  testing::TestTable table("recovery", "id BIGINT PRIMARY KEY, balance BIGINT");
  const std::string job = testing::unique_name("xa-own");
  const std::string stranger = testing::unique_name("xa-stranger");
  const testing::PreparedGuard own_guard(job), stranger_guard(stranger);
  // Two transactions left prepared by "earlier runs": one of the job, one not.
  std::vector<std::unique_ptr<MySqlConnection>> leftovers;
  std::vector<Xid> left;
  for (const auto& [name, id] : {std::pair{job, 1}, std::pair{stranger, 1000}}) {
    auto connection = std::make_unique<MySqlConnection>(testing::test_mysql_url());
    const Xid xid = XidScheme(name, 0).next(0);
    connection->execute("XA START " + xid.sql());
    connection->execute("INSERT INTO " + quote_identifier(table.name()) + " VALUES (" +
                        std::to_string(id) + ", 0)");
    connection->execute("XA END " + xid.sql());
    connection->execute("XA PREPARE " + xid.sql());
    leftovers.push_back(std::move(connection));
    left.push_back(xid);
  }
  leftovers.clear();  // disconnect: prepared transactions survive it

  testing::TempDir dir;
  DatagenOptions gen;
  gen.schema = Schema::parse("id BIGINT, balance BIGINT, PRIMARY KEY (id)");
  gen.rows = 100;
  gen.keys = 0;
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  options.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  JobGraph graph(job);
  graph.source("gen", datagen_source(gen)).sink("mysql", mysql_sink(options, gen.schema));
  RuntimeOptions runtime;
  runtime.checkpoint_interval = 1h;  // the final checkpoint only
  runtime.checkpoint_dir = dir.path();
  // Key 1 is locked by the job's own leftover until recovery rolls it back:
  // the run finishing at all shows it did.
  const JobResult result = Executor(runtime).run(graph);
  REQUIRE(result.finished());
  CHECK(result.metrics.counter("mysql.xa.rolled-back") == 1);
  CHECK(result.metrics.counter("mysql.xa.committed") == 1);
  CHECK(prepared_of(table.connection(), job) == 0);
  CHECK(prepared_of(table.connection(), stranger) == 1);
  table.connection().execute("XA ROLLBACK " + left[1].sql());
  CHECK(table.rows().size() == 100);  // datagen's keys 0..99; the stranger's 1000 rolled back
}

TEST_CASE("exactly-once without checkpoints is refused", "[mysql][xa]") {
  testing::TestTable table("no_checkpoints", "id BIGINT PRIMARY KEY, balance BIGINT");
  DatagenOptions gen;
  gen.schema = Schema::parse("id BIGINT, balance BIGINT, PRIMARY KEY (id)");
  gen.rows = 10;
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  options.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  JobGraph graph("no-checkpoints");
  graph.source("gen", datagen_source(gen)).sink("mysql", mysql_sink(options, gen.schema));
  const JobResult result = Executor().run(graph);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK_THAT(result.error, Catch::Contains("set checkpoint.interval above 0"));
  CHECK(table.rows().empty());
}
