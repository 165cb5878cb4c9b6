#include "sluice/benchmarks/mysql_bench.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "sluice/benchmarks/bench_mysql.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/bulk_statement.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

const Schema kOrders = Schema::parse(
    "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
constexpr char kTable[] = "bench_orders";
constexpr char kTableDefinition[] =
    "id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2), status VARCHAR(20)";

// An empty bench_orders table.
std::unique_ptr<MySqlConnection> fresh_table() {
  auto connection =
      std::make_unique<MySqlConnection>(bench_url(), MySqlSession{.local_infile = true});
  connection->execute(std::string("CREATE TABLE IF NOT EXISTS ") + kTable + " (" +
                      kTableDefinition + ")");
  connection->execute(std::string("TRUNCATE TABLE ") + kTable);
  return connection;
}

std::vector<Row> changes(const DatagenOptions& gen) {
  std::vector<Row> rows;
  ChangeGenerator generator(gen, 0, 1);
  Row out[2];
  while (const int n = generator.next(out)) {
    for (int i = 0; i < n; ++i) rows.push_back(std::move(out[i]));
  }
  return rows;
}

// How a sink scenario writes, beyond max-rows.
struct SinkSetup {
  MySqlSinkOptions::Delivery delivery = MySqlSinkOptions::Delivery::kAtLeastOnce;
  int parallelism = 1;
};

BenchSample sink_run(const DatagenOptions& gen, size_t max_rows, SinkSetup setup = {}) {
  fresh_table();
  MySqlSinkOptions options;
  options.url = bench_url();
  options.table = kTable;
  options.max_rows = max_rows;
  options.delivery = setup.delivery;
  JobGraph graph("mysql-bench");
  graph.source("datagen", datagen_source(gen))
      .sink("mysql", mysql_sink(options))
      .parallelism(setup.parallelism);
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = std::chrono::milliseconds(0);
  const auto state =
      std::filesystem::temp_directory_path() / ("sluice-xa-bench-" + std::to_string(::getpid()));
  if (setup.delivery == MySqlSinkOptions::Delivery::kExactlyOnce) {
    runtime.checkpoint_interval = std::chrono::milliseconds(100);
    runtime.checkpoint_dir = state;
  }
  const JobResult result = Executor(runtime).run(graph);
  std::filesystem::remove_all(state);
  if (!result.finished()) throw std::runtime_error("mysql bench run failed: " + result.error);
  const JobMetrics& m = result.metrics;
  uint64_t flushes = 0;
  for (const char* t : {"max-rows", "signal", "barrier", "close"})
    flushes += m.counter(std::string("mysql.flushes.") + t);
  const double per_flush = static_cast<double>(std::max<uint64_t>(flushes, 1));
  return {m.records_in("mysql"),
          std::chrono::duration<double>(result.duration).count(),
          {{"input records per flush", static_cast<double>(m.records_in("mysql")) / per_flush},
           {"rows written per flush (distinct keys)",
            static_cast<double>(m.counter("mysql.keys")) / per_flush},
           {"statements per flush", static_cast<double>(m.counter("mysql.statements")) / per_flush},
           {"checkpoints completed", static_cast<double>(m.checkpoints_completed())},
           {"share of the run spent flushing",
            static_cast<double>(m.counter("mysql.flush-micros")) / 1e6 /
                std::chrono::duration<double>(result.duration).count()}}};
}

BenchSample load_data(const DatagenOptions& gen) {
  const std::vector<Row> rows = changes(gen);
  const auto file = std::filesystem::temp_directory_path() /
                    ("sluice-load-" + std::to_string(::getpid()) + ".tsv");
  {
    std::ofstream out(file);
    for (const Row& row : rows) {
      for (size_t c = 0; c < row.fields.size(); ++c)
        out << (c ? "\t" : "") << row.fields[c].to_string();
      out << "\n";
    }
  }
  auto connection = fresh_table();
  const auto start = Clock::now();
  connection->execute("LOAD DATA LOCAL INFILE " + connection->quote(file.string()) +
                      " INTO TABLE " + kTable);
  const double seconds = seconds_since(start);
  std::filesystem::remove(file);
  return {rows.size(), seconds, {}};
}

// One autocommitted upsert per change, for the first `limit` changes (row by
// row is slow: a sample is enough for its rate).
BenchSample row_by_row(const DatagenOptions& gen, size_t limit) {
  std::vector<Row> changed = changes(gen);
  changed.resize(std::min(changed.size(), limit));
  Batch rows(gen.schema);
  for (const Row& row : changed) rows.append(row);
  auto connection = fresh_table();
  BulkStatement upsert(
      *connection,
      std::string("INSERT INTO ") + kTable +
          " (id, customer, amount, status) VALUES (?,?,?,?) ON DUPLICATE KEY UPDATE "
          "customer=VALUES(customer), amount=VALUES(amount), status=VALUES(status)",
      {DataType::bigint(), DataType::bigint(), DataType::decimal(10, 2), DataType::string()});
  BulkStatement remove(*connection, std::string("DELETE FROM ") + kTable + " WHERE id=?",
                       {DataType::bigint()});
  const std::vector<size_t> all = {0, 1, 2, 3}, key = {0};
  const auto start = Clock::now();
  for (uint32_t row = 0; row < rows.size(); ++row) {
    const uint32_t one[] = {row};
    if (rows.kind(row) == RowKind::kDelete) {
      remove.execute(rows, one, key);
    } else if (rows.kind(row) != RowKind::kUpdateBefore) {
      upsert.execute(rows, one, all);
    }
  }
  return {rows.size(), seconds_since(start), {}};
}

DatagenOptions distinct_keys(uint64_t rows) {
  DatagenOptions gen;
  gen.schema = kOrders;
  gen.rows = rows;
  return gen;
}

DatagenOptions hot_keys(uint64_t rows) {
  DatagenOptions gen;
  gen.schema = kOrders;
  gen.rows = rows;
  gen.keys = 100;
  gen.insert_weight = 5;
  gen.update_weight = 90;
  gen.delete_weight = 5;
  gen.skew = DatagenOptions::Skew::kHot;
  return gen;
}

}  // namespace

