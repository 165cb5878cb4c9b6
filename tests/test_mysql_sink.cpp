#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <thread>

#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/mysql/collation.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"
#include "sluice/tests/test_sources.hpp"

using namespace sluice;
using namespace std::chrono_literals;
using testing::TestTable;

namespace {

const Schema kAccounts = Schema::parse("id BIGINT, balance BIGINT, PRIMARY KEY (id)");
constexpr char kAccountsTable[] = "id BIGINT PRIMARY KEY, balance BIGINT";

using TextRows = std::vector<std::vector<std::optional<std::string>>>;

Row change(RowKind kind, int64_t id) { return Row(kind, {id, Value()}); }
Row change(RowKind kind, int64_t id, int64_t balance) { return Row(kind, {id, balance}); }

struct SinkRun {
  JobResult result;
  uint64_t counter(const std::string& name) const {
    return result.metrics.counter("mysql." + name);
  }
};

SinkRun run_into(TestTable& table, std::vector<Row> rows, size_t max_rows,
                 RuntimeOptions runtime = RuntimeOptions::without_checkpoints(),
                 testing::IdleUntil idle = {}, const Schema& schema = kAccounts) {
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  options.max_rows = max_rows;
  JobGraph graph("mysql-test");
  graph.source("rows", testing::rows_source(schema, ChangelogMode::all(), std::move(rows), idle))
      .sink("mysql", mysql_sink(options));
  if (runtime.checkpoint_interval.count() == 0) runtime.flush_interval = 0ms;
  testing::TempDir state;
  runtime.checkpoint_dir = state.path();
  return {Executor(runtime).run(graph)};
}

uint64_t all_flushes(const SinkRun& run) {
  return run.counter("flushes.max-rows") + run.counter("flushes.signal") +
         run.counter("flushes.barrier") + run.counter("flushes.close");
}

}  // namespace

TEST_CASE("seed A: insert, delete, insert, update of one key flush as one upsert", "[mysql]") {
  TestTable table("seed_a", kAccountsTable);
  const SinkRun run =
      run_into(table,
               {change(RowKind::kInsert, 1001, 80), change(RowKind::kDelete, 1001),
                change(RowKind::kInsert, 1001, 100), change(RowKind::kUpdateAfter, 1001, 120)},
               0);
  REQUIRE(run.result.finished());
  CHECK(table.rows() == TextRows{{"1001", "120"}});
  CHECK(all_flushes(run) == 1);
  CHECK(run.counter("keys") == 1);
  CHECK(run.counter("upserts") == 1);
  CHECK(run.counter("deletes") == 0);
  CHECK(run.counter("statements") == 1);
}

TEST_CASE("seed B: four records reach max-rows and flush two keys in one transaction", "[mysql]") {
  TestTable table("seed_b", kAccountsTable);
  const SinkRun run =
      run_into(table,
               {change(RowKind::kInsert, 1001, 80), change(RowKind::kUpdateAfter, 1001, 100),
                change(RowKind::kInsert, 1002, 50), change(RowKind::kDelete, 1002)},
               4);
  REQUIRE(run.result.finished());
  CHECK(table.rows() == TextRows{{"1001", "100"}});
  CHECK(run.counter("flushes.max-rows") == 1);
  CHECK(all_flushes(run) == 1);
  CHECK(run.result.metrics.records_in("mysql") == 4);
  CHECK(run.counter("keys") == 2);
  CHECK(run.counter("upserts") == 1);
  CHECK(run.counter("deletes") == 1);
  CHECK(run.counter("transactions") == 1);
  // Flink's names for what was sent: the two rows, in two statements.
  CHECK(run.counter("numRecordsSend") == 2);
  CHECK(run.counter("numBytesSend") > 0);
  CHECK(run.counter("numRecordsSendErrors") == 0);
}

