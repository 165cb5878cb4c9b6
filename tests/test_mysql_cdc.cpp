#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

constexpr char kOrders[] = "id BIGINT PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR(40)";

// `rows` orders, ids 1..rows.
void fill(testing::TestTable& table, int rows) {
  table.connection().execute("INSERT INTO " + table.name() +
                             " SELECT seq, seq / 100, CONCAT('order ', seq) FROM seq_1_to_" +
                             std::to_string(rows));
}

// `n` random autocommitted changes to ids 1..`keys`+n: updates, deletes,
// inserts, and updates that change the key.
void change_randomly(testing::TestTable& table, int n, int keys, std::mt19937& random) {
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  for (int i = 0; i < n; ++i) {
    const int id = static_cast<int>(random() % static_cast<unsigned>(keys)) + 1;
    switch (random() % 4) {
      case 0:
        sql.execute("UPDATE " + t + " SET amount = amount + 1.25, note = 'changed' WHERE id = " +
                    std::to_string(id));
        break;
      case 1:
        sql.execute("DELETE FROM " + t + " WHERE id = " + std::to_string(id));
        break;
      case 2:
        sql.execute("INSERT IGNORE INTO " + t + " VALUES (" + std::to_string(keys + 1 + i) +
                    ", -3.50, 'new')");
        break;
      default:
        sql.execute("UPDATE IGNORE " + t + " SET id = " + std::to_string(keys + 100000 + i) +
                    " WHERE id = " + std::to_string(id));
    }
  }
}

std::string cli_command(const testing::TestTable& source, const testing::TestTable& target,
                        const testing::TempDir& dir) {
  return std::string(SLUICE_CLI) +
         " run mysql-to-mysql --set source.url=" + testing::test_mysql_url_text() +
         " --set sink.url=" + testing::test_mysql_url_text() +
         " --set source.table=" + source.name() + " --set sink.table=" + target.name() +
         " --set job.name=" + target.name() + " --set checkpoint.dir=" + dir.path().string() +
         " --set checkpoint.interval=20ms --set engine.flush.interval=20ms";
}

}  // namespace

TEST_CASE(
    "a streamed result gives every row the server sends, and fails where the connection breaks "
    "off",
    "[mysql]") {
  testing::TestDatabase db;
  MySqlConnection sql(db.url());
  sql.execute("CREATE TABLE t (a INT, b VARCHAR(100))");
  sql.execute("INSERT INTO t SELECT seq, REPEAT('x', 100) FROM seq_1_to_200000");
  {
    MySqlConnection reader(db.url());
    MySqlResult rows = reader.query_stream("SELECT a, b FROM t");
    size_t n = 0;
    int64_t sum = 0;
    while (rows.next()) {
      ++n;
      sum += std::stoll(std::string(*rows.fields()[0]));
    }
    CHECK(n == 200000);
    CHECK(sum == int64_t{200000} * 200001 / 2);
  }
  // Killed while the server still sends: an error, not an early end.
  MySqlConnection reader(db.url());
  MySqlResult rows = reader.query_stream("SELECT a, b FROM t");
  REQUIRE(rows.next());
  sql.execute("KILL " + std::to_string(reader.thread_id()));
  const auto read_all = [&] {
    while (rows.next()) {
    }
  };
  CHECK_THROWS_AS(read_all(), MySqlError);
}

TEST_CASE("mysql-cdc: a snapshot taken during writes and the binlog after it meet exactly",
          "[mysql][cdc]") {
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(source, 3000);

  MySqlCdcOptions options;
  options.url = testing::test_mysql_url();
  options.tables = {source.name()};
  options.chunk_rows = 20;  // 150 queries: writes land while it reads
  testing::Replication replication(options, target.name());
  change_randomly(source, 600, 3000, random);
  const bool equal = testing::wait_until([&] { return target.rows() == source.rows(); });
  const JobResult& result = replication.stop();
  CHECK(equal);
  CHECK(result.status == JobResult::Status::kCancelled);
  // Every row the table ends with came out at least once (rows deleted
  // before the snapshot reached them need not have).
  CHECK(result.metrics.records_out("mysql-cdc") >= source.rows().size());
}

