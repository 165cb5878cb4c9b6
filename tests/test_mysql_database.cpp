#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/sink/xa.hpp"
#include "sluice/connectors/mysql/table_patterns.hpp"
#include "sluice/tests/every_type.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;

namespace {

// The test server's URL with database `database`, as text for a command line.
std::string url_of(const std::string& database) {
  std::string url = testing::test_mysql_url_text();
  const size_t slash = url.find('/', url.find('@'));
  const size_t end = url.find('?', slash);
  return url.substr(0, slash + 1) + database + (end == std::string::npos ? "" : url.substr(end));
}

// mysql-to-mysql of every table of `database` into `target`, checkpointed
// often into `dir`.
std::string whole_database_command(const std::string& database, const std::string& target,
                                   const std::string& job, const testing::TempDir& dir,
                                   const std::string& behavior, const std::string& delivery) {
  return std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(database) +
         " --set sink.url=" + url_of(target) + " --set 'source.tables=" + database +
         ".*' --set job.name=" + job + " --set checkpoint.dir=" + dir.path().string() +
         " --set schema.change.behavior=" + behavior + " --set sink.delivery=" + delivery +
         " --set checkpoint.interval=50ms --set engine.flush.interval=10ms";
}

// Every column's values, INVISIBLE ones too, by the table's first two columns.
std::vector<std::vector<std::optional<std::string>>> rows_of(MySqlConnection& sql,
                                                             const std::string& database,
                                                             const std::string& table) {
  std::string columns;
  for (const TableColumn& c : sql.describe_table(table, database).columns)
    columns += (columns.empty() ? "" : ", ") + quote_identifier(c.name);
  return sql.query("SELECT " + columns + " FROM " + quote_identifier(database) + "." +
                   quote_identifier(table) + " ORDER BY 1, 2");
}

// Whether each of `tables` has the same rows, every column, in `target`
// (database `copy`) as in `source` (database `db`); false while one is not
// made yet.
bool same_rows(MySqlConnection& source, const std::string& db, MySqlConnection& target,
               const std::string& copy, const std::vector<std::string>& tables) {
  for (const std::string& table : tables) {
    try {
      if (rows_of(target, copy, table) != rows_of(source, db, table)) return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

// What information_schema says of a table's columns, a line each: name,
// type, charset, collation, nullability, whether in the primary key and
// whether INVISIBLE; and
// its default collation.
std::vector<std::string> shape_of(MySqlConnection& sql, const std::string& database,
                                  const std::string& table) {
  auto rows = sql.query(
      "SELECT COLUMN_NAME, COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, IS_NULLABLE, "
      "COLUMN_KEY = 'PRI', EXTRA LIKE '%INVISIBLE%' FROM information_schema.COLUMNS WHERE "
      "TABLE_SCHEMA = " +
      sql.quote(database) + " AND TABLE_NAME = " + sql.quote(table) + " ORDER BY ORDINAL_POSITION");
  const auto collation = sql.query("SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE " +
                                   std::string("TABLE_SCHEMA = ") + sql.quote(database) +
                                   " AND TABLE_NAME = " + sql.quote(table));
  rows.insert(rows.end(), collation.begin(), collation.end());
  std::vector<std::string> shape;
  for (const auto& row : rows) {
    std::string line;
    for (const auto& field : row) {
      if (!line.empty()) line += ' ';
      line += field.value_or("NULL");
    }
    shape.push_back(line);
  }
  return shape;
}

// same_rows(), and each table's columns alike too (shape_of()).
bool same_tables(MySqlConnection& source, const std::string& db, MySqlConnection& target,
                 const std::string& copy, const std::vector<std::string>& tables) {
  if (!same_rows(source, db, target, copy, tables)) return false;
  for (const std::string& table : tables) {
    if (shape_of(target, copy, table) != shape_of(source, db, table)) return false;
  }
  return true;
}

// That `target` holds no XA transaction of `job` prepared.
void check_nothing_prepared(MySqlConnection& target, const std::string& job) {
  for (const Xid& xid : xa_recover(target)) CHECK_FALSE(XidScheme::of_job(xid, job));
}

// The schema.change.behavior and sink.delivery that tests of tables made,
// dropped and renamed run under.
const std::vector<std::pair<std::string, std::string>> kTablesRuns = {
    {"evolve", "at-least-once"},
    {"evolve", "exactly-once"},
    {"lenient", "at-least-once"},
};

// A small shop, as CREATE TABLE <name> <definition>: tables of different
// columns, keys and charsets, and one the job does not capture.
const std::vector<std::pair<std::string, std::string>> kShop = {
    {"customers",
     "(id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET latin1 COLLATE latin1_german1_ci NOT "
     "NULL, email VARCHAR(80), since DATE) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"},
    {"orders_1",
     "(id BIGINT PRIMARY KEY, customer INT NOT NULL, amount DECIMAL(12,2), note TEXT, created "
     "DATETIME(3))"},
    {"orders_2",
     "(id BIGINT PRIMARY KEY, customer INT NOT NULL, amount DECIMAL(12,2), note TEXT, created "
     "DATETIME(3) INVISIBLE)"},
    {"items",
     "(order_id BIGINT, line SMALLINT UNSIGNED, sku CHAR(8) CHARACTER SET ascii, qty INT, "
     "PRIMARY KEY (order_id, line))"},
    {"audit_log", "(id BIGINT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40))"},
};
const std::vector<std::string> kCaptured = {"customers", "items", "orders_1", "orders_2"};

// `n` random autocommitted changes over the shop's tables, `round` making
// new keys its own.
void change_shop(MySqlConnection& sql, std::mt19937& random, int n, int round) {
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(static_cast<int>(random() % 60) + 1);
    const std::string fresh = std::to_string(100000 * (round + 1) + i);
    switch (random() % 9) {
      case 0:
        sql.execute("UPDATE customers SET name = CONCAT(name, 'ä'), email = NULL WHERE id = " + k);
        break;
      case 1:
        sql.execute("INSERT INTO customers VALUES (" + fresh + ", 'Jürgen', 'j@x', '2026-02-03')");
        break;
      case 2:
        sql.execute("DELETE FROM customers WHERE id = " + k);
        break;
      case 3:
        sql.execute("UPDATE orders_1 SET amount = amount + 0.25, note = 'späť' WHERE id = " + k);
        break;
      case 4:
        sql.execute("UPDATE IGNORE orders_2 SET id = " + fresh + " WHERE id = " + k);
        break;
      case 5:
        sql.execute("DELETE FROM orders_2 WHERE id = " + k);
        break;
      case 6:
        sql.execute("INSERT INTO items VALUES (" + fresh + ", 1, 'SKU-1', 3), (" + fresh +
                    ", 2, 'SKU-2', 4)");
        break;
      case 7:
        sql.execute("UPDATE items SET qty = qty + 1, line = line + 100 WHERE order_id = " + k);
        break;
      default:
        // One transaction over three tables, and a table no job captures.
        sql.execute("START TRANSACTION");
        sql.execute("UPDATE customers SET since = '2027-01-01' WHERE id = " + k);
        sql.execute("DELETE FROM items WHERE order_id = " + k);
        sql.execute("INSERT INTO orders_1 VALUES (" + fresh + ", " + k + ", 9.99, NULL, NOW(3))");
        sql.execute("INSERT INTO audit_log (what) VALUES ('x')");
        sql.execute("COMMIT");
    }
  }
}

// Runs `command` until `ready`, then stops it with SIGINT, as a user would.
void run_until(const std::string& command, const std::function<bool()>& ready) {
  testing::BackgroundCommand run(command + " 2>&1");
  const bool synced = testing::wait_until(ready);
  INFO(run.output());
  REQUIRE(synced);
  CHECK(run.signal(SIGINT).status == 130);
}

// Runs `command` with SLUICE_FAULT=`fault`, which kills it; its output.
std::string run_killed(const std::string& fault, const std::string& command) {
  const auto killed = testing::run_command("SLUICE_FAULT=" + fault + " " + command + " 2>&1");
  INFO(killed.output);
  REQUIRE(killed.status == 137);
  return killed.output;
}

}  // namespace

TEST_CASE(
    "mysql-to-mysql with source.tables keeps every matched table of a database in sync, "
    "creating the targets, across kills",
    "[mysql][cdc]") {
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string job = testing::unique_name("shop");
  const testing::PreparedGuard guard(job);
  MySqlConnection sql(shop.url());
  for (const auto& [table, definition] : kShop)
    sql.execute("CREATE TABLE " + table + " " + definition);
  sql.execute(
      "INSERT INTO customers SELECT seq, CONCAT('Kunde ', seq), CONCAT(seq, '@x'), "
      "'2025-01-01' + INTERVAL seq DAY FROM seq_1_to_60");
  for (const char* orders : {"orders_1", "orders_2"}) {
    sql.execute(std::string("INSERT INTO ") + orders +
                " (id, customer, amount, note, created) SELECT seq, seq % 60 + 1, seq / 8, "
                "REPEAT('n', seq % 7), "
                "'2026-03-04 05:06:07.891' FROM seq_1_to_300");
  }
  sql.execute(
      "INSERT INTO items SELECT seq DIV 3 + 1, seq % 3, CONCAT('S', seq), seq FROM "
      "seq_1_to_180");

  const std::string db = shop.url().database;
  const std::string command =
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".customers, " + db + ".orders_[0-9]+, " + db + ".it\\.ms'" + " --set job.name=" + job +
      " --set checkpoint.dir=" + dir.path().string() + " --set sink.delivery=" + delivery +
      " --set checkpoint.interval=50ms --set engine.flush.interval=20ms" +
      " --set source.snapshot.chunk-rows=7 --set source.rate=3000";
  MySqlConnection target(replica.url());
  // The first captured table whose target differs, as "table: N rows, of
  // which M differ, in the target; K in the source"; empty when none does.
  const auto difference = [&]() -> std::string {
    for (const std::string& table : kCaptured) {
      const auto copied = rows_of(target, replica.url().database, table);
      const auto rows = rows_of(sql, db, table);
      if (copied == rows) continue;
      size_t differ = 0;
      for (size_t i = 0; i < std::min(copied.size(), rows.size()); ++i)
        differ += copied[i] != rows[i];
      return table + ": " + std::to_string(copied.size()) + " rows, of which " +
             std::to_string(differ) + " differ, in the target; " + std::to_string(rows.size()) +
             " in the source";
    }
    return "";
  };
  const auto in_sync = [&] { return difference().empty(); };
  const auto tables_exist = [&] {
    for (const std::string& table : kCaptured) {
      if (!target.find_table(table)) return false;
    }
    return true;
  };
  const auto has_rows = [&] {
    return !target
                .query("SELECT 1 FROM " + quote_identifier(replica.url().database) +
                       ".orders_1 LIMIT 1")
                .empty();
  };
  // Killed in the snapshot, then twice while changes stream: once at
  // once, once after it caught up and checkpointed.
  for (int round = 0; round < 3; ++round) {
    testing::BackgroundCommand run(command + " 2>&1");
    REQUIRE(testing::wait_until(tables_exist));
    if (round == 0) REQUIRE(testing::wait_until(has_rows));
    change_shop(sql, random, 40, round);
    if (round == 2) {
      const bool synced = testing::wait_until(in_sync);
      INFO(difference() << "\n" << run.output());
      REQUIRE(synced);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // checkpoints in the binlog
      change_shop(sql, random, 40, 10 + round);
    }
    const auto killed = run.kill();
    INFO(killed.output);
    CHECK(killed.status == 137);
  }
  testing::BackgroundCommand run(command + " 2>&1");
  change_shop(sql, random, 40, 3);
  const bool synced = testing::wait_until(in_sync);
  INFO(difference());
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK_THAT(finished.output, Catch::Contains("resuming the binlog"));
  CHECK(synced);
  CHECK(finished.status == 130);
  for (const std::string& table : kCaptured) {
    INFO(table);
    CHECK(shape_of(target, replica.url().database, table) == shape_of(sql, db, table));
  }
  // Not matched, so neither read nor created.
  CHECK_FALSE(target.find_table("audit_log"));
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with checkpoints an hour apart reads its snapshot and follows tables made "
    "and altered without waiting for the interval",
    "[mysql][cdc]") {
  // Each waits for a checkpoint: the snapshot for one that holds where it
  // began, a schema change for one after the rows before it, a table made
  // for one that holds where its snapshot began.
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE a (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO a SELECT seq, seq FROM seq_1_to_10");
  const std::string db = shop.url().database;
  const std::string command =
      whole_database_command(db, replica.url().database, testing::unique_name("requested"), dir,
                             "evolve", "at-least-once") +
      " --set checkpoint.interval=1h";
  MySqlConnection target(replica.url());
  const auto same = [&](const std::string& table) {
    return same_rows(sql, db, target, replica.url().database, {table});
  };
  testing::BackgroundCommand run(command + " 2>&1");
  REQUIRE(testing::wait_until([&] { return same("a"); }));
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(i);
    sql.execute("CREATE TABLE t" + n + " (id INT PRIMARY KEY, v VARCHAR(10))");
    sql.execute("INSERT INTO t" + n + " VALUES (1, 'one'), (2, 'two')");
    sql.execute("ALTER TABLE a ADD COLUMN c" + n + " INT DEFAULT " + n);
    sql.execute("INSERT INTO a (id) VALUES (" + std::to_string(100 + i) + ")");
  }
  const bool synced = testing::wait_until([&] {
    for (int i = 0; i < 5; ++i) {
      if (!same("t" + std::to_string(i))) return false;
    }
    return same("a");
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
}

TEST_CASE(
    "mysql-to-mysql copies what the source holds whatever the servers' sql_mode: a key 0 into "
    "AUTO_INCREMENT, zero dates, backslashes, CHAR keys",
    "[mysql][cdc][serial]") {
  const std::string row_events = GENERATE("on", "off");
  INFO("sink.row-events=" << row_events);
  // As MySQL 8 and more: zero dates refused, strings quoted and escaped
  // otherwise, CHARs read padded.
  const testing::ScopedGlobal mode(
      "sql_mode",
      "'ANSI_QUOTES,NO_BACKSLASH_ESCAPES,STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,"
      "PAD_CHAR_TO_FULL_LENGTH,ERROR_FOR_DIVISION_BY_ZERO'");
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string db = shop.url().database;
  MySqlConnection sql(shop.url());
  sql.execute("SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'");
  const std::string table =
      "(id INT AUTO_INCREMENT PRIMARY KEY, d DATE, t DATETIME, s VARCHAR(20) DEFAULT 'a\\\\b', "
      "c CHAR(6))";
  sql.execute("CREATE TABLE z " + table);
  sql.execute(
      "INSERT INTO z VALUES (0, '0000-00-00', '2020-00-00 00:00:00', 'x\\\\y''z', 'ab'), "
      "(7, '2020-02-00', NULL, DEFAULT, 'cd')");
  sql.execute("CREATE TABLE k (k CHAR(8) PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO k VALUES ('ab', 1), ('cd', 2)");
  // A target made by hand, AUTO_INCREMENT and all.
  MySqlConnection target(replica.url());
  target.execute("CREATE TABLE z " + table);
  const std::string job = testing::unique_name("modes");
  testing::BackgroundCommand run(
      whole_database_command(db, replica.url().database, job, dir, "evolve", "at-least-once") +
      " --set sink.row-events=" + row_events + " 2>&1");
  const auto same = [&] { return same_rows(sql, db, target, replica.url().database, {"z", "k"}); };
  const bool snapshot = testing::wait_until(same);
  sql.execute("UPDATE z SET d = '0000-00-00', c = 'zz' WHERE id IN (0, 7)");
  sql.execute("INSERT INTO z VALUES (8, '0000-01-01', '0000-00-00 00:00:00', 'q\\\\', 'e')");
  sql.execute("UPDATE k SET v = v + 10");
  sql.execute("INSERT INTO k VALUES ('ef', 3)");
  const bool binlog = testing::wait_until(same);
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(snapshot);
  CHECK(binlog);
  CHECK(finished.status == 130);
  CHECK(target.query("SELECT s FROM z WHERE id = 0").at(0).at(0) == "x\\y'z");
}

TEST_CASE(
    "mysql-to-mysql writes into targets made by hand with the source's foreign keys, whatever "
    "order it writes the tables in",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  const std::string row_events = GENERATE("on", "off");
  INFO("sink.delivery=" << delivery << ", sink.row-events=" << row_events);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string db = shop.url().database;
  // The snapshot reads `child` before `parent`; exactly-once writes each
  // in a transaction of its own.
  const std::vector<std::string> tables = {
      "CREATE TABLE parent (id INT PRIMARY KEY, v VARCHAR(10))",
      "CREATE TABLE child (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES "
      "parent (id))"};
  MySqlConnection sql(shop.url());
  MySqlConnection target(replica.url());
  for (const std::string& table : tables) {
    sql.execute(table);
    target.execute(table);
  }
  sql.execute("INSERT INTO parent SELECT seq, 'p' FROM seq_1_to_20");
  sql.execute("INSERT INTO child SELECT seq, seq % 20 + 1 FROM seq_1_to_100");
  const std::string job = testing::unique_name("keys");
  const testing::PreparedGuard guard(job);
  testing::BackgroundCommand run(
      whole_database_command(db, replica.url().database, job, dir, "evolve", delivery) +
      " --set sink.row-events=" + row_events + " 2>&1");
  const auto same = [&] {
    return same_rows(sql, db, target, replica.url().database, {"parent", "child"});
  };
  const bool snapshot = testing::wait_until(same);
  // Parents and their children made, children moved, parents emptied and
  // deleted, in transactions.
  for (int round = 0; round < 5; ++round) {
    const std::string p = std::to_string(100 + round);
    sql.execute("START TRANSACTION");
    sql.execute("INSERT INTO parent VALUES (" + p + ", 'new')");
    sql.execute("INSERT INTO child VALUES (" + std::to_string(1000 + round) + ", " + p + ")");
    sql.execute("UPDATE child SET pid = " + p + " WHERE pid = " + std::to_string(round + 1));
    sql.execute("DELETE FROM parent WHERE id = " + std::to_string(round + 1));
    sql.execute("COMMIT");
  }
  const bool binlog = testing::wait_until(same);
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(snapshot);
  CHECK(binlog);
  CHECK(finished.status == 130);
}

TEST_CASE(
    "mysql-to-mysql follows CREATE and ALTER TABLE as the session that ran them: its sql_mode "
    "(ANSI_QUOTES; not strict, rounding), its clock and its time zone",
    "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string db = shop.url().database;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE a (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO a VALUES (1, 1)");
  const std::string job = testing::unique_name("quotes");
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, "evolve", "at-least-once");
  MySqlConnection target(replica.url());
  const auto same = [&](const std::vector<std::string>& tables) {
    return same_tables(sql, db, target, replica.url().database, tables);
  };
  testing::BackgroundCommand run(command + " 2>&1");
  REQUIRE(testing::wait_until([&] { return same({"a"}); }));  // the binlog from here on
  // "q" names a table, and 'x' is a string.
  sql.execute("SET SESSION sql_mode = 'ANSI_QUOTES'");
  sql.execute("CREATE TABLE \"q\" (\"id\" INT PRIMARY KEY, \"v\" VARCHAR(10) DEFAULT 'x')");
  sql.execute("INSERT INTO \"q\" (\"id\") VALUES (1)");
  sql.execute("ALTER TABLE \"q\" ADD COLUMN \"w\" INT DEFAULT 3, RENAME COLUMN \"v\" TO \"vv\"");
  sql.execute("ALTER TABLE \"a\" ADD COLUMN \"n\" VARCHAR(5) DEFAULT 'n' FIRST");
  // The rows it has take the moment the source ran it, not the target's.
  sql.execute("SET @@timestamp = 981173106.789");
  sql.execute("ALTER TABLE a ADD COLUMN ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)");
  // A DATETIME's, the local time of the session's time zone: an offset, or
  // a named zone at its offset then (summer time in Berlin), not now.
  sql.execute("SET time_zone = '+05:30'");
  sql.execute("ALTER TABLE a ADD COLUMN at_offset DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3)");
  sql.execute("SET @@timestamp = 994000000.5, time_zone = 'Europe/Berlin'");
  sql.execute("ALTER TABLE a ADD COLUMN at_named DATETIME DEFAULT CURRENT_TIMESTAMP");
  sql.execute("SET @@timestamp = DEFAULT, time_zone = DEFAULT");
  sql.execute("INSERT INTO \"q\" VALUES (2, 'b', 4)");
  sql.execute("INSERT INTO \"a\" (n, id, v, ts) VALUES ('long', 2, 2, NOW(3))");
  // Not strict: what the ALTER cuts, with a warning, it cuts in the target
  // too, rather than fail there; TIME_ROUND_FRACTIONAL rounds.
  sql.execute("SET SESSION sql_mode = 'TIME_ROUND_FRACTIONAL'");
  sql.execute("ALTER TABLE a MODIFY n VARCHAR(2), MODIFY at_offset DATETIME");
  sql.execute("SET SESSION sql_mode = DEFAULT");
  const bool synced = testing::wait_until([&] { return same({"a", "q"}); });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  CHECK(target.query("SELECT vv, w FROM q WHERE id = 1") ==
        std::vector<std::vector<std::optional<std::string>>>{{"x", "3"}});
  CHECK(target.query("SELECT at_offset, at_named FROM a WHERE id = 1") ==
        std::vector<std::vector<std::optional<std::string>>>{
            {"2001-02-03 09:35:07", "2001-07-01 17:06:40"}});
  CHECK(target.query("SELECT n FROM a ORDER BY id") ==
        std::vector<std::vector<std::optional<std::string>>>{{"n"}, {"lo"}});
}

TEST_CASE(
    "mysql-to-mysql makes to the target what an ALTER TABLE changes unlogged: generated "
    "columns' values, defaults",
    "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string db = shop.url().database;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE g (id INT PRIMARY KEY, a INT, w INT AS (a * 3) VIRTUAL)");
  sql.execute("INSERT INTO g (id, a) VALUES (1, 1), (2, 2)");
  sql.execute("CREATE TABLE k (v INT, s VARCHAR(5))");  // no key, rows that repeat
  sql.execute("INSERT INTO k VALUES (3, 'c'), (1, 'a'), (2, 'b'), (2, 'b')");
  const std::string job = testing::unique_name("generated");
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, "evolve", "at-least-once");
  MySqlConnection target(replica.url());
  const auto same = [&] { return same_rows(sql, db, target, replica.url().database, {"g", "k"}); };
  testing::BackgroundCommand run(command + " 2>&1");
  REQUIRE(testing::wait_until(same));  // the binlog from here on
  // AUTO_INCREMENT columns added number the rows: by the key, or keyless
  // in the rows' order; one of them made the key.
  sql.execute("ALTER TABLE g ADD COLUMN seq INT NOT NULL AUTO_INCREMENT UNIQUE");
  sql.execute("ALTER TABLE k ADD COLUMN id INT AUTO_INCREMENT PRIMARY KEY FIRST");
  sql.execute("UPDATE k SET s = 'x' WHERE id = 3");
  sql.execute("ALTER TABLE g ADD COLUMN v INT AS (a + 100) VIRTUAL, ADD s INT AS (a + 200) STORED");
  sql.execute("ALTER TABLE g MODIFY w INT AS (a * 7) VIRTUAL");
  sql.execute("ALTER TABLE g CHANGE w w7 INT AS (a * 7) VIRTUAL, ADD COLUMN z INT DEFAULT 5");
  sql.execute("INSERT INTO g (id, a) VALUES (3, 3)");
  // Defaults alone: the rows read as before.
  sql.execute("ALTER TABLE g ALTER COLUMN a SET DEFAULT 9, ALTER z DROP DEFAULT");
  sql.execute("ALTER TABLE g MODIFY z INT DEFAULT 6");
  sql.execute("ALTER TABLE g ADD COLUMN d INT NOT NULL DEFAULT 1, ALTER COLUMN d DROP DEFAULT");
  const auto defaults = [](MySqlConnection& c, const std::string& database) {
    return c.query(
        "SELECT COLUMN_NAME, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE "
        "TABLE_SCHEMA = " +
        c.quote(database) +
        " AND TABLE_NAME = 'g' AND COLUMN_NAME IN ('a', 'z', 'd') "
        "ORDER BY 1");
  };
  const bool synced = testing::wait_until(
      [&] { return same() && defaults(target, replica.url().database) == defaults(sql, db); });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  CHECK(target.query("SELECT id, w7, v, s, z, seq FROM g ORDER BY id") ==
        std::vector<std::vector<std::optional<std::string>>>{{"1", "7", "101", "201", "5", "1"},
                                                             {"2", "14", "102", "202", "5", "2"},
                                                             {"3", "21", "103", "203", "5", "3"}});
  CHECK(target.query("SELECT id, v, s FROM k ORDER BY id") ==
        std::vector<std::vector<std::optional<std::string>>>{
            {"1", "3", "c"}, {"2", "1", "a"}, {"3", "2", "x"}, {"4", "2", "b"}});
  CHECK(defaults(target, replica.url().database) ==
        std::vector<std::vector<std::optional<std::string>>>{
            {"a", "9"}, {"d", std::nullopt}, {"z", "6"}});
  // Only the ALTERs that changed what a column computes wrote its values.
  CHECK(finished.output.find("UPDATE `g` SET `v` = (`a` + 100), `s` = (`a` + 200)") !=
        std::string::npos);
  CHECK(finished.output.find("UPDATE `g` SET `w` = (`a` * 7)") != std::string::npos);
  CHECK(finished.output.find("UPDATE `g` SET `w7`") == std::string::npos);
}

