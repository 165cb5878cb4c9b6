// The MySQL sink's writer and committer against a server in memory: what
// they decide, without a MariaDB. test_mysql_*.cpp run the same against one.

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <random>

#include "sluice/cli/progress.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/mysql/sink/delivery.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/statement_writer.hpp"
#include "sluice/connectors/mysql/sink/tables_sink.hpp"
#include "sluice/connectors/mysql/sink/upsert_buffer.hpp"
#include "sluice/connectors/mysql/sink/xa_committer.hpp"
#include "sluice/engine/data/value_codec.hpp"
#include "sluice/engine/graph/physical_plan.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/fake_sink_connection.hpp"
#include "sluice/tests/support.hpp"
#include "sluice/tests/test_sources.hpp"

using namespace sluice;
using testing::FakeServer;

namespace {

const Schema kNumbered = Schema::parse("id BIGINT, note STRING, PRIMARY KEY (id)");
const Schema kNamed = Schema::parse("name STRING, n BIGINT, PRIMARY KEY (name)");

struct WriterCounters {
  Counter upserts, deletes, statements, rows_affected, transactions, retries, records_send,
      bytes_send, records_send_errors;
  StatementWriter::Counters pointers() {
    return {&upserts,      &deletes,      &statements, &rows_affected,
            &transactions, &records_send, &bytes_send, &records_send_errors};
  }
};

// The fake's table as "key=value" lines, in key order.
std::vector<std::string> contents(const std::map<std::string, Row>& table) {
  std::vector<std::string> out;
  for (const auto& [key, row] : table) out.push_back(key + "=" + row.fields[1].to_string());
  return out;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

TEST_CASE("the MySQL sink runs in a task of its own: its input works while it waits on the server",
          "[sink-parts]") {
  MySqlSinkOptions options;
  options.table = "t";
  JobGraph graph("own-task");
  graph.source("gen", datagen_source({.schema = kNumbered})).sink("mysql", mysql_sink(options));
  const PhysicalPlan plan = build_plan(graph, RuntimeOptions::without_checkpoints());
  REQUIRE(plan.chains.size() == 2);
  CHECK(plan.chain_name(graph, 1) == "mysql");
  CHECK(mysql_tables_sink(options, {{"t", kNumbered}}, {{.table = "t"}}, false).waits_on_io);
}

TEST_CASE("statements stay within half the server's packet limit and 2000 rows", "[sink-parts]") {
  FakeServer server;
  server.max_allowed_packet = 64 * 1024;  // 32 KiB per statement
  WriterCounters counters;
  StatementWriter writer("t", kNumbered, {0}, true, 0, counters.pointers());
  writer.set_max_allowed_packet(server.max_allowed_packet);
  UpsertBuffer buffer(kNumbered, {0}, false);
  for (int64_t id = 0; id < 300; ++id)
    buffer.add(Row(RowKind::kInsert, {id, std::string(1000, 'x')}));
  for (int64_t id = 300; id < 5000; ++id) buffer.add(Row(RowKind::kInsert, {id, Value()}));
  auto connection = server.connect();
  writer.write(*connection, buffer.rows(), buffer.runs(false));
  CHECK(server.table.size() == 5000);
  size_t rows = 0;
  for (const auto& call : server.calls("UPSERT")) {
    const size_t n = std::stoul(call.substr(call.rfind(' ') + 1));
    CHECK(n <= 2000);
    rows += n;
  }
  CHECK(rows == 5000);
  // 300 rows of ~1 KB need at least 10 statements of 32 KiB; the other
  // 4700 small ones at least 3 of 2000 rows.
  CHECK(counters.statements.get() >= 13);
  CHECK(counters.statements.get() == server.calls("UPSERT").size());
  // Flink's sink metrics: every row once, and at least the 300 KB of text.
  CHECK(counters.records_send.get() == 5000);
  CHECK(counters.bytes_send.get() >= 300 * 1000);
  CHECK(counters.records_send_errors.get() == 0);
}

TEST_CASE(
    "without a key, a flush deletes and then inserts, per row image, what its changes add or "
    "take away in all",
    "[sink-parts]") {
  const Schema rows = Schema::parse("id BIGINT, note STRING");
  FakeServer server;
  WriterCounters counters;
  StatementWriter writer("t", rows, {}, false, 0, counters.pointers());
  Batch batch(rows);
  const auto add = [&](RowKind kind, Value id, Value note) {
    batch.append(Row(kind, {std::move(id), std::move(note)}));
  };
  add(RowKind::kInsert, 1, "a");  // twice, and one deleted: one in all
  add(RowKind::kInsert, 1, "a");
  add(RowKind::kDelete, 1, "a");
  add(RowKind::kDelete, 2, "b");  // deleted, then there again: as it was
  add(RowKind::kInsert, 2, "b");
  add(RowKind::kUpdateBefore, 3, "c");  // an update: one row less, one more
  add(RowKind::kUpdateAfter, 3, "d");
  add(RowKind::kDelete, 4, Value());  // NULL is a value like any other
  add(RowKind::kDelete, 4, Value());
  add(RowKind::kInsert, 1, "A");  // another image than "a"
  auto connection = server.connect();
  writer.append(*connection, batch);
  std::vector<std::string> statements;
  for (const std::string& call : server.log) {
    const size_t at = call.find(' ');
    statements.push_back(call.substr(at + 1));
  }
  CHECK(statements == std::vector<std::string>{"CONNECT", "DELETE 3", "UPSERT 3"});
  CHECK(counters.deletes.get() == 3);
  CHECK(counters.upserts.get() == 3);
}

TEST_CASE("a flush that loses its connection runs whole again on a new one", "[sink-parts]") {
  FakeServer server;
  WriterCounters counters;
  StatementWriter writer("t", kNumbered, {0}, true, 0, counters.pointers());
  UpsertBuffer buffer(kNumbered, {0}, false);
  buffer.add(Row(RowKind::kInsert, {int64_t{1}, "a"}));
  buffer.add(Row(RowKind::kInsert, {int64_t{2}, "b"}));
  buffer.add(Row(RowKind::kDelete, {int64_t{3}, Value()}));
  server.table.insert_or_assign("3", Row(RowKind::kInsert, {int64_t{3}, "old"}));
  server.fail_next("UPSERT", 2013);  // after the delete, before the commit
  const auto runs = buffer.runs(false);
  std::unique_ptr<SinkConnection> connection;
  const RetryPolicy policy{
      .max_retries = 3, .backoff = std::chrono::milliseconds(1), .retries = &counters.retries};
  writer.in_transaction(connection, server.connector(), policy, "table 't'",
                        [&](SinkConnection& c) { writer.write(c, buffer.rows(), runs); });
  CHECK(contents(server.table) == std::vector<std::string>{"1=a", "2=b"});
  CHECK(counters.retries.get() == 1);
  CHECK(counters.transactions.get() == 1);
  CHECK(server.connections_made == 2);
  // The failed upserts' rows count as send errors; the deletes of both
  // attempts as sent (1 + 1), and the upserts that went through.
  CHECK(counters.records_send_errors.get() == 2);
  CHECK(counters.records_send.get() == 4);
  CHECK(server.calls("START TRANSACTION") ==
        std::vector<std::string>{"c1 START TRANSACTION", "c2 START TRANSACTION"});
}

namespace {

// An at-least-once delivery of kNumbered rows into the fake's table.
struct AtLeastOnceFixture {
  explicit AtLeastOnceFixture(FakeServer& server)
      : delivery(writer, server.connect(), server.connector(),
                 {.max_retries = 3,
                  .backoff = std::chrono::milliseconds(1),
                  .retries = &counters.retries},
                 "table 't'") {}

  // Buffers `rows` and flushes them, as max-rows would.
  size_t flush(std::initializer_list<Row> rows) {
    for (const Row& row : rows) buffer.add(row);
    return delivery.flush(buffer, false);
  }

  WriterCounters counters;
  StatementWriter writer{"t", kNumbered, {0}, true, 0, counters.pointers()};
  SinkBuffer buffer{kNumbered, {0}, false, true};
  AtLeastOnceDelivery delivery;
};

Row change(RowKind kind, int64_t id, const char* note = nullptr) {
  return Row(kind, {id, note == nullptr ? Value() : Value(std::string(note))});
}

// The fake's log without its connections: what ran, in order.
std::vector<std::string> statements(const FakeServer& server) {
  std::vector<std::string> out;
  for (const std::string& line : server.log) {
    if (line.find("CONNECT") == std::string::npos) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("at least once, a flush's commit runs while the next flush writes on another connection",
          "[sink-parts]") {
  FakeServer server;
  AtLeastOnceFixture f(server);
  CHECK(f.flush({change(RowKind::kInsert, 1, "a"), change(RowKind::kInsert, 2, "b")}) == 2);
  CHECK(f.buffer.empty());  // the rows are the delivery's until the commit is known
  CHECK(server.table.empty());
  CHECK(f.flush({change(RowKind::kUpdateAfter, 1, "c"), change(RowKind::kDelete, 2)}) == 2);
  CHECK(contents(server.table) == std::vector<std::string>{"1=a", "2=b"});
  f.delivery.settle();
  CHECK(contents(server.table) == std::vector<std::string>{"1=c"});
  // The first COMMIT's answer is read after the second flush's writes,
  // before its COMMIT goes.
  CHECK(statements(server) == std::vector<std::string>{"c1 START TRANSACTION", "c1 UPSERT 2",
                                                       "c2 START TRANSACTION", "c2 DELETE 1",
                                                       "c2 UPSERT 1", "c1 COMMIT", "c2 COMMIT"});
  CHECK(f.counters.transactions.get() == 2);
  // The two connections take turns.
  CHECK(f.flush({change(RowKind::kInsert, 3, "d")}) == 1);
  f.delivery.settle();
  CHECK(contents(server.table) == std::vector<std::string>{"1=c", "3=d"});
  CHECK(server.log.back() == "c1 COMMIT");
  CHECK(server.connections_made == 2);
  CHECK(f.counters.retries.get() == 0);
}

TEST_CASE("at least once, a failed commit is written again before the flush that came after it",
          "[sink-parts]") {
  FakeServer server;
  AtLeastOnceFixture f(server);
  SECTION("found out by the next flush") {
    server.fail_next("COMMIT", 2013);
    f.flush({change(RowKind::kInsert, 1, "a"), change(RowKind::kInsert, 2, "b")});
    f.flush({change(RowKind::kDelete, 1)});
    f.delivery.settle();
    // The second flush's transaction is dropped (it could wait for the
    // lost one's locks), and both go again in order.
    CHECK(contents(server.table) == std::vector<std::string>{"2=b"});
    CHECK(statements(server) ==
          std::vector<std::string>{"c1 START TRANSACTION", "c1 UPSERT 2", "c2 START TRANSACTION",
                                   "c2 DELETE 1", "c1 COMMIT", "c3 START TRANSACTION",
                                   "c3 UPSERT 2", "c3 COMMIT", "c3 START TRANSACTION",
                                   "c3 DELETE 1", "c3 COMMIT"});
    CHECK(f.counters.transactions.get() == 2);
  }
  SECTION("found out when the sink waits for it") {
    server.fail_next("COMMIT", 1213);
    f.flush({change(RowKind::kInsert, 1, "a")});
    f.delivery.settle();
    CHECK(contents(server.table) == std::vector<std::string>{"1=a"});
    CHECK(server.calls("COMMIT") == std::vector<std::string>{"c1 COMMIT", "c2 COMMIT"});
    CHECK(f.counters.transactions.get() == 1);
  }
  SECTION("a write that fails meanwhile") {
    f.flush({change(RowKind::kInsert, 1, "a")});
    server.fail_next("UPSERT", 2013);
    f.flush({change(RowKind::kUpdateAfter, 1, "b")});
    CHECK(contents(server.table) == std::vector<std::string>{"1=b"});
    CHECK(statements(server) == std::vector<std::string>{"c1 START TRANSACTION", "c1 UPSERT 1",
                                                         "c2 START TRANSACTION", "c2 UPSERT 1",
                                                         "c1 COMMIT", "c3 START TRANSACTION",
                                                         "c3 UPSERT 1", "c3 COMMIT"});
    CHECK(f.counters.transactions.get() == 2);
  }
  CHECK(f.counters.retries.get() == 1);
}

TEST_CASE("at least once, a commit the server refuses fails the sink, and retries are counted",
          "[sink-parts]") {
  FakeServer server;
  AtLeastOnceFixture f(server);
  SECTION("an error no retry cures") {
    server.fail_next("COMMIT", 1180);  // "Got error during COMMIT"
    f.flush({change(RowKind::kInsert, 1, "a")});
    CHECK_THROWS_WITH(f.delivery.settle(), Catch::Contains("MySQL error 1180"));
  }
  SECTION("after the policy's retries") {
    for (int i = 0; i < 4; ++i) server.fail_next("COMMIT", 2013);
    f.flush({change(RowKind::kInsert, 1, "a")});
    CHECK_THROWS_WITH(f.delivery.settle(),
                      Catch::Contains("after 3 retries") && Catch::Contains("MySQL error 2013"));
    CHECK(f.counters.retries.get() == 3);
  }
  CHECK(server.table.empty());
}

TEST_CASE("at least once on connections that share a session, each flush waits for its commit",
          "[sink-parts]") {
  FakeServer server;
  server.shared_session = true;
  AtLeastOnceFixture f(server);
  f.flush({change(RowKind::kInsert, 1, "a")});
  CHECK(contents(server.table) == std::vector<std::string>{"1=a"});
  f.flush({change(RowKind::kInsert, 2, "b")});
  CHECK(contents(server.table) == std::vector<std::string>{"1=a", "2=b"});
  CHECK(server.connections_made == 1);
}

TEST_CASE("a refused value or a missing table fails at once; retries end with the server's error",
          "[sink-parts]") {
  FakeServer server;
  WriterCounters counters;
  StatementWriter writer("t", kNumbered, {0}, true, 0, counters.pointers());
  Batch rows(kNumbered);
  rows.append(Row(RowKind::kInsert, {int64_t{1}, "a"}));
  std::unique_ptr<SinkConnection> connection;
  const RetryPolicy policy{
      .max_retries = 2, .backoff = std::chrono::milliseconds(1), .retries = &counters.retries};
  const auto write = [&] {
    writer.in_transaction(connection, server.connector(), policy, "table 't'",
                          [&](SinkConnection& c) { writer.append(c, rows); });
  };
  server.fail_next("UPSERT", 1406);
  CHECK_THROWS_AS(write(), DataError);
  server.fail_next("UPSERT", 1146);
  CHECK_THROWS_AS(write(), ConfigError);
  CHECK(counters.retries.get() == 0);
  for (int i = 0; i < 3; ++i) server.fail_next("UPSERT", 2013);
  CHECK_THROWS_WITH(write(),
                    Catch::Contains("after 2 retries") && Catch::Contains("MySQL error 2013"));
  CHECK(counters.retries.get() == 2);
  CHECK(server.table.empty());
}

TEST_CASE("a refused row is named by its key and its input position", "[sink-parts]") {
  FakeServer server;
  WriterCounters counters;
  StatementWriter writer("t", kNumbered, {0}, true, 0, counters.pointers());
  writer.set_position_names(
      [](int64_t line) { return "line " + std::to_string(line) + " of f.csv"; });
  Batch rows(kNumbered);
  rows.append(Row(RowKind::kInsert, {int64_t{1}, "a"}));
  rows.set_position(0, 7);
  rows.append(Row(RowKind::kInsert, {int64_t{2}, "too long"}));
  rows.set_position(1, 9);
  Batch copied(kNumbered);  // as a sink's buffer holds them
  copied.append(rows);
  std::unique_ptr<SinkConnection> connection;
  const RetryPolicy policy{.max_retries = 0, .retries = &counters.retries};
  const auto write = [&] {
    writer.in_transaction(connection, server.connector(), policy, "table 't'",
                          [&](SinkConnection& c) { writer.append(c, copied); });
  };
  server.fail_next("UPSERT", 1406, false, " at row 2");
  CHECK_THROWS_WITH(write(), Catch::Contains("at row 2; that is the change of key id=2, from "
                                             "line 9 of f.csv"));
  // A row with no position is named by its key alone.
  Batch unplaced(kNumbered);
  unplaced.append(Row(RowKind::kInsert, {int64_t{3}, "x"}));
  copied = std::move(unplaced);
  server.fail_next("UPSERT", 1406, false, " at row 1");
  CHECK_THROWS_WITH(write(), Catch::EndsWith("that is the change of key id=3"));
}

// The rule, on random changelogs with random flush points: after the last
// flush the table equals the changes applied in order. String keys run
// against a table that ignores case, as utf8mb4_unicode_ci does.
TEST_CASE("buffer and writer leave the table as the changes applied in order", "[sink-parts]") {
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  for (const bool strings : {false, true}) {
    const Schema& schema = strings ? kNamed : kNumbered;
    const size_t value_column = 1;
    FakeServer server(strings);
    WriterCounters counters;
    StatementWriter writer("t", schema, {0}, true, 0, counters.pointers());
    UpsertBuffer buffer(schema, {0}, strings);
    std::map<std::string, Row> expected;  // the changes applied one by one
    auto connection = server.connect();
    const std::vector<std::string> names{"a", "A", "b", "B", "c"};
    const auto key = [&](int k) { return strings ? Value(names[k]) : Value(int64_t{k}); };
    const auto table_key = [&](const Value& v) {
      return strings ? lower(v.to_string()) : v.to_string();
    };
    const auto row_of = [&](RowKind kind, int k, int64_t n) {
      std::vector<Value> fields(2);
      fields[0] = key(k);
      fields[value_column] = strings ? Value(n) : Value(std::to_string(n));
      return Row(kind, std::move(fields));
    };
    const auto flush = [&](bool resolve_held) {
      writer.write(*connection, buffer.rows(), buffer.runs(resolve_held));
      buffer.clear();
    };
    for (int step = 0; step < 3000; ++step) {
      const int k = static_cast<int>(random() % names.size());
      const int64_t n = step;
      switch (random() % 4) {
        case 0:
          buffer.add(row_of(RowKind::kInsert, k, n));
          expected.insert_or_assign(table_key(key(k)), row_of(RowKind::kInsert, k, n));
          break;
        case 1:
          buffer.add(row_of(RowKind::kDelete, k, 0));
          expected.erase(table_key(key(k)));
          break;
        default: {
          // An update, with its key changed half of the time.
          const int to = random() % 2 ? k : static_cast<int>(random() % names.size());
          buffer.add(row_of(RowKind::kUpdateBefore, k, 0));
          expected.erase(table_key(key(k)));
          if (random() % 5 == 0) flush(false);  // a flush may come between -U and +U
          buffer.add(row_of(RowKind::kUpdateAfter, to, n));
          expected.insert_or_assign(table_key(key(to)), row_of(RowKind::kInsert, to, n));
        }
      }
      if (random() % 7 == 0) flush(random() % 2 == 0);
    }
    flush(true);
    CAPTURE(strings);
    CHECK(contents(server.table) == contents(expected));
  }
}

namespace {

struct CommitterCounters {
  Counter prepared, committed, recovered, rolled_back, transactions, prepared_checkpoint,
      committed_checkpoint;
  XaCommitter::Counters pointers() {
    return {&prepared,     &committed,           &recovered,           &rolled_back,
            &transactions, &prepared_checkpoint, &committed_checkpoint};
  }
};

// A committer of sink "mysql" of job "job", subtask `subtask` of `parallelism`.
struct CommitterFixture {
  CommitterFixture(FakeServer& server, int subtask = 0, int parallelism = 1)
      : committer(server.connector(), XidScheme("job", "mysql", subtask), subtask, parallelism, 0,
                  "table 't'", canceller, counters.pointers()) {}
  MySqlCanceller canceller;
  CommitterCounters counters;
  XaCommitter committer;
};

// Writes rows with ids `ids` (value: the id) into the committer's open transaction.
void write_rows(XaCommitter& committer, std::vector<int64_t> ids) {
  SinkConnection& connection = committer.open();
  Batch rows(kNumbered);
  for (int64_t id : ids) rows.append(Row(RowKind::kInsert, {id, std::to_string(id)}));
  std::vector<uint32_t> all(rows.size());
  std::iota(all.begin(), all.end(), 0);
  BulkSql upsert{
      .head = "INSERT", .columns = {0, 1}, .types = {DataType::bigint(), DataType::string()}};
  connection.execute_bulk(upsert, rows, all);
  committer.wrote(rows.rows());
}

}  // namespace

TEST_CASE(
    "while checkpoint n is prepared, n+1 writes on a second connection; each commits where it was "
    "prepared",
    "[sink-parts]") {
  FakeServer server;
  CommitterFixture f(server);
  f.committer.recover({}, server.connect());  // c1
  write_rows(f.committer, {1});
  f.committer.prepare(1);
  CHECK(f.counters.prepared_checkpoint.get() == 1);  // what the job's page shows
  CHECK(f.counters.committed_checkpoint.get() == 0);
  write_rows(f.committer, {2});  // checkpoint 1 is prepared: a second connection
  CHECK(server.calls("XA START").size() == 2);
  CHECK(server.calls("XA START")[1].starts_with("c2 "));
  // Its lock waits are short: a lock of the prepared transaction would never go.
  CHECK(server.calls("c2 SET SESSION innodb_lock_wait_timeout = 1").size() == 1);
  CHECK(server.table.empty());
  f.committer.commit_up_to(1);
  CHECK(f.counters.prepared_checkpoint.get() == 0);
  CHECK(f.counters.committed_checkpoint.get() == 1);
  CHECK(server.calls("XA COMMIT")[0].starts_with("c1 "));
  CHECK(contents(server.table) == std::vector<std::string>{"1=1"});
  f.committer.prepare(2);
  write_rows(f.committer, {3});  // back on c1, idle since its commit
  CHECK(server.calls("XA START")[2].starts_with("c1 "));
  f.committer.commit_up_to(2);
  CHECK(server.calls("XA COMMIT")[1].starts_with("c2 "));
  f.committer.prepare(3);
  f.committer.commit_up_to(3);
  CHECK(contents(server.table) == std::vector<std::string>{"1=1", "2=2", "3=3"});
  CHECK(server.connections_made == 2);
  CHECK(f.counters.committed.get() == 3);
  // Markers of transactions no restorable checkpoint lists are deleted.
  write_rows(f.committer, {4});
  CHECK(server.markers.size() == 1);
}

TEST_CASE("an aborted checkpoint's transaction is rolled back and hands back its rows in order",
          "[sink-parts]") {
  FakeServer server;
  CommitterFixture f(server);
  f.committer.recover({}, server.connect());
  write_rows(f.committer, {5, 3});
  f.committer.prepare(1);
  write_rows(f.committer, {4});
  const std::vector<Row> again = f.committer.roll_back_up_to(1);
  CHECK(f.counters.prepared_checkpoint.get() == 0);
  CHECK(f.counters.committed_checkpoint.get() == 0);
  REQUIRE(again.size() == 2);
  CHECK(again[0].fields[0].as_bigint() == 5);
  CHECK(again[1].fields[0].as_bigint() == 3);
  CHECK(server.prepared.empty());
  CHECK(f.committer.prepared().empty());
  CHECK(f.committer.has_open());  // checkpoint 2's transaction goes on
  f.committer.prepare(2);
  f.committer.commit_up_to(2);
  CHECK(contents(server.table) == std::vector<std::string>{"4=4"});
}

TEST_CASE(
    "recovery commits what the checkpoint lists once its connection left, and checks its marker",
    "[sink-parts]") {
  FakeServer server;
  std::vector<std::vector<Value>> state;
  {
    CommitterFixture crashed(server);
    crashed.committer.recover({}, server.connect());  // c1
    write_rows(crashed.committer, {1, 2});
    crashed.committer.prepare(1);
    state = crashed.committer.state();
    REQUIRE(state.size() == 1);
    // The process dies here: its connections go, the transaction stays prepared.
  }
  REQUIRE(server.prepared.size() == 1);
  SECTION("prepared: committed from the new run's connection, after c1 left") {
    CommitterFixture f(server);
    f.committer.recover(state, server.connect());
    CHECK(contents(server.table) == std::vector<std::string>{"1=1", "2=2"});
    CHECK(f.counters.recovered.get() == 1);
    const auto& log = server.log;
    const auto wait = std::find(log.begin(), log.end(), "c2 WAIT c1");
    const auto commit = std::find_if(
        log.begin(), log.end(), [](const std::string& l) { return l.starts_with("c2 XA COMMIT"); });
    CHECK(wait < commit);
    CHECK(commit != log.end());
  }
  SECTION("already committed (its marker is there): nothing to do") {
    server.commit_prepared();
    CommitterFixture f(server);
    f.committer.recover(state, server.connect());
    CHECK(server.calls("XA COMMIT").empty());
    CHECK(contents(server.table) == std::vector<std::string>{"1=1", "2=2"});
  }
  SECTION("neither prepared nor committed: the writes are lost, and recovery says so") {
    server.prepared.clear();
    CommitterFixture f(server);
    CHECK_THROWS_WITH(f.committer.recover(state, server.connect()),
                      Catch::Contains("neither prepared nor committed") && Catch::Contains("lost"));
  }
}

TEST_CASE("a transaction begins on a new connection when the idle one was lost", "[sink-parts]") {
  FakeServer server;
  CommitterFixture f(server);
  f.committer.recover({}, server.connect());  // c1, idle
  server.kill(1);                             // say, the server restarted
  write_rows(f.committer, {3});
  f.committer.prepare(1);
  f.committer.commit_up_to(1);
  CHECK(contents(server.table) == std::vector<std::string>{"3=3"});
  CHECK(server.calls("XA START").size() == 1);
  CHECK(server.calls("XA START")[0].starts_with("c2 "));
}

TEST_CASE("a transaction whose connection died after the prepare commits from another",
          "[sink-parts]") {
  FakeServer server;
  CommitterFixture f(server);
  f.committer.recover({}, server.connect());  // c1
  write_rows(f.committer, {7});
  f.committer.prepare(1);
  server.kill(1);
  f.committer.commit_up_to(1);
  CHECK(contents(server.table) == std::vector<std::string>{"7=7"});
  CHECK(server.calls("c2 WAIT c1").size() == 1);
  CHECK(server.calls("c2 XA COMMIT").size() == 1);
  CHECK(server.calls("c2 HAS MARKER").size() == 1);
}

TEST_CASE("recovery commits what is prepared, trusts markers, and fails on a lost transaction",
          "[sink-parts]") {
  using Outcome = XaRecoveryPlan::Outcome;
  XidScheme scheme("job", "mysql", 0);
  const ListedTransaction prepared{.checkpoint = 4, .xid = scheme.next(3)};
  const ListedTransaction marked{.checkpoint = 5, .xid = scheme.next(4)};
  const ListedTransaction neither{.checkpoint = 6, .xid = scheme.next(5)};
  const auto outcomes = [&](bool older) {
    const XaRecoveryPlan plan = plan_recovery({prepared, marked, neither}, {prepared.xid},
                                              {marked.xid}, older, scheme, 0, 1);
    std::vector<std::pair<int64_t, Outcome>> out;
    for (const XaRecoveryPlan::Step& step : plan.listed)
      out.emplace_back(step.transaction.checkpoint, step.outcome);
    CHECK(plan.roll_back.empty());  // what is listed is never rolled back
    return out;
  };
  CHECK(outcomes(false) == std::vector<std::pair<int64_t, Outcome>>{{4, Outcome::kCommit},
                                                                    {5, Outcome::kCommitted},
                                                                    {6, Outcome::kLost}});
  // Restored from an older checkpoint: later ones completed, so a
  // transaction neither prepared nor marked committed then.
  CHECK(outcomes(true) == std::vector<std::pair<int64_t, Outcome>>{{4, Outcome::kCommit},
                                                                   {5, Outcome::kCommitted},
                                                                   {6, Outcome::kCommittedBefore}});
}

TEST_CASE("recovery rolls back the prepared transactions a subtask owns and nothing lists",
          "[sink-parts]") {
  // An earlier run had 4 subtasks; this one has 2.
  std::vector<Xid> prepared;
  std::map<std::string, Xid> names;
  for (int subtask : {0, 1, 2, 3}) {
    names["job mysql " + std::to_string(subtask)] = XidScheme("job", "mysql", subtask).next(7);
  }
  names["job other 0"] = XidScheme("job", "other", 0).next(7);
  names["job2 mysql 0"] = XidScheme("job2", "mysql", 0).next(7);
  for (const auto& [name, xid] : names) prepared.push_back(xid);
  const auto rolled_back = [&](int subtask, const std::vector<ListedTransaction>& listed) {
    const XaRecoveryPlan plan =
        plan_recovery(listed, prepared, {}, false, XidScheme("job", "mysql", subtask), subtask, 2);
    std::vector<std::string> out;
    for (const auto& [name, xid] : names) {
      if (std::find(plan.roll_back.begin(), plan.roll_back.end(), xid) != plan.roll_back.end())
        out.push_back(name);
    }
    return out;
  };
  CHECK(rolled_back(1, {}) == std::vector<std::string>{"job mysql 1"});
  CHECK(rolled_back(0, {}) ==
        std::vector<std::string>{"job mysql 0", "job mysql 2", "job mysql 3"});
  // One the restored state lists is committed, not rolled back.
  CHECK(rolled_back(0, {{.checkpoint = 7, .xid = names.at("job mysql 0")}}) ==
        std::vector<std::string>{"job mysql 2", "job mysql 3"});
}

TEST_CASE("recovery rolls back this subtask's leftovers and, in subtask 0, vanished subtasks'",
          "[sink-parts]") {
  FakeServer server;
  // Transactions prepared by an earlier run with 4 subtasks, another sink
  // and another job, each with a row.
  std::vector<std::pair<std::string, XidScheme>> earlier;
  for (int subtask : {0, 1, 3})
    earlier.push_back({"job mysql " + std::to_string(subtask), XidScheme("job", "mysql", subtask)});
  earlier.push_back({"job other 0", XidScheme("job", "other", 0)});
  earlier.push_back({"job2 mysql 0", XidScheme("job2", "mysql", 0)});
  std::map<std::string, Xid> xids;
  int64_t id = 0;
  for (auto& [name, scheme] : earlier) {
    xids[name] = scheme.next(5);
    server.prepared.push_back(
        {xids[name], {{false, Row(RowKind::kInsert, {++id, name}), std::nullopt}}});
  }
  server.restart();
  const auto still_prepared = [&] {
    std::vector<std::string> names;
    for (const auto& [name, xid] : xids) {
      for (const auto& p : server.prepared) {
        if (p.xid == xid) names.push_back(name);
      }
    }
    return names;
  };
  CommitterFixture subtask1(server, 1, 2);
  subtask1.committer.recover({}, server.connect());
  CHECK(still_prepared() ==
        std::vector<std::string>{"job mysql 0", "job mysql 3", "job other 0", "job2 mysql 0"});
  CommitterFixture subtask0(server, 0, 2);
  subtask0.committer.recover({}, server.connect());
  CHECK(still_prepared() == std::vector<std::string>{"job other 0", "job2 mysql 0"});
  CHECK(subtask0.counters.rolled_back.get() == 2);
  CHECK(server.table.empty());
}

namespace {

const Schema kHotOrders = Schema::parse(
    "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");

// Updates and deletes over 500 keys, for ~250 ms: keys come back within a
// checkpoint or two.
DatagenOptions hot_changelog() {
  DatagenOptions gen;
  gen.schema = kHotOrders;
  gen.rows = 5000;
  gen.keys = 500;
  gen.insert_weight = 40;
  gen.update_weight = 40;
  gen.delete_weight = 20;
  gen.rate = 20'000;
  return gen;
}

// Rows as text, without their kind.
std::vector<std::string> as_text(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const Row& row : rows) {
    std::string line;
    for (const Value& v : row.fields) line += v.to_string() + " ";
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> as_text(const std::map<std::string, Row>& table) {
  std::vector<Row> rows;
  for (const auto& [key, row] : table) rows.push_back(row);
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.fields[0].as_bigint() < b.fields[0].as_bigint();
  });
  return as_text(rows);
}

// Runs `gen` through an exactly-once MySQL sink into `server`, with
// checkpoints every 20 ms that a slow sink beside it makes complete late:
// the sink goes on writing while its transactions wait, prepared.
JobResult run_exactly_once(const DatagenOptions& gen, FakeServer& server) {
  for (const Column& c : gen.schema.columns())
    server.table_info.columns.push_back({c.name, "", true});
  server.table_info.primary_key = {"id"};
  server.table_info.unique_keys = {{.name = "PRIMARY", .columns = {"id"}, .prefixes = {0}}};
  MySqlSinkOptions options;
  options.table = "t";
  options.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  options.max_rows = 20;
  const SessionConnector connect = [&server](const MySqlSession&) { return server.connect(); };
  JobGraph graph("fake-xa");
  Stream changes = graph.source("changes", datagen_source(gen));
  changes.sink("mysql", mysql_sink(options, connect)).disable_chaining();
  changes.sink("slow", testing::slow_snapshot_sink(std::chrono::milliseconds(30)))
      .disable_chaining();
  const testing::TempDir dir;
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = std::chrono::milliseconds(5);
  runtime.checkpoint_interval = std::chrono::milliseconds(20);
  runtime.checkpoint_dir = dir.path();
  return Executor(runtime).run(graph);
}

}  // namespace

TEST_CASE("exactly-once writes while a transaction is prepared, never a key it holds locked",
          "[sink-parts]") {
  FakeServer server;
  const DatagenOptions gen = hot_changelog();
  const JobResult result = run_exactly_once(gen, server);
  INFO(result.error);
  REQUIRE(result.finished());
  CHECK(server.writes_while_prepared > 0);
  CHECK(server.lock_conflicts == 0);
  CHECK(as_text(server.table) == as_text(testing::datagen_final_rows(gen)));
  CHECK(server.prepared.empty());
}

TEST_CASE(
    "exactly-once: a write that meets a prepared transaction's lock is written again after its "
    "commit",
    "[sink-parts]") {
  FakeServer server;
  // Locks no key tells of: another unique key, a trigger, a foreign key.
  for (int i = 0; i < 3; ++i) server.fail_next("UPSERT", 1205, true);
  // Each failure defers the sink's writes to a later checkpoint: a second of
  // changes leaves room for three, however slowly checkpoints complete.
  DatagenOptions gen = hot_changelog();
  gen.rows = 20'000;
  const JobResult result = run_exactly_once(gen, server);
  REQUIRE(result.finished());
  CHECK(server.pending_failures() == 0);
  CHECK(as_text(server.table) == as_text(testing::datagen_final_rows(gen)));
}

TEST_CASE("SQL in a message is cut before a clause, never inside a name", "[sink-parts]") {
  const std::string columns = "`first_column`, `second_column`, `third_column`";
  const std::string sql = "INSERT INTO `t` (" + columns +
                          ") VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE " +
                          "`first_column`=VALUES(`first_column`)";
  CHECK(shortened_sql(sql, 1000) == sql);
  CHECK(shortened_sql(sql, 100) == "INSERT INTO `t` (" + columns + ") VALUES (?, ?, ?) …");
  CHECK(shortened_sql(sql, 70) == "INSERT INTO `t` (" + columns + ") …");
  CHECK(shortened_sql(sql, 40) == "INSERT INTO `t` (`first_column`, …");
}

TEST_CASE("the progress line rates a buffering sink by what it wrote, not by what it took",
          "[sink-parts]") {
  FakeServer server;
  DatagenOptions gen = hot_changelog();
  gen.rate = 0;  // as fast as it goes: many changes per key between flushes
  for (const Column& c : gen.schema.columns())
    server.table_info.columns.push_back({c.name, "", true});
  server.table_info.unique_keys = {{.name = "PRIMARY", .columns = {"id"}, .prefixes = {0}}};
  MySqlSinkOptions options;
  options.table = "t";
  options.max_rows = 0;
  const SessionConnector connect = [&server](const MySqlSession&) { return server.connect(); };
  JobGraph graph("progress");
  graph.source("changes", datagen_source(gen)).sink("mysql", mysql_sink(options, connect));
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  REQUIRE(result.finished());
  const ProgressCounts counts = progress_counts(graph, result.metrics);
  CHECK(counts.in == result.metrics.records_in("mysql"));
  uint64_t sent = 0;
  for (const auto& task : result.metrics.tasks) {
    if (const auto it = task.counters.find("mysql.numRecordsSend"); it != task.counters.end()) {
      sent += it->second;
    }
  }
  CHECK(counts.out == sent);
  CHECK(sent < counts.in);  // the last change per key only
}
