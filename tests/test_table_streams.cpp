#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <random>

#include "sluice/connectors/basic/sinks.hpp"
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

// shop.orders with a column more, "note", from row kChangeAt of the stream on.
constexpr size_t kChangeAt = 3001;
std::shared_ptr<const SchemaChange> orders_with_note() {
  auto change = std::make_shared<SchemaChange>();
  change->table = 1;
  change->after = {"shop.orders", Schema({{"id", DataType::bigint()},
                                          {"amount", DataType::decimal(10, 2)},
                                          {"day", DataType::date()},
                                          {"note", DataType::string()}},
                                         {"id"})};
  change->statement = "ALTER TABLE orders ADD note TEXT";
  return change;
}

Row with_note(Row row) {
  row.fields.push_back(Value("note"));
  return row;
}

// Emits the interleaving's rows; with `change`, shop.orders changes its
// columns before row kChangeAt, in the middle of a poll.
class TwoTableSource final : public Source {
 public:
  TwoTableSource(std::shared_ptr<const Interleaving> rows, bool change)
      : rows_(std::move(rows)), change_(change) {}
  PollResult poll_next(Collector& out) override {
    if (next_ == rows_->table_of.size()) return PollResult::kEndOfInput;
    for (int i = 0; i < 300 && next_ < rows_->table_of.size(); ++i, ++next_) {
      if (change_ && next_ == kChangeAt) out.change_schema(orders_with_note());
      const uint32_t table = rows_->table_of[next_];
      const bool changed = change_ && table == 1 && next_ >= kChangeAt;
      out.emit(table, changed ? with_note(rows_->row(next_)) : rows_->row(next_));
    }
    return PollResult::kMoreAvailable;
  }

 private:
  std::shared_ptr<const Interleaving> rows_;
  const bool change_;
  size_t next_ = 0;
};

SourceDef two_table_source(std::shared_ptr<const Interleaving> rows, bool change = false) {
  return {
      .output = {.mode = ChangelogMode::insert_only(), .tables = two_tables()},
      .create = [rows, change](
                    const SubtaskInfo&) { return std::make_unique<TwoTableSource>(rows, change); },
      .max_parallelism = 1};
}

// What a sink of several tables was given: per row, its table and text,
// in order, a schema change as table 99 and its statement; and whether
// every batch's columns were its table's at that point.
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
  void on_schema_change(const SchemaChange& change) override {
    std::lock_guard<std::mutex> lock(log_->mutex);
    tables_.at(change.table) = change.after;
    log_->rows.emplace_back(99, change.statement);
  }

 private:
  std::shared_ptr<TableLog> log_;
  std::vector<TableSchema> tables_ = two_tables();
};

// An operator of a stream of several tables that passes everything on.
class PassThrough final : public Operator {
 public:
  void process_batch(Batch& rows, Collector& out) override { out.emit_batch(rows); }
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

TEST_CASE("a schema change travels in order with the rows, which take the new columns after it",
          "[engine]") {
  const bool chaining = GENERATE(true, false);
  const size_t batch_size = GENERATE(1, 256);
  INFO("chaining " << chaining << ", batch size " << batch_size);
  const auto rows = std::make_shared<const Interleaving>(8'000, 7);
  const auto log = std::make_shared<TableLog>();
  JobGraph graph("schema-change");
  graph.source("db", two_table_source(rows, true))
      .transform("pass", OperatorDef{.create = [](const SubtaskInfo&) -> std::unique_ptr<Operator> {
                                       return std::make_unique<PassThrough>();
                                     },
                                     .takes_tables = true})
      .sink("log", table_log_sink(log));
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.chaining = chaining;
  options.batch_size = batch_size;
  const JobResult result = Executor(options).run(graph);
  INFO(result.error);
  REQUIRE(result.finished());
  CHECK(log->columns_matched);
  std::vector<std::pair<uint32_t, std::string>> expected;
  for (size_t i = 0; i < rows->table_of.size(); ++i) {
    if (i == kChangeAt) expected.emplace_back(99, orders_with_note()->statement);
    const bool changed = rows->table_of[i] == 1 && i >= kChangeAt;
    expected.emplace_back(rows->table_of[i],
                          (changed ? with_note(rows->row(i)) : rows->row(i)).to_string());
  }
  CHECK(log->rows == expected);
}

TEST_CASE("table(name) fails naming the change when its table changes its columns", "[engine]") {
  const auto rows = std::make_shared<const Interleaving>(8'000, 7);
  const RuntimeOptions options = RuntimeOptions::without_checkpoints();
  JobGraph graph("one-table-changed");
  graph.source("db", two_table_source(rows, true))
      .table("shop.customers")  // not the one that changes
      .sink("customers", blackhole_sink());
  REQUIRE(Executor(options).run(graph).finished());

  JobGraph changed("orders-changed");
  changed.source("db", two_table_source(rows, true))
      .table("shop.orders")
      .sink("orders", blackhole_sink());
  const JobResult result = Executor(options).run(changed);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK_THAT(result.error, Catch::Contains("table 'shop.orders' changed its columns (ALTER TABLE "
                                           "orders ADD note TEXT)"));
}