TEST_CASE(
    "mysql-to-mysql with source.tables creates targets of every column type and key type like "
    "their sources, without a key too, and copies every value exactly from the snapshot and the "
    "binlog, across a kill",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase source;
  testing::TestDatabase replica;
  const std::string db = source.url().database;
  const std::string copy = replica.url().database;
  const std::string job = testing::unique_name("types");
  const testing::PreparedGuard guard(job);
  MySqlConnection sql(source.url());
  sql.execute("SET time_zone = '+00:00'");
  sql.execute(std::string("CREATE TABLE every_type (") + testing::kEveryType + ")");
  for (const std::string& row : testing::kEveryTypeRows)
    sql.execute("INSERT INTO every_type VALUES " + row);
  // The same without a key, a row twice: its deletes and updates find the
  // row by every column's value.
  sql.execute("CREATE TABLE every_type_keyless LIKE every_type");
  sql.execute("ALTER TABLE every_type_keyless DROP PRIMARY KEY");
  sql.execute("INSERT INTO every_type_keyless SELECT * FROM every_type");
  sql.execute("INSERT INTO every_type_keyless SELECT * FROM every_type WHERE id = 2");
  std::vector<std::string> tables = {"every_type", "every_type_keyless"};
  for (const testing::KeyCase& c : testing::kKeyCases) {
    const std::string table = "key_" + std::to_string(tables.size());
    sql.execute("CREATE TABLE " + table + " (" + c.columns + ", v INT, PRIMARY KEY (" + c.key +
                "))");
    sql.execute("INSERT INTO " + table + " SELECT " + c.values + ", seq FROM seq_1_to_" +
                std::to_string(c.rows));
    tables.push_back(table);
  }
  const std::string command = whole_database_command(db, copy, job, dir, "evolve", delivery) +
                              " --set source.snapshot.chunk-rows=7";
  MySqlConnection target(replica.url());
  const auto checksum = [](MySqlConnection& on, const std::string& database,
                           const std::string& table) {
    return on.query("CHECKSUM TABLE " + quote_identifier(database) + "." + table)
        .at(0)
        .at(1)
        .value_or("NULL");
  };
  // The first table whose target differs from it, and how; empty when none.
  const auto difference = [&]() -> std::string {
    for (const std::string& table : tables) {
      if (!target.find_table(table)) return table + ": no target yet";
      if (shape_of(target, copy, table) != shape_of(sql, db, table)) return table + ": shape";
      if (checksum(target, copy, table) != checksum(sql, db, table)) return table + ": rows";
    }
    return "";
  };
  // Which columns of every_type differ, in which rows.
  const auto every_type_differences = [&] {
    std::string differ;
    for (const auto& column :
         sql.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
                   sql.quote(db) + " AND TABLE_NAME = 'every_type'")) {
      const std::string c = *column.at(0);
      for (const auto& row :
           sql.query("SELECT s.id FROM every_type s LEFT JOIN " + quote_identifier(copy) +
                     ".every_type t ON t.id = s.id WHERE NOT (s." + c + " <=> t." + c + ")")) {
        differ += " " + c + " (row " + *row.at(0) + ")";
      }
    }
    return differ;
  };
  const auto in_sync = [&] { return difference().empty(); };
  const size_t half = testing::kEveryTypeUpdates.size() / 2;
  {
    // The snapshot, then binlog changes, and a kill.
    testing::BackgroundCommand run(command + " 2>&1");
    const bool snapshot = testing::wait_until(in_sync);
    INFO(difference() << every_type_differences() << "\n" << run.output());
    REQUIRE(snapshot);
    for (size_t u = 0; u < half; ++u) {
      sql.execute(testing::with_table(testing::kEveryTypeUpdates[u], "every_type"));
      sql.execute(testing::with_table(testing::kEveryTypeUpdates[u], "every_type_keyless"));
    }
    for (size_t t = 2; t < tables.size(); ++t)
      sql.execute("UPDATE " + tables[t] + " SET v = -v WHERE v % 3 = 0");
    const bool binlog = testing::wait_until(in_sync);
    INFO(difference() << every_type_differences() << "\n" << run.output());
    REQUIRE(binlog);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // checkpoints in the binlog
    const auto killed = run.kill();
    INFO(killed.output);
    CHECK(killed.status == 137);
  }
  // Changed while the job is down, then restored.
  for (size_t u = half; u < testing::kEveryTypeUpdates.size(); ++u) {
    sql.execute(testing::with_table(testing::kEveryTypeUpdates[u], "every_type"));
    sql.execute(testing::with_table(testing::kEveryTypeUpdates[u], "every_type_keyless"));
  }
  for (size_t t = 2; t < tables.size(); ++t)
    sql.execute("DELETE FROM " + tables[t] + " WHERE v % 3 = 1");
  testing::BackgroundCommand run(command + " 2>&1");
  const bool synced = testing::wait_until(in_sync);
  INFO(difference() << every_type_differences());
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK_THAT(finished.output, Catch::Contains("resuming the binlog"));
  CHECK(synced);
  CHECK(finished.status == 130);
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with route renames tables and merges shards, their keys kept apart by the "
    "source table's name, across kills and schema changes",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  const std::string db = shop.url().database;
  for (const char* shard : {"orders_1", "orders_2"}) {
    sql.execute(std::string("CREATE TABLE ") + shard +
                " (id INT PRIMARY KEY, amount DECIMAL(10,2), note VARCHAR(20))");
    // The same keys in both.
    sql.execute(std::string("INSERT INTO ") + shard + " SELECT seq, seq / 4, '" + shard +
                "' FROM seq_1_to_60");
  }
  sql.execute("CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20))");
  sql.execute("INSERT INTO customers SELECT seq, CONCAT('c', seq) FROM seq_1_to_30");
  const std::string job = testing::unique_name("route");
  const testing::PreparedGuard guard(job);
  const std::string command =
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".*' --set 'route=" + db + ".orders_[0-9]+ -> orders_all (source_table); " + db +
      ".cust.* -> copy_<>' --set job.name=" + job + " --set checkpoint.dir=" + dir.path().string() +
      " --set sink.delivery=" + delivery +
      " --set checkpoint.interval=50ms --set engine.flush.interval=10ms";
  MySqlConnection target(replica.url());
  // The shards' rows, each with its table's name, as the merged target should hold them.
  const auto merged = [&] {
    return sql.query("SELECT * FROM (SELECT *, '" + db + ".orders_1' FROM orders_1 UNION ALL " +
                     "SELECT *, '" + db + ".orders_2' FROM orders_2) u ORDER BY 1, 4");
  };
  const auto difference = [&]() -> std::string {
    try {
      if (target.query("SELECT * FROM orders_all ORDER BY id, source_table") != merged())
        return "orders_all differs";
      if (target.query("SELECT * FROM copy_customers ORDER BY id") !=
          sql.query("SELECT * FROM customers ORDER BY id"))
        return "copy_customers differs";
    } catch (const MySqlError& e) {
      return e.what();
    }
    return "";
  };
  const auto in_sync = [&] { return difference().empty(); };
  {
    testing::BackgroundCommand run(command + " 2>&1");
    REQUIRE(testing::wait_until(in_sync));
    sql.execute("UPDATE orders_1 SET amount = amount + 1 WHERE id % 3 = 0");
    sql.execute("DELETE FROM orders_2 WHERE id % 5 = 0");
    sql.execute("UPDATE orders_2 SET id = id + 100 WHERE id % 7 = 0");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(run.kill().status == 137);
  }
  // Both shards change their columns alike; the target once.
  sql.execute("ALTER TABLE orders_1 ADD COLUMN qty INT NOT NULL DEFAULT 1 AFTER id");
  sql.execute("INSERT INTO orders_1 (id, qty, amount) VALUES (500, 5, 5)");
  testing::BackgroundCommand run(command + " 2>&1");
  sql.execute("ALTER TABLE orders_2 ADD COLUMN qty INT NOT NULL DEFAULT 1 AFTER id");
  sql.execute("UPDATE orders_2 SET qty = 2 WHERE id < 10");
  sql.execute("UPDATE customers SET name = 'x' WHERE id = 3");
  const bool synced = testing::wait_until(in_sync);
  INFO(difference());
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  CHECK(target.find_table("orders_all")->primary_key ==
        std::vector<std::string>{"id", "source_table"});
  CHECK_FALSE(target.find_table("orders_1"));
  CHECK_FALSE(target.find_table("customers"));
  check_nothing_prepared(target, job);

  // Without the table column, shards whose keys could collide are refused.
  const auto refused = testing::run_command(
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".orders_.*' --set 'route=" + db + ".orders_[0-9]+ -> orders_all' --set job.name=" + job +
      "-x 2>&1");
  INFO(refused.output);
  CHECK(refused.status == 2);
  CHECK_THAT(refused.output, Catch::Contains(db + ".orders_1") &&
                                 Catch::Contains(db + ".orders_2") &&
                                 Catch::Contains("source table's name"));
}