TEST_CASE("each flush trigger alone causes a flush", "[mysql]") {
  const std::vector<Row> three = {change(RowKind::kInsert, 1, 10), change(RowKind::kInsert, 2, 20),
                                  change(RowKind::kInsert, 3, 30)};
  const TextRows expected = {{"1", "10"}, {"2", "20"}, {"3", "30"}};

  SECTION("max-rows") {
    TestTable table("trigger_rows", kAccountsTable);
    const SinkRun run = run_into(table, three, 3);
    CHECK(run.counter("flushes.max-rows") == 1);
    CHECK(all_flushes(run) == 1);
    CHECK(table.rows() == expected);
  }
  SECTION("FlushSignal while the source is idle") {
    TestTable table("trigger_signal", kAccountsTable);
    RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
    runtime.flush_interval = 50ms;
    MySqlSinkOptions options;
    options.url = testing::test_mysql_url();
    options.table = table.name();
    options.max_rows = 0;
    JobGraph graph("signal");
    // The source idles after its rows until the test saw them in the table.
    const auto released = std::make_shared<std::atomic<bool>>(false);
    graph
        .source("rows", testing::rows_source(kAccounts, ChangelogMode::all(), three,
                                             {.released = released}))
        .sink("mysql", mysql_sink(options));
    Executor executor(runtime);
    JobResult result;
    std::thread job([&] { result = executor.run(graph); });
    TextRows seen;
    testing::wait_until([&] { return (seen = table.rows()) == expected; });
    *released = true;
    job.join();
    REQUIRE(result.finished());
    CHECK(seen == expected);
    CHECK(result.metrics.counter("mysql.flushes.signal") >= 1);
    CHECK(result.metrics.counter("mysql.flushes.close") == 0);  // nothing was left for the end
  }
  SECTION("checkpoint barrier") {
    TestTable table("trigger_barrier", kAccountsTable);
    RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
    runtime.flush_interval = 0ms;
    runtime.checkpoint_interval = 100ms;
    const SinkRun run = run_into(table, three, 0, runtime, {.checkpoints = 1});
    CHECK(run.counter("flushes.barrier") == 1);
    CHECK(all_flushes(run) == 1);
    CHECK(table.rows() == expected);
  }
  SECTION("close") {
    TestTable table("trigger_close", kAccountsTable);
    const SinkRun run = run_into(table, three, 0);
    CHECK(run.counter("flushes.close") == 1);
    CHECK(all_flushes(run) == 1);
    CHECK(table.rows() == expected);
  }
}

TEST_CASE("replaying a changelog leaves the same table and deleting a missing key is harmless",
          "[mysql]") {
  TestTable table("replay", kAccountsTable);
  const std::vector<Row> changes = {
      change(RowKind::kInsert, 1, 10),       change(RowKind::kInsert, 2, 20),
      change(RowKind::kUpdateBefore, 1, 10), change(RowKind::kUpdateAfter, 1, 11),
      change(RowKind::kDelete, 2),           change(RowKind::kDelete, 99)};
  REQUIRE(run_into(table, changes, 2).result.finished());
  const TextRows once = table.rows();
  CHECK(once == TextRows{{"1", "11"}});
  REQUIRE(run_into(table, changes, 2).result.finished());
  CHECK(table.rows() == once);
}

// A flush leaves its commit running while the next one writes on another
// connection: the next one's row events of the same keys must wait for that
// commit and find the table as it left it, strictly (no fallback).
TEST_CASE("back-to-back flushes of the same keys apply in order, each after the last commit",
          "[mysql]") {
  const uint64_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937_64 random(seed);
  TestTable table("back_to_back", kAccountsTable);
  std::vector<Row> changes;
  std::map<int64_t, int64_t> expected;
  for (int i = 0; i < 2000; ++i) {
    const auto id = static_cast<int64_t>(random() % 30);
    const auto balance = static_cast<int64_t>(random() % 1000);
    const auto found = expected.find(id);
    if (found == expected.end()) {
      changes.push_back(change(RowKind::kInsert, id, balance));
      expected[id] = balance;
    } else if (random() % 4 == 0) {
      changes.push_back(change(RowKind::kDelete, id, found->second));
      expected.erase(found);
    } else {
      changes.push_back(change(RowKind::kUpdateBefore, id, found->second));
      changes.push_back(change(RowKind::kUpdateAfter, id, balance));
      found->second = balance;
    }
  }
  const SinkRun run = run_into(table, changes, 7);
  REQUIRE(run.result.finished());
  TextRows rows;
  for (const auto& [id, balance] : expected)
    rows.push_back({std::to_string(id), std::to_string(balance)});
  CHECK(table.rows() == rows);
  CHECK(run.counter("flushes.max-rows") > 100);
  CHECK(run.counter("transactions") == all_flushes(run));
  CHECK(run.counter("retries") == 0);
  if (run.counter("row-events") > 0) CHECK(run.counter("row-events.fallbacks") == 0);
}

