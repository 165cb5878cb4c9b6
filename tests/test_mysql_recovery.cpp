// The MySQL sink through lost connections, a stopped server and crashes.
#include <signal.h>
#include <sys/syscall.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <thread>

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
#include "sluice/tests/test_sources.hpp"

using namespace sluice;
using namespace std::chrono_literals;
using TextRows = std::vector<std::vector<std::optional<std::string>>>;

namespace {

const Schema kGeneratedOrders = Schema::parse(
    "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
constexpr char kOrdersTable[] =
    "id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2), status VARCHAR(20)";

DatagenOptions changelog(uint64_t rows, double rate) {
  DatagenOptions gen;
  gen.schema = kGeneratedOrders;
  gen.rows = rows;
  gen.keys = 2000;
  gen.insert_weight = 50;
  gen.update_weight = 35;
  gen.delete_weight = 15;
  gen.rate = rate;
  return gen;
}

// The table the changelog leaves behind, as text rows ordered by id.
TextRows final_state(const DatagenOptions& gen, int parallelism = 1) {
  const std::vector<Row> rows = testing::datagen_final_rows(gen, parallelism);
  TextRows text;
  for (const Row& row : rows) {
    auto& out = text.emplace_back();
    for (const Value& v : row.fields)
      out.push_back(v.is_null() ? std::nullopt : std::optional(v.to_string()));
  }
  return text;
}

// Runs the changelog into `table`, with `executor` if given.
JobResult run_changelog(const DatagenOptions& gen, const MySqlUrl& url, const std::string& table,
                        int sink_parallelism = 1, int max_retries = 3,
                        std::chrono::seconds socket_timeout = 60s, Executor* executor = nullptr) {
  MySqlSinkOptions options;
  options.url = url;
  options.table = table;
  options.max_rows = 500;
  options.max_retries = max_retries;
  options.retry_backoff = 50ms;
  options.socket_timeout = socket_timeout;
  JobGraph graph("mysql-recovery");
  graph.source("orders", datagen_source(gen))
      .sink("mysql", mysql_sink(options))
      .parallelism(sink_parallelism);
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = 50ms;
  Executor own(runtime);
  return (executor ? *executor : own).run(graph);
}

}  // namespace

TEST_CASE("a sink with parallelism 2 leaves the changelog's final state", "[mysql]") {
  testing::TestTable table("parallel", kOrdersTable);
  const DatagenOptions gen = changelog(20'000, 0);
  const JobResult result = run_changelog(gen, testing::test_mysql_url(), table.name(), 2);
  REQUIRE(result.finished());
  CHECK(table.rows() == final_state(gen));
}

TEST_CASE("a sink whose connection is killed retries and ends with the final state", "[mysql]") {
  testing::TestDatabase database;
  testing::TestTable table("killed", kOrdersTable, database.url());
  const DatagenOptions gen = changelog(20'000, 10'000);
  std::atomic<bool> done{false};
  std::atomic<int> kills{0};
  std::thread killer([&] {
    MySqlConnection admin(database.url());
    const std::string ours = std::to_string(table.connection().thread_id());
    while (!done) {
      std::this_thread::sleep_for(250ms);
      // Only the sink connects to this database besides the test itself.
      for (const auto& row :
           admin.query("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = " +
                       admin.quote(database.url().database) + " AND ID NOT IN (CONNECTION_ID(), " +
                       ours + ")")) {
        try {
          admin.execute("KILL " + *row[0]);
          ++kills;
        } catch (const MySqlError&) {
          // It went away by itself meanwhile.
        }
      }
    }
  });
  const JobResult result = run_changelog(gen, database.url(), table.name(), 1, 10);
  done = true;
  killer.join();
  REQUIRE(result.finished());
  CHECK(kills >= 3);
  CHECK(result.metrics.counter("mysql.retries") >= 1);
  CHECK(table.rows() == final_state(gen));
}

namespace {

// A MariaDB server of the test's own (scripts/mariadb, on a port the kernel
// picked) holding a table `orders`; gone with this.
class PrivateServer {
 public:
  PrivateServer()
      : script_("SLUICE_MARIADB_DIR=" + dir_.path().string() +
                " SLUICE_MARIADB_PORT=" + std::to_string(testing::free_port()) + " " +
                std::string(SLUICE_SOURCE_DIR) + "/scripts/mariadb ") {
    REQUIRE(testing::run_command(script_ + "start").status == 0);
    try {
      const auto env = testing::run_command(script_ + "env").output;
      const size_t at = env.find("mysql://");
      url_text_ = env.substr(at, env.find('\'', at) - at);
      url_ = MySqlUrl::parse(url_text_);
      MySqlConnection(url_).execute("CREATE TABLE orders (" + std::string(kOrdersTable) + ")");
      pid_ = std::stoi(testing::run_command(script_ + "pid").output);
    } catch (...) {
      // No destructor runs for a constructor that throws: stop it here,
      // or the server outlives its data directory.
      testing::run_command(script_ + "stop");
      throw;
    }
  }
  ~PrivateServer() {
    ::kill(pid_, SIGCONT);
    testing::run_command(script_ + "stop");
  }
  const MySqlUrl& url() const { return url_; }
  /// As a command line takes it (the password comes from SLUICE_MYSQL_PASSWORD).
  const std::string& url_text() const { return url_text_; }
  void stop() { testing::run_command(script_ + "stop"); }
  /// SIGSTOP: the server keeps its connections and answers nothing.
  void freeze() { ::kill(pid_, SIGSTOP); }
  /// SIGKILL, then a start on the data it had.
  void crash_and_restart() {
    REQUIRE(testing::run_command(script_ + "kill").status == 0);
    REQUIRE(testing::run_command(script_ + "restart").status == 0);
    pid_ = std::stoi(testing::run_command(script_ + "pid").output);
  }
  /// Waits until the sink committed rows into `orders`: it is mid-run.
  void wait_for_rows() const {
    MySqlConnection watcher(url_);
    testing::wait_until([&] { return *watcher.query("SELECT COUNT(*) FROM orders")[0][0] != "0"; });
  }

 private:
  testing::TempDir dir_;
  std::string script_;
  std::string url_text_;
  MySqlUrl url_;
  int pid_ = 0;
};

// Whether a thread of this process whose name starts with `name` waits in
// read(), recvfrom() or poll(), as a connection waiting on its socket does,
// by /proc.
bool thread_waits_on_socket(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm"), syscall(task.path() / "syscall");
    std::string thread_name;
    long number = -1;
    if (std::getline(comm, thread_name) && thread_name.rfind(name, 0) == 0 && (syscall >> number) &&
        (number == SYS_read || number == SYS_recvfrom || number == SYS_poll ||
         number == SYS_ppoll)) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("with the server stopped the sink fails after its retries with the server's error",
          "[mysql][serial]") {
  PrivateServer server;
  std::thread stopper([&] {
    server.wait_for_rows();
    server.stop();
  });
  const JobResult result = run_changelog(changelog(50'000, 10'000), server.url(), "orders", 1, 2);
  stopper.join();
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK_THAT(result.error,
             Catch::Contains("failed after 2 retries") && Catch::Contains("MySQL error 20"));
  CHECK(result.metrics.counter("mysql.retries") == 2);
}

TEST_CASE("a server that stops answering fails the job within the socket timeout, saying so",
          "[mysql][serial]") {
  PrivateServer server;
  std::thread freezer([&] {
    server.wait_for_rows();
    server.freeze();
  });
  // Without a timeout the sink's next call would wait for ever.
  const JobResult result = run_changelog(changelog(0, 10'000), server.url(), "orders", 1, 1, 2s);
  freezer.join();
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK_THAT(result.error, Catch::Contains("the server did not answer within 2 s"));
}

TEST_CASE("cancelling a job interrupts a call blocked on a silent server", "[mysql][serial]") {
  PrivateServer server;
  Executor executor(RuntimeOptions::without_checkpoints());
  bool blocked = false;
  std::thread canceller([&] {
    server.wait_for_rows();
    server.freeze();
    // Once the sink (in a task of its own, named after it) is blocked on
    // the frozen server: it cannot return by itself for an hour.
    blocked = testing::wait_until([] { return thread_waits_on_socket("sluice-mysql"); });
    executor.cancel();
  });
  const auto timeout = std::chrono::hours(1);
  const JobResult result =
      run_changelog(changelog(0, 10'000), server.url(), "orders", 1, 3, timeout, &executor);
  canceller.join();
  CHECK(blocked);
  CHECK(result.status == JobResult::Status::kCancelled);
  CHECK(result.duration < std::chrono::minutes(30));  // the call was interrupted, not timed out
}

TEST_CASE("recovery after a server restart does not wait on a connection id given out again",
          "[mysql][xa][serial]") {
  PrivateServer server;
  testing::TempDir dir;
  // Ids given out before the job ran push the server's counter up, so that
  // after the restart, when ids start again, the job's come round again.
  for (int i = 0; i < 30; ++i) MySqlConnection(server.url()).execute("DO 1");
  MySqlConnection(server.url()).execute("CREATE TABLE numbers (seq BIGINT NOT NULL)");
  std::string csv = "op,seq\n";
  for (int i = 0; i < 30'000; ++i) csv += "+I," + std::to_string(i) + "\n";
  const std::string command =
      std::string(SLUICE_CLI) + " run changelog-to-mysql --set job.name=restarted" +
      " --set source.path=" + dir.write("numbers.csv", csv) +
      " --set source.changelog-mode=insert-only" + " --set sink.url=" + server.url_text() +
      " --set sink.table=numbers" +
      " --set sink.delivery=exactly-once --set source.rate=20000 --set checkpoint.interval=300ms" +
      " --set checkpoint.dir=" + dir.path().string() + " --set restart.attempts=0";
  // Killed with checkpoint 2 complete and its transaction still prepared.
  REQUIRE(testing::run_command("SLUICE_FAULT=before-commit:2 " + command).status == 137);
  const CheckpointStorage storage(dir.path(), "restarted");
  const auto latest = storage.resumable();
  REQUIRE(latest);
  LazyStateStore state(
      true, [&] { return StateStore::open_read_only(storage.subtask_dir(*latest, "mysql", 0)); });
  const auto listed = ListState<std::vector<Value>>(RawListState(state, "xa-prepared")).get();
  REQUIRE(listed.size() == 1);
  const auto owner = static_cast<uint64_t>(listed[0].at(3).as_bigint());

  // A server is told from its successor by its start time, to the second:
  // let this one have run a while first.
  MySqlConnection watcher(server.url());
  REQUIRE(testing::wait_until(
      [&] { return std::stoi(*watcher.query("SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1]) >= 5; }));
  server.crash_and_restart();
  // Someone else now holds the id of the connection that prepared it.
  std::vector<std::unique_ptr<MySqlConnection>> held;
  while (held.size() < 200 && (held.empty() || held.back()->thread_id() < owner)) {
    held.push_back(std::make_unique<MySqlConnection>(server.url()));
  }
  REQUIRE(held.back()->thread_id() == owner);
  // The rerun commits it at once: the old connection cannot be on a server
  // that started since (else it would wait for the id to go, then fail).
  const auto rerun = testing::run_command(command);
  INFO(rerun.output);
  CHECK(rerun.status == 0);
  CHECK_THAT(rerun.output, Catch::Contains(", 1 recovered, 0 rolled back"));
  CHECK(MySqlConnection(server.url()).query("SELECT COUNT(*) FROM numbers")[0][0] ==
        std::optional<std::string>("30000"));
}

namespace {

// The bquals of `job`'s transactions among `xids`, by subtask.
using XidsBySubtask = std::map<int, std::set<std::string>>;
XidsBySubtask by_subtask(const std::vector<Xid>& xids, const std::string& job) {
  const XidScheme scheme(job, "mysql", 0);
  XidsBySubtask out;
  for (const Xid& xid : xids) {
    if (const auto subtask = scheme.subtask_of(xid)) out[*subtask].insert(xid.bqual);
  }
  return out;
}

// The last field of a transaction's bqual: it counts the subtask's transactions.
int64_t sequence_of(const std::string& bqual) {
  return std::stoll(bqual.substr(bqual.rfind('|') + 1));
}

// The transactions' markers; none before a sink created their table.
std::vector<Xid> markers(MySqlConnection& connection) {
  constexpr unsigned kNoSuchTable = 1146;
  std::vector<Xid> xids;
  try {
    for (const auto& row : connection.query("SELECT gtrid, bqual FROM sluice_xa_commits")) {
      xids.push_back({*row[0], *row[1]});
    }
  } catch (const MySqlError& e) {
    if (e.code() != kNoSuchTable) throw;
  }
  return xids;
}

}  // namespace

TEST_CASE("exactly-once at sink parallelism 4 writes checkpoint n+1 while n is prepared",
          "[mysql][xa]") {
  testing::TestTable table("xa_p4", kOrdersTable);
  const std::string job = testing::unique_name("xa-p4");
  const testing::PreparedGuard guard(job);
  const DatagenOptions gen = changelog(30'000, 10'000);
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  options.max_rows = 200;
  options.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  JobGraph graph(job);
  Stream orders = graph.source("orders", datagen_source(gen));
  orders.sink("mysql", mysql_sink(options)).parallelism(4);
  orders.sink("slow", testing::slow_snapshot_sink(200ms)).disable_chaining();
  const testing::TempDir dir;
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = 50ms;
  runtime.checkpoint_interval = 100ms;
  runtime.checkpoint_dir = dir.path();
  Executor executor(runtime);
  // A future, not a thread: however the watching below ends, its
  // destructor waits for the job.
  std::future<JobResult> running =
      std::async(std::launch::async, [&] { return executor.run(graph); });
  const auto done = [&] { return running.wait_for(0s) == std::future_status::ready; };
  // Watch for a subtask that began a transaction while an earlier one of
  // its own was prepared: prepared before and after a read that sees the
  // later one's marker, uncommitted as it may be.
  MySqlConnection c(testing::test_mysql_url());
  c.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
  bool overlapped = false;
  while (!done() && !overlapped) {
    const XidsBySubtask prepared_before = by_subtask(xa_recover(c), job);
    const XidsBySubtask begun = by_subtask(markers(c), job);
    const XidsBySubtask prepared_after = by_subtask(xa_recover(c), job);
    for (const auto& [subtask, prepared] : prepared_before) {
      if (!prepared_after.contains(subtask) || !begun.contains(subtask)) continue;
      for (const std::string& earlier : prepared) {
        if (!prepared_after.at(subtask).contains(earlier)) continue;
        for (const std::string& later : begun.at(subtask)) {
          overlapped |= sequence_of(later) > sequence_of(earlier);
        }
      }
    }
  }
  const JobResult result = running.get();
  REQUIRE(result.finished());
  CHECK(overlapped);
  CHECK(table.rows() == final_state(gen));
  CHECK(by_subtask(xa_recover(table.connection()), job).empty());
}