TEST_CASE(
    "mysql-to-mysql with source.tables describes itself as a mysql-cdc table per source, a JDBC "
    "table per target and a statement set",
    "[mysql][cdc]") {
  testing::TestDatabase shop;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE orders_1 (id INT PRIMARY KEY, v INT)");
  sql.execute("CREATE TABLE orders_2 (id INT PRIMARY KEY, v INT)");
  sql.execute("CREATE TABLE users (id INT PRIMARY KEY, name TEXT)");
  const std::string db = shop.url().database;
  const auto result = testing::run_command(
      std::string(SLUICE_CLI) +
      " describe mysql-to-mysql --as flink-sql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(db) + " --set 'source.tables=" + db + ".*' --set 'route=" + db +
      ".orders_.* -> orders_all (shard); " + db + ".users -> copy_<>' 2>&1");
  INFO(result.output);
  CHECK(result.status == 0);
  const std::string& out = result.output;
  const auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = out.find(text); at != std::string::npos; at = out.find(text, at + 1)) ++n;
    return n;
  };
  CHECK(count("'connector' = 'mysql-cdc'") == 3);
  CHECK(count("'connector' = 'jdbc'") == 2);
  CHECK(count("'database-name' = '" + db + "'") == 3);
  for (const char* table : {"orders_1", "orders_2", "users"})
    CHECK(count(std::string("'table-name' = '") + table + "'") == 1);
  CHECK_THAT(out, Catch::Contains("CREATE TABLE `orders_all`") &&
                      Catch::Contains("PRIMARY KEY (`id`, `shard`) NOT ENFORCED") &&
                      Catch::Contains("CREATE TABLE `copy_users`") &&
                      Catch::Contains("EXECUTE STATEMENT SET\nBEGIN\n") &&
                      Catch::Contains("SELECT `id`, `v`, '" + db + ".orders_2' AS `shard` FROM") &&
                      Catch::Contains("INSERT INTO `copy_users`\nSELECT `id`, `name` FROM") &&
                      Catch::EndsWith("END;\n"));
}

