#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "sluice/connectors/mysql_binlog.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/tests/mysql_support.hpp"

using namespace sluice;

namespace Catch {
template <>
struct StringMaker<BinlogPosition> {
  static std::string convert(const BinlogPosition& p) { return p.to_string(); }
};
}  // namespace Catch

namespace {

// Reads `wanted` transactions, or what came until 50 heartbeats passed without one.
std::vector<BinlogTransaction> read_transactions(BinlogReader& reader, size_t wanted) {
  std::vector<BinlogTransaction> out;
  for (int idle = 0; out.size() < wanted && idle < 50;) {
    if (auto transaction = reader.next()) {
      out.push_back(std::move(*transaction));
    } else {
      ++idle;
    }
  }
  return out;
}

std::vector<std::string> texts(const BinlogTransaction& transaction) {
  std::vector<std::string> out;
  for (const auto& change : transaction.changes) out.push_back(change.row.to_string());
  return out;
}

// A server id no other test's reader uses at the same time.
uint32_t server_id() {
  static uint32_t next = 1000 + static_cast<uint32_t>(std::random_device()() % 100000) * 10;
  return next++;
}

}  // namespace

TEST_CASE("the binlog gives a captured table's changes with exact values of every type",
          "[mysql][cdc]") {
  testing::TestTable table(
      "cdc_types",
      "id BIGINT PRIMARY KEY, big BIGINT UNSIGNED, small INT, tiny TINYINT UNSIGNED, "
      "flag BOOLEAN, amount DECIMAL(20,6), ratio DOUBLE, at DATETIME(6), stamp TIMESTAMP(3) NULL, "
      "day DATE, name VARCHAR(20), body TEXT, bytes BLOB, missing INT NULL");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  CHECK(captured.schema.column(1).type.to_string() == "DECIMAL(20,0)");
  CHECK(captured.schema.primary_key_names() == std::vector<std::string>{"id"});
  BinlogReader reader(testing::test_mysql_url(), server_id(), current_binlog_position(sql),
                      {captured});

  sql.execute("SET time_zone = '+00:00'");
  sql.execute("INSERT INTO " + table.name() +
              " VALUES (1, 18446744073709551615, -5, 255, TRUE, -12345678901234.000001, 0.5, "
              "'2026-01-02 03:04:05.123456', '2026-01-02 03:04:05.678', '2026-01-02', "
              "'héllo €', 'a text', x'00ff10', NULL)");
  sql.execute("UPDATE " + table.name() + " SET name = 'bye', small = -2147483648 WHERE id = 1");
  sql.execute("DELETE FROM " + table.name() + " WHERE id = 1");
  const auto transactions = read_transactions(reader, 3);
  REQUIRE(transactions.size() == 3);
  const std::string inserted =
      "1, 18446744073709551615, -5, 255, true, -12345678901234.000001, 0.5, "
      "2026-01-02 03:04:05.123456, 2026-01-02 03:04:05.678, 2026-01-02, héllo €, a text, " +
      std::string("\0\xff\x10", 3) + ", NULL]";
  CHECK(texts(transactions[0]) == std::vector<std::string>{"+I[" + inserted});
  const std::string updated =
      "1, 18446744073709551615, -2147483648, 255, true, -12345678901234.000001, 0.5, "
      "2026-01-02 03:04:05.123456, 2026-01-02 03:04:05.678, 2026-01-02, bye, a text, " +
      std::string("\0\xff\x10", 3) + ", NULL]";
  CHECK(texts(transactions[1]) == std::vector<std::string>{"-U[" + inserted, "+U[" + updated});
  CHECK(texts(transactions[2]) == std::vector<std::string>{"-D[" + updated});
  CHECK(transactions[0].end < transactions[1].end);
  CHECK(reader.resume_position() == transactions[2].end);
}