TEST_CASE("values round-trip exactly through the sink", "[mysql]") {
  const Schema schema = Schema::parse(
      "id BIGINT, amount DECIMAL(30,10), note STRING, score DOUBLE, ok BOOLEAN, at TIMESTAMP, "
      "PRIMARY KEY (id)");
  TestTable table("values",
                  "id BIGINT PRIMARY KEY, amount DECIMAL(30,10), note MEDIUMTEXT, score DOUBLE, "
                  "ok BOOLEAN, at DATETIME(6)");
  const std::string long_text(100'000, 'x');
  const std::vector<Row> rows = {
      Row(RowKind::kInsert,
          {1, Decimal::parse("12345678901234567890.0123456789", 30, 10), "it's \"quoted\"", 0.1,
           Value::boolean(true), Timestamp::parse("2026-11-29 12:34:56.123456")}),
      Row(RowKind::kInsert,
          {2, Decimal::parse("-0.0000000001", 30, 10), "back\\slash ünïcødé 🚀", -1.5e300,
           Value::boolean(false), Timestamp::parse("1970-01-01 00:00:00")}),
      Row(RowKind::kInsert, {3, Value(), Value(), Value(), Value(), Value()}),
      Row(RowKind::kInsert, {4, Decimal(0, 10), long_text, 0.0, Value::boolean(true), Value()}),
      Row(RowKind::kInsert, {5, Value(), "tab\tnew\nline\r\\N \\t", Value(), Value(), Value()}),
      Row(RowKind::kInsert, {6, Value(), std::string("nul\0byte", 8), Value(), Value(), Value()}),
  };
  const SinkRun run = run_into(table, rows, 2, {}, {}, schema);
  INFO(run.result.error);
  REQUIRE(run.result.finished());
  const TextRows stored = table.rows();
  REQUIRE(stored.size() == rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < schema.size(); ++c) {
      INFO("row " << r << " column " << schema.column(c).name);
      const Value back = stored[r][c] ? parse_value(*stored[r][c], schema.column(c).type) : Value();
      CHECK(back == rows[r].fields[c]);
    }
  }
}

TEST_CASE("a table that does not fit fails before anything is written", "[mysql]") {
  const std::vector<Row> one = {change(RowKind::kInsert, 1, 10)};
  SECTION("no key matching the sink key") {
    TestTable table("wrong_key", "id BIGINT, balance BIGINT, UNIQUE KEY (balance)");
    const SinkRun run = run_into(table, one, 0);
    CHECK(run.result.status == JobResult::Status::kFailed);
    CHECK_THAT(run.result.error,
               Catch::Contains("has no PRIMARY KEY or UNIQUE KEY on exactly (id)") &&
                   Catch::Contains("its keys: (balance)"));
    CHECK(table.rows().empty());
  }
  SECTION("a missing column") {
    TestTable table("missing_column", "id BIGINT PRIMARY KEY, amount BIGINT");
    const SinkRun run = run_into(table, one, 0);
    CHECK_THAT(run.result.error, Catch::Contains("has no column 'balance'") &&
                                     Catch::Contains("its columns are id, amount"));
    CHECK(table.rows().empty());
  }
  SECTION("a missing table") {
    TestTable table("present", kAccountsTable);
    MySqlSinkOptions options;
    options.url = testing::test_mysql_url();
    options.table = "no_such_table";
    JobGraph graph("missing");
    graph.source("rows", testing::rows_source(kAccounts, ChangelogMode::all(), one))
        .sink("mysql", mysql_sink(options));
    const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
    CHECK(result.status == JobResult::Status::kFailed);
    CHECK_THAT(result.error, Catch::Contains("table 'no_such_table' does not exist") &&
                                 Catch::Contains("create it, for example:"));
    // The CREATE TABLE it suggests makes a table the same job writes into.
    const size_t create = result.error.find("CREATE TABLE");
    REQUIRE(create != std::string::npos);
    const std::string sql = result.error.substr(create, result.error.find(';', create) - create);
    CHECK(sql ==
          "CREATE TABLE `no_such_table` (`id` BIGINT NOT NULL, `balance` BIGINT, PRIMARY KEY "
          "(`id`))");
    MySqlConnection connection(options.url);
    connection.execute(sql);
    const JobResult again = Executor(RuntimeOptions::without_checkpoints()).run(graph);
    connection.execute("DROP TABLE no_such_table");
    CHECK(again.finished());
  }
  SECTION("a wrong password") {
    TestTable table("password", kAccountsTable);
    MySqlSinkOptions options;
    options.url = testing::test_mysql_url();
    options.url.password = "wrong";
    options.table = table.name();
    JobGraph graph("password");
    graph.source("rows", testing::rows_source(kAccounts, ChangelogMode::all(), one))
        .sink("mysql", mysql_sink(options));
    const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
    CHECK(result.status == JobResult::Status::kFailed);
    CHECK_THAT(result.error, Catch::Contains("Access denied") && Catch::Contains(":***@") &&
                                 !Catch::Contains("wrong"));
    CHECK(table.rows().empty());
  }
}