TEST_CASE("mysql-to-mysql with source.tables refuses what would not write each table whole",
          "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestDatabase east;
  testing::TestDatabase west;
  for (const testing::TestDatabase* db : {&east, &west}) {
    MySqlConnection(db->url()).execute("CREATE TABLE orders (id INT PRIMARY KEY, v INT)");
  }
  const std::string base = std::string(SLUICE_CLI) +
                           " run mysql-to-mysql --set source.url=" + url_of(east.url().database) +
                           " --set sink.url=" + url_of(west.url().database) +
                           " --set checkpoint.dir=" + dir.path().string();
  const auto refused = [&](const std::string& options, const std::string& message) {
    const auto result = testing::run_command(base + " " + options + " 2>&1");
    INFO(result.output);
    CHECK(result.status == 2);
    CHECK_THAT(result.output, Catch::Contains(message));
  };
  const std::string e = east.url().database, w = west.url().database;
  refused("--set source.tables=" + e + ".orders --set sink.table=orders",
          "option 'sink.table' is for one table");
  refused("--set source.tables=" + e + ".nothing_[0-9]", "matches no table of the server");
  refused("--set source.tables=" + e + ".orders --set source.table=orders",
          "'source.table' and 'source.tables' are both set");
  refused("--set 'source.tables=" + e + ".orders, " + w + ".orders'",
          "tables '" + std::min(e, w) + ".orders' and '" + std::max(e, w) +
              ".orders' would both be written into table 'orders'");
  refused("--set source.tables=orders", "is not of the form database.table");
}

TEST_CASE("match_tables reads Flink CDC's db.table patterns", "[mysql][cdc]") {
  testing::TestDatabase shop;
  MySqlConnection sql(shop.url());
  for (const char* table : {"orders_1", "orders_22", "orders_x", "ordersa1", "users"})
    sql.execute(std::string("CREATE TABLE ") + table + " (id INT PRIMARY KEY)");
  const std::string db = shop.url().database;
  const auto names = [&](const std::vector<std::string>& patterns) {
    std::vector<std::string> out;
    for (const TableName& name : match_tables(sql, patterns)) {
      CHECK(name.database == db);
      out.push_back(name.table);
    }
    return out;
  };
  using Names = std::vector<std::string>;
  CHECK(names({db + ".orders_[0-9]+"}) == Names{"orders_1", "orders_22"});
  CHECK(names({db + ".*"}) == Names{"orders_1", "orders_22", "orders_x", "ordersa1", "users"});
  // '\.' is any character; a plain '.' is the separator.
  CHECK(names({db + ".orders\\.1"}) == Names{"orders_1", "ordersa1"});
  CHECK(names({db + ".users", db + ".orders_x"}) == Names{"orders_x", "users"});
  CHECK(names({db.substr(0, 6) + "\\." + db.substr(7) + ".users"}) == Names{"users"});
  CHECK_THROWS_WITH(match_tables(sql, {db + ".orders_[0-9"}),
                    Catch::Contains("is not a regular expression"));
}

TEST_CASE(
    "rows a killed run wrote past its last checkpoint and the source deleted since are "
    "deleted from an at-least-once target",
    "[mysql][cdc]") {
  // Killed in the snapshot of the second table, a few checkpoints in, 200
  // of its rows read at 500 a second: time enough, on a loaded machine, for
  // the sink to have written some; or before any checkpoint (none completes
  // within an hour).
  const std::string kill = GENERATE("cdc-snapshot-chunk:50", "");
  INFO("kill: " << (kill.empty() ? "before the first checkpoint" : "SLUICE_FAULT=" + kill));
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  for (const char* table : {"a", "b"}) {
    sql.execute(std::string("CREATE TABLE ") + table + " (id INT PRIMARY KEY, v VARCHAR(20))");
    sql.execute(std::string("INSERT INTO ") + table + " SELECT seq, 'v' FROM seq_1_to_300");
  }
  const std::string db = shop.url().database;
  const std::string command =
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".*' --set job.name=" + testing::unique_name("leak") +
      " --set checkpoint.dir=" + dir.path().string() +
      " --set engine.flush.interval=10ms --set source.snapshot.chunk-rows=10"
      // Flushes between the checkpoints, every 100 rows of the snapshot.
      " --set sink.buffer-flush.max-rows=100";
  MySqlConnection target(replica.url());
  const auto count = [&](const std::string& table) {
    return std::stoi(
        target
            .query("SELECT COUNT(*) FROM " + quote_identifier(replica.url().database) + "." + table)
            .at(0)
            .at(0)
            .value_or("0"));
  };
  if (kill.empty()) {
    testing::BackgroundCommand first(command +
                                     " --set checkpoint.interval=1h --set checkpoint.min-pause=1h "
                                     "2>&1");
    // As long as a snapshot of 600 rows at 2,000 a second would take.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    INFO(first.kill().output);
  } else {
    run_killed(kill, command + " --set checkpoint.interval=50ms --set source.rate=500");
    REQUIRE(count("b") > 0);  // it wrote into the second table
  }
  sql.execute("DELETE FROM a WHERE id > 100");
  sql.execute("DELETE FROM b WHERE id > 100");
  testing::BackgroundCommand second(command + " --set checkpoint.interval=50ms 2>&1");
  const bool caught_up = testing::wait_until([&] {
    try {
      return count("a") == 100 && count("b") == 100;
    } catch (const MySqlError&) {
      return false;  // not created yet
    }
  });
  INFO(second.signal(SIGINT).output);
  CHECK(caught_up);
}

namespace {

// The DDL a writer runs on the shop's two tables, with changes between:
// columns added (anywhere, with defaults), dropped, renamed, changed in
// type and charset, moved, made INVISIBLE; several clauses in one
// statement.
const std::vector<std::string> kSchemaChanges = {
    "ALTER TABLE orders ADD COLUMN status VARCHAR(12) NOT NULL DEFAULT 'new' AFTER id",
    "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT 0 FIRST, MODIFY name VARCHAR(80)",
    "ALTER TABLE orders DROP PRIMARY KEY, ADD PRIMARY KEY (customer, id)",
    "ALTER TABLE orders CHANGE note remark VARCHAR(100) CHARACTER SET latin1",
    "ALTER TABLE orders DROP COLUMN created, ADD COLUMN weight DOUBLE",
    "ALTER TABLE orders MODIFY amount DECIMAL(16,4) NOT NULL DEFAULT 0 AFTER status",
    "ALTER TABLE customers RENAME COLUMN email TO mail, ADD INDEX by_mail (mail)",
    "ALTER TABLE customers CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    // Its name joins the key: an update of a name moves the row.
    "ALTER TABLE customers DROP PRIMARY KEY, ADD PRIMARY KEY (id, name)",
    "ALTER TABLE orders MODIFY remark VARCHAR(100) CHARACTER SET latin1 INVISIBLE",
};

// Changes to the shop's rows that fit the columns after `changes` of
// kSchemaChanges ran: each names only the columns it has then.
void change_rows(MySqlConnection& sql, size_t changes, int round) {
  const std::string n = std::to_string(round);
  const std::string id = std::to_string(1000 + round);
  sql.execute("INSERT INTO orders (id, customer, amount) VALUES (" + id + ", 3, 1.25)");
  sql.execute("UPDATE orders SET amount = amount + 1 WHERE id % 7 = " + std::to_string(round % 7));
  sql.execute("DELETE FROM orders WHERE id = " + std::to_string(round + 1));
  sql.execute("INSERT INTO customers (id, name) VALUES (" + id + ", 'Zoë " + n + "')");
  sql.execute("UPDATE customers SET name = CONCAT(name, '·') WHERE id % 5 = " +
              std::to_string(round % 5));
  if (changes > 4) sql.execute("UPDATE orders SET weight = " + n + ".5 WHERE id = " + id);
  if (changes > 3) sql.execute("UPDATE orders SET remark = 'Grüße' WHERE id % 3 = 0");
}

}  // namespace

TEST_CASE(
    "mysql-to-mysql with source.tables makes each ALTER TABLE to the target, in order with "
    "the rows, across kills and restarts",
    "[mysql][cdc][serial]") {
  const auto [behavior, metadata, delivery] =
      GENERATE(table<std::string, std::string, std::string>({
          {"evolve", "NO_LOG", "at-least-once"},
          {"lenient", "FULL", "at-least-once"},
          {"evolve", "FULL", "exactly-once"},
          {"lenient", "NO_LOG", "exactly-once"},
      }));
  INFO("schema.change.behavior=" << behavior << ", binlog_row_metadata=" << metadata
                                 << ", sink.delivery=" << delivery);
  const testing::ScopedGlobal row_metadata("binlog_row_metadata", metadata);

  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute(
      "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET latin1, "
      "email VARCHAR(80))");
  sql.execute(
      "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT NOT NULL, amount "
      "DECIMAL(12,2), note TEXT, created DATETIME(3) DEFAULT '2026-01-02 03:04:05.678')");
  sql.execute(
      "INSERT INTO customers SELECT seq, CONCAT('Kunde ', seq), CONCAT(seq, '@x') FROM "
      "seq_1_to_40");
  sql.execute(
      "INSERT INTO orders (id, customer, amount, note) SELECT seq, seq % 40 + 1, seq / 8, "
      "'n' FROM seq_1_to_200");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("ddl");
  const testing::PreparedGuard guard(job);
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, behavior, delivery);
  MySqlConnection target(replica.url());
  // Every source column's values, as the source has them.
  const auto difference = [&]() -> std::string {
    for (const std::string table : {"customers", "orders"}) {
      std::string columns;
      for (const TableColumn& c : sql.describe_table(table).columns)
        columns += (columns.empty() ? "" : ", ") + quote_identifier(c.name);
      const std::string select = "SELECT " + columns + " FROM ";
      const auto rows = sql.query(select + table + " ORDER BY id");
      std::vector<std::vector<std::optional<std::string>>> copied;
      try {
        copied = target.query(select + table + " ORDER BY id");
      } catch (const MySqlError& e) {
        return table + ": " + e.what();
      }
      if (copied != rows) {
        return table + ": " + std::to_string(copied.size()) + " rows in the target, " +
               std::to_string(rows.size()) + " in the source";
      }
    }
    return "";
  };
  const auto in_sync = [&] { return difference().empty(); };

  size_t applied = 0;
  const auto next_change = [&] {
    sql.execute(kSchemaChanges.at(applied++));
    change_rows(sql, applied, static_cast<int>(applied));
  };
  {
    testing::BackgroundCommand run(command + " 2>&1");
    REQUIRE(testing::wait_until(in_sync));
    next_change();
    next_change();
    const bool synced = testing::wait_until(in_sync);
    INFO(difference() << "\n" << run.output());
    REQUIRE(synced);
    CHECK(run.kill().status == 137);
  }
  // Changed while the job is down: the restart reads the rows before them
  // with the columns of its checkpoint.
  next_change();
  next_change();
  {
    // Killed right after it altered the target: the restart replays the
    // change onto a target that has it.
    const auto killed =
        testing::run_command("SLUICE_FAULT=mysql-sink-schema-change " + command + " 2>&1");
    INFO(killed.output);
    CHECK(killed.status == 137);
  }
  testing::BackgroundCommand run(command + " 2>&1");
  while (applied < kSchemaChanges.size()) next_change();
  const bool synced = testing::wait_until(in_sync);
  INFO(difference());
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  CHECK_THAT(finished.output, Catch::Contains("resuming the binlog"));
  for (const std::string table : {"customers", "orders"}) {
    INFO(table);
    const auto source_shape = shape_of(sql, db, table);
    const auto target_shape = shape_of(target, replica.url().database, table);
    if (behavior == "evolve") {
      CHECK(target_shape == source_shape);
    } else {
      // Every source column as it is; the dropped ones stay, nullable.
      for (size_t c = 0; c + 1 < source_shape.size(); ++c) {
        INFO(source_shape[c]);
        CHECK(std::find(target_shape.begin(), target_shape.end(), source_shape[c]) !=
              target_shape.end());
      }
    }
  }
  if (behavior == "lenient") {
    const auto created = target.find_table("orders")->column("created");
    REQUIRE(created != nullptr);
    CHECK(created->nullable);
  }
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with source.tables starting afresh brings an existing target to its "
    "source's columns as schema.change.behavior says",
    "[mysql][cdc]") {
  const std::string behavior = GENERATE("lenient", "evolve", "exception");
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("schema.change.behavior=" << behavior << ", sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute(
      "CREATE TABLE t (id INT PRIMARY KEY, added VARCHAR(10) NOT NULL DEFAULT 'a', v BIGINT)");
  sql.execute("INSERT INTO t (id, v) VALUES (1, 10), (2, 20)");
  // As an earlier run that never took a checkpoint left it: behind by one
  // column, one narrower, and one the source dropped since.
  MySqlConnection target(replica.url());
  target.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT, gone INT NOT NULL)");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("fit");
  const testing::PreparedGuard guard(job);
  testing::BackgroundCommand run(
      whole_database_command(db, replica.url().database, job, dir, behavior, delivery) + " 2>&1");
  if (behavior == "exception") {
    const auto ended = run.wait();
    INFO(ended.output);
    CHECK(ended.status != 0);
    CHECK_THAT(ended.output, Catch::Contains("'added'"));
    return;
  }
  const auto copied = [&] {
    try {
      return target.query("SELECT id, added, v FROM t ORDER BY id");
    } catch (const MySqlError&) {
      return std::vector<std::vector<std::optional<std::string>>>{};
    }
  };
  const bool synced =
      testing::wait_until([&] { return copied() == sql.query("SELECT * FROM t ORDER BY id"); });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  const auto shape = shape_of(target, replica.url().database, "t");
  const auto source_shape = shape_of(sql, db, "t");
  if (behavior == "evolve") {
    CHECK(shape == source_shape);
  } else {
    const auto gone = target.find_table("t")->column("gone");
    REQUIRE(gone != nullptr);
    CHECK(gone->nullable);
    CHECK(target.find_table("t")->column("v")->column_type == "bigint(20)");
  }
}

