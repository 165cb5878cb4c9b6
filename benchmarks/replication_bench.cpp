#include "sluice/benchmarks/replication_bench.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "sluice/benchmarks/bench_mysql.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

// The rows of the comparison.
constexpr char kColumns[] =
    "(id BIGINT PRIMARY KEY, amount DECIMAL(12,2), status VARCHAR(32), note VARCHAR(64), v INT)";
// Rows of negative id that the last transaction marks (v = -1): each sink
// subtask writes its changes in order and some of these among them, so a
// copy that holds every mark holds every change before.
constexpr int kMarks = 64;

// Rows first..last as the generator makes them, with `v`.
std::string rows_sql(uint64_t first, uint64_t last, int v) {
  return "SELECT seq, seq * 7 % 100000 / 100, ELT(1 + seq % 3, 'new', 'paid', 'shipped'), "
         "CONCAT('note of ', seq), " +
         std::to_string(v) + " FROM seq_" + std::to_string(first) + "_to_" + std::to_string(last);
}

// `table` made anew on `sql` with rows 1..rows and the marks.
void fill(MySqlConnection& sql, const std::string& table, uint64_t rows) {
  sql.execute("DROP TABLE IF EXISTS " + table);
  sql.execute("CREATE TABLE " + table + " " + kColumns);
  for (uint64_t at = 1; at <= rows; at += 100'000) {
    sql.execute("INSERT INTO " + table + " " + rows_sql(at, std::min(at + 99'999, rows), 0));
  }
  sql.execute("INSERT INTO " + table + " SELECT -seq, 0, 'mark', '', 0 FROM seq_1_to_" +
              std::to_string(kMarks));
}

std::string checksum(MySqlConnection& sql, const std::string& table) {
  return sql.query("CHECKSUM TABLE " + table).at(0).at(1).value_or("NULL");
}

// The second server, the copies' home: started once, for every benchmark
// of the group.
ThrowawayServer& target_server() {
  static ThrowawayServer server(2);
  return server;
}

std::string database() { return bench_url().database; }

MySqlConnection target_connection() {
  {
    MySqlConnection server(target_server().url("mysql"));
    server.execute("CREATE DATABASE IF NOT EXISTS " + database());
  }
  return MySqlConnection(target_server().url(database()));
}

// The source without TLS, as a replica connects by default: the two read
// the binlog alike.
MySqlUrl plain_source_url() {
  MySqlUrl url = bench_url();
  url.ssl_mode = SslMode::kDisabled;
  return url;
}

double seconds_of(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

// CPU seconds of the source server, the target server and this process (or
// its children: the tools it ran and waited for) at one moment, and of the
// calling thread, which may only watch a job that runs on threads of its own.
struct CpuClock {
  double source = 0, target = 0, self = 0, children = 0, watcher = 0;

  static CpuClock now(pid_t source_pid) {
    rusage self{}, children{}, thread{};
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    ::getrusage(RUSAGE_THREAD, &thread);
    return {process_cpu_seconds(source_pid), process_cpu_seconds(target_server().pid()),
            seconds_of(self), seconds_of(children), seconds_of(thread)};
  }
};

// Who spent the applier's CPU in cpu_per_row(): the target server (a
// replica), this process and its children (the job or tools), or this
// process but the calling thread, which only watched the job for the moment
// it caught up.
enum class Applier { kTargetServer, kProcess, kProcessButWatcher };

// What the CPU did per row between `before` and `after`, as extras of a
// sample: each server's, and the applier's (the job, a tool, or, for a
// replica, the target server itself), and the applier's share of the
// target server's.
std::map<std::string, double> cpu_per_row(const CpuClock& before, const CpuClock& after,
                                          uint64_t rows, Applier applier_is) {
  const auto per_row = [&](double seconds) { return seconds * 1e6 / static_cast<double>(rows); };
  std::map<std::string, double> extras;
  if (before.source >= 0)
    extras["CPU µs/row, source server"] = per_row(after.source - before.source);
  const double target = after.target - before.target;
  extras["CPU µs/row, target server"] = per_row(target);
  if (applier_is != Applier::kTargetServer) {
    double applier = after.self - before.self + after.children - before.children;
    if (applier_is == Applier::kProcessButWatcher) applier -= after.watcher - before.watcher;
    extras["CPU µs/row, job or tool"] = per_row(applier);
    extras["job or tool CPU / target server's"] = applier / target;
  }
  return extras;
}

void check_copy(MySqlConnection& target, const std::string& table, const std::string& want,
                const std::string& who) {
  const std::string got = checksum(target, table);
  if (got != want) {
    throw std::runtime_error(who + ": the copy of " + table +
                             " differs from the source (CHECKSUM " + got + ", the source's " +
                             want + ")");
  }
}

// Why the group cannot run here: no server, or a program it runs missing.
std::string unavailable(const std::vector<std::string>& programs) {
  if (std::string reason = no_server(true); !reason.empty()) return reason;
  for (const std::string& program : programs) {
    if (std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) != 0) {
      return program + " is not installed (scripts/setup installs it)";
    }
  }
  return "";
}

// ---- the binlog's changes ----------------------------------------------

enum class Change { kUpdates, kInserts, kDeletes, kMix };

struct Workload {
  Change change;
  uint64_t per_transaction;  // rows

  std::string name() const {
    static const char* const kNames[] = {"updates", "inserts", "deletes", "mix"};
    return kNames[static_cast<int>(change)] + std::string("-") + std::to_string(per_transaction);
  }
};

// Changes made once on the source, applied by each scenario to a copy of
// the table as it was before them.
struct Changelog {
  std::string table;
  uint64_t rows = 0;     // in the table before
  uint64_t changes = 0;  // rows changed
  BinlogPosition start, end;
  std::string checksum;  // the source table's, after
};

// The statement changing rows first..last (1-based) of `workload`: rows of
// the table, or new rows after them.
std::string change_sql(const Workload& workload, const std::string& table, uint64_t rows,
                       uint64_t first, uint64_t last, uint64_t statement) {
  Change change = workload.change;
  if (change == Change::kMix) change = static_cast<Change>(statement % 3);
  const std::string ids =
      " WHERE id BETWEEN " + std::to_string(first) + " AND " + std::to_string(last);
  switch (change) {
    case Change::kUpdates:
      return "UPDATE " + table + " SET v = v + 1, status = 'changed', amount = amount + 1" + ids;
    case Change::kInserts:
      return "INSERT INTO " + table + " " + rows_sql(rows + first, rows + last, 1);
    default:
      return "DELETE FROM " + table + ids;
  }
}

// `workload`'s changes of `changes` rows of a table of `rows`, on the
// source server, and where they lie in its binlog.
Changelog write_changelog(const Workload& workload, uint64_t rows, uint64_t changes) {
  Changelog log{.table = "replication_" + workload.name(), .rows = rows, .changes = changes};
  std::replace(log.table.begin(), log.table.end(), '-', '_');
  MySqlConnection sql(bench_url());
  sql.execute("SET SESSION sql_log_bin = 0");  // the table's rows are the copy's start
  fill(sql, log.table, rows);
  sql.execute("SET SESSION sql_log_bin = 1");
  log.start = current_binlog_position(sql);
  const uint64_t per_statement = std::min<uint64_t>(workload.per_transaction, 100);
  uint64_t statement = 0;
  for (uint64_t at = 0; at < changes; at += workload.per_transaction) {
    const bool transaction = workload.per_transaction > 1;
    if (transaction) sql.execute("START TRANSACTION");
    const uint64_t end = std::min(at + workload.per_transaction, changes);
    for (uint64_t first = at; first < end; first += per_statement) {
      sql.execute(change_sql(workload, log.table, rows, first + 1,
                             std::min(first + per_statement, end), statement++));
    }
    if (transaction) sql.execute("COMMIT");
  }
  sql.execute("UPDATE " + log.table + " SET v = -1 WHERE id < 0");
  log.end = current_binlog_position(sql);
  log.checksum = checksum(sql, log.table);
  return log;
}

// The target server as a replica of the source, from the changes' start
// until it has applied them: with `threads` parallel replication threads
// (optimistic), or one SQL thread where 0.
BenchSample replica_apply(const Changelog& log, int threads, pid_t source_pid) {
  MySqlConnection target = target_connection();
  fill(target, log.table, log.rows);
  const MySqlUrl source = bench_url();
  if (source.host.empty()) throw std::runtime_error("a replica needs SLUICE_MYSQL_URL over TCP");
  target.execute("STOP SLAVE");
  target.execute("RESET SLAVE ALL");
  target.execute("SET GLOBAL slave_parallel_threads = " + std::to_string(threads));
  target.execute("SET GLOBAL slave_parallel_mode = 'optimistic'");
  target.execute("CHANGE MASTER TO MASTER_HOST = " + target.quote(source.host) +
                 ", MASTER_PORT = " + std::to_string(source.port) +
                 ", MASTER_USER = " + target.quote(source.user) +
                 ", MASTER_PASSWORD = " + target.quote(source.password) +
                 ", MASTER_LOG_FILE = " + target.quote(log.start.file) + ", MASTER_LOG_POS = " +
                 std::to_string(log.start.offset) + ", MASTER_USE_GTID = no");
  const CpuClock before = CpuClock::now(source_pid);
  const auto began = Clock::now();
  target.execute("START SLAVE");
  const auto waited = target.query("SELECT MASTER_POS_WAIT(" + target.quote(log.end.file) + ", " +
                                   std::to_string(log.end.offset) + ", 600)");
  const double seconds = seconds_since(began);
  const CpuClock after = CpuClock::now(source_pid);
  target.execute("STOP SLAVE");
  if (!waited.at(0).at(0) || *waited.at(0).at(0) == "-1") {
    throw std::runtime_error("the replica did not reach " + log.end.to_string() +
                             "; see SHOW SLAVE STATUS on the second server");
  }
  check_copy(target, log.table, log.checksum, "the replica");
  return {log.changes, seconds, cpu_per_row(before, after, log.changes, Applier::kTargetServer)};
}

// mysql-to-mysql from the changes' start into the copy, with the job's
// default options but `parallelism` sink subtasks where above 0 and
// `row_events`, until the copy holds every mark.
BenchSample sluice_apply(const Changelog& log, int parallelism, pid_t source_pid,
                         MySqlSinkOptions::RowEvents row_events = {}) {
  MySqlConnection target = target_connection();
  fill(target, log.table, log.rows);
  MySqlCdcOptions source;
  source.url = plain_source_url();
  source.tables = {log.table};
  source.startup = MySqlCdcOptions::Startup::kPosition;
  source.position = log.start;
  MySqlConnection reader(source.url);
  MySqlSinkOptions sink;
  sink.url = target_server().url(database());
  sink.table = log.table;
  sink.max_rows = MySqlSinkOptions::kReplicationMaxRows;  // as mysql-to-mysql's
  if (parallelism > 0) sink.parallelism = parallelism;
  sink.row_events = row_events;
  JobGraph graph("replication-bench");
  graph.source("mysql-cdc", mysql_cdc_source(source, {capture_table(reader, log.table)}))
      .sink("mysql", mysql_sink(sink));
  const std::string marked = "SELECT COUNT(*) FROM " + log.table + " WHERE id < 0 AND v = -1";
  const CpuClock before = CpuClock::now(source_pid);
  // Without checkpoints (as a replica keeps none): at-least-once, flushed
  // at the engine's default interval.
  const double seconds = run_until(
      graph, RuntimeOptions::without_checkpoints(),
      [&] { return target.query(marked).at(0).at(0) == std::to_string(kMarks); },
      std::chrono::milliseconds(5), 600, "mysql-to-mysql of " + log.table);
  const CpuClock after = CpuClock::now(source_pid);
  check_copy(target, log.table, log.checksum, "mysql-to-mysql");
  return {log.changes, seconds,
          cpu_per_row(before, after, log.changes, Applier::kProcessButWatcher)};
}

Benchmark apply_benchmark(Workload workload) {
  return {
      .name = "replication-" + workload.name(),
      .group = "replication",
      .description =
          "the binlog's changes (" + workload.name() + ": rows changed, in transactions of " +
          std::to_string(workload.per_transaction) +
          ") applied to a copy on a second server by mysql-to-mysql and by that server as a "
          "replica of the first, both reading the binlog without TLS; rows/s, and CPU per row "
          "of the servers and of the job",
      .scenarios =
          [workload](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 20'000 : 500'000;
            // A transaction a row: the source commits a few thousand a second.
            const uint64_t changes = workload.per_transaction == 1 ? rows / 10 : rows;
            auto log = std::make_shared<std::optional<Changelog>>();
            const pid_t pid = server_pid(bench_url());
            const auto changelog = [=]() -> const Changelog& {
              if (!*log) *log = write_changelog(workload, rows, changes);
              return **log;
            };
            return std::vector<BenchScenario>{
                {"baseline: replica, one SQL thread", true,
                 [=] { return replica_apply(changelog(), 0, pid); }},
                {"baseline: replica, 4 parallel threads", true,
                 [=] { return replica_apply(changelog(), 4, pid); }},
                {"mysql-to-mysql, default options", false,
                 [=] { return sluice_apply(changelog(), 0, pid); }},
                {"mysql-to-mysql, statements (sink.row-events=off)", false,
                 [=] {
                   return sluice_apply(changelog(), 0, pid, MySqlSinkOptions::RowEvents::kOff);
                 }},
                {"mysql-to-mysql, sink.parallelism 2", false,
                 [=] { return sluice_apply(changelog(), 2, pid); }},
            };
          },
      .unavailable =
          [] {
            return unavailable({"mariadb-install-db", "mariadbd"});
          },
  };
}

// ---- a snapshot copy -----------------------------------------------------

constexpr char kSnapshotTable[] = "replication_snapshot";

// Runs `command` through the shell; throws naming `what` if it fails.
void run_command(const std::string& command, const std::string& what) {
  if (std::system(command.c_str()) != 0) throw std::runtime_error(what + " failed: " + command);
}

std::string source_login() {
  const MySqlUrl url = bench_url();
  return " --host=" + url.host + " --port=" + std::to_string(url.port) + " --user=" + url.user +
         " --password=" + url.password;
}

std::filesystem::path temporary(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("sluice-" + name + "-" + std::to_string(::getpid()));
}

// The source table of `rows` rows, made once.
uint64_t snapshot_source(uint64_t rows) {
  static uint64_t made = 0;
  if (made != rows) {
    MySqlConnection sql(bench_url());
    sql.execute("SET SESSION sql_log_bin = 0");  // no binlog reader needs them
    fill(sql, kSnapshotTable, rows);
    made = rows;
  }
  return rows + kMarks;
}

// Times `copy` into the target server, where the table is made empty
// first (`make_table`) or dropped for a tool that makes it, and checks the
// copy.
BenchSample time_copy(uint64_t rows, bool make_table, pid_t source_pid, const std::string& who,
                      const std::function<void()>& copy) {
  const uint64_t copied = snapshot_source(rows);
  std::string want;
  {
    MySqlConnection source(bench_url());
    want = checksum(source, kSnapshotTable);
  }
  MySqlConnection target = target_connection();
  target.execute(std::string("DROP TABLE IF EXISTS ") + kSnapshotTable);
  if (make_table) target.execute(std::string("CREATE TABLE ") + kSnapshotTable + " " + kColumns);
  const CpuClock before = CpuClock::now(source_pid);
  const auto began = Clock::now();
  copy();
  const double seconds = seconds_since(began);
  const CpuClock after = CpuClock::now(source_pid);
  check_copy(target, kSnapshotTable, want, who);
  return {copied, seconds, cpu_per_row(before, after, copied, Applier::kProcess)};
}

BenchSample mydumper_copy(uint64_t rows, pid_t source_pid) {
  const std::filesystem::path dump = temporary("mydumper");
  const auto copy = [&] {
    std::filesystem::remove_all(dump);
    run_command("mydumper" + source_login() + " --database=" + database() +
                    " --tables-list=" + kSnapshotTable +
                    " --threads=2 --rows=50000 --outputdir=" + dump.string() + " >/dev/null 2>&1",
                "mydumper");
    run_command("myloader --socket=" + target_server().socket().string() +
                    " --user=root --threads=2 --overwrite-tables --directory=" + dump.string() +
                    " >/dev/null 2>&1",
                "myloader");
  };
  BenchSample sample = time_copy(rows, false, source_pid, "mydumper | myloader", copy);
  std::filesystem::remove_all(dump);
  return sample;
}

BenchSample mariadb_dump_copy(uint64_t rows, pid_t source_pid) {
  return time_copy(rows, false, source_pid, "mariadb-dump | mariadb", [&] {
    run_command("mariadb-dump --no-defaults --single-transaction" + source_login() + " " +
                    database() + " " + kSnapshotTable + " | mariadb --no-defaults --socket=" +
                    target_server().socket().string() + " --user=root " + database(),
                "mariadb-dump | mariadb");
  });
}

// LOAD DATA LOCAL INFILE of the rows from a file made before: the fastest
// a client can hand rows to the server.
BenchSample load_data_copy(uint64_t rows, pid_t source_pid) {
  snapshot_source(rows);
  const std::filesystem::path file = temporary("rows.tsv");
  {
    MySqlConnection source(bench_url());
    std::ofstream out(file);
    for (const auto& row : source.query(std::string("SELECT * FROM ") + kSnapshotTable)) {
      for (size_t c = 0; c < row.size(); ++c) out << (c ? "\t" : "") << row[c].value_or("\\N");
      out << "\n";
    }
  }
  BenchSample sample = time_copy(rows, true, source_pid, "LOAD DATA", [&] {
    MySqlConnection target(target_server().url(database()), MySqlSession{.local_infile = true});
    target.execute("LOAD DATA LOCAL INFILE " + target.quote(file.string()) + " INTO TABLE " +
                   kSnapshotTable);
  });
  std::filesystem::remove(file);
  return sample;
}

// mysql-to-mysql's snapshot alone (the job ends after it), with the job's
// default options but `parallelism` sink subtasks where above 0.
BenchSample sluice_copy(uint64_t rows, int parallelism, pid_t source_pid) {
  return time_copy(rows, true, source_pid, "mysql-to-mysql", [&] {
    MySqlCdcOptions source;
    source.url = plain_source_url();
    source.tables = {kSnapshotTable};
    source.startup = MySqlCdcOptions::Startup::kSnapshot;
    // The table's columns read as the job reads them, over its source's URL.
    MySqlConnection reader(source.url);
    MySqlSinkOptions sink;
    sink.url = target_server().url(database());
    sink.table = kSnapshotTable;
    sink.max_rows = MySqlSinkOptions::kReplicationMaxRows;  // as mysql-to-mysql's
    if (parallelism > 0) sink.parallelism = parallelism;
    JobGraph graph("replication-bench");
    graph.source("mysql-cdc", mysql_cdc_source(source, {capture_table(reader, kSnapshotTable)}))
        .sink("mysql", mysql_sink(sink));
    const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
    if (!result.finished()) throw std::runtime_error("the snapshot copy failed: " + result.error);
  });
}

Benchmark snapshot_benchmark() {
  return {
      .name = "replication-snapshot",
      .group = "replication",
      .description =
          "a table copied to an empty one on a second server: mysql-to-mysql's snapshot, "
          "mydumper | myloader (2 threads each, chunks of 50,000 rows), mariadb-dump | mariadb, "
          "and LOAD DATA LOCAL INFILE of a file made before (the limit); rows/s, and CPU per "
          "row of the servers and of the job or tools",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 20'000 : 500'000;
            const pid_t pid = server_pid(bench_url());
            return std::vector<BenchScenario>{
                {"baseline: mydumper | myloader", true, [=] { return mydumper_copy(rows, pid); }},
                {"baseline: LOAD DATA LOCAL INFILE", true,
                 [=] { return load_data_copy(rows, pid); }},
                {"mariadb-dump | mariadb", false, [=] { return mariadb_dump_copy(rows, pid); }},
                {"mysql-to-mysql, default options", false,
                 [=] { return sluice_copy(rows, 0, pid); }},
                {"mysql-to-mysql, sink.parallelism 2", false,
                 [=] { return sluice_copy(rows, 2, pid); }},
            };
          },
      .unavailable =
          [] {
            return unavailable({"mariadb-install-db", "mariadbd", "mydumper", "myloader",
                                "mariadb-dump", "mariadb"});
          },
  };
}

}  // namespace

std::vector<Benchmark> replication_benchmarks() {
  std::vector<Benchmark> out;
  for (const uint64_t per_transaction : {1000, 1}) {
    for (const Change change :
         {Change::kUpdates, Change::kInserts, Change::kDeletes, Change::kMix}) {
      out.push_back(apply_benchmark({change, per_transaction}));
    }
  }
  out.push_back(snapshot_benchmark());
  return out;
}

}  // namespace sluice