TEST_CASE("mysql-to-mysql killed mid-snapshot and mid-binlog resumes to the source's table",
          "[mysql][cdc]") {
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  const testing::PreparedGuard guard(target.name());  // the job is named after its table
  fill(source, 3000);
  const std::string command = cli_command(source, target, dir) + " --set sink.delivery=" + delivery;

  // Killed in the snapshot's 400th chunk of 5 rows, a second in at 2000
  // rows/s: after many checkpoints.
  const auto killed = testing::run_command("SLUICE_FAULT=cdc-snapshot-chunk:400 " + command +
                                           " --set source.snapshot.chunk-rows=5"
                                           " --set source.rate=2000 2>&1");
  INFO(killed.output);
  REQUIRE(killed.status == 137);

  // Run again: it resumes the snapshot, reads the changes made meanwhile
  // from the binlog, and is killed once ten checkpoints of the binlog phase
  // completed.
  testing::BackgroundCommand resumed("env SLUICE_FAULT=cdc-binlog-checkpoint:10 " + command +
                                     " --set source.snapshot.chunk-rows=5");
  REQUIRE(testing::wait_until(
      [&] { return resumed.output().find("snapshot read") != std::string::npos; }));
  change_randomly(source, 300, 3000, random);
  const auto second = resumed.wait();
  INFO(second.output);
  CHECK_THAT(second.output, Catch::Contains("resuming the snapshot"));
  REQUIRE(second.status == 137);

  // And again, after more changes: it resumes in the binlog, and catches up.
  change_randomly(source, 100, 3000, random);
  testing::BackgroundCommand third(command);
  const bool equal = testing::wait_until([&] {
    return third.output().find("resuming the binlog") != std::string::npos &&
           target.rows() == source.rows();
  });
  const auto ended = third.signal(SIGINT);
  INFO(ended.output);
  CHECK_THAT(ended.output, Catch::Contains("resuming the binlog"));
  CHECK(equal);
  CHECK(ended.status == 130);
}

TEST_CASE("mysql-to-mysql describes itself as Flink CDC's mysql-cdc into JDBC", "[mysql][cdc]") {
  testing::TestTable source("cdc_source", kOrders);
  const auto result = testing::run_command(
      std::string(SLUICE_CLI) +
      " describe mysql-to-mysql --as flink-sql --set source.url=" + testing::test_mysql_url_text() +
      " --set source.table=" + source.name() + " --set sink.url=" + testing::test_mysql_url_text() +
      " --set sink.table=copy --set transform.columns=id,amount 2>&1");
  INFO(result.output);
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("'connector' = 'mysql-cdc'") &&
                                Catch::Contains("'table-name' = '" + source.name() + "'") &&
                                Catch::Contains("'scan.startup.mode' = 'initial'") &&
                                Catch::Contains("'connector' = 'jdbc'") &&
                                Catch::Contains("SELECT `id`, `amount` FROM `mysql-cdc`"));
}