TEST_CASE(
    "mysql-to-mysql with source.tables captures the tables created after it began, and follows "
    "DROP and TRUNCATE TABLE and CREATE OR REPLACE, across kills",
    "[mysql][cdc]") {
  const auto [behavior, delivery] = GENERATE(from_range(kTablesRuns));
  INFO("schema.change.behavior=" << behavior << ", sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO t SELECT seq, seq FROM seq_1_to_50");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("tables");
  const testing::PreparedGuard guard(job);
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, behavior, delivery);
  MySqlConnection target(replica.url());
  const auto checksum = [](MySqlConnection& c, const std::string& table) {
    try {
      return c.query("CHECKSUM TABLE " + quote_identifier(table)).at(0).at(1);
    } catch (const MySqlError&) {
      return std::optional<std::string>("missing");
    }
  };
  const auto in_sync = [&](std::vector<std::string> tables) {
    return [&sql, &target, &checksum, tables] {
      for (const std::string& table : tables) {
        if (checksum(sql, table) != checksum(target, table)) return false;
      }
      return true;
    };
  };
  {
    testing::BackgroundCommand run(command + " 2>&1");
    REQUIRE(testing::wait_until(in_sync({"t"})));
    // Created while it runs: with columns, LIKE another, with rows (… SELECT).
    sql.execute("CREATE TABLE n1 (id INT PRIMARY KEY, a VARCHAR(10) DEFAULT 'x')");
    sql.execute("INSERT INTO n1 VALUES (1, 'a'), (2, 'b')");
    sql.execute("CREATE TABLE n2 LIKE n1");
    sql.execute("INSERT INTO n2 SELECT * FROM n1");
    sql.execute("UPDATE n1 SET a = 'z' WHERE id = 1");
    sql.execute("CREATE TABLE n3 (id BIGINT PRIMARY KEY) SELECT id * 10 AS id FROM t");
    // Made again, of other columns, while it runs.
    sql.execute("CREATE TABLE n5 (id INT PRIMARY KEY, a INT)");
    sql.execute("INSERT INTO n5 VALUES (1, 1)");
    sql.execute("DROP TABLE n5");
    sql.execute("CREATE TABLE n5 (id INT PRIMARY KEY, b VARCHAR(3) NOT NULL)");
    sql.execute("INSERT INTO n5 VALUES (2, 'b')");
    // Replaced, in one statement, by one of other columns and rows.
    sql.execute("CREATE TABLE n6 (id INT PRIMARY KEY, a INT)");
    sql.execute("INSERT INTO n6 VALUES (1, 1), (2, 2)");
    sql.execute(
        "CREATE OR REPLACE TABLE n6 (id INT PRIMARY KEY, c VARCHAR(5)) SELECT id + 1 AS id, "
        "'new' AS c FROM n1");
    sql.execute("INSERT INTO n6 VALUES (9, 'nine')");
    std::vector<std::string> made = {"t", "n1", "n2", "n3"};
    if (behavior == "evolve") {  // lenient keeps the first ones' rows
      made.push_back("n5");
      made.push_back("n6");
    }
    const bool synced = testing::wait_until(in_sync(made));
    INFO(run.output());
    REQUIRE(synced);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // checkpoints in the binlog
    sql.execute("INSERT INTO n2 VALUES (3, 'c')");
    CHECK(run.kill().status == 137);
  }
  // While it is down: dropped, created again, created anew, emptied.
  sql.execute("DROP TABLE n1");
  sql.execute("CREATE TABLE n1 (id INT PRIMARY KEY, b INT)");
  sql.execute("INSERT INTO n1 VALUES (7, 7)");
  sql.execute("CREATE TABLE n4 (id INT PRIMARY KEY) SELECT id FROM n2");
  sql.execute("TRUNCATE t");
  sql.execute("INSERT INTO t VALUES (500, 5)");
  testing::BackgroundCommand run(command + " 2>&1");
  sql.execute("DROP TABLE n3");
  sql.execute("UPDATE n4 SET id = id + 10");
  if (behavior == "evolve") {
    const bool synced = testing::wait_until([&] {
      return in_sync({"t", "n1", "n2", "n4"})() && !target.find_table("n3");
    });
    INFO(run.output());
    CHECK(synced);
  } else {
    // Never dropped nor emptied: t keeps its rows, n1 and n3 theirs.
    const bool synced = testing::wait_until([&] {
      return in_sync({"n2", "n4"})() &&
             !target.query("SELECT * FROM n1 WHERE id = 7 AND b = 7").empty() &&
             !target.query("SELECT * FROM t WHERE id = 500").empty();
    });
    INFO(run.output());
    CHECK(synced);
    CHECK(target.query("SELECT COUNT(*) FROM t").at(0).at(0) == "51");
    CHECK(target.query("SELECT COUNT(*) FROM n1").at(0).at(0) == "3");
    CHECK(target.query("SELECT COUNT(*) FROM n3").at(0).at(0) == "50");
  }
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(finished.status == 130);
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with source.tables follows RENAME TABLE: within the tables it captures, out "
    "of them, swapped, with an online schema change's shadow table, and between routed targets, "
    "across kills",
    "[mysql][cdc][ddl]") {
  const auto [behavior, delivery] = GENERATE(from_range(kTablesRuns));
  INFO("schema.change.behavior=" << behavior << ", sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  for (const std::string table : {"a", "b", "c", "t", "u", "s1", "s2"}) {
    sql.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, v VARCHAR(20))");
    sql.execute("INSERT INTO " + table + " SELECT seq, CONCAT('" + table +
                "', seq) FROM seq_1_to_30");
  }
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("renames");
  const testing::PreparedGuard guard(job);
  // Tables whose names begin with a letter; shards s<n> merged into s_all.
  const std::string command =
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".[a-z].*' --set 'route=" + db + ".s[0-9]+ -> s_all (src)' --set job.name=" + job +
      " --set checkpoint.dir=" + dir.path().string() + " --set schema.change.behavior=" + behavior +
      " --set sink.delivery=" + delivery +
      " --set checkpoint.interval=50ms --set engine.flush.interval=10ms";
  MySqlConnection target(replica.url());
  const auto rows = [](MySqlConnection& c, const std::string& query) {
    try {
      return c.query(query);
    } catch (const MySqlError& e) {
      return std::vector<std::vector<std::optional<std::string>>>{{e.message()}};
    }
  };
  // The source tables, each as its target should have it.
  const auto difference = [&](const std::vector<std::string>& tables) -> std::string {
    for (const std::string& table : tables) {
      const bool shard = table.size() == 2 && table[0] == 's';
      const std::string in_target =
          shard ? "SELECT id, v FROM s_all WHERE src = " + sql.quote(db + "." + table) +
                      " ORDER BY id"
                : "SELECT * FROM " + quote_identifier(table) + " ORDER BY id";
      const auto want = rows(sql, "SELECT * FROM " + quote_identifier(table) + " ORDER BY id");
      const auto have = rows(target, in_target);
      if (have == want) continue;
      std::string out = table + ": the target has";
      for (const auto& row : have) out.append(" ").append(row.at(0).value_or("NULL"));
      out += "; the source";
      for (const auto& row : want) out.append(" ").append(row.at(0).value_or("NULL"));
      return out;
    }
    return "";
  };
  run_until(command, [&] { return difference({"a", "b", "c", "t", "u", "s1", "s2"}).empty(); });
  // While it is down, the renames and changes around them.
  sql.execute("RENAME TABLE t TO t2");
  sql.execute("UPDATE t2 SET v = 'x' WHERE id < 5");
  sql.execute(
      "ALTER TABLE u RENAME TO u2, ADD COLUMN w INT DEFAULT 3, DROP PRIMARY KEY, ADD PRIMARY KEY "
      "(id, v)");
  sql.execute("INSERT INTO u2 VALUES (100, 'new', 4)");
  sql.execute("RENAME TABLE a TO tmp, b TO a, tmp TO b");
  sql.execute("DELETE FROM a WHERE id > 25");
  sql.execute("UPDATE b SET v = 'b' WHERE id = 1");
  // An online schema change of c (gh-ost's cut-over).
  sql.execute("CREATE TABLE c_gho LIKE c");
  sql.execute("ALTER TABLE c_gho ADD COLUMN z INT");
  sql.execute("INSERT INTO c_gho SELECT id, v, id * 2 FROM c");
  sql.execute("RENAME TABLE c TO c_del, c_gho TO c");
  sql.execute("DROP TABLE c_del");
  sql.execute("UPDATE c SET z = 0 WHERE id = 7");
  // Out of the tables it captures, and between routed targets.
  sql.execute("RENAME TABLE t2 TO _t_off");
  sql.execute("RENAME TABLE s1 TO s7, s2 TO q2");
  sql.execute("UPDATE s7 SET v = 's7' WHERE id = 2");
  sql.execute("UPDATE q2 SET v = 'q2' WHERE id = 3");
  // Killed right after each of its first schema changes of the target.
  for (int n = 1; n <= 6; ++n) {
    run_killed("mysql-sink-schema-change:" + std::to_string(n), command);
  }
  testing::BackgroundCommand run(command + " 2>&1");
  const std::vector<std::string> now = {"a", "b", "c", "u2", "s7", "q2"};
  const bool synced = testing::wait_until([&] { return difference(now).empty(); });
  const auto finished = run.signal(SIGINT);
  INFO(difference(now) << "\n" << finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  for (const std::string table : {"a", "b", "c", "u2", "q2"}) {
    INFO(table);
    CHECK(shape_of(target, replica.url().database, table) == shape_of(sql, db, table));
  }
  CHECK(rows(target, "SELECT COUNT(*) FROM s_all WHERE src NOT LIKE '%.s7'").at(0).at(0) == "0");
  for (const std::string gone : {"t", "u", "c_gho", "s1", "s2", "tmp", "_t_off"}) {
    INFO(gone);
    CHECK_FALSE(target.find_table(gone));
  }
  // Renamed out of the tables it captures, or dropped: gone, or kept under
  // lenient.
  for (const std::string dropped : {"t2", "c_del"}) {
    INFO(dropped);
    CHECK(target.find_table(dropped).has_value() == (behavior == "lenient"));
  }
  check_nothing_prepared(target, job);
}

