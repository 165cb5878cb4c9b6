#include "sluice/benchmarks/cdc_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <thread>

#include "sluice/benchmarks/bench.hpp"
#include "sluice/benchmarks/bench_mysql.hpp"
#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/table_routes.hpp"
#include "sluice/connectors/mysql/sink/tables_sink.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kSource[] = "bench_cdc_source";
constexpr char kTarget[] = "bench_cdc_target";
constexpr char kColumns[] =
    "(id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2), status VARCHAR(20))";

// An empty table `name`, on `connection`.
void fresh(MySqlConnection& connection, const std::string& name) {
  connection.execute("DROP TABLE IF EXISTS " + name);
  connection.execute("CREATE TABLE " + name + " " + kColumns);
}

// Inserts orders `first`..`first + rows - 1` in transactions of 1000.
void insert_orders(MySqlConnection& connection, uint64_t first, uint64_t rows) {
  for (uint64_t at = first; at < first + rows; at += 1000) {
    const uint64_t last = std::min(at + 999, first + rows - 1);
    connection.execute("INSERT INTO " + std::string(kSource) +
                       " SELECT seq, seq % 5000, (seq % 100000) / 100, ELT(1 + seq % 3, 'new', "
                       "'paid', 'shipped') FROM seq_" +
                       std::to_string(at) + "_to_" + std::to_string(last));
  }
}

uint64_t count_rows(MySqlConnection& connection, const char* table) {
  return std::stoull(
      connection.query(std::string("SELECT COUNT(*) FROM ") + table).at(0).at(0).value());
}

// The source table's changes from `startup` (and `position`) into the
// target table, or into a blackhole.
void add_replication(JobGraph& graph, const CapturedTable& table, MySqlCdcOptions::Startup startup,
                     BinlogPosition position = {}, bool into_mysql = true) {
  MySqlCdcOptions source;
  source.url = bench_url();
  source.tables = {kSource};
  source.startup = startup;
  source.position = std::move(position);
  MySqlSinkOptions target;
  target.url = bench_url();
  target.table = kTarget;
  target.max_rows = 5000;
  graph.source("mysql-cdc", mysql_cdc_source(source, {table}))
      .sink("out", into_mysql ? mysql_sink(target) : blackhole_sink());
}

RuntimeOptions bench_runtime(std::chrono::milliseconds flush_interval) {
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = flush_interval;
  return runtime;
}

// LOAD DATA LOCAL INFILE of the source table's rows into the target.
BenchSample load_data(uint64_t rows) {
  MySqlConnection connection(bench_url(), MySqlSession{.local_infile = true});
  fresh(connection, kSource);
  insert_orders(connection, 1, rows);
  fresh(connection, kTarget);
  const auto file = std::filesystem::temp_directory_path() /
                    ("sluice-cdc-" + std::to_string(::getpid()) + ".tsv");
  {
    std::ofstream out(file);
    for (const auto& row : connection.query(std::string("SELECT * FROM ") + kSource)) {
      for (size_t c = 0; c < row.size(); ++c) out << (c ? "\t" : "") << row[c].value_or("\\N");
      out << "\n";
    }
  }
  const auto start = Clock::now();
  connection.execute("LOAD DATA LOCAL INFILE " + connection.quote(file.string()) + " INTO TABLE " +
                     kTarget);
  const double seconds = seconds_since(start);
  std::filesystem::remove(file);
  return {rows, seconds, {}};
}

// The snapshot alone (startup-mode snapshot), into a blackhole or MySQL.
BenchSample snapshot(uint64_t rows, bool into_mysql) {
  MySqlConnection connection(bench_url());
  fresh(connection, kSource);
  insert_orders(connection, 1, rows);
  fresh(connection, kTarget);
  const CapturedTable table = capture_table(connection, kSource);
  JobGraph graph("cdc-bench");
  add_replication(graph, table, MySqlCdcOptions::Startup::kSnapshot, {}, into_mysql);
  const JobResult result = Executor(bench_runtime(std::chrono::milliseconds(0))).run(graph);
  if (!result.finished()) throw std::runtime_error("cdc snapshot run failed: " + result.error);
  return {
      result.metrics.records_in("out"), std::chrono::duration<double>(result.duration).count(), {}};
}