TEST_CASE("updates or deletes into a sink without a key are refused before running", "[mysql]") {
  MySqlSinkOptions options;
  options.url = MySqlUrl::parse("mysql://u:p@localhost/db");
  options.table = "t";
  const Schema keyless = Schema::parse("id BIGINT, balance BIGINT");
  JobGraph graph("keyless");
  graph.source("rows", testing::rows_source(keyless, ChangelogMode::all(), {}))
      .sink("mysql", mysql_sink(options));
  CHECK_THROWS_WITH(graph.check(), Catch::Contains("declare a primary key for the sink when the "
                                                   "input contains update/delete"));
}

TEST_CASE("the URL hides its password, takes it from the environment, and decodes %XX", "[mysql]") {
  const MySqlUrl url = MySqlUrl::parse("mysql://app:s3cr%40t@db.example:3307/shop");
  CHECK(url.user == "app");
  CHECK(url.password == "s3cr@t");
  CHECK(url.port == 3307);
  CHECK(url.to_string() == "mysql://app:***@db.example:3307/shop");
  const MySqlUrl socket = MySqlUrl::parse("mysql://app@/shop?socket=/run/mysqld.sock");
  CHECK(socket.socket == "/run/mysqld.sock");
  CHECK(socket.host.empty());
  CHECK(MySqlUrl::parse("mysql://app@h/my%20sh%C3%B6p%2F2%3F").database == "my shöp/2?");
  {
    testing::ScopedEnv password("SLUICE_MYSQL_PASSWORD", "from-env");
    CHECK(MySqlUrl::parse("mysql://app@h/db").password == "from-env");
  }
  for (const char* bad :
       {"postgres://a@h/db", "mysql://h/db", "mysql://a@h", "mysql://a@h:99999/db"}) {
    CHECK_THROWS_AS(MySqlUrl::parse(bad), ConfigError);
  }
}

TEST_CASE("sink.url defaults to SLUICE_MYSQL_URL when it is set", "[mysql]") {
  {
    testing::ScopedEnv url("SLUICE_MYSQL_URL", "mysql://app@db.example/shop");
    const Config config{OptionTable(mysql_sink_option_specs())};
    CHECK(config.get_string("sink.url") == "mysql://app@db.example/shop");
    CHECK(config.table().find("sink.url")->documented_default() == "SLUICE_MYSQL_URL, if set");
  }
  testing::ScopedEnv unset("SLUICE_MYSQL_URL", nullptr);
  const Config config{OptionTable(mysql_sink_option_specs())};
  CHECK_THROWS_WITH(config.get_string("sink.url"), Catch::Contains("'sink.url' is required"));
}