TEST_CASE("mysql-to-mysql follows the columns of tables with FULLTEXT and long unique keys",
          "[mysql][cdc][ddl]") {
  // The columns after an ALTER TABLE are worked out on a temporary copy,
  // which can have no FULLTEXT index; nor can one made LIKE such a table.
  // A UNIQUE key of a BLOB is a hash, which the binlog's rows hold as a
  // hidden column after the others.
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase other;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute(
      "CREATE TABLE doc (id INT PRIMARY KEY, title VARCHAR(100), body TEXT, sig BLOB, "
      "FULLTEXT KEY ft (title, body), UNIQUE KEY (sig)) ENGINE=InnoDB STATS_PERSISTENT=1");
  sql.execute("INSERT INTO doc VALUES (1, 'a', 'one', 'x'), (2, 'b', 'two', 'y')");
  MySqlConnection templates(other.url());
  templates.execute("CREATE TABLE page (id INT PRIMARY KEY, body TEXT, FULLTEXT (body))");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("fulltext");
  testing::BackgroundCommand run(
      whole_database_command(db, replica.url().database, job, dir, "evolve", "at-least-once") +
      " 2>&1");
  MySqlConnection target(replica.url());
  const auto same = [&](const std::vector<std::string>& tables) {
    return same_tables(sql, db, target, replica.url().database, tables);
  };
  REQUIRE(testing::wait_until([&] { return same({"doc"}); }));
  sql.execute("ALTER TABLE doc ADD COLUMN extra INT NOT NULL DEFAULT 7 AFTER id");
  sql.execute("INSERT INTO doc VALUES (3, 8, 'c', 'three', 'z')");
  sql.execute("UPDATE doc SET body = 'uno', extra = 9, sig = 'w' WHERE id = 1");
  sql.execute("CREATE TABLE page LIKE " + other.url().database + ".page");
  sql.execute("INSERT INTO page VALUES (1, 'first')");
  sql.execute("ALTER TABLE page ADD COLUMN n INT NULL FIRST");
  sql.execute("INSERT INTO page VALUES (5, 2, 'second')");
  const bool synced = testing::wait_until([&] { return same({"doc", "page"}); });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
}

TEST_CASE(
    "mysql-to-mysql resumes across ALTER TABLEs that change columns' types, killed before and "
    "after each is made to the target",
    "[mysql][cdc][ddl]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  const std::string fault = GENERATE("mysql-sink-before-schema-change", "mysql-sink-schema-change");
  INFO("sink.delivery=" << delivery << ", SLUICE_FAULT=" << fault);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE w (id INT PRIMARY KEY, c VARCHAR(10))");
  sql.execute("INSERT INTO w SELECT seq, seq FROM seq_1_to_10");
  sql.execute("CREATE TABLE e (id INT PRIMARY KEY, n INT)");
  sql.execute("INSERT INTO e SELECT seq, seq FROM seq_1_to_10");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("types");
  const testing::PreparedGuard guard(job);
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, "evolve", delivery);
  MySqlConnection target(replica.url());
  const auto same = [&] {
    return same_tables(sql, db, target, replica.url().database, {"w", "e"});
  };
  run_until(command, same);
  // While it is down: a type narrowed (text to numbers), one widened
  // (numbers to text), rows before and after each. Killed at each change:
  // the target behind the columns the job starts with, or ahead of those
  // of its checkpoint.
  sql.execute("INSERT INTO w VALUES (11, '11')");
  sql.execute("ALTER TABLE w MODIFY c INT");
  sql.execute("INSERT INTO w VALUES (12, 12)");
  sql.execute("UPDATE e SET n = n + 1 WHERE id = 1");
  sql.execute("ALTER TABLE e MODIFY n TEXT");
  sql.execute("INSERT INTO e VALUES (11, 'eleven')");
  for (int n = 1; n <= 2; ++n) {
    run_killed(fault + ":" + std::to_string(n), command);
  }
  testing::BackgroundCommand run(command + " 2>&1");
  const bool synced = testing::wait_until(same);
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with source.tables under try_evolve leaves out a change the target refuses, "
    "and under ignore changes no target, writing the columns that fit",
    "[mysql][cdc][ddl]") {
  const std::string behavior = GENERATE("try_evolve", "ignore");
  INFO("schema.change.behavior=" << behavior);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT, w VARCHAR(10))");
  sql.execute("INSERT INTO t SELECT seq, seq, 'w' FROM seq_1_to_20");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("fit");
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, behavior, "at-least-once");
  MySqlConnection target(replica.url());
  testing::BackgroundCommand run(command + " 2>&1");
  REQUIRE(testing::wait_until(
      [&] { return target.find_table("t") && target.query("SELECT * FROM t").size() == 20; }));
  const std::vector<std::string> shape = shape_of(target, replica.url().database, "t");
  // A row of the target's own, which a NOT NULL v would not hold.
  target.execute("INSERT INTO t VALUES (999, NULL, 'own')");
  sql.execute("ALTER TABLE t MODIFY v INT NOT NULL, ADD COLUMN x INT DEFAULT 5");
  sql.execute("UPDATE t SET x = id, v = v + 1 WHERE id <= 10");
  sql.execute("ALTER TABLE t DROP COLUMN w, RENAME COLUMN v TO vv");
  sql.execute("INSERT INTO t VALUES (21, 21, 21)");
  sql.execute("DELETE FROM t WHERE id = 2");
  // What the target should have of the source's rows, in the columns it
  // keeps: try_evolve has v NULL-able and named vv, x, and no w; ignore
  // its own columns, vv's values not written since it was renamed.
  const std::string source_rows =
      behavior == "try_evolve"
          ? "SELECT id, vv, x FROM t ORDER BY id"
          : "SELECT id, IF(id <= 20, CAST(id + (id <= 10) AS CHAR), NULL), IF(id <= 20, 'w', "
            "NULL) FROM t ORDER BY id";
  const std::string target_rows = behavior == "try_evolve"
                                      ? "SELECT id, vv, x FROM t WHERE id < 999 ORDER BY id"
                                      : "SELECT id, v, w FROM t WHERE id < 999 ORDER BY id";
  const bool synced = testing::wait_until([&] {
    try {
      return target.query(target_rows) == sql.query(source_rows);
    } catch (const MySqlError&) {
      return false;  // the columns are not there yet
    }
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(synced);
  CHECK(finished.status == 130);
  CHECK(target.query("SELECT COUNT(*) FROM t WHERE id = 999").at(0).at(0) == "1");
  if (behavior == "try_evolve") {
    CHECK_THAT(finished.output, Catch::Contains("refused, left out") &&
                                    Catch::Contains("MODIFY COLUMN `v` int(11) NOT NULL"));
    CHECK(target.find_table("t")->column("vv")->nullable);
    CHECK(target.find_table("t")->column("w") == nullptr);
  } else {
    CHECK(shape_of(target, replica.url().database, "t") == shape);
  }
}

TEST_CASE(
    "mysql-to-mysql with sink.on-error=dead-letter puts the changes the target refuses into the "
    "dead-letter table and writes the others",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(20))");
  sql.execute(
      "INSERT INTO t SELECT seq, CAST(seq AS SIGNED) - 5, CONCAT('s', seq) FROM seq_1_to_20");
  MySqlConnection target(replica.url());
  // The target takes no negative v.
  target.execute(
      "CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(20), CONSTRAINT positive CHECK (v >= "
      "0))");
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("letters");
  const testing::PreparedGuard guard(job);
  const BinlogPosition start = current_binlog_position(sql);
  testing::BackgroundCommand run(
      whole_database_command(db, replica.url().database, job, dir, "lenient", delivery) +
      " --set sink.on-error=dead-letter --set sink.dead-letter.table=refused 2>&1");
  REQUIRE(testing::wait_until(
      [&] { return target.query("SELECT COUNT(*) FROM t").at(0).at(0) == "16"; }));
  sql.execute("UPDATE t SET v = -1, s = 'no' WHERE id = 10");
  sql.execute("INSERT INTO t VALUES (30, 3, 'yes'), (31, -3, 'no')");
  sql.execute("UPDATE t SET s = 'after' WHERE id = 11");
  const auto letters = [&] {
    try {
      return target.query(
          "SELECT source_table, target_table, change_key, change_kind, error_code, error, "
          "position FROM refused ORDER BY id");
    } catch (const MySqlError&) {
      return std::vector<std::vector<std::optional<std::string>>>{};
    }
  };
  const bool written = testing::wait_until([&] {
    return letters().size() == 6 &&
           !target.query("SELECT * FROM t WHERE id = 11 AND s = 'after'").empty();
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  REQUIRE(written);
  CHECK(finished.status == 130);
  CHECK_THAT(finished.output, Catch::Contains("changes refused, dead letters") &&
                                  Catch::Contains("into dead-letter table 'refused'"));
  // Every change but the refused ones, in order.
  CHECK(target.query("SELECT id, v, s FROM t ORDER BY id") ==
        sql.query("SELECT id, IF(id = 10, 5, v), IF(id = 10, 's10', s) FROM t WHERE v >= 0 OR id "
                  "= 10 ORDER BY id"));
  const auto refused = letters();
  std::vector<std::string> keys;
  for (const auto& row : refused) {
    CHECK(row.at(0) == db + ".t");
    CHECK(row.at(1) == "t");
    CHECK(row.at(4) == "4025");  // ER_CONSTRAINT_FAILED
    CHECK_THAT(row.at(5).value_or(""), Catch::Contains("CONSTRAINT `positive` failed"));
    keys.push_back(row.at(2).value_or("") + " " + row.at(3).value_or(""));
    // Read by the snapshot, or where the binlog has it.
    const std::string position = row.at(6).value_or("");
    INFO(keys.back() << " from " << position);
    const std::set<std::string> snapshot = {"id=1", "id=2", "id=3", "id=4"};
    const std::string from = snapshot.contains(row.at(2).value_or("")) ? "the snapshot at " : "";
    REQUIRE_THAT(position, Catch::StartsWith(from + "binlog "));
    const auto at = BinlogPosition::parse(position.substr(from.size() + 7));
    REQUIRE(at.has_value());
    CHECK(*at >= start);
  }
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"id=1 +I", "id=10 +U", "id=2 +I", "id=3 +I", "id=31 +I",
                                         "id=4 +I"});
  check_nothing_prepared(target, job);
}