Benchmark mysql_xa_benchmark() {
  return {
      .name = "mysql-xa",
      .description =
          "200k changes to 10k keys (I:50,U:40,D:10), exactly-once (an XA transaction "
          "per 100 ms checkpoint and subtask) vs at-least-once, at sink parallelism 1 and 2",
      .scenarios =
          [](const BenchSettings& settings) {
            DatagenOptions gen = hot_keys(settings.quick ? 20'000 : 200'000);
            gen.keys = 10'000;
            gen.insert_weight = 50;
            gen.update_weight = 40;
            gen.delete_weight = 10;
            gen.skew = DatagenOptions::Skew::kUniform;
            constexpr auto kExactlyOnce = MySqlSinkOptions::Delivery::kExactlyOnce;
            return std::vector<BenchScenario>{
                {"baseline: at-least-once", true, [=] { return sink_run(gen, 5000); }},
                {"exactly-once", false,
                 [=] { return sink_run(gen, 5000, {.delivery = kExactlyOnce}); }},
                {"baseline: at-least-once, sink.parallelism 2", true,
                 [=] { return sink_run(gen, 5000, {.parallelism = 2}); }},
                {"exactly-once, sink.parallelism 2", false,
                 [=] { return sink_run(gen, 5000, {.delivery = kExactlyOnce, .parallelism = 2}); }},
            };
          },
      .unavailable = [] { return no_server(false); },
  };
}

Benchmark mysql_upsert_benchmark() {
  return {
      .name = "mysql-upsert",
      .description = "200k distinct-key upserts into MariaDB",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 20'000 : 200'000;
            const DatagenOptions gen = distinct_keys(rows);
            return std::vector<BenchScenario>{
                {"baseline: LOAD DATA LOCAL INFILE", true, [=] { return load_data(gen); }},
                {"baseline: row by row, autocommit", true,
                 [=] { return row_by_row(gen, settings.quick ? 2'000 : 10'000); }},
                {"sink, upsert mode (max-rows 5000)", false, [=] { return sink_run(gen, 5000); }},
            };
          },
      .unavailable = [] { return no_server(false); },
  };
}

Benchmark mysql_hotkey_benchmark() {
  return {
      .name = "mysql-hotkey",
      .description = "200k changes to 100 keys (90% updates) into MariaDB",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 20'000 : 200'000;
            const DatagenOptions gen = hot_keys(rows);
            return std::vector<BenchScenario>{
                {"baseline: row by row, autocommit", true,
                 [=] { return row_by_row(gen, settings.quick ? 2'000 : 10'000); }},
                {"sink, upsert mode (max-rows 10000)", false,
                 [=] { return sink_run(gen, 10'000); }},
            };
          },
      .unavailable = [] { return no_server(false); },
  };
}

}  // namespace sluice