// `rows` inserts read from the binlog by the reader alone.
BenchSample binlog_read(uint64_t rows) {
  MySqlConnection connection(bench_url());
  fresh(connection, kSource);
  const CapturedTable table = capture_table(connection, kSource);
  const BinlogPosition start = current_binlog_position(connection);
  insert_orders(connection, 1, rows);
  const auto began = Clock::now();
  BinlogReader reader(bench_url(), 4'000'000'001U, {.position = start}, {table});
  BinlogChanges changes;
  uint64_t read = 0;
  while (read < rows) {
    changes.clear();
    reader.read(changes);
    read += changes.size();
    if (seconds_since(began) > 300) throw std::runtime_error("cdc binlog read stalled");
  }
  return {read, seconds_since(began), {}};
}

// Runs `graph`, flushing every `flush_interval`, until `caught_up()`
// (sluice::run_until()).
double run_flushing_until(
    const JobGraph& graph, const std::function<bool()>& caught_up, std::chrono::milliseconds every,
    double limit, const std::string& what,
    std::chrono::milliseconds flush_interval = std::chrono::milliseconds(20)) {
  return sluice::run_until(graph, bench_runtime(flush_interval), caught_up, every, limit, what);
}

// `rows` inserts from the binlog into MySQL through the engine, until the
// target holds them all.
BenchSample binlog_into_mysql(uint64_t rows) {
  MySqlConnection connection(bench_url());
  fresh(connection, kSource);
  fresh(connection, kTarget);
  const CapturedTable table = capture_table(connection, kSource);
  const BinlogPosition start = current_binlog_position(connection);
  insert_orders(connection, 1, rows);
  JobGraph graph("cdc-bench");
  add_replication(graph, table, MySqlCdcOptions::Startup::kPosition, start);
  const double seconds = run_flushing_until(
      graph, [&] { return count_rows(connection, kTarget) == rows; }, std::chrono::milliseconds(5),
      300, "cdc binlog into MySQL");
  return {rows, seconds, {}};
}

// One UPDATE of `rows` rows, from the binlog into MySQL through the engine:
// how long until the target holds them all, and the process's peak memory
// meanwhile, which must not grow with the transaction.
BenchSample huge_transaction(uint64_t rows) {
  MySqlConnection connection(bench_url());
  fresh(connection, kSource);
  fresh(connection, kTarget);
  insert_orders(connection, 1, rows);
  const CapturedTable table = capture_table(connection, kSource);
  const BinlogPosition start = current_binlog_position(connection);
  connection.execute(std::string("UPDATE ") + kSource + " SET amount = amount + 1");
  reset_peak_rss();
  const Rss before = read_rss();
  JobGraph graph("cdc-bench");
  add_replication(graph, table, MySqlCdcOptions::Startup::kPosition, start);
  const std::string updated = std::string("SELECT COUNT(*) FROM ") + kTarget + " t JOIN " +
                              kSource + " s USING (id) WHERE t.amount = s.amount";
  const double seconds = run_flushing_until(
      graph, [&] { return std::stoull(connection.query(updated).at(0).at(0).value()) == rows; },
      std::chrono::milliseconds(200), 600, "cdc huge transaction");
  const Rss after = read_rss();
  return {rows * 2,  // each row's two images
          seconds,
          {{"peak RSS, MB", static_cast<double>(after.peak) / 1e6},
           {"RSS before, MB", static_cast<double>(before.now) / 1e6}}};
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Single-row transactions at `rate` per second, each stamped with its commit
// time (customer = microseconds): how long until each is visible in the
// target, replicated through the engine with engine.flush.interval 20ms.
BenchSample commit_to_visible(uint64_t rows, int rate) {
  MySqlConnection writer(bench_url()), watcher(bench_url());
  fresh(writer, kSource);
  fresh(writer, kTarget);
  const CapturedTable table = capture_table(writer, kSource);
  JobGraph graph("cdc-bench");
  add_replication(graph, table, MySqlCdcOptions::Startup::kLatest);
  Executor executor(bench_runtime(std::chrono::milliseconds(20)));
  JobResult result;
  std::thread job([&] { result = executor.run(graph); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the reader is at the binlog's end
  std::atomic<bool> written{false};
  std::thread write([&] {
    const auto began = Clock::now();
    for (uint64_t i = 1; i <= rows; ++i) {
      std::this_thread::sleep_until(began + std::chrono::microseconds(1'000'000 * i / rate));
      writer.execute(std::string("INSERT INTO ") + kSource + " VALUES (" + std::to_string(i) +
                     ", " + std::to_string(now_us()) + ", 1.00, 'new')");
    }
    written = true;
  });
  std::vector<int64_t> visible_after;
  int64_t seen = 0;
  const auto began = Clock::now();
  while (seen < static_cast<int64_t>(rows) && seconds_since(began) < 300) {
    for (const auto& row : watcher.query(std::string("SELECT id, customer FROM ") + kTarget +
                                         " WHERE id > " + std::to_string(seen) + " ORDER BY id")) {
      visible_after.push_back(now_us() - std::stoll(row[1].value()));
      seen = std::stoll(row[0].value());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  write.join();
  executor.cancel();
  job.join();
  if (seen < static_cast<int64_t>(rows))
    throw std::runtime_error("cdc latency run did not catch up");
  return {rows,
          seconds_since(began),
          {{"p50 commit to visible, ms", percentile(visible_after, 0.50) / 1e3},
           {"p99 commit to visible, ms", percentile(visible_after, 0.99) / 1e3}}};
}

// A sysbench-like table (sbtest, with its secondary key on k): the
// databases the database benchmarks replicate from and into.
constexpr char kSbtest[] =
    "(id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, "
    "KEY k_1 (k))";
constexpr char kShop[] = "sluice_bench_tables_source";
constexpr char kCopy[] = "sluice_bench_tables_target";
// Rows per statement: a transaction of 1000 rows writes 10 tables of 100.
constexpr uint64_t kRowsPerStatement = 100;

MySqlUrl database_url(const std::string& database) {
  MySqlUrl url = bench_url();
  url.database = database;
  return url;
}

// How the benchmarked changes meet their tables.
enum class SbtestLoad {
  // sysbench's `prepare` then a write-only `run`: the tables, source and
  // target, hold the rows before; the changes update them (k, or k and
  // c), or delete and insert them again.
  kPrepared,
  // The tables empty at the start, source and target (the target created
  // by the sink): the rows inserted, then each updated once.
  kFromEmpty,
};

// Runs the statements `write(table, first, last)` makes for the rows
// first..last, kRowsPerStatement at a time, each range into the next of
// `tables` tables of kShop, in transactions of 1000 rows. Returns how
// long the server took.
double in_transactions(
    MySqlConnection& sql, int tables, uint64_t rows,
    const std::function<std::vector<std::string>(const std::string&, uint64_t, uint64_t)>& write) {
  const auto began = Clock::now();
  for (uint64_t at = 0; at < rows; at += 1000) {
    sql.execute("START TRANSACTION");
    for (uint64_t first = at; first < std::min(at + 1000, rows); first += kRowsPerStatement) {
      const std::string table =
          std::string(kShop) + ".sbtest" + std::to_string((first / kRowsPerStatement) % tables + 1);
      for (const std::string& statement :
           write(table, first + 1, std::min(first + kRowsPerStatement, rows))) {
        sql.execute(statement);
      }
    }
    sql.execute("COMMIT");
  }
  return seconds_since(began);
}

std::string insert_sbtest(const std::string& table, uint64_t first, uint64_t last, int k_offset) {
  return "INSERT INTO " + table + " SELECT seq, seq % 1000 + " + std::to_string(k_offset) +
         ", REPEAT('c', 120), REPEAT('p', 60) FROM seq_" + std::to_string(first) + "_to_" +
         std::to_string(last);
}

std::string where_ids(uint64_t first, uint64_t last) {
  return " WHERE id BETWEEN " + std::to_string(first) + " AND " + std::to_string(last);
}

// `tables` sbtest tables in kShop, and kCopy (with a copy of them where
// `load` is kPrepared); then the benchmarked changes to `rows` rows
// (each changes k, so that the row changed last tells when a copy has
// caught up), after `start`, the binlog's position before them. Returns
// how long the server took to make the changes.
double write_sbtest(MySqlConnection& sql, SbtestLoad load, int tables, uint64_t rows,
                    BinlogPosition& start) {
  for (const char* database : {kShop, kCopy}) {
    sql.execute(std::string("DROP DATABASE IF EXISTS ") + database);
    sql.execute(std::string("CREATE DATABASE ") + database);
  }
  for (int t = 1; t <= tables; ++t) {
    sql.execute(std::string("CREATE TABLE ") + kShop + ".sbtest" + std::to_string(t) + " " +
                kSbtest);
  }
  const auto insert = [](const std::string& table, uint64_t first, uint64_t last) {
    return std::vector<std::string>{insert_sbtest(table, first, last, 0)};
  };
  if (load == SbtestLoad::kPrepared) {
    in_transactions(sql, tables, rows, insert);
    for (int t = 1; t <= tables; ++t) {
      const std::string name = ".sbtest" + std::to_string(t);
      sql.execute(std::string("CREATE TABLE ") + kCopy + name + " LIKE " + kShop + name);
      sql.execute(std::string("INSERT INTO ") + kCopy + name + " SELECT * FROM " + kShop + name);
    }
  }
  start = current_binlog_position(sql);
  if (load == SbtestLoad::kPrepared) {
    // sysbench's oltp_write_only in ranges: an index update, a non-index
    // one (here with the index too), and a delete with its insert.
    return in_transactions(
        sql, tables, rows, [](const std::string& table, uint64_t first, uint64_t last) {
          switch ((first / kRowsPerStatement) % 3) {
            case 0:
              return std::vector<std::string>{"UPDATE " + table + " SET k = k + 1" +
                                              where_ids(first, last)};
            case 1:
              return std::vector<std::string>{"UPDATE " + table +
                                              " SET k = k + 1, c = REPEAT('u', 120)" +
                                              where_ids(first, last)};
            default:
              return std::vector<std::string>{"DELETE FROM " + table + where_ids(first, last),
                                              insert_sbtest(table, first, last, 1000)};
          }
        });
  }
  return in_transactions(sql, tables, rows, insert) +
         in_transactions(sql, tables, rows,
                         [](const std::string& table, uint64_t first, uint64_t last) {
                           return std::vector<std::string>{"UPDATE " + table +
                                                           " SET k = k + 1, c = REPEAT('u', 120)" +
                                                           where_ids(first, last)};
                         });
}

// The sum of k over the `tables` tables of `database`; -1 while one is
// missing.
int64_t sum_of_k(MySqlConnection& sql, const char* database, int tables) {
  std::string query = "SELECT SUM(s) FROM (";
  for (int t = 1; t <= tables; ++t) {
    query += std::string(t > 1 ? " UNION ALL " : "") + "SELECT SUM(k) AS s FROM " + database +
             ".sbtest" + std::to_string(t);
  }
  try {
    return std::stoll(sql.query(query + ") sums").at(0).at(0).value_or("0"));
  } catch (const MySqlError&) {
    return -1;  // not created yet
  }
}

// The binlog's changes to `rows` rows over `tables` tables (write_sbtest),
// applied by mysql-to-mysql of several tables (source.tables), missing
// targets created by the sink: how long until the copy holds them all,
// and the peak memory meanwhile.
BenchSample tables_into_mysql(SbtestLoad load, int tables, uint64_t rows) {
  MySqlConnection sql(bench_url());
  BinlogPosition start;
  const double written = write_sbtest(sql, load, tables, rows, start);
  // An update's two images, a delete and its insert; or an insert and
  // an update.
  const uint64_t records = rows * (load == SbtestLoad::kPrepared ? 2 : 3);
  const int64_t want = sum_of_k(sql, kShop, tables);
  // The row the binlog changes last, as it is in the end: once the copy
  // has it, a sum over every table (a scan of them all, which polled
  // throughout would take the server from the job) tells whether it has
  // the rest.
  const std::string last = ".sbtest" + std::to_string((rows - 1) / kRowsPerStatement % tables + 1) +
                           " WHERE id = " + std::to_string(rows);
  const auto k_of_last = [&](const char* database) -> std::optional<std::string> {
    try {
      const auto found = sql.query("SELECT k FROM " + std::string(database) + last);
      if (found.empty()) return std::nullopt;
      return found.at(0).at(0);
    } catch (const MySqlError&) {
      return std::nullopt;  // not created yet
    }
  };
  const std::optional<std::string> final_k = k_of_last(kShop);
  MySqlCdcOptions source;
  source.url = database_url(kShop);
  source.patterns = {std::string(kShop) + ".sbtest[0-9]+"};
  source.startup = MySqlCdcOptions::Startup::kPosition;
  source.position = start;
  std::vector<CapturedTable> captured = capture_tables(source);
  std::vector<MySqlTableTarget> targets;
  for (const CapturedTable& table : captured) {
    targets.push_back(route_target(
        {}, {table.database, table.table},
        TableInfo{.columns = table.columns, .primary_key = table.schema.primary_key_names()}));
  }
  MySqlSinkOptions sink;
  sink.url = database_url(kCopy);
  sink.max_rows = 5000;
  JobGraph graph("database-bench");
  Stream changes = graph.source("mysql-cdc", mysql_cdc_source(source, std::move(captured)));
  changes.sink("out", mysql_tables_sink(sink, changes.type().tables, std::move(targets), true));
  reset_peak_rss();
  const Rss before = read_rss();
  // Flushed at the engine's default interval, as the job is.
  const double seconds = run_flushing_until(
      graph, [&] { return k_of_last(kCopy) == final_k && sum_of_k(sql, kCopy, tables) == want; },
      std::chrono::milliseconds(20), 600, "mysql-to-mysql of " + std::to_string(tables) + " tables",
      RuntimeOptions{}.flush_interval);
  const Rss after = read_rss();
  return {records,
          seconds,
          {{"peak RSS, MB", static_cast<double>(after.peak) / 1e6},
           {"RSS before, MB", static_cast<double>(before.now) / 1e6},
           // The server's own statements making the changes, for scale:
           // how many tables cost the server too.
           {"the source's statements, records/s", static_cast<double>(records) / written},
           {"rate as a share of the source's statements'", written / seconds}}};
}

Benchmark database_benchmark(SbtestLoad load) {
  const bool prepared = load == SbtestLoad::kPrepared;
  return {
      .name = prepared ? "database" : "database-from-empty",
      .description =
          std::string("mysql-to-mysql of several tables: ") +
          (prepared ? "sysbench's write-only changes (updates; deletes with their inserts) to "
                      "the rows of 100 prepared sysbench-like tables, against the same rows "
                      "in one table,"
                    : "the same rows inserted into 100 new sysbench-like tables and then "
                      "updated, against one table,") +
          " from the binlog into MySQL, flushed every second (the default); the peak memory "
          "of each, and how fast the source's own statements made the changes",
      .scenarios =
          [=](const BenchSettings& settings) {
            // Full: prepared, sysbench's default table size (10,000 rows)
            // in each of the 100 tables, a run long enough that the last
            // changes' wait for the flush interval weighs little.
            const uint64_t rows = settings.quick ? 20'000 : prepared ? 1'000'000 : 200'000;
            return std::vector<BenchScenario>{
                {"baseline: one table", true, [=] { return tables_into_mysql(load, 1, rows); }},
                {"100 tables", false, [=] { return tables_into_mysql(load, 100, rows); }},
            };
          },
      .unavailable = [] { return no_server(true); },
  };
}

}  // namespace

Benchmark database_benchmark() { return database_benchmark(SbtestLoad::kPrepared); }

Benchmark database_from_empty_benchmark() { return database_benchmark(SbtestLoad::kFromEmpty); }

Benchmark cdc_benchmark() {
  return {
      .name = "cdc",
      .description =
          "the mysql-cdc source: snapshot and binlog rows/s into a blackhole and into "
          "MySQL, next to LOAD DATA of the same rows; commit-to-visible latency; peak memory "
          "through a transaction of a million rows",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 20'000 : 200'000;
            const uint64_t stamped = settings.quick ? 200 : 1000;
            const uint64_t huge = settings.quick ? 100'000 : 1'000'000;
            return std::vector<BenchScenario>{
                {"baseline: LOAD DATA LOCAL INFILE", true, [=] { return load_data(rows); }},
                {"snapshot into a blackhole", false, [=] { return snapshot(rows, false); }},
                {"snapshot into MySQL (upsert, max-rows 5000)", false,
                 [=] { return snapshot(rows, true); }},
                {"binlog, the reader alone", false, [=] { return binlog_read(rows); }},
                {"binlog into MySQL (upsert, max-rows 5000)", false,
                 [=] { return binlog_into_mysql(rows); }},
                {"commit to visible at 500 rows/s (flush interval 20ms)", false,
                 [=] { return commit_to_visible(stamped, 500); }},
                {"binlog: one UPDATE of " + std::to_string(huge) + " rows into MySQL", false,
                 [=] { return huge_transaction(huge); }},
            };
          },
      .unavailable = [] { return no_server(true); },
  };
}

}  // namespace sluice