TEST_CASE("localhost in a URL is the server on that TCP port, not the default socket", "[mysql]") {
  MySqlUrl url = testing::test_mysql_url();
  url.host = "localhost";
  MySqlConnection connection(url);
  CHECK(connection.query("SELECT @@port")[0][0] == std::to_string(url.port));
}

TEST_CASE("access denied without a password says where a password goes", "[mysql]") {
  MySqlUrl url = testing::test_mysql_url();
  url.password.clear();
  CHECK_THROWS_WITH(MySqlConnection(url),
                    Catch::Contains("Access denied") && Catch::Contains("SLUICE_MYSQL_PASSWORD"));
  url.password = "wrong";
  CHECK_THROWS_WITH(MySqlConnection(url), !Catch::Contains("SLUICE_MYSQL_PASSWORD"));
}

TEST_CASE("a filter that drops the +U of an update leaves no stale row", "[mysql]") {
  TestTable table("filtered_update", kAccountsTable);
  MySqlSinkOptions options;
  options.url = testing::test_mysql_url();
  options.table = table.name();
  JobGraph graph("filtered");
  Stream changes = graph.source(
      "rows", testing::rows_source(
                  kAccounts, ChangelogMode::all(),
                  {change(RowKind::kInsert, 1, 10), change(RowKind::kInsert, 2, 20),
                   change(RowKind::kUpdateBefore, 1, 10), change(RowKind::kUpdateAfter, 1, 500)}));
  const auto balance = changes.column<int64_t>("balance");
  // Account 1 leaves the "small" view when its balance grows: its row must go.
  changes.filter("small", [balance](RowRef row) { return row[balance] < 100; })
      .sink("mysql", mysql_sink(options));
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = 0ms;
  REQUIRE(Executor(runtime).run(graph).finished());
  CHECK(table.rows() == TextRows{{"2", "20"}});
}

TEST_CASE("a key-changing update leaves no orphan row", "[mysql]") {
  TestTable table("key_change", kAccountsTable);
  // -U 1 then +U 3: the row moved from key 1 to key 3. Once in one flush,
  // once with the -U and the +U in different flushes (max-rows 1).
  const std::vector<Row> changes = {
      change(RowKind::kInsert, 1, 10),       change(RowKind::kUpdateBefore, 1, 10),
      change(RowKind::kUpdateAfter, 3, 10),  change(RowKind::kInsert, 5, 50),
      change(RowKind::kUpdateBefore, 5, 50), change(RowKind::kUpdateAfter, 5, 51)};
  const size_t max_rows = GENERATE(0, 1);
  INFO("max-rows " << max_rows);
  const SinkRun run = run_into(table, changes, max_rows);
  REQUIRE(run.result.finished());
  CHECK(table.rows() == TextRows{{"3", "10"}, {"5", "51"}});
  // One record per flush: a flush that holds a -U for its +U writes nothing,
  // not even an empty transaction.
  if (max_rows == 1) CHECK(run.counter("transactions") == 4);
}

TEST_CASE("keys a case-insensitive collation treats as equal keep their order", "[mysql]") {
  const Schema schema = Schema::parse("code STRING, qty BIGINT, PRIMARY KEY (code)");
  TestTable table("collation",
                  "code VARCHAR(20) COLLATE utf8mb4_unicode_ci PRIMARY KEY, qty BIGINT");
  const auto row = [](RowKind kind, const char* code, int64_t qty) {
    return Row(kind, {code, qty});
  };
  SECTION("insert, delete, insert of another spelling") {
    // 'abc' and 'ABC' are one key to the table: the delete must come between.
    REQUIRE(run_into(table,
                     {row(RowKind::kInsert, "abc", 1), row(RowKind::kDelete, "abc", 1),
                      row(RowKind::kInsert, "ABC", 2)},
                     0, {}, {}, schema)
                .result.finished());
    CHECK(table.rows() == TextRows{{"ABC", "2"}});
  }
  SECTION("changes to both spellings, interleaved: the last one decides") {
    REQUIRE(run_into(table,
                     {row(RowKind::kInsert, "abc", 1), row(RowKind::kUpdateAfter, "ABC", 2),
                      row(RowKind::kUpdateAfter, "abc", 3)},
                     0, {}, {}, schema)
                .result.finished());
    CHECK(table.rows() == TextRows{{"abc", "3"}});
    // A later run's upsert of the other spelling replaces the row, spelling too.
    REQUIRE(run_into(table, {row(RowKind::kUpdateAfter, "ABC", 4)}, 0, {}, {}, schema)
                .result.finished());
    CHECK(table.rows() == TextRows{{"ABC", "4"}});
  }
  SECTION("a key-changing update to another spelling") {
    REQUIRE(run_into(table,
                     {row(RowKind::kInsert, "abc", 1), row(RowKind::kUpdateBefore, "abc", 1),
                      row(RowKind::kUpdateAfter, "ABC", 2)},
                     0, {}, {}, schema)
                .result.finished());
    CHECK(table.rows() == TextRows{{"ABC", "2"}});
  }
}