TEST_CASE("mysql-cdc reads every type the same from the snapshot as from the binlog",
          "[mysql][cdc]") {
  testing::TestTable table(
      "cdc_types",
      "id BIGINT PRIMARY KEY, big BIGINT UNSIGNED, small INT, tiny TINYINT UNSIGNED, "
      "flag BOOLEAN, amount DECIMAL(20,6), ratio DOUBLE, single FLOAT, at DATETIME(6), "
      "stamp TIMESTAMP(3) NULL, day DATE, year YEAR, name VARCHAR(20), code CHAR(3), body TEXT, "
      "bytes BLOB, missing INT NULL");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  const BinlogPosition before = current_binlog_position(sql);
  sql.execute("SET time_zone = '+02:00'");  // the source reads TIMESTAMPs in UTC either way
  for (const char* id : {"1", "2"}) {
    sql.execute("INSERT INTO " + table.name() + " VALUES (" + id +
                ", 18446744073709551615, -2147483648, 255, TRUE, -12345678901234.000001, "
                "-0.1, 0.1, '2026-01-02 03:04:05.123456', '2026-01-02 03:04:05.678', "
                "'2026-01-02', 2026, 'héllo €', 'ab', 'a text', x'00ff10', NULL)");
  }
  // The snapshot alone, collected.
  auto collected = std::make_shared<CollectedRows>();
  MySqlCdcOptions options;
  options.url = testing::test_mysql_url();
  options.tables = {table.name()};
  options.startup = MySqlCdcOptions::Startup::kSnapshot;
  JobGraph graph(table.name());
  graph.source("mysql-cdc", mysql_cdc_source(options, {captured}))
      .sink("collect", collect_sink(collected));
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  REQUIRE(result.finished());
  const std::vector<Row> snapshot = collected->rows();
  REQUIRE(snapshot.size() == 2);
  // The binlog of the same inserts.
  BinlogReader reader(testing::test_mysql_url(), 3'999'999'001U, {.position = before}, {captured});
  std::vector<Row> binlog;
  BinlogChanges changes;
  testing::wait_until([&] {
    reader.read(changes);
    return changes.size() >= 2;
  });
  for (const auto& change : changes) binlog.push_back(changes.row(change));
  REQUIRE(binlog.size() == 2);
  for (size_t i = 0; i < 2; ++i) CHECK(snapshot[i].to_string() == binlog[i].to_string());
  CHECK_THAT(snapshot[0].to_string(),
             Catch::StartsWith("+I[1, 18446744073709551615, -2147483648, 255, 1, "
                               "-12345678901234.000001, -0.1, 0.10000000149011612, "
                               "2026-01-02 03:04:05.123456, 2026-01-02 01:04:05.678, 2026-01-02, "
                               "2026, héllo €, ab, a text, "));
}

TEST_CASE("mysql-cdc reads several tables of one schema into one stream", "[mysql][cdc]") {
  testing::TestTable east("cdc_east", kOrders);
  testing::TestTable west("cdc_west", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(east, 500);  // ids 1..500
  west.connection().execute("INSERT INTO " + west.name() +
                            " SELECT seq, seq / 100, 'west' FROM seq_1001_to_1300");
  MySqlCdcOptions options;
  options.url = testing::test_mysql_url();
  options.tables = {east.name(), west.name()};
  options.chunk_rows = 100;
  testing::Replication replication(options, target.name());
  east.connection().execute("UPDATE " + east.name() + " SET note = 'moved' WHERE id <= 10");
  west.connection().execute("DELETE FROM " + west.name() + " WHERE id > 1200");
  const auto both = [&] {
    auto rows = east.rows();
    const auto more = west.rows();
    rows.insert(rows.end(), more.begin(), more.end());
    return rows;
  };
  const bool equal = testing::wait_until([&] { return target.rows() == both(); });
  replication.stop();
  CHECK(equal);
  CHECK(target.rows().size() == 700);

  testing::TestTable other("cdc_other", "id BIGINT PRIMARY KEY, note VARCHAR(40)");
  options.tables = {east.name(), other.name()};
  CHECK_THROWS_WITH(mysql_cdc_source(options, capture_tables(options)),
                    Catch::Contains("'" + other.name() + "'") &&
                        Catch::Contains("need the same columns and key"));
}

TEST_CASE("the aggregate job takes source.kind=mysql-cdc: a table's rows summed per key",
          "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable orders("cdc_orders",
                            "id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2)");
  orders.connection().execute("INSERT INTO " + orders.name() +
                              " VALUES (1, 7, 1.50), (2, 7, 2.50), (3, 8, 4.00)");
  const auto result = testing::run_command(
      std::string(SLUICE_CLI) + " run aggregate --set source.kind=mysql-cdc --set source.url=" +
      testing::test_mysql_url_text() + " --set source.table=" + orders.name() +
      " --set source.startup-mode=snapshot --set checkpoint.dir=" + dir.path().string() + " 2>&1");
  INFO(result.output);
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("+U[7, 2, 4.00]") && Catch::Contains("+I[8, 1, 4.00]"));
}

