// Exactly-once into MySQL: XA transactions tied to checkpoints, through crashes.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/xa.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/data/value_codec.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/engine/state/lazy_state_store.hpp"
#include "sluice/engine/state/state.hpp"
#include "sluice/engine/state/state_store.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

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
  // What the rerun's recovery must report: commit every transaction its
  // checkpoint lists ("recovered", even one a crash had committed already),
  // roll back the job's other prepared ones.
  std::string recovery;
};

// The recovery the next run of `job` owes, worked out from what the crash
// left: the transactions the sink state of its latest checkpoint lists, and
// those the server holds prepared.
std::string expected_recovery(const std::filesystem::path& dir, const std::string& job,
                              int parallelism, MySqlConnection& connection) {
  std::vector<Xid> listed;
  const CheckpointStorage storage(dir, job);
  if (const auto latest = storage.resumable()) {
    for (int s = 0; s < parallelism; ++s) {
      const auto state = storage.subtask_dir(*latest, "mysql", s);
      if (!std::filesystem::exists(state)) continue;
      LazyStateStore store(true, [&] { return StateStore::open_read_only(state); });
      for (const auto& values :
           ListState<std::vector<Value>>(RawListState(store, "xa-prepared")).get()) {
        listed.push_back({values.at(1).as_string(), values.at(2).as_string()});
      }
    }
  }
  size_t others = 0;
  for (const Xid& xid : xa_recover(connection)) {
    others +=
        XidScheme::of_job(xid, job) && std::find(listed.begin(), listed.end(), xid) == listed.end();
  }
  return ", " + std::to_string(listed.size()) + " recovered, " + std::to_string(others) +
         " rolled back";
}

CrashRun crash_and_rerun(const std::vector<std::string>& faults, const char* delivery, int rows,
                         const std::string& checkpoint_interval, int parallelism = 1) {
  testing::TempDir dir;
  testing::TestTable table("xa", "seq BIGINT NOT NULL, payload VARCHAR(40)");
  std::string csv = "op,seq,payload\n";
  for (int i = 0; i < rows; ++i)
    csv += "+I," + std::to_string(i) + ",row " + std::to_string(i) + "\n";
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
  run.recovery = expected_recovery(dir.path(), job, parallelism, table.connection());
  const auto rerun = testing::run_command(command);
  run.rerun = rerun.output;
  INFO(run.rerun);
  REQUIRE(rerun.status == 0);
  for (const auto& row : table.connection().query(
           "SELECT seq, COUNT(*) FROM " + quote_identifier(table.name()) + " GROUP BY seq")) {
    run.copies[std::stoi(*row[0])] = std::stoi(*row[1]);
  }
  run.left_prepared = prepared_of(table.connection(), job);
  return run;
}

// Every one of `rows` rows is in the table once, nothing is left prepared,
// and the last run recovered what the crash left to recover.
void check_exactly_once(const CrashRun& run, int rows) {
  CHECK(run.copies.size() == static_cast<size_t>(rows));
  int wrong = 0;
  for (const auto& [seq, n] : run.copies) wrong += n != 1;
  CHECK(wrong == 0);
  CHECK(run.left_prepared == 0);
  CHECK_THAT(run.rerun, Catch::Contains(run.recovery));
}

}  // namespace