TEST_CASE("a table whose every column is in the key still refuses a value that does not fit",
          "[mysql]") {
  const Schema schema = Schema::parse("id BIGINT, PRIMARY KEY (id)");
  TestTable table("all_key", "id TINYINT PRIMARY KEY");
  const SinkRun run = run_into(table, {Row(RowKind::kInsert, {1}), Row(RowKind::kInsert, {1000})},
                               0, {}, {}, schema);
  // INSERT IGNORE would have stored 127 with a warning.
  CHECK(run.result.status == JobResult::Status::kFailed);
  CHECK_THAT(run.result.error, Catch::Contains("MySQL error 1264"));
  CHECK(table.rows().empty());
}

TEST_CASE("TIMESTAMP columns hold the UTC time whatever the server's time zone",
          "[mysql][serial]") {
  const Schema schema = Schema::parse("id BIGINT, at TIMESTAMP, PRIMARY KEY (id)");
  TestTable table("zone", "id BIGINT PRIMARY KEY, at TIMESTAMP(6) NULL");
  struct ServerZone {
    MySqlConnection admin{testing::test_mysql_url()};
    ServerZone() { admin.execute("SET GLOBAL time_zone = '+05:00'"); }
    ~ServerZone() { admin.execute("SET GLOBAL time_zone = 'SYSTEM'"); }
  } zone;
  REQUIRE(run_into(table, {Row(RowKind::kInsert, {1, Timestamp::parse("2026-01-01 00:00:00")})}, 0,
                   {}, {}, schema)
              .result.finished());
  MySqlConnection reader(testing::test_mysql_url());
  reader.execute("SET time_zone = '+00:00'");
  CHECK(reader.query("SELECT at FROM " + quote_identifier(table.name()))[0][0] ==
        std::optional<std::string>("2026-01-01 00:00:00.000000"));
}

TEST_CASE("a collation's image of a key is equal for the values the collation takes for equal",
          "[mysql]") {
  MySqlConnection sql(testing::test_mysql_url());
  const KeyImage unicode = collation_image(sql, "utf8mb4", "utf8mb4_unicode_ci");
  CHECK(unicode("abc") == unicode("ABC"));
  CHECK(unicode("abc") == unicode("ÂBC  "));  // accents too, and PAD SPACE
  CHECK(unicode("straße") == unicode("STRASSE"));
  CHECK(unicode("abc") != unicode("abd"));
  CHECK(unicode("𠀀") != unicode("𠀁"));  // beyond U+20000: themselves
  const KeyImage no_pad = collation_image(sql, "utf8mb4", "utf8mb4_unicode_nopad_ci");
  CHECK(no_pad("a") != no_pad("a "));
  const KeyImage latin1 = collation_image(sql, "latin1", "latin1_swedish_ci");
  CHECK(latin1("Åsa") == latin1("åsa"));
  CHECK(latin1("Ω") == latin1("Ж"));  // both '?' in latin1
  const KeyImage bin = collation_image(sql, "utf8mb4", "utf8mb4_bin");
  CHECK(bin("a") != bin("A"));
  CHECK(bin("a") == bin("a "));  // utf8mb4_bin pads with spaces too
}
