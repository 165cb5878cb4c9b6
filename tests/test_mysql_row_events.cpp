#include <catch2/catch.hpp>

#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"
#include "sluice/tests/test_sources.hpp"

using namespace sluice;
using testing::TestTable;
using RowEvents = MySqlSinkOptions::RowEvents;

namespace {

using TextRows = std::vector<std::vector<std::optional<std::string>>>;

struct RowEventRun {
  JobResult result;
  uint64_t counter(const std::string& name) const {
    return result.metrics.counter("mysql." + name);
  }
};

// `rows` into `table` by the MySQL sink of `options`, its table and URL
// filled in when empty.
RowEventRun write_into(TestTable& table, const Schema& schema, std::vector<Row> rows,
                       MySqlSinkOptions options) {
  if (options.url.host.empty()) options.url = testing::test_mysql_url();
  if (options.table.empty()) options.table = table.name();
  JobGraph graph("mysql-row-events");
  graph.source("rows", testing::rows_source(schema, ChangelogMode::all(), std::move(rows)))
      .sink("mysql", mysql_sink(options));
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = std::chrono::milliseconds(0);
  testing::TempDir state;
  runtime.checkpoint_dir = state.path();
  return {Executor(runtime).run(graph)};
}

// `rows` into `table` by the MySQL sink with `row_events`, a flush every
// `max_rows` records.
RowEventRun write_into(TestTable& table, const Schema& schema, std::vector<Row> rows,
                       RowEvents row_events, size_t max_rows, MySqlUrl url = {}) {
  MySqlSinkOptions options;
  options.url = std::move(url);
  options.max_rows = max_rows;
  options.row_events = row_events;
  return write_into(table, schema, std::move(rows), std::move(options));
}

// `changes` into `by_events` with sink.row-events=on and into
// `by_statements` with off; both jobs finish.
std::pair<RowEventRun, RowEventRun> write_both_ways(TestTable& by_events, TestTable& by_statements,
                                                    const Schema& schema,
                                                    const std::vector<Row>& changes,
                                                    size_t max_rows) {
  RowEventRun events = write_into(by_events, schema, changes, RowEvents::kOn, max_rows);
  RowEventRun statements = write_into(by_statements, schema, changes, RowEvents::kOff, max_rows);
  INFO(events.result.error << statements.result.error);
  REQUIRE(events.result.finished());
  REQUIRE(statements.result.finished());
  return {std::move(events), std::move(statements)};
}

// `changes` both ways, a flush every two, into tables of `columns`: the
// same `rows` rows, and every change as a row event.
void check_every_change_as_row_events(const std::string& name, const std::string& columns,
                                      const Schema& schema, const std::vector<Row>& changes,
                                      size_t rows) {
  TestTable by_events("row_" + name, columns);
  TestTable by_statements("statement_" + name, columns);
  const auto [events, statements] = write_both_ways(by_events, by_statements, schema, changes, 2);
  CHECK(by_events.rows() == by_statements.rows());
  CHECK(by_events.rows().size() == rows);
  CHECK(events.counter("row-events") == events.counter("upserts") + events.counter("deletes"));
  CHECK(events.counter("row-events.fallbacks") == 0);
}

// A column of every type row events carry, and the input type that fills it.
constexpr char kTypesTable[] =
    "id BIGINT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, b BOOLEAN, si SMALLINT, "
    "mu MEDIUMINT UNSIGNED, i INT, iz INT(8) ZEROFILL, bu BIGINT UNSIGNED, d DECIMAL(10,2), "
    "d38 DECIMAL(38,10), d65 DECIMAL(65,30), di DECIMAL(5,0), dbl DOUBLE, dt DATE, "
    "ts0 DATETIME, ts3 DATETIME(3), ts6 DATETIME(6), tz TIMESTAMP(4) NULL, c CHAR(10), "
    "vc VARCHAR(20), tx TEXT, lt LONGTEXT, bin BINARY(4), vb VARBINARY(10), bl BLOB, f FLOAT, "
    "y YEAR, t0 TIME, t2 TIME(2), t3 TIME(3), t6 TIME(6), dw DECIMAL(60,0)";
const Schema kTypes = Schema::parse(
    "id BIGINT, ti BIGINT, tu BIGINT, b BOOLEAN, si BIGINT, mu BIGINT, i BIGINT, iz BIGINT, "
    "bu DECIMAL(20,0), d DECIMAL(10,2), d38 DECIMAL(38,10), d65 DECIMAL(65,30), di BIGINT, "
    "dbl DOUBLE, dt DATE, ts0 TIMESTAMP, ts3 TIMESTAMP, ts6 TIMESTAMP, tz TIMESTAMP, c STRING, "
    "vc STRING, tx STRING, lt STRING, bin BYTES, vb BYTES, bl BYTES, f DOUBLE, y BIGINT, t0 TIME, "
    "t2 TIME, t3 TIME, t6 TIME, dw DECIMAL(60,0), PRIMARY KEY (id)");

Value dec(const char* text) { return Decimal::of(text); }
std::string repeat(std::string_view text, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += text;
  return out;
}
constexpr char kAwkward[] = "quote ' back \\ nul \0 tab \t end";
Value ts(const char* text) { return Timestamp::parse(text); }
Value tm(const char* text) { return Time::parse(text); }

std::vector<Value> lows(int64_t id) {
  return {id,
          -128,
          0,
          Value::boolean(false),
          -32768,
          0,
          int64_t{INT32_MIN},
          0,
          dec("0"),
          dec("-99999999.99"),
          dec("-9999999999999999999999999999.9999999999"),
          dec("-0.000000000000000000000000000001"),
          -99999,
          -1.7976931348623157e308,
          Date::parse("1000-01-01"),
          ts("1000-01-01 00:00:00"),
          ts("1969-12-31 23:59:59.999"),
          ts("0001-01-01 00:00:00.000001"),
          ts("1970-01-01 00:00:01.0001"),
          "a",
          "é😀",
          "",
          "x",
          Value::bytes(std::string("\x01", 1)),
          Value::bytes(""),
          Value::bytes(std::string("\x00\xff", 2)),
          -3.4e38,
          1901,
          tm("-838:59:59"),
          tm("-00:00:00.5"),
          tm("-00:00:00.001"),
          tm("-00:00:00.500001"),
          dec("-99999999999999999999999999999999999999")};
}

std::vector<Value> highs(int64_t id) {
  return {id, 127, 255, Value::boolean(true), 32767, 16777215, int64_t{INT32_MAX}, 12345,
          dec("18446744073709551615"), dec("99999999.99"),
          dec("9999999999999999999999999999.9999999999"),
          dec("12345.678901234567890123456789012345"), 99999, 1.7976931348623157e308,
          Date::parse("9999-12-31"), ts("9999-12-31 23:59:59"), ts("9999-12-31 23:59:59.999"),
          ts("9999-12-31 23:59:59.999999"), ts("2038-01-19 03:14:07.9999"), "Ωmega 😀 ab",
          repeat("é", 20), std::string(kAwkward, sizeof kAwkward - 1), std::string(100'000, 'y'),
          Value::bytes("\xff\xff\xff\xff"), Value::bytes(std::string(10, '\0')),
          Value::bytes(std::string(60'000, '\xab')), 0.1, 2155, tm("838:59:59"), tm("838:59:59.99"),
          tm("838:59:59.999"), tm("123:45:56.789012"),
          // 38 digits: groups above them are zeros
          dec("12345678901234567890123456789012345678")};
}

std::vector<Value> nulls(int64_t id) {
  std::vector<Value> values(kTypes.size());
  values[0] = id;
  return values;
}

std::vector<Value> zeros(int64_t id) {
  return {id,
          0,
          0,
          Value::boolean(false),
          0,
          0,
          0,
          0,
          dec("0"),
          dec("0.00"),
          dec("0"),
          dec("0"),
          0,
          0.0,
          Date::zero(),
          Timestamp::zero(),
          Timestamp::zero(),
          Timestamp::zero(),
          Timestamp::zero(),
          "",
          "",
          "",
          "",
          Value::bytes(""),
          Value::bytes(""),
          Value::bytes(""),
          0.0,
          0,
          tm("00:00:00"),
          tm("00:00:00"),
          tm("00:00:00"),
          tm("00:00:00"),
          dec("0")};
}

Row row(RowKind kind, std::vector<Value> values) { return Row(kind, std::move(values)); }

}  // namespace

TEST_CASE("row events write every type they carry as statements do, inserts, updates and deletes",
          "[mysql]") {
  // Flushes of four changes: inserts, then updates, deletes, a key inserted
  // and deleted before its flush, and values back and forth.
  std::vector<Row> changes = {
      row(RowKind::kInsert, lows(1)),        row(RowKind::kInsert, highs(2)),
      row(RowKind::kInsert, nulls(3)),       row(RowKind::kInsert, zeros(4)),
      row(RowKind::kUpdateBefore, lows(1)),  row(RowKind::kUpdateAfter, highs(1)),
      row(RowKind::kUpdateBefore, zeros(4)), row(RowKind::kUpdateAfter, nulls(4)),
      row(RowKind::kDelete, nulls(3)),       row(RowKind::kInsert, lows(5)),
      row(RowKind::kDelete, lows(5)),        row(RowKind::kInsert, zeros(6)),
      row(RowKind::kUpdateAfter, lows(2)),   row(RowKind::kInsert, highs(3)),
      row(RowKind::kDelete, highs(1)),       row(RowKind::kUpdateAfter, zeros(6))};
  TestTable by_events("row_types", kTypesTable);
  TestTable by_statements("statement_types", kTypesTable);
  const auto [events, statements] = write_both_ways(by_events, by_statements, kTypes, changes, 4);
  const TextRows rows = by_events.rows();
  CHECK(rows == by_statements.rows());
  CHECK(rows.size() == 4);  // keys 2, 3, 4, 6
  // Every change but the delete of key 5, which the table never held,
  // went as a row event; and none as statements after.
  CHECK(events.counter("row-events") == events.counter("upserts") + events.counter("deletes") - 1);
  CHECK(events.counter("row-events.fallbacks") == 0);
  CHECK(statements.counter("row-events") == 0);
  const auto checksum = [](TestTable& table) {
    return table.connection().query("CHECKSUM TABLE " + table.name()).at(0).at(1);
  };
  CHECK(checksum(by_events) == checksum(by_statements));
}

TEST_CASE("a row event that the table proves wrong goes again as statements, which converge",
          "[mysql]") {
  // What a replay meets: the table already holds key 1, lacks key 2 that
  // an update changes, and key 3 that a delete removes.
  const Schema schema = Schema::parse("id BIGINT, v BIGINT, PRIMARY KEY (id)");
  TestTable table("row_replay", "id BIGINT PRIMARY KEY, v BIGINT");
  table.connection().execute("INSERT INTO " + table.name() + " VALUES (1, 100), (4, 4)");
  const RowEventRun run = write_into(table, schema,
                                     {Row(RowKind::kInsert, {int64_t{1}, int64_t{10}}),
                                      Row(RowKind::kUpdateAfter, {int64_t{2}, int64_t{20}}),
                                      Row(RowKind::kDelete, {int64_t{3}, Value()}),
                                      Row(RowKind::kUpdateAfter, {int64_t{4}, int64_t{40}}),
                                      Row(RowKind::kInsert, {int64_t{5}, int64_t{50}})},
                                     RowEvents::kOn, 1);
  INFO(run.result.error);
  REQUIRE(run.result.finished());
  CHECK(table.rows() == TextRows{{"1", "10"}, {"2", "20"}, {"4", "40"}, {"5", "50"}});
  CHECK(run.counter("row-events.fallbacks") == 3);
  CHECK(run.counter("row-events") == 2);  // keys 4 and 5
}

TEST_CASE("values row events would not write as a statement does go as statements", "[mysql]") {
  const Schema schema =
      Schema::parse("id BIGINT, t TIMESTAMP, d DECIMAL(10,4), s STRING, PRIMARY KEY (id)");
  constexpr char kColumns[] = "id BIGINT PRIMARY KEY, t DATETIME, d DECIMAL(10,2), s VARCHAR(3)";
  // A fraction the column does not keep, digits its scale does not: the
  // server cuts them. Then a flush of values it takes as they are.
  const std::vector<Row> changes = {
      Row(RowKind::kInsert, {int64_t{1}, ts("2026-01-01 10:00:00.6"), dec("1.0000"), "abc"}),
      Row(RowKind::kInsert, {int64_t{2}, ts("2026-01-01 10:00:00"), dec("1.2345"), "é"}),
      Row(RowKind::kInsert, {int64_t{3}, ts("2026-01-01 10:00:00"), dec("1.5000"), "😀😀😀"})};
  TestTable by_events("row_cut", kColumns);
  TestTable by_statements("statement_cut", kColumns);
  const auto [events, statements] = write_both_ways(by_events, by_statements, schema, changes, 1);
  CHECK(by_events.rows() == by_statements.rows());
  CHECK(events.counter("row-events.fallbacks") == 2);
  CHECK(events.counter("row-events") == 1);

  SECTION("a value too long fails the job, naming its key, as a statement does") {
    TestTable table("row_long", kColumns);
    const RowEventRun run = write_into(
        table, schema,
        {Row(RowKind::kInsert, {int64_t{7}, ts("2026-01-01 10:00:00"), dec("1"), "abcd"})},
        RowEvents::kOn, 1);
    CHECK(run.result.status == JobResult::Status::kFailed);
    CHECK_THAT(run.result.error, Catch::Contains("Data too long") && Catch::Contains("id=7"));
  }
}

TEST_CASE("utf8mb3 text goes as row events; a character of four bytes as a statement, refused",
          "[mysql]") {
  const Schema schema = Schema::parse("id BIGINT, v STRING, c STRING, t STRING, PRIMARY KEY (id)");
  constexpr char kColumns[] =
      "id BIGINT PRIMARY KEY, v VARCHAR(10) CHARACTER SET utf8mb3, "
      "c CHAR(4) CHARACTER SET utf8mb3, t TEXT CHARACTER SET utf8mb3";
  const auto text_row = [](RowKind kind, int64_t id, std::string v, std::string c, std::string t) {
    return Row(kind, {id, std::move(v), std::move(c), std::move(t)});
  };
  const std::vector<Row> changes = {
      text_row(RowKind::kInsert, 1, "é€‚", "abc", repeat("€", 1000)),
      text_row(RowKind::kInsert, 2, "", "", ""),
      text_row(RowKind::kUpdateBefore, 1, "é€‚", "abc", repeat("€", 1000)),
      text_row(RowKind::kUpdateAfter, 1, "0123456789", "ab", "x"),
      text_row(RowKind::kDelete, 2, "", "", ""),
      text_row(RowKind::kInsert, 3, "日本語", "€€€€", "Ω")};
  check_every_change_as_row_events("utf8mb3", kColumns, schema, changes, 2);

  // utf8mb3 holds no character of four bytes: a row event would store its
  // bytes as they are, a statement in strict mode refuses it.
  TestTable table("row_utf8mb3_emoji", kColumns);
  const RowEventRun run =
      write_into(table, schema, {text_row(RowKind::kInsert, 7, "a😀", "", "")}, RowEvents::kOn, 1);
  CHECK(run.result.status == JobResult::Status::kFailed);
  CHECK_THAT(run.result.error,
             Catch::Contains("Incorrect string value") && Catch::Contains("id=7"));
  CHECK(table.rows().empty());
}

TEST_CASE("ENUM and SET go as row events by their members' numbers; other spellings as statements",
          "[mysql]") {
  // ENUMs of one and two bytes, SETs of one and eight.
  std::string big = "ENUM(", wide = "SET(";
  for (int m = 0; m < 300; ++m) big += (m ? ", 'm" : "'m") + std::to_string(m) + "'";
  for (int m = 0; m < 40; ++m) wide += (m ? ", 'w" : "'w") + std::to_string(m) + "'";
  const std::string columns =
      "id BIGINT PRIMARY KEY, e ENUM('a', 'it''s', 'back\\\\slash', 'é'), big " + big +
      "), s SET('x', 'y', 'z'), wide " + wide + ")";
  const Schema schema =
      Schema::parse("id BIGINT, e STRING, big STRING, s STRING, wide STRING, PRIMARY KEY (id)");
  const auto members = [](RowKind kind, int64_t id, Value e, Value b, Value s, Value w) {
    return Row(kind, {id, std::move(e), std::move(b), std::move(s), std::move(w)});
  };
  const std::vector<Row> changes = {
      members(RowKind::kInsert, 1, "a", "m0", "", ""),
      members(RowKind::kInsert, 2, "back\\slash", "m299", "x,z", "w0,w39"),
      members(RowKind::kInsert, 3, Value(), Value(), Value(), Value()),
      members(RowKind::kUpdateBefore, 1, "a", "m0", "", ""),
      members(RowKind::kUpdateAfter, 1, "é", "m255", "y", "w8,w31,w32"),
      members(RowKind::kInsert, 4, "it's", "m256", "z,x,y", "w39,w7")};
  check_every_change_as_row_events("members", columns, schema, changes, 4);

  // Another case, a member that is not one, an empty member: the server
  // decides, by the column's collation or refusing.
  const std::vector<Row> spelled = {members(RowKind::kInsert, 5, "A", "m1", "x", "w1"),
                                    members(RowKind::kInsert, 6, "a", "m1", "X,y", "w1"),
                                    members(RowKind::kInsert, 7, "a", "m1", "x", "w1")};
  TestTable spelled_by_events("row_members_spelled", columns);
  TestTable spelled_by_statements("statement_members_spelled", columns);
  const auto [spelled_events, spelled_statements] =
      write_both_ways(spelled_by_events, spelled_by_statements, schema, spelled, 1);
  CHECK(spelled_by_events.rows() == spelled_by_statements.rows());
  CHECK(spelled_events.counter("row-events.fallbacks") == 2);
  CHECK(spelled_events.counter("row-events") == 1);
  TestTable refused("row_members_refused", columns);
  const RowEventRun run = write_into(
      refused, schema, {members(RowKind::kInsert, 8, "a", "m1", "x,", "w1")}, RowEvents::kOn, 1);
  CHECK(run.result.status == JobResult::Status::kFailed);
  CHECK_THAT(run.result.error, Catch::Contains("id=8"));

  // '' that is no member: the invalid value (index 0) a session not in
  // strict mode stores. Refused, but from a MySQL table's rows, where the
  // source holds it.
  const std::vector<Row> invalid = {members(RowKind::kInsert, 9, "", "m1", "x", "w1")};
  TestTable refused_invalid("row_members_invalid", columns);
  const RowEventRun refusing = write_into(refused_invalid, schema, invalid, RowEvents::kOn, 1);
  CHECK(refusing.result.status == JobResult::Status::kFailed);
  CHECK_THAT(refusing.result.error, Catch::Contains("id=9"));
  TestTable kept("row_members_kept", columns);
  MySqlSinkOptions from_table;
  from_table.max_rows = 1;
  from_table.row_events = RowEvents::kOn;
  from_table.input_is_table_rows = true;
  const RowEventRun keeping = write_into(kept, schema, invalid, from_table);
  INFO(keeping.result.error);
  REQUIRE(keeping.result.finished());
  CHECK(kept.connection().query("SELECT id, e, e + 0, big FROM " + kept.name()) ==
        TextRows{{"9", "", "0", "m1"}});
}

TEST_CASE("a row too big for a packet as a row event goes bound as a statement; the rest as events",
          "[mysql]") {
  const Schema schema = Schema::parse("id BIGINT, b BYTES, PRIMARY KEY (id)");
  constexpr char kColumns[] = "id BIGINT PRIMARY KEY, b LONGBLOB";
  const auto max_packet = std::stoull(testing::TestTable("row_packet", kColumns)
                                          .connection()
                                          .query("SELECT @@max_allowed_packet")
                                          .at(0)
                                          .at(0)
                                          .value());
  // Bound, it fits a packet; as base64, a third longer, it does not.
  const Bytes big{std::string(max_packet * 4 / 5, '\xcd')};
  const std::vector<Row> changes = {Row(RowKind::kInsert, {int64_t{1}, Bytes{"small"}}),
                                    Row(RowKind::kInsert, {int64_t{2}, big}),
                                    Row(RowKind::kInsert, {int64_t{3}, Bytes{"after"}})};
  TestTable by_events("row_big", kColumns);
  TestTable by_statements("statement_big", kColumns);
  const auto [events, statements] = write_both_ways(by_events, by_statements, schema, changes, 1);
  const auto digest = [](TestTable& table) {
    return table.connection().query("SELECT id, LENGTH(b), MD5(b) FROM " + table.name() +
                                    " ORDER BY id");
  };
  CHECK(digest(by_events) == digest(by_statements));
  CHECK(digest(by_events).size() == 3);
  CHECK(events.counter("row-events") == 2);
}

TEST_CASE("dates of a zero month or day go as statements, which the server keeps as they are",
          "[mysql]") {
  const Schema schema = Schema::parse("id BIGINT, d DATE, t TIMESTAMP, PRIMARY KEY (id)");
  const std::vector<Row> changes = {
      Row(RowKind::kInsert, {int64_t{1}, Date::parse("2020-00-15"), ts("2020-05-00 10:00:00.5")}),
      Row(RowKind::kInsert, {int64_t{2}, Date::parse("2020-01-15"), ts("0000-00-00 10:00:00")}),
      Row(RowKind::kInsert, {int64_t{3}, Date::parse("2020-01-15"), ts("2020-01-15 10:00:00")})};
  constexpr char kColumns[] = "id BIGINT PRIMARY KEY, d DATE, t DATETIME(6)";
  TestTable by_events("row_zero_in_date", kColumns);
  TestTable by_statements("statement_zero_in_date", kColumns);
  const auto [events, statements] = write_both_ways(by_events, by_statements, schema, changes, 1);
  CHECK(by_events.rows() == TextRows{{"1", "2020-00-15", "2020-05-00 10:00:00.500000"},
                                     {"2", "2020-01-15", "0000-00-00 10:00:00.000000"},
                                     {"3", "2020-01-15", "2020-01-15 10:00:00.000000"}});
  CHECK(by_statements.rows() == by_events.rows());
  CHECK(events.counter("row-events") == 1);
}

TEST_CASE("times of MariaDB's format before 10.1 go as statements, which keep them exactly",
          "[mysql][serial]") {
  const Schema schema = Schema::parse("id BIGINT, t TIME, d TIMESTAMP, PRIMARY KEY (id)");
  const std::vector<Row> changes = {
      Row(RowKind::kInsert,
          {int64_t{1}, Value(Time::parse("-12:34:56.789")), ts("2024-01-02 03:04:05.5")})};
  std::optional<TestTable> table;
  {
    const testing::ScopedGlobal old_format("mysql56_temporal_format", "OFF");
    table.emplace("row_old_times", "id BIGINT PRIMARY KEY, t TIME(3), d DATETIME(6)");
  }
  const RowEventRun run = write_into(*table, schema, changes, RowEvents::kOn, 1);
  CHECK_THAT(run.result.error,
             Catch::Contains("sink.row-events=on") && Catch::Contains("time(3) /* mariadb-5.3 */"));
  CHECK(write_into(*table, schema, changes, RowEvents::kAuto, 1).result.finished());
  CHECK(table->rows() == TextRows{{"1", "-12:34:56.789", "2024-01-02 03:04:05.500000"}});
}

TEST_CASE("sink.row-events=on fails at the start, saying why, where the table takes none",
          "[mysql]") {
  const Schema schema = Schema::parse("id BIGINT, v BIGINT, PRIMARY KEY (id)");
  const std::vector<Row> one = {Row(RowKind::kInsert, {int64_t{1}, int64_t{1}})};
  SECTION("another unique key") {
    TestTable table("row_unique", "id BIGINT PRIMARY KEY, v BIGINT UNIQUE");
    const RowEventRun run = write_into(table, schema, one, RowEvents::kOn, 1);
    CHECK_THAT(run.result.error, Catch::Contains("sink.row-events=on") &&
                                     Catch::Contains("a unique key besides the sink's (v)"));
    // auto writes statements instead.
    CHECK(write_into(table, schema, one, RowEvents::kAuto, 1).result.finished());
    CHECK(table.rows() == TextRows{{"1", "1"}});
  }
  SECTION("a COMPRESSED column, whose row images hold zlib data") {
    TestTable table("row_compressed", "id BIGINT PRIMARY KEY, v BIGINT, n TEXT COMPRESSED");
    const Schema with_text = Schema::parse("id BIGINT, v BIGINT, n STRING, PRIMARY KEY (id)");
    const std::vector<Row> text = {Row(RowKind::kInsert, {int64_t{1}, int64_t{1}, "note"})};
    const RowEventRun run = write_into(table, with_text, text, RowEvents::kOn, 1);
    CHECK_THAT(run.result.error,
               Catch::Contains("sink.row-events=on") && Catch::Contains("COMPRESSED"));
    CHECK(write_into(table, with_text, text, RowEvents::kAuto, 1).result.finished());
    CHECK(table.rows() == TextRows{{"1", "1", "note"}});
  }
  SECTION("a primary key on a prefix of a column") {
    TestTable table("row_prefix", "k VARCHAR(20), v BIGINT, PRIMARY KEY (k(4))");
    const RowEventRun run =
        write_into(table, Schema::parse("k STRING, v BIGINT, PRIMARY KEY (k)"),
                   {Row(RowKind::kInsert, {"abcdef", int64_t{1}})}, RowEvents::kOn, 1);
    CHECK_THAT(run.result.error, Catch::Contains("a prefix of a column"));
  }
  SECTION("a trigger") {
    TestTable table("row_trigger", "id BIGINT PRIMARY KEY, v BIGINT");
    TestTable log("row_trigger_log", "id BIGINT PRIMARY KEY");
    table.connection().execute("CREATE TRIGGER " + table.name() + "_log AFTER INSERT ON " +
                               table.name() + " FOR EACH ROW INSERT INTO " + log.name() +
                               " VALUES (NEW.id)");
    CHECK_THAT(write_into(table, schema, one, RowEvents::kOn, 1).result.error,
               Catch::Contains("triggers"));
    // auto writes statements, which fire it.
    CHECK(write_into(table, schema, one, RowEvents::kAuto, 1).result.finished());
    CHECK(log.rows() == TextRows{{"1"}});
  }
  SECTION("a column of a type row events do not carry here") {
    TestTable table("row_latin1", "id BIGINT PRIMARY KEY, v VARCHAR(10) CHARACTER SET latin1");
    const RowEventRun run =
        write_into(table, Schema::parse("id BIGINT, v STRING, PRIMARY KEY (id)"),
                   {Row(RowKind::kInsert, {int64_t{1}, "é"})}, RowEvents::kOn, 1);
    CHECK_THAT(run.result.error, Catch::Contains("column 'v' is varchar(10) latin1"));
  }
  SECTION("a user without the BINLOG REPLAY privilege") {
    TestTable table("row_privilege", "id BIGINT PRIMARY KEY, v BIGINT");
    MySqlUrl plain = testing::test_mysql_url();
    plain.user = "sluice_plain";  // scripts/mariadb's user without it
    CHECK_THAT(write_into(table, schema, one, RowEvents::kOn, 1, plain).result.error,
               Catch::Contains("lacks the BINLOG REPLAY privilege"));
    CHECK(write_into(table, schema, one, RowEvents::kAuto, 1, plain).result.finished());
    CHECK(table.rows() == TextRows{{"1", "1"}});
  }
}

TEST_CASE("a chunk the server refuses among several of one flush goes as statements in its place",
          "[mysql]") {
  // 5,000 new keys in one flush: chunks of 2,000, 2,000 and 1,000, each
  // encoded while the server applies the one before. The table already
  // holds a key of the second.
  const Schema schema = Schema::parse("id BIGINT, v BIGINT, PRIMARY KEY (id)");
  TestTable table("row_chunks", "id BIGINT PRIMARY KEY, v BIGINT");
  table.connection().execute("INSERT INTO " + table.name() + " VALUES (3000, -1)");
  std::vector<Row> inserts;
  for (int64_t id = 1; id <= 5000; ++id) inserts.push_back(Row(RowKind::kInsert, {id, id}));
  const RowEventRun run = write_into(table, schema, inserts, RowEvents::kOn, 0);
  INFO(run.result.error);
  REQUIRE(run.result.finished());
  CHECK(run.counter("row-events.fallbacks") == 1);
  CHECK(run.counter("row-events") == 3000);
  const auto wrong = table.connection().query("SELECT COUNT(*), SUM(id <> v) FROM " + table.name());
  CHECK(wrong.at(0).at(0) == "5000");
  CHECK(wrong.at(0).at(1) == "0");
}