TEST_CASE("exactly-once: a crash at any fault point leaves every row exactly once", "[mysql][xa]") {
  // Where it crashes, one run each; the last run's recovery must then do
  // exactly what the crash left to do (CrashRun::recovery).
  const auto faults = GENERATE(values<std::vector<std::string>>({
      {"mid-flush:3"},
      {"after-prepare:3"},
      {"before-commit:3"},
      {"after-commit:3"},
      {"checkpoint-before-commit:2"},  // checkpoint 2 prepared, its metadata not written
      {"checkpoint-after-commit:2"},   // written, the sink not told
      {"final-checkpoint-after-commit"},
      {"file-snapshot:2"},  // the source's position saved, checkpoint 2 not complete
      {"after-prepare:3", "recovery-after-commits"},  // a crash inside the next recovery
  }));
  std::string names;
  for (const auto& f : faults) names += f + " ";
  INFO("SLUICE_FAULT=" << names);
  const CrashRun run = crash_and_rerun(faults, "exactly-once", 50'000, "300ms");
  check_exactly_once(run, 50'000);
}

TEST_CASE("a fault point named with a subtask fires in that subtask only", "[mysql][xa]") {
  // Sink parallelism 2: subtask 1's third prepare kills the job; a subtask 5
  // that does not exist never reaches its point, and the run finishes.
  const CrashRun run = crash_and_rerun({"after-prepare@1:3"}, "exactly-once", 50'000, "300ms", 2);
  check_exactly_once(run, 50'000);
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

TEST_CASE("transaction ids fit XA, never repeat across runs and name their job, sink and subtask",
          "[xa]") {
  const std::string long_job(200, 'j'), long_sink(100, 's');
  XidScheme first(long_job, long_sink, 3), second(long_job, long_sink, 3),
      other_subtask(long_job, long_sink, 4), other_sink(long_job, "other", 3);
  const Xid a = first.next(7);
  CHECK(a.gtrid.size() <= 64);
  CHECK(a.bqual.size() <= 64);
  CHECK_FALSE(a == first.next(7));   // another transaction after the same checkpoint
  CHECK_FALSE(a == second.next(7));  // another run: another epoch
  CHECK(first.owns(a));
  CHECK(second.owns(a));  // the same job, sink and subtask, of an earlier run
  CHECK(other_subtask.subtask_of(a) == 3);
  CHECK_FALSE(other_subtask.owns(a));
  CHECK_FALSE(other_sink.owns(a));  // two sinks of one job keep apart
  CHECK_FALSE(other_sink.subtask_of(a));
  CHECK(XidScheme::of_job(a, long_job));
  const Xid prefixed = XidScheme("job|x", "mysql", 0).next(1);
  CHECK_FALSE(XidScheme("job", "mysql", 0).owns(prefixed));
  CHECK_FALSE(XidScheme::of_job(prefixed, "job"));
  const Xid piped = XidScheme("job", "a|0", 1).next(1);
  CHECK_FALSE(XidScheme("job", "a", 0).subtask_of(piped));  // a sink named "a|0" is not sink "a"
}

TEST_CASE("recovery rolls back its own leftovers and those of vanished subtasks, nobody else's",
          "[mysql][xa]") {
  testing::TestTable table("recovery", "id BIGINT PRIMARY KEY, balance BIGINT");
  const std::string job = testing::unique_name("xa-own");
  const std::string stranger = testing::unique_name("xa-stranger");
  const testing::PreparedGuard own_guard(job), stranger_guard(stranger);
  // Transactions left prepared by "earlier runs": of this sink's subtask 0,
  // of its subtask 3 (that run had parallelism 4, this one 1), of another
  // sink of the same job, and of another job.
  struct Leftover {
    XidScheme scheme;
    int id;
  };
  std::vector<Leftover> leftovers = {{XidScheme(job, "mysql", 0), 1},
                                     {XidScheme(job, "mysql", 3), 2},
                                     {XidScheme(job, "audit", 0), 1000},
                                     {XidScheme(stranger, "mysql", 0), 1001}};
  std::vector<Xid> left;
  for (Leftover& leftover : leftovers) {
    MySqlConnection connection(testing::test_mysql_url());
    const Xid xid = leftover.scheme.next(0);
    connection.execute("XA START " + xid.sql());
    connection.execute("INSERT INTO " + quote_identifier(table.name()) + " VALUES (" +
                       std::to_string(leftover.id) + ", 0)");
    connection.execute("XA END " + xid.sql());
    connection.execute("XA PREPARE " + xid.sql());
    left.push_back(xid);
  }  // each disconnects: prepared transactions survive it

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
  graph.source("gen", datagen_source(gen)).sink("mysql", mysql_sink(options));
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.checkpoint_interval = 1h;  // the final checkpoint only
  runtime.checkpoint_dir = dir.path();
  // Keys 1 and 2 are locked by leftovers until recovery rolls them back: the
  // run finishing at all shows it did.
  const JobResult result = Executor(runtime).run(graph);
  REQUIRE(result.finished());
  CHECK(result.metrics.counter("mysql.xa.rolled-back") == 2);
  CHECK(result.metrics.counter("mysql.xa.committed") == 1);
  const auto still = xa_recover(table.connection());
  CHECK(std::count(still.begin(), still.end(), left[0]) == 0);
  CHECK(std::count(still.begin(), still.end(), left[1]) == 0);
  CHECK(std::count(still.begin(), still.end(), left[2]) == 1);  // the other sink's
  CHECK(std::count(still.begin(), still.end(), left[3]) == 1);  // the other job's
  for (size_t i : {2, 3}) table.connection().execute("XA ROLLBACK " + left[i].sql());
  CHECK(table.rows().size() == 100);  // datagen's keys 0..99; 1000 and 1001 rolled back
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
  graph.source("gen", datagen_source(gen)).sink("mysql", mysql_sink(options));
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK_THAT(result.error, Catch::Contains("set checkpoint.interval above 0"));
  CHECK(table.rows().empty());
}

namespace {

// Emits rows 0..99, waits until it hears that a checkpoint was aborted, then
// emits rows 100..199 and ends: the next checkpoint is the last.
class AfterAbortSource final : public Source {
 public:
  PollResult poll_next(Collector& out) override {
    if (next_ == 100 && !aborted_) return PollResult::kNothingAvailable;
    if (next_ == 200) return PollResult::kEndOfInput;
    out.emit(Row(RowKind::kInsert, {next_, next_ * 10}));
    ++next_;
    return PollResult::kMoreAvailable;
  }
  void notify_checkpoint_aborted(int64_t) override { aborted_ = true; }

 private:
  int64_t next_ = 0;
  bool aborted_ = false;
};

// Passes rows through; its first snapshot outlasts the checkpoint timeout.
class SlowFirstSnapshot final : public Operator {
 public:
  void process(Row&& row, Collector& out) override { out.emit(std::move(row)); }
  void snapshot_state(int64_t) override {
    if (std::exchange(first_, false)) std::this_thread::sleep_for(600ms);
  }

 private:
  bool first_ = true;
};

}  // namespace

TEST_CASE(
    "exactly-once: rows after an aborted checkpoint are written, also when the next is the last",
    "[mysql][xa]") {
  testing::TestTable table("aborted", "id BIGINT PRIMARY KEY, balance BIGINT");
  const std::string job = testing::unique_name("xa-abort");
  const testing::PreparedGuard guard(job);
  const Schema schema = Schema::parse("id BIGINT, balance BIGINT, PRIMARY KEY (id)");
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  options.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  options.max_rows = 10;
  JobGraph graph(job);
  graph
      .source("rows",
              {.output = {schema, ChangelogMode::insert_only()},
               .create = [](const SubtaskInfo&) { return std::make_unique<AfterAbortSource>(); }})
      .transform("slow", [](const SubtaskInfo&) { return std::make_unique<SlowFirstSnapshot>(); })
      .sink("mysql", mysql_sink(options));
  testing::TempDir dir;
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  // Checkpoint 1 at 2 s is aborted at 2.3 s; its snapshot ends at 2.6 s, the
  // source then ends, and the final checkpoint follows at once, before 2's
  // turn at 4 s: none completes between the aborted one and the last.
  runtime.checkpoint_interval = 2s;
  runtime.checkpoint_timeout = 300ms;
  runtime.checkpoint_dir = dir.path();
  const JobResult result = Executor(runtime).run(graph);
  REQUIRE(result.finished());
  REQUIRE(result.metrics.checkpoints.size() == 2);
  CHECK_FALSE(result.metrics.checkpoints[0].completed);  // the slow one, aborted
  CHECK(result.metrics.checkpoints[1].final);
  // Rows 100..199 came while checkpoint 1's transaction was prepared; it was
  // rolled back and its rows written again with them.
  CHECK(table.rows().size() == 200);
  CHECK(result.metrics.counter("mysql.xa.rolled-back") == 1);
  CHECK(prepared_of(table.connection(), job) == 0);
}

namespace {

// Emits `rows` rows, then nothing, without end.
class FewRowsSource final : public Source {
 public:
  PollResult poll_next(Collector& out) override {
    if (next_ == 50) return PollResult::kNothingAvailable;
    out.emit(Row(RowKind::kInsert, {next_, next_ * 10}));
    ++next_;
    return PollResult::kMoreAvailable;
  }

 private:
  int64_t next_ = 0;
};

// Where a sink's snapshot waits until the test or the job's cancellation
// opens it, then fails or not.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  bool fail = false;
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    opened.wait(lock, [this] { return open; });
    if (fail) throw DataError("the snapshot is refused");
  }
  void release(bool failing) {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    fail = failing;
    opened.notify_all();
  }
};

// A sink whose snapshot waits at the gate: no checkpoint completes before.
class GatedSink final : public Sink {
 public:
  explicit GatedSink(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  void open(SinkContext& context) override {
    context.register_cancel_action([gate = gate_] { gate->release(false); });
  }
  void write(Row&&) override {}
  void snapshot_state(int64_t) override { gate_->wait(); }

 private:
  std::shared_ptr<Gate> gate_;
};

}  // namespace

TEST_CASE(
    "exactly-once: a job that fails or is cancelled rolls back what it prepared for an "
    "unfinished checkpoint",
    "[mysql][xa]") {
  const bool failing = GENERATE(false, true);
  INFO((failing ? "a permanent failure" : "a cancel"));
  testing::TestTable table("released", "id BIGINT PRIMARY KEY, balance BIGINT");
  const std::string job = testing::unique_name("xa-release");
  const testing::PreparedGuard guard(job);
  const Schema schema = Schema::parse("id BIGINT, balance BIGINT, PRIMARY KEY (id)");
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  options.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  auto gate = std::make_shared<Gate>();
  JobGraph graph(job);
  Stream rows = graph.source(
      "rows", {.output = {schema, ChangelogMode::insert_only()},
               .create = [](const SubtaskInfo&) { return std::make_unique<FewRowsSource>(); }});
  rows.sink("mysql", mysql_sink(options));
  rows.sink("gated", {.create = [gate](const SubtaskInfo&) -> std::unique_ptr<Sink> {
              return std::make_unique<GatedSink>(gate);
            }});
  testing::TempDir dir;
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.checkpoint_interval = 100ms;
  runtime.checkpoint_dir = dir.path();
  runtime.restart_attempts = 0;
  Executor executor(runtime);
  JobResult result;
  std::thread running([&] { result = executor.run(graph); });
  // The MySQL sink prepares checkpoint 1's transaction; the checkpoint
  // waits at the gate.
  MySqlConnection sql(testing::test_mysql_url());
  const bool prepared = testing::wait_until([&] { return prepared_of(sql, job) == 1; });
  if (failing) {
    gate->release(true);
  } else {
    executor.cancel();
  }
  running.join();
  REQUIRE(prepared);
  CHECK(result.status == (failing ? JobResult::Status::kFailed : JobResult::Status::kCancelled));
  // Nothing of the job is left holding locks.
  CHECK(prepared_of(sql, job) == 0);
  CHECK(result.metrics.counter("mysql.xa.rolled-back") == 1);
  CHECK(table.rows().empty());
}