TEST_CASE("the binlog gives committed transactions only, skips other tables, and resumes exactly",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_accounts", "id BIGINT PRIMARY KEY, balance BIGINT");
  testing::TestTable other("cdc_other", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  const BinlogPosition start = current_binlog_position(sql);
  const std::string t = table.name();

  sql.execute("INSERT INTO " + t + " VALUES (1, 10)");
  sql.execute("INSERT INTO " + other.name() + " VALUES (1)");  // not captured
  sql.execute("START TRANSACTION");
  sql.execute("INSERT INTO " + t + " VALUES (2, 20)");
  sql.execute("ROLLBACK");  // never in the binlog
  sql.execute("START TRANSACTION");
  sql.execute("INSERT INTO " + t + " VALUES (3, 30)");
  sql.execute("UPDATE " + t + " SET balance = 11 WHERE id = 1");
  sql.execute("COMMIT");
  const std::string xid = sql.quote(testing::unique_name("cdc"));
  sql.execute("XA START " + xid);
  sql.execute("INSERT INTO " + t + " VALUES (4, 40)");
  sql.execute("XA END " + xid);
  sql.execute("XA PREPARE " + xid);
  struct RollBack {  // should the test end early, so that the table can go
    MySqlConnection& sql;
    std::string xid;
    bool done = false;
    ~RollBack() {
      if (!done) sql.execute("XA ROLLBACK " + xid);
    }
  } guard{sql, xid};

  BinlogReader reader(testing::test_mysql_url(), server_id(), start, {captured});
  auto transactions = read_transactions(reader, 2);
  REQUIRE(transactions.size() == 2);
  CHECK(texts(transactions[0]) == std::vector<std::string>{"+I[1, 10]"});
  CHECK(texts(transactions[1]) == std::vector<std::string>{"+I[3, 30]", "-U[1, 10]", "+U[1, 11]"});
  // The prepared XA transaction is held, and a reader resuming must read it again.
  CHECK(read_transactions(reader, 1).empty());
  const BinlogPosition resume = reader.resume_position();
  CHECK(resume == transactions[1].end);

  sql.execute("XA COMMIT " + xid);
  guard.done = true;
  transactions = read_transactions(reader, 1);
  REQUIRE(transactions.size() == 1);
  CHECK(texts(transactions[0]) == std::vector<std::string>{"+I[4, 40]"});

  // A reader from a transaction's end reads what came after, and only that.
  sql.execute("DELETE FROM " + t + " WHERE id = 3");
  BinlogReader resumed(testing::test_mysql_url(), server_id(), transactions[0].end, {captured});
  const auto after = read_transactions(resumed, 1);
  REQUIRE(after.size() == 1);
  CHECK(texts(after[0]) == std::vector<std::string>{"-D[3, 30]"});
}

TEST_CASE("the binlog position names the file it is in after the server rotates its binlog",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_rotate", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  const CapturedTable captured = capture_table(sql, t);
  BinlogReader reader(testing::test_mysql_url(), server_id(), current_binlog_position(sql),
                      {captured});
  sql.execute("INSERT INTO " + t + " VALUES (1)");
  sql.execute("FLUSH BINARY LOGS");
  sql.execute("INSERT INTO " + t + " VALUES (2)");
  // (The end may yet move on: the server writes a binlog checkpoint event
  // into the new file once the old one's transactions are all durable.)
  const BinlogPosition rotated = current_binlog_position(sql);
  const auto transactions = read_transactions(reader, 2);
  REQUIRE(transactions.size() == 2);
  CHECK(transactions[0].end.file != rotated.file);
  CHECK(transactions[1].end.file == rotated.file);
  CHECK(reader.resume_position().file == rotated.file);

  // A reader started there reads on from it, into the next rotation.
  sql.execute("FLUSH BINARY LOGS");
  sql.execute("INSERT INTO " + t + " VALUES (3)");
  BinlogReader resumed(testing::test_mysql_url(), server_id(), reader.resume_position(),
                       {captured});
  const auto after = read_transactions(resumed, 1);
  REQUIRE(after.size() == 1);
  CHECK(texts(after[0]) == std::vector<std::string>{"+I[3]"});
  CHECK(after[0].end.file == current_binlog_position(sql).file);
}

TEST_CASE(
    "DDL on a captured table fails the reader with the statement, unless it adds a "
    "nullable column at the end",
    "[mysql][cdc]") {
  testing::TestTable table("cdc_ddl", "id BIGINT PRIMARY KEY, qty INT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  BinlogReader reader(testing::test_mysql_url(), server_id(), current_binlog_position(sql),
                      {capture_table(sql, t)});
  // A nullable column at the end: taken, and read past.
  sql.execute("ALTER TABLE " + t + " ADD COLUMN note VARCHAR(10)");
  sql.execute("INSERT INTO " + t + " VALUES (1, 5, 'new')");
  const auto transactions = read_transactions(reader, 1);
  REQUIRE(transactions.size() == 1);
  CHECK(texts(transactions[0]) == std::vector<std::string>{"+I[1, 5]"});
  // Anything else fails, with the statement.
  for (const std::string ddl : {" DROP COLUMN note", " ADD COLUMN later INT NOT NULL DEFAULT 0",
                                " ADD COLUMN early INT FIRST", " ADD INDEX by_qty (qty)"}) {
    INFO(ddl);
    BinlogReader again(testing::test_mysql_url(), server_id(), current_binlog_position(sql),
                       {capture_table(sql, t)});
    sql.execute("ALTER TABLE " + t + ddl);
    CHECK_THROWS_WITH(read_transactions(again, 1),
                      Catch::Contains("DDL on captured table '" + t + "'") &&
                          Catch::Contains(ddl.substr(1)) && Catch::Contains("start it afresh"));
  }
}

TEST_CASE("a binlog position the server no longer has is named", "[mysql][cdc]") {
  testing::TestTable table("cdc_purged", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  BinlogReader reader(testing::test_mysql_url(), server_id(), {"mariadb-bin.999999", 4},
                      {capture_table(sql, table.name())});
  CHECK_THROWS_AS(reader.next(), ConfigError);
  BinlogReader again(testing::test_mysql_url(), server_id(), {"mariadb-bin.999999", 4},
                     {capture_table(sql, table.name())});
  CHECK_THROWS_WITH(again.next(),
                    Catch::Contains("mariadb-bin.999999:4") && Catch::Contains("purged"));
}

TEST_CASE("a column type the reader does not take is named", "[mysql][cdc]") {
  testing::TestTable table("cdc_enum", "id BIGINT PRIMARY KEY, mood ENUM('up', 'down')");
  CHECK_THROWS_WITH(capture_table(table.connection(), table.name()),
                    Catch::Contains("column 'mood' is enum('up','down')"));
}

TEST_CASE("a user without the replication grants is told which one it lacks", "[mysql][cdc]") {
  testing::TestTable table("cdc_grants", "id BIGINT PRIMARY KEY");
  MySqlUrl plain = testing::test_mysql_url();
  plain.user = "sluice_plain";  // scripts/mariadb's user without them
  MySqlConnection connection(plain);
  CHECK_THROWS_WITH(current_binlog_position(connection), Catch::Contains("BINLOG MONITOR"));
  const BinlogPosition end = current_binlog_position(table.connection());
  const CapturedTable captured = capture_table(table.connection(), table.name());
  CHECK_THROWS_WITH(
      [&] {
        BinlogReader reader(plain, server_id(), end, {captured});
        reader.next();
      }(),
      Catch::Contains("REPLICATION SLAVE"));
}

TEST_CASE("a server whose binlog is not in ROW format is refused, saying so",
          "[mysql][cdc][serial]") {
  MySqlConnection sql(testing::test_mysql_url());
  sql.execute("SET GLOBAL binlog_format = 'MIXED'");
  struct Restore {
    MySqlConnection& sql;
    ~Restore() { sql.execute("SET GLOBAL binlog_format = 'ROW'"); }
  } restore{sql};
  CHECK_THROWS_WITH(current_binlog_position(sql),
                    Catch::Contains("binlog_format is MIXED") && Catch::Contains("ROW"));
}