namespace {

// Writes into `table` (id BIGINT AUTO_INCREMENT PRIMARY KEY) every few
// milliseconds until it goes: a server busy with a table no job captures.
class BusyWriter {
 public:
  explicit BusyWriter(const std::string& table)
      : thread_([this, table] {
          MySqlConnection sql(testing::test_mysql_url());
          while (!stop_) {
            sql.execute("INSERT INTO " + table + " VALUES ()");
            std::this_thread::sleep_for(5ms);
          }
        }) {}
  ~BusyWriter() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// How many checkpoints a run's summary says completed.
int checkpoints_completed(const std::string& output) {
  const size_t at = output.rfind("checkpoints: ");
  return at == std::string::npos ? 0 : std::atoi(output.c_str() + at + 13);
}

}  // namespace

TEST_CASE("mysql-to-mysql checkpoints and ends at SIGINT while another table is written all along",
          "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  testing::TestTable busy("cdc_busy", "id BIGINT AUTO_INCREMENT PRIMARY KEY");
  fill(source, 10);
  BusyWriter writer(busy.name());
  testing::BackgroundCommand job(cli_command(source, target, dir));
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  // In the binlog phase now, with other tables' events coming all the time.
  source.connection().execute("UPDATE " + source.name() + " SET note = 'late' WHERE id = 3");
  CHECK(testing::wait_until([&] { return target.rows() == source.rows(); }));
  std::this_thread::sleep_for(1s);
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(ended->status == 130);
  CHECK(checkpoints_completed(ended->output) >= 10);  // 20 ms apart, over more than a second
}

TEST_CASE("mysql-to-mysql resumes after the server purged the binlogs its table last changed in",
          "[mysql][cdc][serial]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  testing::TestTable busy("cdc_busy", "id BIGINT AUTO_INCREMENT PRIMARY KEY");
  MySqlConnection& sql = source.connection();
  fill(source, 10);
  const std::string command = cli_command(source, target, dir);
  {
    BusyWriter writer(busy.name());
    testing::BackgroundCommand job(command);
    REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
    // The captured table idle, the server busy: the checkpointed position
    // moves on into the new file all the same.
    sql.execute("FLUSH BINARY LOGS");
    const std::string file = current_binlog_position(sql).file;
    std::this_thread::sleep_for(1s);
    job.kill();
    sql.execute("FLUSH BINARY LOGS");
    sql.execute("PURGE BINARY LOGS TO " + sql.quote(file));
  }
  sql.execute("UPDATE " + source.name() + " SET note = 'after the purge' WHERE id = 4");
  testing::BackgroundCommand again(command);
  const bool equal = testing::wait_until([&] {
    return again.output().find("resuming the binlog") != std::string::npos &&
           target.rows() == source.rows();
  });
  const auto ended = again.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(equal);
  CHECK(ended->status == 130);
}

TEST_CASE("mysql-to-mysql fails rather than read on in a binlog reset under it",
          "[mysql][cdc][serial]") {
  // Reset after a checkpoint in the snapshot (killed in it), in the binlog
  // (stopped), or while the job runs.
  const std::string when = GENERATE("in the snapshot", "in the binlog", "while it runs");
  INFO(when);
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  testing::TestTable pad("cdc_pad", "id INT AUTO_INCREMENT PRIMARY KEY, s LONGTEXT");
  MySqlConnection& sql = source.connection();
  fill(source, when == "in the snapshot" ? 400 : 10);
  // The job reads the first file of a reset binlog, so that a file of that
  // name is there after the next reset too.
  sql.execute("RESET MASTER");
  const auto reset = std::chrono::system_clock::now();
  const std::string command = cli_command(source, target, dir);
  std::optional<testing::BackgroundCommand> job;
  if (when == "in the snapshot") {
    const auto killed = testing::run_command("SLUICE_FAULT=cdc-snapshot-chunk:20 " + command +
                                             " --set source.snapshot.chunk-rows=5"
                                             " --set source.rate=500 2>&1");
    INFO(killed.output);
    REQUIRE(killed.status == 137);
  } else {
    job.emplace(command);
    REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
    if (when == "in the binlog") {
      const auto stopped = job->signal_and_wait(SIGINT, 30s);
      REQUIRE(stopped);
      REQUIRE(stopped->status == 130);
      job.reset();
    }
  }
  const BinlogPosition read_at_most = current_binlog_position(sql);
  sql.execute("UPDATE " + source.name() + " SET note = 'lost in the reset' WHERE id = 1");
  // Files made in another second than the job's.
  std::this_thread::sleep_until(reset + 1100ms);
  sql.execute("RESET MASTER");
  sql.execute("UPDATE " + source.name() + " SET note = 'after the reset' WHERE id = 2");
  // The new file grown past where the job was: the offset is in it.
  while (current_binlog_position(sql).offset < read_at_most.offset + 1000) {
    sql.execute("INSERT INTO " + pad.name() + " (s) VALUES (REPEAT('x', 20000))");
  }
  REQUIRE(current_binlog_position(sql).file == read_at_most.file);
  sql.execute("UPDATE " + source.name() + " SET note = 'after the padding' WHERE id = 3");

  if (!job) job.emplace(command);
  const auto refused = job->signal_and_wait(0, 60s);  // it should end by itself
  REQUIRE(refused);
  INFO(refused->output);
  CHECK(refused->status == 2);
  CHECK_THAT(refused->output, Catch::Contains("binlog file " + read_at_most.file) &&
                                  Catch::Contains("RESET MASTER") &&
                                  Catch::Contains("restore=none"));

  // As it says: a new snapshot.
  testing::BackgroundCommand afresh(command + " --set restore=none");
  CHECK(testing::wait_until([&] { return target.rows() == source.rows(); }));
  const auto ended = afresh.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  CHECK(ended->status == 130);
}

TEST_CASE("mysql-cdc refuses a checkpoint taken of other tables, naming both", "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable first("cdc_first", kOrders);
  testing::TestTable second("cdc_second", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(first, 10);
  testing::BackgroundCommand job(cli_command(first, target, dir));
  // Copied, and a checkpoint taken after: of the binlog, where it is now.
  REQUIRE(testing::wait_until([&] { return target.rows() == first.rows(); }));
  const CheckpointStorage checkpoints(dir.path(), target.name());
  const std::optional<int64_t> copied = checkpoints.latest();
  REQUIRE(testing::wait_until([&] { return checkpoints.latest() > copied; }));
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);

  // The same job name and checkpoints, another table.
  testing::BackgroundCommand other(cli_command(second, target, dir));
  const auto refused = other.signal_and_wait(0, 60s);  // no signal: it should end by itself
  REQUIRE(refused);
  INFO(refused->output);
  CHECK(refused->status == 2);
  CHECK_THAT(refused->output, Catch::Contains("taken reading sluice." + first.name()) &&
                                  Catch::Contains("this job reads sluice." + second.name()) &&
                                  Catch::Contains("restore=none"));
}

TEST_CASE(
    "aggregate over a live table, killed at random in the snapshot and the binlog, "
    "equals the aggregate SQL computes",
    "[mysql][cdc]") {
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  testing::TempDir dir;
  testing::TestTable orders("cdc_orders",
                            "id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2)");
  testing::TestTable sums("cdc_sums",
                          "customer BIGINT PRIMARY KEY, `count` BIGINT, `sum` DECIMAL(38,2)");
  MySqlConnection& sql = orders.connection();
  const std::string t = orders.name();
  sql.execute("INSERT INTO " + t + " SELECT seq, seq % 20, seq / 100 FROM seq_1_to_3000");
  const std::string command =
      std::string(SLUICE_CLI) + " run aggregate --set source.kind=mysql-cdc --set source.url=" +
      testing::test_mysql_url_text() + " --set source.table=" + t +
      " --set sink.url=" + testing::test_mysql_url_text() + " --set sink.table=" + sums.name() +
      " --set job.name=" + sums.name() + " --set checkpoint.dir=" + dir.path().string() +
      " --set checkpoint.interval=20ms --set engine.flush.interval=20ms"
      " --set source.snapshot.chunk-rows=20";

  // Changes all along: single statements, transactions of several, and
  // XA transactions, some of them rolled back.
  std::atomic<bool> stop{false};
  std::thread writer([&, writer_seed = seed + 1] {
    std::mt19937 r(writer_seed);
    MySqlConnection w(testing::test_mysql_url());
    for (int i = 0; !stop; ++i) {
      const auto id = [&] { return std::to_string(r() % 3500 + 1); };
      const std::vector<std::string> statements = {
          "UPDATE " + t + " SET amount = amount + 1.25 WHERE id = " + id(),
          "UPDATE " + t + " SET customer = " + std::to_string(r() % 25) + " WHERE id = " + id(),
          "DELETE FROM " + t + " WHERE id = " + id(),
          "INSERT IGNORE INTO " + t + " VALUES (" + id() + ", " + std::to_string(r() % 20) +
              ", 2.50)"};
      const std::string one = statements[r() % statements.size()];
      const std::string two = statements[r() % statements.size()];
      switch (r() % 6) {
        case 0: {
          const std::string xid = w.quote("agg-" + std::to_string(seed) + "-" + std::to_string(i));
          w.execute("XA START " + xid);
          w.execute(one);
          w.execute(two);
          w.execute("XA END " + xid);
          w.execute("XA PREPARE " + xid);
          std::this_thread::sleep_for(std::chrono::milliseconds(r() % 100));
          w.execute((r() % 4 == 0 ? "XA ROLLBACK " : "XA COMMIT ") + xid);
          break;
        }
        case 1:
          w.execute("START TRANSACTION");
          w.execute(one);
          w.execute(two);
          w.execute(r() % 4 == 0 ? "ROLLBACK" : "COMMIT");
          break;
        default:
          w.execute(one);
      }
      std::this_thread::sleep_for(2ms);
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& writer;
    ~Join() {
      stop = true;
      if (writer.joinable()) writer.join();
    }
  } join{stop, writer};

  // Killed five times: the first runs slowed down, so that kills land in
  // the snapshot too.
  for (int run = 0; run < 5; ++run) {
    testing::BackgroundCommand job(command + (run < 2 ? " --set source.rate=3000" : ""));
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + random() % 900));
    INFO(job.kill().output);
  }
  stop = true;
  writer.join();
  const auto expected = [&] {
    return sql.query("SELECT customer, COUNT(*), SUM(amount) FROM " + t +
                     " GROUP BY customer ORDER BY customer");
  };
  testing::BackgroundCommand last(command);
  const bool equal = testing::wait_until([&] { return sums.rows() == expected(); });
  const auto ended = last.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(equal);
  CHECK(ended->status == 130);
}

TEST_CASE("mysql-to-mysql writes keys the target's collation takes for equal from one subtask",
          "[mysql][cdc]") {
  testing::TempDir dir;
  constexpr char kCodes[] = "code VARCHAR(20) COLLATE utf8mb4_unicode_ci PRIMARY KEY, v INT";
  testing::TestTable source("cdc_codes", kCodes);
  testing::TestTable target("cdc_codes_copy", kCodes);
  MySqlConnection& sql = source.connection();
  sql.execute("INSERT INTO " + source.name() +
              " SELECT CONCAT('code-', seq), seq FROM seq_1_to_400");
  testing::BackgroundCommand job(cli_command(source, target, dir) + " --set sink.parallelism=2");
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  // Each an update of every key to one the collation takes for the same:
  // the old key's delete and the new key's upsert must not cross.
  for (const char* spelling : {"UPPER(code)", "LOWER(code)", "REPLACE(code, 'o', 'ô')",
                               "CONCAT(UPPER(code), ' ')", "REPLACE(code, 'Ô', 'o')"}) {
    INFO(spelling);
    sql.execute("UPDATE " + source.name() + " SET code = " + spelling + ", v = v + 1");
    CHECK(testing::wait_until([&] { return target.rows() == source.rows(); }, 30s));
  }
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  CHECK(ended->status == 130);
}

TEST_CASE(
    "mysql-to-mysql copies an ENUM's invalid value, which a session not in strict mode stores",
    "[mysql][cdc]") {
  testing::TempDir dir;
  constexpr char kStates[] = "id INT PRIMARY KEY, state ENUM('open', 'closed'), v INT";
  testing::TestTable source("cdc_invalid_enum", kStates);
  testing::TestTable target("cdc_invalid_enum_copy", kStates);
  MySqlConnection& sql = source.connection();
  // Not in strict mode, a value that is no member is stored as '' (index
  // 0), with a warning: in the snapshot, and in the binlog after it.
  sql.execute("SET SESSION sql_mode = ''");
  sql.execute("INSERT INTO " + source.name() + " VALUES (1, 'open', 1), (2, 'lost', 2)");
  const std::string indexes = "SELECT id, state, state + 0, v FROM ";
  testing::BackgroundCommand job(cli_command(source, target, dir));
  REQUIRE(testing::wait_until(
      [&] { return target.connection().query(indexes + target.name()).size() == 2; }));
  sql.execute("INSERT INTO " + source.name() + " VALUES (3, 'missing', 3)");
  sql.execute("UPDATE " + source.name() + " SET state = 'gone', v = v + 10 WHERE id = 1");
  sql.execute("UPDATE " + source.name() + " SET state = 'closed', v = v + 10 WHERE id = 2");
  const auto copied = [&] {
    return target.connection().query(indexes + target.name() + " ORDER BY id") ==
           sql.query(indexes + source.name() + " ORDER BY id");
  };
  CHECK(testing::wait_until(copied));
  CHECK(sql.query(indexes + source.name() + " ORDER BY id") ==
        std::vector<std::vector<std::optional<std::string>>>{
            {"1", "", "0", "11"}, {"2", "closed", "2", "12"}, {"3", "", "0", "3"}});
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  CHECK(ended->status == 130);
}

TEST_CASE("mysql-to-mysql exactly-once resumes from an older checkpoint with restore=<id>",
          "[mysql][cdc]") {
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  const testing::PreparedGuard guard(target.name());
  fill(source, 300);
  const std::string command = cli_command(source, target, dir) +
                              " --set sink.delivery=exactly-once --set checkpoint.retained=5";
  {
    testing::BackgroundCommand job(command);
    REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
    change_randomly(source, 100, 300, random);
    REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
    // Every checkpoint kept taken in the binlog, after the snapshot: a
    // table ahead of a checkpoint in the snapshot would keep rows deleted
    // since (see README, restore).
    const CheckpointStorage checkpoints(dir.path(), target.name());
    const int64_t synced = checkpoints.highest_id();
    REQUIRE(testing::wait_until([&] {
      const std::vector<int64_t> kept = checkpoints.completed();
      return kept.size() >= 3 && kept.front() > synced;
    }));
    REQUIRE(job.signal_and_wait(SIGINT, 30s));
  }
  // The oldest checkpoint kept: later ones completed after it.
  const std::vector<int64_t> kept = CheckpointStorage(dir.path(), target.name()).completed();
  REQUIRE(kept.size() >= 3);
  const int64_t oldest = kept.front();
  change_randomly(source, 100, 300, random);
  testing::BackgroundCommand again(command + " --set restore=" + std::to_string(oldest));
  const bool equal = testing::wait_until([&] { return target.rows() == source.rows(); });
  const auto ended = again.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK_THAT(ended->output, Catch::Contains("resuming from checkpoint " + std::to_string(oldest)));
  CHECK(equal);
  CHECK(ended->status == 130);
}

TEST_CASE("mysql-to-mysql reports the binlog's lag as Flink CDC names it", "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(source, 10);
  const std::string metrics = (dir.path() / "metrics.json").string();
  testing::BackgroundCommand job(cli_command(source, target, dir) + " --metrics-file " + metrics);
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  source.connection().execute("UPDATE " + source.name() + " SET note = 'lag' WHERE id = 1");
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  std::this_thread::sleep_for(1200ms);  // idle since
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK_THAT(ended->output, Catch::Contains("binlog lag: the last change went out"));
  std::ifstream in(metrics);
  const auto json = nlohmann::json::parse(in);
  const auto& counters = json.at("counters");
  CHECK(counters.contains("mysql-cdc.currentEmitEventTimeLag"));
  CHECK(counters.contains("mysql-cdc.currentFetchEventTimeLag"));
  CHECK(counters.at("mysql-cdc.sourceIdleTime").get<uint64_t>() >= 1000);
}

TEST_CASE("mysql-to-mysql writes an XA transaction prepared before its snapshot when it commits",
          "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(source, 10);
  MySqlConnection xa(testing::test_mysql_url());
  const std::string xid = xa.quote(testing::unique_name("early"));
  xa.execute("XA START " + xid);
  xa.execute("INSERT INTO " + source.name() + " VALUES (11, 1.00, 'prepared early')");
  xa.execute("UPDATE " + source.name() + " SET note = 'by the early one' WHERE id = 2");
  xa.execute("XA END " + xid);
  xa.execute("XA PREPARE " + xid);
  bool committed = false;
  struct RollBack {
    MySqlConnection& sql;
    std::string xid;
    bool& committed;
    ~RollBack() {
      if (!committed) sql.execute("XA ROLLBACK " + xid);
    }
  } guard{xa, xid, committed};
  // The snapshot cannot see it: it is not committed.
  testing::BackgroundCommand job(cli_command(source, target, dir));
  REQUIRE(testing::wait_until([&] { return target.rows().size() == 10; }));
  xa.execute("XA COMMIT " + xid);
  committed = true;
  const bool equal = testing::wait_until([&] { return target.rows() == source.rows(); });
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(equal);
  CHECK(target.rows().size() == 11);
  CHECK(ended->status == 130);
}

TEST_CASE("mysql-to-mysql ends at SIGINT while its server does not answer",
          "[mysql][cdc][serial]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(source, 10);
  testing::BackgroundCommand job(cli_command(source, target, dir));
  REQUIRE(testing::wait_until([&] {
    return job.output().find("snapshot read") != std::string::npos &&
           target.rows() == source.rows();
  }));
  const auto pid = source.connection().query("SELECT @@pid_file").at(0).at(0);
  const std::string server = testing::run_command("cat " + pid.value_or("")).output;
  REQUIRE(!server.empty());
  testing::run_command("kill -STOP " + server);
  struct Resume {
    std::string server;
    ~Resume() { testing::run_command("kill -CONT " + server); }
  } resume{server};
  std::this_thread::sleep_for(500ms);
  // The reader never waits on the server: the job hears the signal at once.
  const auto ended = job.signal_and_wait(SIGINT, 20s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(ended->status == 130);
}

TEST_CASE("a second run of a running mysql-to-mysql job refuses at once and leaves it running",
          "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(source, 10);
  const std::string command = cli_command(source, target, dir);
  testing::BackgroundCommand job(command);
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  const auto second = testing::run_command("timeout 60 " + command + " 2>&1");
  INFO(second.output);
  CHECK(second.status == 2);
  CHECK_THAT(second.output, Catch::Matches("(.|\\n)*job '" + target.name() +
                                           "' is already running as pid [0-9]+(.|\\n)*"));
  // The first goes on reading the binlog, as the same replica.
  source.connection().execute("UPDATE " + source.name() + " SET note = 'later' WHERE id = 3");
  CHECK(testing::wait_until([&] { return target.rows() == source.rows(); }));
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  INFO(ended->output);
  CHECK(ended->status == 130);
  // Once it ended, the job runs again.
  testing::BackgroundCommand again(command);
  CHECK(testing::wait_until(
      [&] { return again.output().find("resuming from checkpoint") != std::string::npos; }));
  const auto last = again.signal_and_wait(SIGINT, 30s);
  REQUIRE(last);
  CHECK(last->status == 130);
}

TEST_CASE("a target that cannot take the source's rows is refused before anything is written",
          "[mysql][cdc]") {
  struct Target {
    std::string columns, column, says;
  };
  const Target target = GENERATE(
      Target{"id BIGINT PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR(40), added INT NOT NULL",
             "added", "NOT NULL without a default"},
      Target{"id BIGINT PRIMARY KEY, amount DATE, note VARCHAR(40)", "amount",
             "cannot hold the input's DECIMAL(12,2)"},
      Target{"id BIGINT PRIMARY KEY, amount INT, note VARCHAR(40)", "amount",
             "cannot hold the input's DECIMAL(12,2)"},
      Target{"id BIGINT PRIMARY KEY, note VARCHAR(40)", "amount", "has no column"});
  INFO(target.columns);
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable copy("cdc_target", target.columns);
  fill(source, 10);
  const auto run = testing::run_command("timeout 60 " + cli_command(source, copy, dir) + " 2>&1");
  INFO(run.output);
  CHECK(run.status == 2);
  CHECK_THAT(run.output, Catch::Contains("table '" + copy.name() + "'") &&
                             Catch::Contains("'" + target.column + "'") &&
                             Catch::Contains(target.says));
  CHECK_THAT(run.output, !Catch::Contains("restarting (") && Catch::Contains("not restarting"));
  CHECK(copy.rows().empty());
}

TEST_CASE("a target column the input does not fill is fine with a default, NULL or AUTO_INCREMENT",
          "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable copy("cdc_target",
                          "id BIGINT PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR(40), "
                          "a INT NOT NULL DEFAULT 7, b INT, c INT NOT NULL AUTO_INCREMENT UNIQUE, "
                          "d BIGINT AS (id + 1) VIRTUAL");
  fill(source, 3);
  testing::BackgroundCommand job(cli_command(source, copy, dir));
  CHECK(testing::wait_until([&] { return copy.rows().size() == 3; }));
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(ended->status == 130);
}

TEST_CASE(
    "the same job reading the binlog from elsewhere refuses; another whose id collides takes the "
    "next",
    "[mysql][cdc]") {
  testing::TempDir dir, elsewhere;
  testing::TestTable source("cdc_source", kOrders);
  testing::TestTable target("cdc_target", kOrders);
  fill(source, 10);
  const std::string name = target.name();
  // The id the job's name derives, held as another source of Sluice would.
  const uint32_t derived =
      10'000 + static_cast<uint32_t>(std::hash<std::string>()(name + "/mysql-cdc") % 1'000'000'000);
  MySqlConnection other(testing::test_mysql_url());
  REQUIRE(other.query("SELECT GET_LOCK('sluice-server-id-" + std::to_string(derived) + "', 0)")
              .at(0)
              .at(0) == "1");
  testing::BackgroundCommand job(cli_command(source, target, dir));
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  CHECK(testing::wait_until([&] {
    return job.output().find("server id " + std::to_string(derived) + " is another source's") !=
           std::string::npos;
  }));
  // The same job.name from another checkpoint directory.
  const auto second =
      testing::run_command("timeout 60 " + cli_command(source, target, elsewhere) + " 2>&1");
  INFO(second.output);
  CHECK(second.status == 2);
  CHECK_THAT(second.output, Catch::Contains("another process already reads this server's binlog"));
  source.connection().execute("UPDATE " + source.name() + " SET note = 'still' WHERE id = 2");
  CHECK(testing::wait_until([&] { return target.rows() == source.rows(); }));
  const auto ended = job.signal_and_wait(SIGINT, 30s);
  REQUIRE(ended);
  CHECK(ended->status == 130);
}
