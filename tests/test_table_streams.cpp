#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <random>

#include "sluice/connectors/basic_sinks.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;

namespace {

// Two tables of other columns, in one stream.
std::vector<TableSchema> two_tables() {
  return {{"shop.customers",
           Schema({{"id", DataType::bigint()}, {"name", DataType::string()}}, {"id"})},
          {"shop.orders", Schema({{"id", DataType::bigint()},
                                  {"amount", DataType::decimal(10, 2)},
                                  {"day", DataType::date()}},
                                 {"id"})}};
}

// The row number `i` of the stream, of table i's choosing: runs of random
// lengths of each table, so that a poll emits to both.
struct Interleaving {
  std::vector<uint32_t> table_of;
  explicit Interleaving(size_t rows, uint64_t seed) {
    std::mt19937_64 random(seed);
    uint32_t table = 0;
    while (table_of.size() < rows) {
      const size_t run = std::uniform_int_distribution<size_t>(1, 700)(random);
      for (size_t i = 0; i < run && table_of.size() < rows; ++i) table_of.push_back(table);
      table = 1 - table;
    }
  }
  Row row(size_t i) const {
    const auto n = static_cast<int64_t>(i);
    if (table_of[i] == 0) return Row(RowKind::kInsert, {n, "name " + std::to_string(n)});
    return Row(RowKind::kInsert, {n, Value(Decimal::parse("12.50", 10, 2)),
                                  Value(Date{static_cast<int32_t>(n % 1000)})});
  }
};

class TwoTableSource final : public Source {
 public:
  explicit TwoTableSource(std::shared_ptr<const Interleaving> rows) : rows_(std::move(rows)) {}
  PollResult poll_next(Collector& out) override {
    if (next_ == rows_->table_of.size()) return PollResult::kEndOfInput;
    for (int i = 0; i < 300 && next_ < rows_->table_of.size(); ++i, ++next_) {
      out.emit(rows_->table_of[next_], rows_->row(next_));
    }
    return PollResult::kMoreAvailable;
  }

 private:
  std::shared_ptr<const Interleaving> rows_;
  size_t next_ = 0;
};

SourceDef two_table_source(std::shared_ptr<const Interleaving> rows) {
  return {.output = {.mode = ChangelogMode::insert_only(), .tables = two_tables()},
          .create = [rows](const SubtaskInfo&) { return std::make_unique<TwoTableSource>(rows); },
          .max_parallelism = 1};
}

// What a sink of several tables was given: per row, its table and text,
// in order; and whether every batch's columns were its table's.
struct TableLog {
  std::mutex mutex;
  std::vector<std::pair<uint32_t, std::string>> rows;
  bool columns_matched = true;
};

class TableLogSink final : public Sink {
 public:
  explicit TableLogSink(std::shared_ptr<TableLog> log) : log_(std::move(log)) {}
  void write(Row&&) override { FAIL("write_batch() takes every batch"); }
  void write_batch(Batch& rows) override {
    std::lock_guard<std::mutex> lock(log_->mutex);
    const Schema& expected = tables_.at(rows.table()).schema;
    if (rows.schema().to_string() != expected.to_string()) log_->columns_matched = false;
    rows.for_each(
        [&](uint32_t i) { log_->rows.emplace_back(rows.table(), rows.row(i).to_string()); });
    rows.clear();
  }

 private:
  std::shared_ptr<TableLog> log_;
  const std::vector<TableSchema> tables_ = two_tables();
};

SinkDef table_log_sink(std::shared_ptr<TableLog> log) {
  return {.create = [log](const SubtaskInfo&) { return std::make_unique<TableLogSink>(log); },
          .takes_tables = true};
}

}  // namespace

TEST_CASE("a stream of several tables carries each row with its table's columns, in order",
          "[engine]") {
  const bool chaining = GENERATE(true, false);
  const size_t batch_size = GENERATE(1, 7, 256);
  const uint64_t seed = testing::test_seed();
  INFO("seed " << seed << ", chaining " << chaining << ", batch size " << batch_size);
  const auto rows = std::make_shared<const Interleaving>(20'000, seed);
  const auto log = std::make_shared<TableLog>();
  JobGraph graph("tables");
  graph.source("db", two_table_source(rows)).sink("log", table_log_sink(log));
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.chaining = chaining;
  options.batch_size = batch_size;
  const JobResult result = Executor(options).run(graph);
  REQUIRE(result.finished());
  CHECK(log->columns_matched);
  REQUIRE(log->rows.size() == rows->table_of.size());
  for (size_t i = 0; i < rows->table_of.size(); ++i) {
    REQUIRE(log->rows[i].first == rows->table_of[i]);
    REQUIRE(log->rows[i].second == rows->row(i).to_string());
  }
}

TEST_CASE("table(name) gives one table's rows to operators written for its columns", "[engine]") {
  const bool chaining = GENERATE(true, false);
  const auto rows = std::make_shared<const Interleaving>(5'000, 42);
  const auto collected = std::make_shared<CollectedRows>();
  JobGraph graph("one-table");
  Stream orders = graph.source("db", two_table_source(rows)).table("shop.orders");
  const auto id = orders.column<int64_t>("id");
  orders.map("negate", [id](RowRef row) { row[id] = -row[id]; })
      .sink("out", collect_sink(collected));
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.chaining = chaining;
  REQUIRE(Executor(options).run(graph).finished());
  std::vector<std::string> expected;
  for (size_t i = 0; i < rows->table_of.size(); ++i) {
    if (rows->table_of[i] != 1) continue;
    Row row = rows->row(i);
    row.fields[0] = Value(-static_cast<int64_t>(i));
    expected.push_back(row.to_string());
  }
  std::vector<std::string> got;
  for (const Row& row : collected->rows()) got.push_back(row.to_string());
  CHECK(got == expected);
}

TEST_CASE("validate() names a stream of several tables going where one is expected", "[engine]") {
  const auto rows = std::make_shared<const Interleaving>(10, 1);
  JobGraph graph("wrong");
  Stream db = graph.source("db", two_table_source(rows));
  db.sink("plain", blackhole_sink());
  db.table("shop.nothing").sink("nothing", blackhole_sink());
  db.sink("wide", table_log_sink(std::make_shared<TableLog>())).parallelism(2);
  const std::vector<std::string> problems = graph.validate();
  const auto has = [&](const std::string& text) {
    for (const std::string& problem : problems) {
      if (problem.find(text) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(has("operator 'plain': its input carries several tables (shop.customers, shop.orders)"));
  CHECK(has("operator 'shop.nothing': its input carries no table 'shop.nothing'"));
  CHECK(has("operator 'wide': a sink of several tables runs with parallelism 1"));
  CHECK(problems.size() == 3);
}