// The rows of `table`, as the server prints them, in an order of their own:
// equal rows (a table without a key may hold several) next to each other.
std::vector<std::vector<std::optional<std::string>>> all_rows_of(MySqlConnection& sql,
                                                                 const std::string& table) {
  auto rows = sql.query("SELECT * FROM " + quote_identifier(table));
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST_CASE(
    "mysql-to-mysql with source.tables copies tables without a key as a replica applies "
    "their changes: rows that repeat, rows the collation takes for equal, across a kill in "
    "the snapshot",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string job = testing::unique_name("keyless");
  const testing::PreparedGuard guard(job);
  MySqlConnection sql(shop.url());
  // Every row of k is there ten times; 'x', 'X' and 'x ' are one value to
  // its collation, and a FLOAT is no DOUBLE.
  sql.execute(
      "CREATE TABLE k (a INT, b VARCHAR(20) COLLATE utf8mb4_general_ci, f FLOAT, d DOUBLE, m "
      "DECIMAL(8,3), t DATETIME(3), x BIT(5), l VARCHAR(10) CHARACTER SET latin1, j JSON, g "
      "GEOMETRY)");
  sql.execute(
      "INSERT INTO k SELECT seq % 5, ELT(seq % 4 + 1, 'x', 'X', 'x ', 'y'), (seq % 3) / 10, "
      "(seq % 3) / 3, seq % 2 / 8, '2026-01-02 03:04:05.678', seq % 32, 'ä', '{\"a\": [1]}', "
      "POINT(seq % 2, 1) FROM seq_1_to_200");
  sql.execute("CREATE TABLE p (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO p SELECT seq, seq % 3 FROM seq_1_to_30");
  const std::string db = shop.url().database;
  const std::string command =
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".*' --set job.name=" + job + " --set checkpoint.dir=" + dir.path().string() +
      " --set sink.delivery=" + delivery +
      " --set schema.change.behavior=evolve --set checkpoint.interval=50ms"
      " --set engine.flush.interval=10ms --set source.snapshot.chunk-rows=10";
  // Killed in the middle of k's scan, after checkpoints held some of it.
  run_killed("cdc-snapshot-chunk:12", command + " --set source.rate=500");
  MySqlConnection target(replica.url());
  testing::BackgroundCommand run(command + " 2>&1");
  REQUIRE(testing::wait_until([&] {
    try {
      return all_rows_of(target, "p") == all_rows_of(sql, "p");
    } catch (const MySqlError&) {
      return false;  // not there yet
    }
  }));
  // One of several equal rows at a time, chosen by the bytes, not the collation.
  sql.execute("DELETE FROM k WHERE a = 1 AND b = 'x' COLLATE utf8mb4_bin LIMIT 3");
  sql.execute("UPDATE k SET b = 'x' WHERE b = 'x ' COLLATE utf8mb4_bin LIMIT 4");
  sql.execute("UPDATE k SET f = f + 0.1, d = d * 3 WHERE a = 2 LIMIT 5");
  sql.execute("DELETE FROM k WHERE a = 3");
  sql.execute("START TRANSACTION");
  sql.execute("INSERT INTO k SELECT * FROM k WHERE a = 4 LIMIT 7");
  sql.execute("DELETE FROM k WHERE a = 4 AND f > 0 LIMIT 2");
  sql.execute("COMMIT");
  sql.execute("UPDATE k SET g = POINT(5, 5), j = '[]', x = 0 WHERE a = 0 LIMIT 1");
  // A keyed table loses its key, and one without a key is made.
  sql.execute("ALTER TABLE p DROP PRIMARY KEY");
  sql.execute("INSERT INTO p VALUES (1, 1), (1, 1)");
  sql.execute("DELETE FROM p WHERE id = 1 LIMIT 2");
  sql.execute("CREATE TABLE c (a TEXT, b INT)");
  sql.execute("INSERT INTO c VALUES ('ж', 1), ('ж', 1), (NULL, NULL), (NULL, NULL)");
  sql.execute("UPDATE c SET b = 2 WHERE b IS NULL LIMIT 1");
  sql.execute("DELETE FROM c WHERE a = 'ж' LIMIT 1");
  const bool synced = testing::wait_until([&] {
    try {
      return all_rows_of(target, "k") == all_rows_of(sql, "k") &&
             all_rows_of(target, "p") == all_rows_of(sql, "p") &&
             all_rows_of(target, "c") == all_rows_of(sql, "c");
    } catch (const MySqlError&) {
      return false;
    }
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  for (const std::string table : {"k", "p", "c"}) {
    INFO(table << ": the target has " << all_rows_of(target, table).size() << " rows, the source "
               << all_rows_of(sql, table).size());
    CHECK(synced);
  }
  CHECK_THAT(finished.output, Catch::Contains("resuming the snapshot"));
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with source.tables, at least once, killed after writing changes to a table "
    "without a key that no checkpoint holds, writes them once when they come again",
    "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string job = testing::unique_name("keyless");
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE k (a INT, b VARCHAR(10))");
  sql.execute("INSERT INTO k SELECT seq % 4, 'x' FROM seq_1_to_40");
  const std::string db = shop.url().database;
  const auto command = [&](const std::string& interval) {
    return std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
           " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
           ".*' --set job.name=" + job + " --set checkpoint.dir=" + dir.path().string() +
           " --set checkpoint.interval=" + interval + " --set engine.flush.interval=10ms 2>&1";
  };
  MySqlConnection target(replica.url());
  const auto synced = [&] {
    return testing::wait_until([&] {
      try {
        return all_rows_of(target, "k") == all_rows_of(sql, "k");
      } catch (const MySqlError&) {
        return false;  // not there yet
      }
    });
  };
  {
    testing::BackgroundCommand run(command("50ms"));
    REQUIRE(synced());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // checkpoints hold it all
    INFO(run.kill().output);
  }
  // A run that takes no checkpoint writes changes, and dies.
  {
    testing::BackgroundCommand run(command("1h"));
    std::this_thread::sleep_for(std::chrono::seconds(1));
    sql.execute("INSERT INTO k SELECT * FROM k WHERE a = 1");
    sql.execute("DELETE FROM k WHERE a = 2 LIMIT 3");
    sql.execute("UPDATE k SET b = 'y' WHERE a = 3 LIMIT 2");
    REQUIRE(synced());
    const auto killed = run.kill();
    INFO(killed.output);
    REQUIRE(killed.status == 137);
  }
  // The next resumes from before those changes, and writes them again.
  sql.execute("INSERT INTO k VALUES (9, 'z')");
  testing::BackgroundCommand run(command("50ms"));
  const bool same = testing::wait_until([&] {
    return all_rows_of(target, "k").size() >= all_rows_of(sql, "k").size() &&
           !target.query("SELECT 1 FROM k WHERE a = 9").empty();
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  CHECK(same);
  CHECK(all_rows_of(target, "k") == all_rows_of(sql, "k"));
  CHECK_THAT(finished.output, Catch::Contains("took 17 rows after the checkpoint"));
}

TEST_CASE("mysql-to-mysql with source.tables fails naming an ALTER TABLE it does not follow",
          "[mysql][cdc]") {
  const std::string when =
      GENERATE("schema.change.behavior=exception", "a table renamed into capture");
  INFO(when);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO t VALUES (1, 1)");
  sql.execute("CREATE TABLE _u (id INT PRIMARY KEY, v INT)");  // not captured
  const std::string db = shop.url().database;
  const std::string job = testing::unique_name("ddl");
  const testing::PreparedGuard guard(job);
  testing::BackgroundCommand run(
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".[a-z].*' --set job.name=" + job + " --set checkpoint.dir=" + dir.path().string() +
      " --set checkpoint.interval=50ms" +
      (when.find('=') == std::string::npos ? std::string() : " --set " + when) + " 2>&1");
  MySqlConnection target(replica.url());
  REQUIRE(testing::wait_until(
      [&] { return target.find_table("t") && !target.query("SELECT * FROM t").empty(); }));
  const std::string statement = when == "a table renamed into capture"
                                    ? "RENAME TABLE t TO _t, _u TO t"
                                    : "ALTER TABLE t ADD COLUMN w INT";
  sql.execute(statement);
  const auto ended = run.wait();
  INFO(ended.output);
  CHECK(ended.status != 0);
  CHECK_THAT(ended.output, Catch::Contains(statement));
}

TEST_CASE(
    "mysql-to-mysql with source.tables killed in its snapshot follows the ALTER TABLEs made "
    "before it resumes",
    "[mysql][cdc]") {
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET latin1, w INT)");
  sql.execute("CREATE TABLE b (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO a SELECT seq, CONCAT('ä', seq), seq FROM seq_1_to_300");
  sql.execute("INSERT INTO b SELECT seq, seq FROM seq_1_to_1000");
  const std::string db = shop.url().database;
  const std::string command =
      std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
      " --set sink.url=" + url_of(replica.url().database) + " --set 'source.tables=" + db +
      ".*' --set job.name=" + testing::unique_name("ddl") +
      " --set checkpoint.dir=" + dir.path().string() +
      " --set schema.change.behavior=evolve --set checkpoint.interval=50ms"
      " --set engine.flush.interval=10ms --set source.snapshot.chunk-rows=10";
  // Killed in b's snapshot, after a's rows went out and checkpoints held them.
  run_killed("cdc-snapshot-chunk:60", command + " --set source.rate=1000");
  // Meanwhile a's columns change (a new first column moves its key), and
  // its rows change around that, under both.
  sql.execute("UPDATE a SET v = CONCAT(v, 'x') WHERE id <= 20");
  sql.execute(
      "ALTER TABLE a ADD COLUMN z INT NOT NULL DEFAULT 7 FIRST, "
      "MODIFY v VARCHAR(30) CHARACTER SET utf8mb4");
  sql.execute("UPDATE a SET z = 8, v = CONCAT(v, 'ж') WHERE id <= 10");
  sql.execute("DELETE FROM a WHERE id BETWEEN 30 AND 40");
  sql.execute("ALTER TABLE a DROP COLUMN w, RENAME COLUMN v TO vv");
  sql.execute("INSERT INTO a VALUES (9, 0, 'новый')");
  sql.execute("UPDATE a SET id = id + 1000 WHERE id BETWEEN 50 AND 55");
  // And b's, the table it was reading, on both sides of where it was; its
  // key too, which orders its rows otherwise.
  sql.execute("ALTER TABLE b ADD COLUMN y VARCHAR(10) DEFAULT 'y' FIRST");
  sql.execute("UPDATE b SET y = 'z', v = v + 1 WHERE id % 50 = 0");
  sql.execute("DELETE FROM b WHERE id % 70 = 0");
  sql.execute("ALTER TABLE b DROP PRIMARY KEY, ADD PRIMARY KEY (v, id)");
  sql.execute("UPDATE b SET v = 2000 - v WHERE id % 30 = 0");
  sql.execute("DELETE FROM b WHERE id % 90 = 1");
  MySqlConnection target(replica.url());
  testing::BackgroundCommand run(command + " 2>&1");
  const bool synced = testing::wait_until([&] {
    try {
      return target.query("SELECT * FROM a ORDER BY id") ==
                 sql.query("SELECT * FROM a ORDER BY id") &&
             target.query("SELECT * FROM b ORDER BY id") ==
                 sql.query("SELECT * FROM b ORDER BY id");
    } catch (const MySqlError&) {
      return false;  // the columns are not there yet
    }
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  for (const std::string table : {"a", "b"}) {
    const std::string count = "SELECT COUNT(*), SUM(id) FROM " + table;
    INFO(table << ": the target has " << target.query(count).at(0).at(0).value_or("") << " rows, "
               << target.query(count).at(0).at(1).value_or("") << " ids; the source "
               << sql.query(count).at(0).at(0).value_or("") << ", "
               << sql.query(count).at(0).at(1).value_or(""));
    CHECK(synced);
  }
  CHECK_THAT(finished.output, Catch::Contains("resuming the snapshot"));
  CHECK(shape_of(target, replica.url().database, "a") == shape_of(sql, db, "a"));
  CHECK(shape_of(target, replica.url().database, "b") == shape_of(sql, db, "b"));
}

TEST_CASE(
    "mysql-to-mysql with source.tables widened between runs reads only the tables it newly "
    "matches by a snapshot, across kills; narrowed, it stops reading the others",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestDatabase shop;
  testing::TestDatabase replica;
  const std::string job = testing::unique_name("widen");
  const testing::PreparedGuard guard(job);
  MySqlConnection sql(shop.url());
  sql.execute("CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))");
  sql.execute(
      "CREATE TABLE b (k VARCHAR(10) CHARACTER SET latin1, n SMALLINT, v DECIMAL(8,2), "
      "PRIMARY KEY (k, n))");
  sql.execute("INSERT INTO a SELECT seq, 'v' FROM seq_1_to_100");
  sql.execute("INSERT INTO b SELECT CONCAT('k', seq % 7), seq, seq / 4 FROM seq_1_to_600");
  const std::string db = shop.url().database;
  const std::string& to = replica.url().database;
  const auto command = [&](const std::string& tables) {
    return std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_of(db) +
           " --set sink.url=" + url_of(to) + " --set 'source.tables=" + tables +
           "' --set job.name=" + job + " --set checkpoint.dir=" + dir.path().string() +
           " --set sink.delivery=" + delivery +
           " --set checkpoint.interval=50ms --set engine.flush.interval=10ms"
           " --set source.snapshot.chunk-rows=10";
  };
  MySqlConnection target(replica.url());
  const auto same = [&](const std::string& table, const std::string& order) {
    try {
      return target.query("SELECT * FROM " + table + " ORDER BY " + order) ==
             sql.query("SELECT * FROM " + table + " ORDER BY " + order);
    } catch (const MySqlError&) {
      return false;  // not created yet
    }
  };
  {
    testing::BackgroundCommand run(command(db + ".a") + " 2>&1");
    REQUIRE(testing::wait_until([&] { return same("a", "id"); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // checkpoints in the binlog
    INFO(run.signal(SIGINT).output);
  }
  CHECK_FALSE(target.find_table("b"));
  // A row of a's target that the source never changes again: read again,
  // a would lose it.
  target.execute("UPDATE a SET v = 'kept' WHERE id = 1");
  sql.execute("UPDATE a SET v = 'w' WHERE id > 90");
  sql.execute("DELETE FROM a WHERE id BETWEEN 50 AND 59");
  sql.execute("DELETE FROM b WHERE n % 9 = 0");
  sql.execute("ALTER TABLE b ADD COLUMN note VARCHAR(8) DEFAULT 'n' AFTER k");
  sql.execute("UPDATE b SET note = 'ü', v = v + 1 WHERE n % 11 = 0");

  // Widened: b is read by a snapshot, killed in it after some of b's rows
  // went out, which the source then deletes.
  const std::string both = db + ".a, " + db + ".b";
  const std::string killed =
      run_killed("cdc-snapshot-chunk:30", command(both) + " --set source.rate=1000");
  CHECK_THAT(killed, Catch::Contains("the tables it matches now and did not then (" + db +
                                     ".b) are read by a snapshot"));
  if (delivery == "at-least-once") {  // exactly-once, they may be prepared, not committed yet
    REQUIRE(target.query("SELECT COUNT(*) FROM b WHERE n < 200").at(0).at(0) != "0");
  }
  sql.execute("DELETE FROM b WHERE n < 200");
  sql.execute("INSERT INTO a VALUES (1000, 'new')");
  {
    testing::BackgroundCommand run(command(both) + " 2>&1");
    const bool synced =
        testing::wait_until([&] { return same("b", "k, n") && same("a WHERE id > 1", "id"); });
    const auto finished = run.signal(SIGINT);
    INFO(finished.output);
    CHECK(synced);
    CHECK_THAT(finished.output, Catch::Contains("resuming the snapshot"));
    CHECK(target.query("SELECT v FROM a WHERE id = 1").at(0).at(0) == "kept");
    CHECK(shape_of(target, to, "b") == shape_of(sql, db, "b"));
  }

  // Narrowed to b: a's target stays as it is.
  sql.execute("UPDATE a SET v = 'later' WHERE id = 2");
  sql.execute("UPDATE b SET v = 0 WHERE n % 5 = 0");
  {
    testing::BackgroundCommand run(command(db + ".b") + " 2>&1");
    const bool synced = testing::wait_until([&] { return same("b", "k, n"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto finished = run.signal(SIGINT);
    INFO(finished.output);
    CHECK(synced);
    CHECK_THAT(finished.output, Catch::Contains(db + ".a is no longer matched by source.tables"));
    CHECK(target.query("SELECT v FROM a WHERE id = 2").at(0).at(0) == "v");
  }
  check_nothing_prepared(target, job);
}

TEST_CASE(
    "mysql-to-mysql with source.tables refuses exactly-once over more tables than the server has "
    "connections for, naming max_connections, before it writes",
    "[mysql][cdc][serial]") {
  testing::TempDir dir;
  testing::TestDatabase source;
  testing::TestDatabase replica;
  const std::string job = testing::unique_name("connections");
  MySqlConnection sql(source.url());
  for (int t = 0; t < 12; ++t)
    sql.execute("CREATE TABLE t" + std::to_string(t) + " (id INT PRIMARY KEY, v INT)");
  sql.execute("INSERT INTO t0 VALUES (1, 1)");
  // A server with a few connections more than it has in use: enough for
  // the source, not for a connection per table.
  struct Limit {
    MySqlConnection& sql;
    std::string was;
    ~Limit() { sql.execute("SET GLOBAL max_connections = " + was); }
  } limit{sql, sql.query("SELECT @@max_connections").at(0).at(0).value_or("151")};
  const uint64_t used = std::stoull(
      sql.query("SHOW GLOBAL STATUS LIKE 'Threads_connected'").at(0).at(1).value_or("0"));
  // (10 is the least the server takes.)
  sql.execute("SET GLOBAL max_connections = " + std::to_string(std::max<uint64_t>(used + 8, 10)));
  const testing::CommandResult run =
      testing::run_command(whole_database_command(source.url().database, replica.url().database,
                                                  job, dir, "evolve", "exactly-once") +
                           " 2>&1");
  INFO(run.output);
  CHECK(run.status == 2);
  CHECK_THAT(run.output, Catch::Contains("12 tables need 12 to 24 connections") &&
                             Catch::Contains("max_connections=") &&
                             Catch::Contains("sink.delivery=at-least-once"));
  MySqlConnection target(replica.url());
  CHECK_FALSE(target.find_table("t0"));
}

TEST_CASE(
    "mysql-to-mysql with source.tables drops, under evolve, the targets a run stopped before its "
    "first checkpoint created for tables dropped or renamed since",
    "[mysql][cdc]") {
  const std::string behavior = GENERATE("evolve", "lenient");
  INFO("schema.change.behavior=" << behavior);
  testing::TempDir dir;
  testing::TestDatabase source;
  testing::TestDatabase replica;
  const std::string job = testing::unique_name("leftovers");
  MySqlConnection sql(source.url());
  for (const char* table : {"kept", "dropped", "renamed"}) {
    sql.execute(std::string("CREATE TABLE ") + table + " (id INT PRIMARY KEY, v INT)");
    sql.execute(std::string("INSERT INTO ") + table + " VALUES (1, 1)");
  }
  MySqlConnection target(replica.url());
  const std::string command = whole_database_command(source.url().database, replica.url().database,
                                                     job, dir, behavior, "at-least-once");
  {
    // No checkpoint completes: the run creates the targets and is killed.
    testing::BackgroundCommand run(
        command + " --set checkpoint.interval=1h --set checkpoint.min-pause=1h 2>&1");
    REQUIRE(testing::wait_until([&] { return target.find_table("renamed").has_value(); }));
    const auto killed = run.kill();
    INFO(killed.output);
    REQUIRE(killed.status == 137);
  }
  sql.execute("DROP TABLE dropped");
  sql.execute("RENAME TABLE renamed TO moved");
  sql.execute("INSERT INTO kept VALUES (2, 2)");
  testing::BackgroundCommand run(command + " 2>&1");
  const bool copied = testing::wait_until([&] {
    return target.find_table("moved") &&
           target.query("SELECT COUNT(*) FROM kept").at(0).at(0) == std::optional<std::string>("2");
  });
  const auto finished = run.signal(SIGINT);
  INFO(finished.output);
  REQUIRE(copied);
  CHECK(finished.status == 130);
  CHECK(target.find_table("kept"));
  // Lenient never drops a target; evolve leaves none that no table has.
  CHECK(target.find_table("dropped").has_value() == (behavior == "lenient"));
  CHECK(target.find_table("renamed").has_value() == (behavior == "lenient"));
  if (behavior == "evolve") {
    // The next run starts afresh again, and finds nothing to drop.
    testing::BackgroundCommand again(command + " --set restore=none 2>&1");
    const bool ran = testing::wait_until(
        [&] { return again.output().find("snapshot read") != std::string::npos; });
    const auto done = again.signal(SIGINT);
    INFO(done.output);
    CHECK(ran);
    CHECK(target.find_table("kept"));
    CHECK(target.find_table("moved"));
  }
}

namespace {

// Tables whose foreign keys change each other's rows unlogged: a
// department's employees go with it and take its new code; an employee's
// salaries go with them and take their new id, and their reports lose
// their manager; a salary's notes lose it; a team's teams go with it.
// Codes compare without case: an employee's may differ in case from its
// department's. Some deletes are made with
// foreign_key_checks=0, and change nothing else.
void create_company(MySqlConnection& sql) {
  sql.execute(
      "CREATE TABLE dept (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY (code))");
  sql.execute(
      "CREATE TABLE emp (id INT PRIMARY KEY, dept_code VARCHAR(10), mgr INT, "
      "FOREIGN KEY (dept_code) REFERENCES dept (code) ON DELETE CASCADE ON UPDATE CASCADE, "
      "FOREIGN KEY (mgr) REFERENCES emp (id) ON DELETE SET NULL)");
  sql.execute(
      "CREATE TABLE salary (emp_id INT, yr INT, amount INT, PRIMARY KEY (emp_id, yr), "
      "FOREIGN KEY (emp_id) REFERENCES emp (id) ON DELETE CASCADE ON UPDATE CASCADE)");
  sql.execute(
      "CREATE TABLE note (id INT PRIMARY KEY, emp_id INT, yr INT, FOREIGN KEY (emp_id, yr) "
      "REFERENCES salary (emp_id, yr) ON DELETE SET NULL)");
  // A tree whose subtrees go with their root.
  sql.execute(
      "CREATE TABLE team (id INT PRIMARY KEY, lead INT, "
      "FOREIGN KEY (lead) REFERENCES team (id) ON DELETE CASCADE)");
}

// `n` random changes to the company's tables, each a transaction; those
// the foreign keys refuse are skipped (IGNORE).
void change_company(MySqlConnection& sql, std::mt19937& random, int n) {
  const auto pick = [&](int below) {
    return std::to_string(random() % static_cast<unsigned>(below));
  };
  for (int i = 0; i < n; ++i) {
    const std::string d = pick(12), e = pick(40), y = std::to_string(2020 + random() % 3);
    switch (random() % 13) {
      case 11:
      case 12:
        sql.execute("SET SESSION foreign_key_checks = 0");
        sql.execute(random() % 2 ? "DELETE FROM dept WHERE id = " + d
                                 : "DELETE FROM emp WHERE id = " + e);
        sql.execute("SET SESSION foreign_key_checks = 1");
        break;
      case 9:
        sql.execute("INSERT IGNORE INTO team VALUES (" + e + ", " +
                    (random() % 4 ? pick(40) : "NULL") + ")");
        break;
      case 10:
        sql.execute("DELETE FROM team WHERE id = " + pick(40));
        break;
      case 0:
        sql.execute("INSERT IGNORE INTO dept VALUES (" + d + ", '" + (random() % 2 ? "c" : "C") +
                    d + "')");
        break;
      case 1:
      case 2:
        // Its department's code as it is, or in lower case, which refers to it too.
        sql.execute("INSERT IGNORE INTO emp SELECT " + e +
                    (random() % 2 ? ", code, " : ", LOWER(code), ") +
                    (random() % 2 ? pick(40) : "NULL") + " FROM dept WHERE id = " + d);
        break;
      case 3:
        sql.execute("INSERT IGNORE INTO salary VALUES (" + e + ", " + y + ", " + pick(100) + ")");
        break;
      case 4:
        sql.execute("REPLACE INTO note SELECT " + pick(60) +
                    ", emp_id, yr FROM salary WHERE emp_id = " + e + " LIMIT 1");
        break;
      case 5:
        sql.execute("DELETE FROM dept WHERE id = " + d);
        break;
      case 6:
        sql.execute("UPDATE IGNORE dept SET code = CONCAT(code, 'x') WHERE id = " + d +
                    " AND LENGTH(code) < 9");
        break;
      case 7:
        sql.execute("DELETE FROM emp WHERE id = " + e);
        break;
      default:
        sql.execute("UPDATE IGNORE emp SET id = id + 40 WHERE id = " + e + " AND id < 200");
    }
  }
}

}  // namespace

TEST_CASE(
    "mysql-to-mysql makes the changes foreign keys' actions make unlogged: live and restarted",
    "[mysql][cdc]") {
  const std::string delivery = GENERATE(as<std::string>(), "at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  const uint32_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  std::mt19937 random(seed);
  testing::TempDir dir;
  testing::TestDatabase company;
  testing::TestDatabase replica;
  MySqlConnection sql(company.url());
  create_company(sql);
  change_company(sql, random, 200);
  const std::string db = company.url().database;
  const std::string job = testing::unique_name("cascades");
  const std::string command =
      whole_database_command(db, replica.url().database, job, dir, "evolve", delivery);
  MySqlConnection target(replica.url());
  const std::vector<std::string> tables = {"dept", "emp", "salary", "note", "team"};
  const auto same = [&] { return same_rows(sql, db, target, replica.url().database, tables); };
  {
    testing::BackgroundCommand run(command + " 2>&1");
    REQUIRE(testing::wait_until(same));
    change_company(sql, random, 300);
    const bool synced = testing::wait_until(same);
    const auto stopped = run.signal(SIGINT);
    INFO(stopped.output);
    REQUIRE(synced);
    CHECK(stopped.status == 130);
  }
  // What came while it was down, read from its checkpoint.
  change_company(sql, random, 300);
  run_until(command, same);
}
