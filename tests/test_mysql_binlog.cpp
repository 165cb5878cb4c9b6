#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/binlog_events.hpp"
#include "sluice/connectors/mysql/cdc/binlog_packets.hpp"
#include "sluice/connectors/mysql/cdc/binlog_rows.hpp"
#include "sluice/connectors/mysql/table_patterns.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/tests/mysql_support.hpp"

using namespace sluice;
using namespace std::chrono_literals;

namespace Catch {
template <>
struct StringMaker<BinlogPosition> {
  static std::string convert(const BinlogPosition& p) { return p.to_string(); }
};
}  // namespace Catch

namespace {

// Reads until `wanted` changes came, or the reader sat idle, having read
// all the server sent, for two seconds. Time the reader spends working
// (looking back through older binlog files at its start, say) is not
// silence; a minute in all is the limit.
BinlogChanges read_until(BinlogReader& reader, size_t wanted,
                         BinlogChanges changes = BinlogChanges()) {
  const auto began = std::chrono::steady_clock::now();
  auto last = began;
  while (changes.size() < wanted) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last >= 2s || now - began >= 60s) break;
    const size_t before = changes.size();
    reader.read(changes);
    if (changes.size() != before || !reader.idle()) {
      last = std::chrono::steady_clock::now();
    } else {
      std::this_thread::sleep_for(5ms);
    }
  }
  return changes;
}

// The changes, a row change as Row::to_string() writes it.
std::vector<std::string> texts(const BinlogChanges& changes) {
  std::vector<std::string> out;
  for (const auto& change : changes) out.push_back(changes.row(change).to_string());
  return out;
}

std::vector<std::string> read_changes(BinlogReader& reader, size_t wanted) {
  return texts(read_until(reader, wanted));
}

// A server id no other test's reader uses at the same time.
uint32_t server_id() {
  static uint32_t next = 1000 + static_cast<uint32_t>(std::random_device()() % 100000) * 10;
  return next++;
}

BinlogReader reader_at(const BinlogResume& start, const CapturedTable& table) {
  return BinlogReader(testing::test_mysql_url(), server_id(), start, {table});
}

// An XA transaction prepared on `sql`, rolled back at the end unless the
// test committed or rolled it back.
class PreparedXaTransaction {
 public:
  PreparedXaTransaction(MySqlConnection& sql, const std::vector<std::string>& statements)
      : sql_(sql), xid_(sql.quote(testing::unique_name("cdc"))) {
    sql_.execute("XA START " + xid_);
    for (const std::string& statement : statements) sql_.execute(statement);
    sql_.execute("XA END " + xid_);
    sql_.execute("XA PREPARE " + xid_);
  }
  ~PreparedXaTransaction() {
    if (!done_) sql_.execute("XA ROLLBACK " + xid_);
  }
  void commit() { end("XA COMMIT "); }
  void roll_back() { end("XA ROLLBACK "); }

 private:
  void end(const std::string& how) {
    sql_.execute(how + xid_);
    done_ = true;
  }
  MySqlConnection& sql_;
  std::string xid_;
  bool done_ = false;
};

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
  BinlogReader reader = reader_at({current_binlog_position(sql)}, captured);

  sql.execute("SET time_zone = '+00:00'");
  sql.execute("INSERT INTO " + table.name() +
              " VALUES (1, 18446744073709551615, -5, 255, TRUE, -12345678901234.000001, 0.5, "
              "'2026-01-02 03:04:05.123456', '2026-01-02 03:04:05.678', '2026-01-02', "
              "'héllo €', 'a text', x'00ff10', NULL)");
  sql.execute("UPDATE " + table.name() + " SET name = 'bye', small = -2147483648 WHERE id = 1");
  sql.execute("DELETE FROM " + table.name() + " WHERE id = 1");
  // BOOLEAN is TINYINT(1), which holds any TINYINT; BYTES print as base64.
  const std::string inserted =
      "1, 18446744073709551615, -5, 255, 1, -12345678901234.000001, 0.5, "
      "2026-01-02 03:04:05.123456, 2026-01-02 03:04:05.678, 2026-01-02, héllo €, a text, "
      "AP8Q, NULL]";
  const std::string updated =
      "1, 18446744073709551615, -2147483648, 255, 1, -12345678901234.000001, 0.5, "
      "2026-01-02 03:04:05.123456, 2026-01-02 03:04:05.678, 2026-01-02, bye, a text, "
      "AP8Q, NULL]";
  CHECK(read_changes(reader, 4) == std::vector<std::string>{"+I[" + inserted, "-U[" + inserted,
                                                            "+U[" + updated, "-D[" + updated});
  CHECK(reader.resume().given == 0);
  CHECK(reader.resume().position <= current_binlog_position(sql));
}

TEST_CASE(
    "the binlog gives every character of the Chinese, Japanese and Korean charsets as the server "
    "converts it",
    "[mysql][cdc]") {
  struct Charset {
    std::string name, heads, tails;
    bool three_byte = false;  // EUC-JP's 0x8F and two more
    std::string singles = "seq BETWEEN 32 AND 126";
  };
  const std::string shift_jis_heads = "h.seq BETWEEN 129 AND 159 OR h.seq BETWEEN 224 AND 252";
  const std::string shift_jis_tails = "t.seq BETWEEN 64 AND 126 OR t.seq BETWEEN 128 AND 252";
  const std::string shift_jis_singles = "seq BETWEEN 32 AND 126 OR seq BETWEEN 161 AND 223";
  for (const Charset& charset :
       {Charset{"big5", "h.seq BETWEEN 161 AND 249", "t.seq BETWEEN 64 AND 126 OR t.seq >= 161"},
        Charset{"cp932", shift_jis_heads, shift_jis_tails, false, shift_jis_singles},
        Charset{"sjis", shift_jis_heads, shift_jis_tails, false, shift_jis_singles},
        Charset{"eucjpms", "h.seq = 142 OR h.seq >= 161", "t.seq >= 161", true},
        Charset{"ujis", "h.seq = 142 OR h.seq >= 161", "t.seq >= 161", true},
        Charset{"euckr", "h.seq >= 129",
                "t.seq BETWEEN 65 AND 90 OR t.seq BETWEEN 97 AND 122 OR t.seq >= 129"},
        Charset{"gb2312", "h.seq BETWEEN 161 AND 247", "t.seq >= 161"},
        Charset{"gbk", "h.seq >= 129", "t.seq BETWEEN 64 AND 126 OR t.seq >= 128"}}) {
    INFO(charset.name);
    testing::TestTable table("cdc_cjk",
                             "id INT PRIMARY KEY, txt MEDIUMTEXT CHARACTER SET " + charset.name);
    MySqlConnection& sql = table.connection();
    BinlogReader reader =
        reader_at({current_binlog_position(sql)}, capture_table(sql, table.name()));
    sql.execute("SET SESSION group_concat_max_len = 16777216");
    // What the server cannot convert is '?' and a warning, not an error.
    sql.execute("SET SESSION sql_mode = ''");
    // Each character the server reads, of one byte, of two, and of three.
    const auto characters = [&](const std::string& code, const std::string& from,
                                const std::string& where) {
      const std::string c = "CHAR(" + code + " USING " + charset.name + ")";
      return "SELECT GROUP_CONCAT(" + c + " ORDER BY " + code + " SEPARATOR '') FROM " + from +
             " WHERE (" + where + ") AND CHAR_LENGTH(" + c + ") = 1 AND CONVERT(" + c +
             " USING utf8mb4) NOT LIKE '%?%'";
    };
    sql.execute("INSERT INTO " + table.name() + " SELECT 1, (" +
                characters("seq", "seq_32_to_254", charset.singles) + ")");
    sql.execute("INSERT INTO " + table.name() + " SELECT 2, (" +
                characters("h.seq * 256 + t.seq", "seq_128_to_254 h JOIN seq_32_to_254 t",
                           charset.heads + ") AND (" + charset.tails) +
                ")");
    size_t rows = 2;
    if (charset.three_byte) {
      sql.execute("INSERT INTO " + table.name() + " SELECT 3, (" +
                  characters("0x8f0000 + h.seq * 256 + t.seq",
                             "seq_161_to_254 h JOIN seq_161_to_254 t", "TRUE") +
                  ")");
      ++rows;
    }
    const BinlogChanges changes = read_until(reader, rows);
    REQUIRE(changes.size() == rows);
    const auto served = sql.query("SELECT id, txt FROM " + table.name() + " ORDER BY id");
    for (size_t r = 0; r < rows; ++r) {
      INFO("row " << r + 1);
      const std::string& text = served.at(r).at(1).value();
      CHECK(text.size() >= 94);  // ASCII's printable characters at least
      CHECK(changes.row(changes[r]).fields.at(1).as_string() == text);
    }
  }
}

TEST_CASE("capture_table reads a table's columns and definition as of one moment", "[mysql][cdc]") {
  // An ALTER TABLE between reading the columns and the definition would
  // give a reader columns that are not the definition's: it then decodes
  // the binlog's rows, or fits a target, by the wrong ones.
  testing::TestTable table("cdc_capture", "id INT PRIMARY KEY, v INT NOT NULL");
  MySqlConnection& sql = table.connection();
  std::atomic<bool> done{false};
  std::thread alter([&] {
    MySqlConnection other(testing::test_mysql_url());
    while (!done) {
      other.execute("ALTER TABLE " + table.name() + " ADD COLUMN c INT NOT NULL DEFAULT 1 FIRST");
      other.execute("ALTER TABLE " + table.name() + " DROP COLUMN c");
    }
  });
  size_t with_c = 0;
  size_t disagreed = 0;
  std::string failed;
  try {
    for (int i = 0; i < 300; ++i) {
      const CapturedTable captured = capture_table(sql, table.name());
      const bool in_columns = captured.columns.front().name == "c";
      const bool in_definition = captured.definition.find("`c` int") != std::string::npos;
      if (in_columns != in_definition) ++disagreed;
      if (in_columns) ++with_c;
    }
  } catch (const std::exception& e) {
    failed = e.what();
  }
  done = true;
  alter.join();
  CHECK(failed.empty());
  CHECK(disagreed == 0);
  CHECK(with_c > 0);  // the ALTERs did come between
}

TEST_CASE("the binlog gives a COMPRESSED column's values as the server reads them",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_compressed",
                           "id INT PRIMARY KEY, v VARCHAR(5000) COMPRESSED, t TEXT COMPRESSED, "
                           "b BLOB COMPRESSED");
  MySqlConnection& sql = table.connection();
  BinlogReader reader = reader_at({current_binlog_position(sql)}, capture_table(sql, table.name()));
  const std::string t = table.name();
  // Empty, too short to compress, compressed (with zlib's wrapper and
  // without), and random bytes that do not compress.
  sql.execute("INSERT INTO " + t + " VALUES (1, '', '', ''), (2, 'a', 'é', x'00'), " +
              "(3, REPEAT('abc', 1000), REPEAT('€ ', 3000), REPEAT(x'00ff', 2000)), " +
              "(4, NULL, NULL, RANDOM_BYTES(1024))");
  sql.execute("SET SESSION column_compression_zlib_wrap = ON");
  sql.execute("INSERT INTO " + t + " VALUES (5, REPEAT('xyz', 1000), 'wrapped', REPEAT('b', 900))");
  sql.execute("UPDATE " + t + " SET v = CONCAT(v, '!') WHERE id = 3");
  const BinlogChanges changes = read_until(reader, 7);
  REQUIRE(changes.size() == 7);
  const auto served = sql.query("SELECT id, v, t, TO_BASE64(b) FROM " + t + " ORDER BY id");
  // The rows as inserted but row 3, and its update's after image.
  for (size_t c : {0, 1, 3, 4, 6}) {
    const Row row = changes.row(changes[c]);
    const auto& want = served.at(c == 6 ? 2 : c);
    INFO("row " << *want.at(0));
    for (size_t column = 1; column <= 2; ++column) {
      CHECK(row.fields.at(column).is_null() == !want.at(column).has_value());
      if (want.at(column)) CHECK(row.fields.at(column).as_string() == *want.at(column));
    }
    std::string base64 = *want.at(3);
    std::erase(base64, '\n');
    CHECK(row.fields.at(3).to_string() == base64);
  }
}

TEST_CASE("a binlog the server compresses (log_bin_compress) gives its changes and DDL alike",
          "[mysql][cdc][serial]") {
  testing::TestTable table("cdc_log_compress", "id INT PRIMARY KEY, qty INT, note TEXT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  // With and without checksums, the reader starting in a file of the
  // other kind (what the server sends first follows the global setting).
  const auto [was, checksum] = GENERATE(std::pair("CRC32", "NONE"), std::pair("NONE", "CRC32"));
  INFO("binlog_checksum=" << was << ", then " << checksum);
  const testing::ScopedGlobal old_checksums("binlog_checksum", was);
  sql.execute("INSERT INTO " + t + " VALUES (0, 0, 'before')");
  const BinlogPosition start = current_binlog_position(sql);
  const testing::ScopedGlobal checksums("binlog_checksum", checksum);
  const testing::ScopedGlobal compress("log_bin_compress", "ON");
  BinlogReader reader(testing::test_mysql_url(), server_id(), {start}, {capture_table(sql, t)},
                      {.follow_schema_changes = true});
  // Events of log_bin_compress_min_len (256) bytes and more are compressed,
  // shorter ones not: rows of both, in one transaction and alone.
  const std::string long_note(600, 'n');
  sql.execute("START TRANSACTION");
  sql.execute("INSERT INTO " + t + " VALUES (1, 1, '" + long_note + "'), (2, 2, 'short')");
  sql.execute("INSERT INTO " + t + " VALUES (3, 3, 'alone')");
  sql.execute("COMMIT");
  sql.execute("UPDATE " + t + " SET note = 'shorter', qty = 10 WHERE id = 1");
  sql.execute("DELETE FROM " + t + " WHERE id = 2");
  CHECK(read_changes(reader, 6) ==
        std::vector<std::string>{"+I[1, 1, " + long_note + "]", "+I[2, 2, short]",
                                 "+I[3, 3, alone]", "-U[1, 1, " + long_note + "]",
                                 "+U[1, 10, shorter]", "-D[2, 2, short]"});
  // A statement the server compresses is read as it was written: DDL that
  // the reader must see, and a change logged as a statement.
  const std::string comment(300, 'c');
  const std::string ddl = "ALTER TABLE " + t + " MODIFY qty BIGINT COMMENT '" + comment + "'";
  sql.execute(ddl);
  sql.execute("INSERT INTO " + t + " VALUES (4, 5000000000, 'wide')");
  const BinlogChanges changes = read_until(reader, 2);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].schema_change != nullptr);
  CHECK(changes.row(changes[1]).to_string() == "+I[4, 5000000000, wide]");
  sql.execute("SET SESSION binlog_format = 'STATEMENT'");
  const std::string change = "UPDATE " + t + " SET note = '" + long_note + "' WHERE id = 3";
  sql.execute(change);
  sql.execute("SET SESSION binlog_format = 'ROW'");
  CHECK_THROWS_WITH(read_changes(reader, 1),
                    Catch::Contains("logged as an SQL statement") && Catch::Contains(change));
}

TEST_CASE("the binlog gives dates of a zero month or day as the server keeps them",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_zero_in_date",
                           "id INT PRIMARY KEY, d DATE, dt DATETIME(3), d0 DATETIME NULL");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  BinlogReader reader = reader_at({current_binlog_position(sql)}, capture_table(sql, t));
  sql.execute("SET SESSION sql_mode = ''");  // no NO_ZERO_IN_DATE, nor strict
  sql.execute("INSERT INTO " + t +
              " VALUES (1, '2020-00-15', '2020-05-00 10:11:12.345', '0000-00-00 10:00:00'), "
              "(2, '0000-00-00', '2020-01-01 00:00:00', NULL)");
  sql.execute("UPDATE " + t + " SET d = '2020-12-00', dt = '0000-00-31 00:00:00.5' WHERE id = 1");
  CHECK(read_changes(reader, 4) ==
        std::vector<std::string>{"+I[1, 2020-00-15, 2020-05-00 10:11:12.345, 0000-00-00 10:00:00]",
                                 "+I[2, 0000-00-00, 2020-01-01 00:00:00, NULL]",
                                 "-U[1, 2020-00-15, 2020-05-00 10:11:12.345, 0000-00-00 10:00:00]",
                                 "+U[1, 2020-12-00, 0000-00-31 00:00:00.5, 0000-00-00 10:00:00]"});
}

TEST_CASE(
    "the binlog gives times of MariaDB's format before 10.1 (mysql56_temporal_format=OFF) exactly",
    "[mysql][cdc][serial]") {
  testing::TestDatabase db;
  MySqlConnection sql(db.url());
  {
    const testing::ScopedGlobal old_format("mysql56_temporal_format", "OFF");
    sql.execute(
        "CREATE TABLE old_times (id INT PRIMARY KEY, t0 TIME, t3 TIME(3), t6 TIME(6), d0 DATETIME, "
        "d1 DATETIME(1), d6 DATETIME(6), s0 TIMESTAMP NULL, s2 TIMESTAMP(2) NULL, s5 TIMESTAMP(5) "
        "NULL)");
  }
  const CapturedTable captured = capture_table(sql, "old_times");
  CHECK(captured.columns.at(2).column_type == "time(3) /* mariadb-5.3 */");
  BinlogReader reader(db.url(), server_id(), {current_binlog_position(sql)}, {captured});
  sql.execute("SET time_zone = '+00:00', sql_mode = ''");
  sql.execute(
      "INSERT INTO old_times VALUES (1, '-838:59:59', '12:34:56.789', '-00:00:00.000001', "
      "'2024-01-02 03:04:05', '1000-01-01 00:00:00.1', '9999-12-31 23:59:59.999999', "
      "'2024-01-02 03:04:05', '1970-01-01 00:00:01.01', '2038-01-19 03:14:07.99999'), "
      "(2, '838:59:59', '-838:59:58.999', '00:00:00', '0000-00-00 00:00:00', "
      "'2020-00-15 10:00:00.5', '2024-02-29 12:00:00.000001', NULL, '2000-06-15 12:30:45.5', "
      "NULL)");
  CHECK(read_changes(reader, 2) ==
        std::vector<std::string>{
            "+I[1, -838:59:59, 12:34:56.789, -00:00:00.000001, 2024-01-02 03:04:05, 1000-01-01 "
            "00:00:00.1, 9999-12-31 23:59:59.999999, 2024-01-02 03:04:05, 1970-01-01 00:00:01.01, "
            "2038-01-19 03:14:07.99999]",
            "+I[2, 838:59:59, -838:59:58.999, 00:00:00, 0000-00-00 00:00:00, 2020-00-15 "
            "10:00:00.5, 2024-02-29 12:00:00.000001, NULL, 2000-06-15 12:30:45.5, NULL]"});
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
  PreparedXaTransaction xa(sql, {"INSERT INTO " + t + " VALUES (4, 40)"});

  BinlogReader reader = reader_at({start}, captured);
  CHECK(read_changes(reader, 4) ==
        std::vector<std::string>{"+I[1, 10]", "+I[3, 30]", "-U[1, 10]", "+U[1, 11]"});
  // The prepared XA transaction's changes wait for its commit; a reader
  // resuming learns where it was prepared.
  CHECK(read_changes(reader, 1).empty());
  // (Beside other tests' XA transactions, of tables not captured here.)
  const BinlogResume held = reader.resume();
  std::vector<PreparedXa> ours = held.prepared;
  std::erase_if(ours, [](const PreparedXa& p) { return !p.captured; });
  REQUIRE(ours.size() == 1);
  CHECK(ours[0].start < held.position);

  xa.commit();
  CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[4, 40]"});
  // No longer held (other tests' XA transactions may be, meanwhile).
  const std::vector<PreparedXa> still = reader.resume().prepared;
  CHECK(std::none_of(still.begin(), still.end(),
                     [&](const PreparedXa& p) { return p.xid == ours[0].xid; }));

  // A reader from where the first stood reads what came after, and only
  // that: the XA transaction too, from where it was prepared.
  sql.execute("DELETE FROM " + t + " WHERE id = 3");
  BinlogReader resumed = reader_at(held, captured);
  CHECK(read_changes(resumed, 2) == std::vector<std::string>{"+I[4, 40]", "-D[3, 30]"});
  CHECK(read_changes(resumed, 1).empty());
}

TEST_CASE("the binlog gives a transaction's changes as they are read, and resumes inside it",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_big", "id BIGINT PRIMARY KEY, v BIGINT");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  const BinlogPosition start = current_binlog_position(sql);
  sql.execute("INSERT INTO " + table.name() + " SELECT seq, seq FROM seq_1_to_5000");
  sql.execute("UPDATE " + table.name() + " SET v = v + 1");  // 10000 changes in one transaction

  BinlogReader reader(testing::test_mysql_url(), server_id(), {start}, {captured},
                      {.max_changes = 100});
  BinlogChanges changes = read_until(reader, 5000);
  // Inside the update: the insert's end, with some of its changes given.
  while (changes.size() < 7000) reader.read(changes);
  const BinlogResume inside = reader.resume();
  CHECK(inside.given == changes.size() - 5000);
  CHECK(inside.given % 2 == 0);         // an update's two images stay together
  CHECK(changes.size() < 7000 + 1000);  // it returned with what it had, not the whole update
  changes = read_until(reader, 15000, std::move(changes));
  CHECK(changes.size() == 15000);

  // A reader from inside it gives the rest, and nothing twice.
  BinlogReader resumed(testing::test_mysql_url(), server_id(), inside, {captured});
  const std::vector<std::string> rest = texts(read_until(resumed, 15000));
  const std::vector<std::string> all = texts(changes);
  REQUIRE(rest.size() == 15000 - (5000 + inside.given));
  for (size_t i = 0; i < rest.size(); ++i) CHECK(rest[i] == all[5000 + inside.given + i]);
}

TEST_CASE("the binlog position moves on with other tables' transactions", "[mysql][cdc]") {
  testing::TestTable table("cdc_idle", "id BIGINT PRIMARY KEY");
  testing::TestTable busy("cdc_busy", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const BinlogPosition start = current_binlog_position(sql);
  BinlogReader reader = reader_at({start}, capture_table(sql, table.name()));
  for (int i = 0; i < 20; ++i) {
    sql.execute("INSERT INTO " + busy.name() + " VALUES (" + std::to_string(i) + ")");
  }
  const BinlogPosition written = current_binlog_position(sql);
  const auto given_up = std::chrono::steady_clock::now() + 10s;
  BinlogChanges changes;
  while (reader.resume().position < written && std::chrono::steady_clock::now() < given_up) {
    reader.read(changes);
  }
  CHECK(changes.empty());
  CHECK(reader.resume().position >= written);
}

TEST_CASE("an XA transaction prepared before the reader's start comes out when it commits",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_xa", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  const std::string t = table.name();
  MySqlConnection other(testing::test_mysql_url());
  PreparedXaTransaction committed(sql, {"INSERT INTO " + t + " VALUES (1)"});
  PreparedXaTransaction rolled_back(other, {"INSERT INTO " + t + " VALUES (2)"});
  MySqlConnection third(testing::test_mysql_url());
  third.execute("FLUSH BINARY LOGS");  // the prepares in an older file than the start
  testing::TestTable untouched("cdc_other", "id BIGINT PRIMARY KEY");
  PreparedXaTransaction elsewhere(third, {"INSERT INTO " + untouched.name() + " VALUES (3)"});
  BinlogReader reader = reader_at({current_binlog_position(sql)}, captured);
  CHECK(read_changes(reader, 1).empty());
  rolled_back.roll_back();
  elsewhere.commit();
  committed.commit();
  sql.execute("INSERT INTO " + t + " VALUES (4)");
  CHECK(read_changes(reader, 3) == std::vector<std::string>{"+I[1]", "+I[4]"});
}

TEST_CASE("the binlog position names the file it is in after the server rotates its binlog",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_rotate", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  const CapturedTable captured = capture_table(sql, t);
  const BinlogPosition start = current_binlog_position(sql);
  BinlogReader reader = reader_at({start}, captured);
  sql.execute("INSERT INTO " + t + " VALUES (1)");
  sql.execute("FLUSH BINARY LOGS");
  sql.execute("INSERT INTO " + t + " VALUES (2)");
  const BinlogPosition rotated = current_binlog_position(sql);
  CHECK(rotated.file != start.file);
  CHECK(read_changes(reader, 2) == std::vector<std::string>{"+I[1]", "+I[2]"});
  // In the rotated file, or a later one: tests running alongside rotate
  // the server's binlog too. A position left naming the file before, with
  // an offset of the file after, would be before `rotated`.
  CHECK(reader.resume().position >= rotated);

  // A reader started there reads on from it, into the next rotation.
  sql.execute("FLUSH BINARY LOGS");
  sql.execute("INSERT INTO " + t + " VALUES (3)");
  const BinlogPosition rotated_again = current_binlog_position(sql);
  BinlogReader resumed = reader_at(reader.resume(), captured);
  CHECK(read_changes(resumed, 1) == std::vector<std::string>{"+I[3]"});
  CHECK(resumed.resume().position >= rotated_again);
}

TEST_CASE(
    "DDL on a captured table fails the reader with the statement and how to go on, unless it "
    "adds a nullable column at the end or an index",
    "[mysql][cdc]") {
  testing::TestTable table("cdc_ddl", "id BIGINT PRIMARY KEY, qty INT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  BinlogReader reader = reader_at({current_binlog_position(sql)}, capture_table(sql, t));
  // One that follows schema changes sees the same rows.
  BinlogReader following(testing::test_mysql_url(), server_id(), {current_binlog_position(sql)},
                         {capture_table(sql, t)}, {.follow_schema_changes = true});
  // A nullable column at the end: taken, and read past.
  sql.execute("ALTER TABLE " + t + " ADD COLUMN note VARCHAR(10)");
  sql.execute("INSERT INTO " + t + " VALUES (1, 5, 'new')");
  CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[1, 5]"});
  // An index and a table option leave the rows alike.
  sql.execute("ALTER TABLE " + t + " ADD INDEX by_qty (qty), COMMENT 'counted'");
  sql.execute("CREATE UNIQUE INDEX by_note ON " + t + " (note)");
  sql.execute("INSERT INTO " + t + " VALUES (2, 6, 'two')");
  CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[2, 6]"});
  // So do maintenance, statistics, a rebuild, defaults, triggers and grants.
  int id = 2;
  for (const std::string& statement :
       {"OPTIMIZE TABLE " + t, "ANALYZE TABLE " + t, "ANALYZE TABLE " + t + " PERSISTENT FOR ALL",
        "REPAIR TABLE " + t, "FLUSH TABLES " + t, "ALTER TABLE " + t + " ENGINE = InnoDB",
        "ALTER TABLE " + t + " FORCE", "ALTER TABLE " + t + " AUTO_INCREMENT = 100",
        "ALTER TABLE " + t + " ALTER COLUMN qty SET DEFAULT 7",
        "ALTER TABLE " + t + " ALTER COLUMN qty DROP DEFAULT",
        "ALTER TABLE " + t + " RENAME INDEX by_qty TO qty_index",
        "ALTER TABLE " + t + " ADD CONSTRAINT positive CHECK (qty > -100)",
        "ALTER TABLE " + t + " DROP CONSTRAINT positive",
        "ALTER TABLE " + t + " DROP INDEX by_note",
        "ALTER TABLE " + t + " DEFAULT CHARACTER SET latin1",
        "CREATE TRIGGER " + t + "_trigger BEFORE INSERT ON " + t + " FOR EACH ROW SET @seen = 1",
        "DROP TRIGGER " + t + "_trigger",
        "CREATE OR REPLACE VIEW " + t + "_view AS SELECT * FROM " + t,
        "DROP VIEW " + t + "_view"}) {
    INFO(statement);
    sql.execute(statement);
    ++id;
    sql.execute("INSERT INTO " + t + " VALUES (" + std::to_string(id) + ", 1, NULL)");
    CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[" + std::to_string(id) + ", 1]"});
  }
  // There, the schema changes are the column added and its defaults, which
  // a target that follows the table's columns takes too.
  const BinlogChanges followed = read_until(following, id + 1);
  std::vector<std::string> rows, changed;
  for (const BinlogChange& change : followed) {
    if (!change.schema_change) rows.push_back(followed.row(change).to_string());
    if (change.schema_change) changed.push_back(change.schema_change->statement);
  }
  CHECK(changed == std::vector<std::string>{"ALTER TABLE " + t + " ADD COLUMN note VARCHAR(10)",
                                            "ALTER TABLE " + t + " ALTER COLUMN qty SET DEFAULT 7",
                                            "ALTER TABLE " + t + " ALTER COLUMN qty DROP DEFAULT"});
  CHECK(rows.size() == static_cast<size_t>(id));
  CHECK(rows.back() == "+I[" + std::to_string(id) + ", 1, NULL]");
  // Anything else fails, with the statement and how to go on.
  for (const std::string& ddl :
       {"ALTER TABLE " + t + " DROP COLUMN note",
        "ALTER TABLE " + t + " ADD COLUMN later INT NOT NULL DEFAULT 0",
        "ALTER TABLE " + t + " ADD COLUMN early INT FIRST", "TRUNCATE " + t,
        "RENAME TABLE " + t + " TO " + t + "_old, " + t + "_old TO " + t}) {
    INFO(ddl);
    BinlogReader again = reader_at({current_binlog_position(sql)}, capture_table(sql, t));
    sql.execute(ddl);
    CHECK_THROWS_WITH(read_changes(again, 1),
                      Catch::Contains("DDL on captured table '") && Catch::Contains(t + "'") &&
                          Catch::Contains(ddl) && Catch::Contains("restore=none"));
  }
}

TEST_CASE(
    "DDL that drops, truncates or exchanges a captured table's partitions, or ALTER IGNORE that "
    "may drop rows, fails the reader, which follows other DDL",
    "[mysql][cdc]") {
  testing::TestTable table("cdc_partitions", "id BIGINT PRIMARY KEY, qty INT");
  testing::TestTable other("cdc_partitions_other", "id BIGINT PRIMARY KEY, qty INT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  const auto partition = [&] {
    sql.execute("ALTER TABLE " + t +
                " PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 "
                "VALUES LESS THAN (20), PARTITION p2 VALUES LESS THAN MAXVALUE)");
    sql.execute("INSERT INTO " + t + " SELECT seq, seq FROM seq_1_to_30");
  };
  for (const std::string& ddl :
       {"ALTER TABLE " + t + " TRUNCATE PARTITION p0", "ALTER TABLE " + t + " DROP PARTITION p2",
        "ALTER TABLE " + t + " EXCHANGE PARTITION p1 WITH TABLE " + other.name(),
        "ALTER IGNORE TABLE " + t + " ADD UNIQUE KEY u (qty, id)"}) {
    INFO(ddl);
    sql.execute("DROP TABLE " + t);
    sql.execute("CREATE TABLE " + t + " (id BIGINT PRIMARY KEY, qty INT)");
    partition();
    BinlogReader reader(testing::test_mysql_url(), server_id(), {current_binlog_position(sql)},
                        {capture_table(sql, t)}, {.follow_schema_changes = true});
    // Partitions added or merged keep the rows: read past.
    sql.execute("ALTER TABLE " + t +
                " REORGANIZE PARTITION p0 INTO (PARTITION p0a VALUES LESS THAN (5), PARTITION "
                "p0 VALUES LESS THAN (10))");
    sql.execute("INSERT INTO " + t + " VALUES (100, 1)");
    const BinlogChanges before = read_until(reader, 3);
    CHECK(texts(before).back() == "+I[100, 1]");
    sql.execute(ddl);
    CHECK_THROWS_WITH(read_changes(reader, 1),
                      Catch::Contains("DDL on captured table '") && Catch::Contains(t + "'") &&
                          Catch::Contains(ddl) && Catch::Contains("without logging them as rows") &&
                          Catch::Contains("restore=none"));
  }
}

TEST_CASE(
    "a change of a captured table logged as a statement fails the reader, naming it; another "
    "table's is read past",
    "[mysql][cdc]") {
  testing::TestTable table("cdc_statements", "id BIGINT PRIMARY KEY, qty INT");
  testing::TestTable other("cdc_statements_other", "id BIGINT PRIMARY KEY, qty INT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  int others = 0;
  for (const std::string format : {"STATEMENT", "MIXED"}) {
    for (const std::string& change :
         {"UPDATE " + t + " SET qty = 10 WHERE id = 1",
          "INSERT INTO " + t + " VALUES (3, 3) ON DUPLICATE KEY UPDATE qty = qty + 1",
          "DELETE FROM " + t + " WHERE id = 2",
          "UPDATE " + other.name() + " o JOIN " + t + " x ON o.id = x.id SET x.qty = 0"}) {
      INFO(format << ": " << change);
      sql.execute("REPLACE INTO " + t + " VALUES (1, 1), (2, 2)");
      BinlogReader reader = reader_at({current_binlog_position(sql)}, capture_table(sql, t));
      sql.execute("SET SESSION binlog_format = '" + format + "'");
      sql.execute("INSERT INTO " + other.name() + " VALUES (" + std::to_string(++others) + ", 1)");
      sql.execute(change);
      sql.execute("SET SESSION binlog_format = 'ROW'");
      CHECK_THROWS_WITH(read_changes(reader, 1),
                        Catch::Contains("captured table '" + testing::test_mysql_url().database +
                                        "." + t + "' logged as an SQL statement") &&
                            Catch::Contains(change) && Catch::Contains("binlog_format=ROW"));
    }
  }
}

TEST_CASE(
    "DDL on other tables, the same name in another database or in another case too, is read past",
    "[mysql][cdc]") {
  testing::TestTable table("cdc_ddl_elsewhere", "id BIGINT PRIMARY KEY, qty INT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  const std::string other = testing::test_mysql_url().database + "_ddl_other";
  sql.execute("DROP DATABASE IF EXISTS " + other);
  sql.execute("CREATE DATABASE " + other);
  struct Dropped {
    MySqlConnection& sql;
    std::string database;
    ~Dropped() { sql.execute("DROP DATABASE IF EXISTS " + database); }
  } dropped{sql, other};
  BinlogReader reader = reader_at({current_binlog_position(sql)}, capture_table(sql, t));
  // A copy of the table, in this database and in the other, changed at will.
  sql.execute("CREATE TABLE " + t + "_copy LIKE " + t);
  sql.execute("CREATE TABLE " + other + "." + t + " LIKE " + t);
  sql.execute("ALTER TABLE " + other + "." + t + " ADD INDEX by_qty (qty), DROP COLUMN id");
  sql.execute("ALTER TABLE `" + other + "`.`" + t + "` ADD COLUMN first_one INT FIRST");
  sql.execute("RENAME TABLE " + t + "_copy TO " + t + "_copied");
  sql.execute("TRUNCATE " + t + "_copied");
  sql.execute("DROP TABLE " + t + "_copied, " + other + "." + t);
  // Where the server's lower_case_table_names is 0, as on Linux by default,
  // a name in capitals is another table.
  if (sql.query("SELECT @@lower_case_table_names").at(0).at(0) == "0") {
    std::string capitals = t;
    for (char& c : capitals) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    sql.execute("CREATE TABLE " + capitals + " LIKE " + t);
    sql.execute("ALTER TABLE " + capitals + " ADD COLUMN first_one INT FIRST");
    sql.execute("TRUNCATE " + capitals);
    sql.execute("DROP TABLE " + capitals);
  }
  sql.execute("INSERT INTO " + t + " VALUES (1, 5)");
  CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[1, 5]"});
  // Run from the other database, an unqualified name is that database's.
  MySqlUrl in_other = testing::test_mysql_url();
  in_other.database = other;
  MySqlConnection there(in_other);
  there.execute("CREATE TABLE " + t + " (id INT)");
  there.execute("ALTER TABLE " + t + " ADD COLUMN x INT FIRST");
  there.execute("DROP TABLE " + t);
  sql.execute("INSERT INTO " + t + " VALUES (2, 6)");
  CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[2, 6]"});
  // And from there, the captured table's qualified name is the table.
  there.execute("ALTER TABLE " + testing::test_mysql_url().database + "." + t + " DROP COLUMN qty");
  CHECK_THROWS_WITH(read_changes(reader, 1),
                    Catch::Contains("DDL on captured table '" + testing::test_mysql_url().database +
                                    "." + t + "'"));
}

TEST_CASE("a binlog position the server no longer has is named", "[mysql][cdc]") {
  testing::TestTable table("cdc_purged", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  const BinlogResume gone{{"mariadb-bin.999999", 4}};
  const auto read_from_gone = [&] {
    BinlogReader reader = reader_at(gone, captured);
    read_changes(reader, 1);
  };
  CHECK_THROWS_AS(read_from_gone(), ConfigError);
  CHECK_THROWS_WITH(read_from_gone(),
                    Catch::Contains("mariadb-bin.999999:4") && Catch::Contains("purged"));
}

TEST_CASE("a column the job does not keep is read past when its type is not taken",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_read_past", "id BIGINT PRIMARY KEY, note VARCHAR(10), qty INT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  // Kept, every column is decoded, and a type not taken would fail here.
  CHECK(capture_table(sql, t, {"id", "qty"}).read_past.empty());
  // One the reader would refuse, as a column of a type it does not take.
  CapturedTable captured = capture_table(sql, t, {"id", "qty"});
  captured.read_past = {"note"};
  BinlogReader reader = reader_at({current_binlog_position(sql)}, captured);
  sql.execute("INSERT INTO " + t + " VALUES (1, 'skipped', 5)");
  sql.execute("UPDATE " + t + " SET qty = 6, note = 'again' WHERE id = 1");
  CHECK(read_changes(reader, 3) ==
        std::vector<std::string>{"+I[1, NULL, 5]", "-U[1, NULL, 5]", "+U[1, NULL, 6]"});
}

TEST_CASE("a column type the reader does not take is named", "[mysql][cdc]") {
  MySqlConnection sql(testing::test_mysql_url());
  Charsets charsets(sql);
  const TableColumn vector{.name = "embedding", .column_type = "vector(3)"};
  CHECK_THROWS_WITH(decoding_of(vector, charsets),
                    Catch::Contains("column 'embedding' is vector(3)"));
  const TableColumn klingon{
      .name = "greeting", .column_type = "varchar(10)", .charset = "klingon", .collation = "x"};
  CHECK_THROWS_WITH(decoding_of(klingon, charsets),
                    Catch::Contains("column 'greeting' is text in klingon"));
}

TEST_CASE("a system-versioned table is refused, saying why, by name and by pattern",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_versioned", "id BIGINT PRIMARY KEY, qty INT");
  MySqlConnection& sql = table.connection();
  sql.execute("ALTER TABLE " + table.name() + " ADD SYSTEM VERSIONING");
  const std::string refused = "' is system-versioned (WITH SYSTEM VERSIONING)";
  CHECK_THROWS_WITH(capture_table(sql, table.name()), Catch::Contains(table.name() + refused));
  const std::vector<TableName> matched =
      match_tables(sql, {testing::test_mysql_url().database + "." + table.name()});
  REQUIRE(matched.size() == 1);
  CHECK_THROWS_WITH(capture_table(sql, matched[0].table, {}, matched[0].database),
                    Catch::Contains(table.name() + refused));
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
        BinlogReader reader(plain, server_id(), {end}, {captured});
        read_changes(reader, 1);
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

TEST_CASE("XA transactions the server commits together, in one group, all come out",
          "[mysql][cdc]") {
  testing::TestTable table("cdc_group", "id BIGINT PRIMARY KEY");
  MySqlConnection& sql = table.connection();
  const CapturedTable captured = capture_table(sql, table.name());
  BinlogReader reader = reader_at({current_binlog_position(sql)}, captured);
  // Connections committing at once: the server writes their commits as one
  // group, and their GTID events carry the group's commit id.
  constexpr int kThreads = 8, kEach = 40;
  std::vector<std::thread> writers;
  for (int w = 0; w < kThreads; ++w) {
    writers.emplace_back([&, w] {
      MySqlConnection c(testing::test_mysql_url());
      for (int i = 0; i < kEach; ++i) {
        const std::string xid = c.quote(testing::unique_name("group"));
        c.execute("XA START " + xid);
        c.execute("INSERT INTO " + table.name() + " VALUES (" + std::to_string(w * 1000 + i) + ")");
        c.execute("XA END " + xid);
        c.execute("XA PREPARE " + xid);
        c.execute("XA COMMIT " + xid);
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  const std::vector<std::string> changes = read_changes(reader, kThreads * kEach);
  CHECK(changes.size() == static_cast<size_t>(kThreads * kEach));
  CHECK(std::set<std::string>(changes.begin(), changes.end()).size() == changes.size());
}

TEST_CASE(
    "a reader cancelled frees its replica id at once for the next reader, whatever the server "
    "writes meanwhile",
    "[mysql][cdc]") {
  testing::TestTable table("cdc_cancel", "id BIGINT PRIMARY KEY, v LONGTEXT");
  MySqlConnection& sql = table.connection();
  const std::string t = table.name();
  const CapturedTable captured = capture_table(sql, t);
  const BinlogPosition start = current_binlog_position(sql);
  sql.execute("INSERT INTO " + t + " VALUES (1, 'first')");
  const uint32_t id = server_id();
  {
    MySqlCanceller canceller;
    BinlogReader reader(testing::test_mysql_url(), id, {start}, {captured},
                        {.canceller = &canceller});
    CHECK(read_changes(reader, 1) == std::vector<std::string>{"+I[1, first]"});
    // As a job that stops: the server wrote far more than the sockets
    // between it and the reader hold (random text, which a compressed
    // binlog does not shrink much), and the reader, cancelled, fails.
    for (int i = 0; i < 8; ++i) {
      sql.execute("INSERT INTO " + t + " SELECT seq + " + std::to_string(i * 1000 + 10) +
                  ", (SELECT GROUP_CONCAT(SHA2(RAND(), 512) SEPARATOR '') FROM seq_1_to_80) "
                  "FROM seq_1_to_1000");
    }
    canceller.cancel();
    // It fails once it comes to what the shut socket no longer brings: at
    // once, or after the events that had come in already, where a read
    // ends at its time budget first (on a loaded machine).
    const auto read_on = [&] {
      for (int i = 0; i < 1000; ++i) {
        BinlogChanges changes;
        reader.read(changes);
      }
    };
    CHECK_THROWS_AS(read_on(), MySqlError);
  }
  // A dump thread of the first reader's still blocked writing to it would
  // keep the next reader of its id waiting, up to the server's
  // net_write_timeout (a minute).
  const BinlogPosition end = current_binlog_position(sql);
  sql.execute("INSERT INTO " + t + " VALUES (0, 'after')");
  BinlogReader next(testing::test_mysql_url(), id, {end}, {captured});
  CHECK(read_changes(next, 1) == std::vector<std::string>{"+I[0, after]"});
}

TEST_CASE("a binlog position packs into a row's input position and back", "[cdc]") {
  const BinlogPosition at{"mariadb-bin.000012", 4711};
  REQUIRE(at.packed().has_value());
  CHECK(*at.packed() >= 0);
  CHECK(BinlogPosition::unpacked(*at.packed(), "mariadb-bin.000003") == at);
  // Past six digits the number grows, and so does the name.
  const BinlogPosition far{"binlog.1000000", (uint64_t{1} << 32) - 1};
  REQUIRE(far.packed().has_value());
  CHECK(BinlogPosition::unpacked(*far.packed(), "binlog.000001") == far);
  // In binlog order, as the positions are.
  CHECK(*BinlogPosition{"mariadb-bin.000012", 5000}.packed() > *at.packed());
  CHECK(*BinlogPosition{"mariadb-bin.000013", 4}.packed() > *at.packed());
  // What does not fit is not packed.
  CHECK_FALSE(BinlogPosition{"mariadb-bin.000012", uint64_t{1} << 32}.packed());
  CHECK_FALSE(BinlogPosition{"no-number", 4}.packed());
  // Below kUncheckedRow, whatever fits.
  CHECK(*BinlogPosition{"binlog.536870911", (uint64_t{1} << 32) - 1}.packed() < kUncheckedRow);
  CHECK_FALSE(BinlogPosition{"binlog.536870912", 4}.packed());
}

TEST_CASE("rows events of each version, compressed or not, are read alike from their bytes",
          "[cdc]") {
  // Row images are only carried here, not decoded: any bytes do.
  const std::string images = "row images, as they are written";
  std::string deflated(compressBound(images.size()), '\0');
  uLongf deflated_size = deflated.size();
  REQUIRE(compress(reinterpret_cast<Bytef*>(deflated.data()), &deflated_size,
                   reinterpret_cast<const Bytef*>(images.data()), images.size()) == Z_OK);
  deflated.resize(deflated_size);
  // A header 0x80 | 1, the length in one byte, then zlib's data.
  const std::string compressed = std::string{'\x81', static_cast<char>(images.size())} + deflated;
  // MariaDB's version 1 events (23, 24, 25; compressed 166…), MySQL's
  // version 2 (30…, with extra data; compressed 169…).
  for (const uint8_t first : {23, 30, 166, 169}) {
    for (const uint8_t kind : {0, 1, 2}) {
      const uint8_t type = first + kind;
      INFO("type " << int{type});
      const bool version2 = first == 30 || first == 169;
      std::string body = std::string("\x2a\x00\x00\x00\x00\x01", 6) + std::string(2, '\0');
      if (version2) body += std::string("\x05\x00xyz", 5);  // extra data, its length counted
      body += std::string("\x0a\xff\x03", 3);               // 10 columns, all but two
      if (kind == 1) body += std::string("\x7f\x02", 2);    // an update's after images
      body += first >= 166 ? compressed : images;
      // The header: time, type, server id, length (with a checksum), next position, flags.
      const uint32_t length = 19 + body.size() + 4;
      std::string event = std::string("\x01\x00\x00\x00", 4) + static_cast<char>(type) +
                          std::string("\x07\x00\x00\x00", 4);
      for (int i = 0; i < 4; ++i) event += static_cast<char>(length >> (8 * i));
      event += std::string("\x10\x27\x00\x00\x00\x00", 6) + body + "CRC!";
      REQUIRE(is_rows_event(type));
      const BinlogEvent parsed = parse_binlog_event(event, true);
      CHECK(parsed.type == type);
      CHECK(parsed.next_position == 10000);
      std::string buffer;
      const BinlogRows rows = rows_of(parsed, buffer);
      CHECK(rows.kind == kind);
      CHECK(rows.table_id == (uint64_t{1} << 40 | 42));
      CHECK(table_id_of(parsed) == rows.table_id);
      CHECK(rows.columns == 10);
      CHECK(rows.present[0] == 0xff);
      CHECK(rows.present[1] == 0x03);
      CHECK(rows.present_after[0] == (kind == 1 ? 0x7f : 0xff));
      CHECK(rows.images == images);
      // Cut short anywhere, it is refused.
      CHECK_THROWS_AS(rows_of(parse_binlog_event(event.substr(0, event.size() - 1), true), buffer),
                      Error);
    }
  }
}

namespace {

// A packet as the server frames it: the payload's length (3 bytes), its
// sequence number, the payload.
std::string framed(std::string_view payload, uint8_t sequence) {
  std::string packet;
  for (int i = 0; i < 3; ++i) packet += static_cast<char>(payload.size() >> (8 * i));
  packet += static_cast<char>(sequence);
  return packet + std::string(payload);
}

// Two connected sockets: the reader's and the server's.
struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0); }
  ~SocketPair() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  // From the server's side, on the thread that plays it: stops when the
  // reader's side is shut.
  void send(std::string_view bytes) const {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fds[1], bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return;
      bytes.remove_prefix(static_cast<size_t>(sent));
    }
  }
};

// Joins the thread playing the server once the reads are done, or failed:
// the reader's side shut, it stops writing.
struct Joined {
  SocketPair& sockets;
  std::thread& server;
  ~Joined() {
    ::shutdown(sockets.fds[0], SHUT_RDWR);
    server.join();
  }
};

}  // namespace

TEST_CASE("a binlog's packets read from the socket come whole however the bytes arrive", "[cdc]") {
  SocketPair sockets;
  PacketReader reader(sockets.fds[0], std::chrono::seconds(10));
  const uint64_t seed = testing::test_seed();
  INFO("seed " << seed);
  std::mt19937 random(seed);
  std::vector<std::string> payloads = {"", std::string("\0an event", 9), std::string(70'000, 'x')};
  for (int i = 0; i < 300; ++i) {
    payloads.push_back(std::string(random() % 600, static_cast<char>('a' + i % 26)));
  }
  std::string stream;
  for (size_t i = 0; i < payloads.size(); ++i) {
    stream += framed(payloads[i], static_cast<uint8_t>(i + 7));  // wrapping past 255
  }
  CHECK_FALSE(reader.has_data());
  // The server writes in pieces of any size while the reader reads.
  std::thread server([&] {
    for (size_t at = 0; at < stream.size();) {
      const size_t n = std::min<size_t>(stream.size() - at, 1 + random() % 3000);
      sockets.send(std::string_view(stream).substr(at, n));
      at += n;
      if (random() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  {
    const Joined joined{sockets, server};
    for (const std::string& payload : payloads) REQUIRE(reader.next() == payload);
    CHECK_FALSE(reader.has_data());
  }
}

TEST_CASE("a binlog's payload of 16 MiB or more comes whole from its several packets", "[cdc]") {
  SocketPair sockets;
  PacketReader reader(sockets.fds[0], std::chrono::seconds(10));
  // Packets of 0xffffff bytes and a shorter one (an empty one where it
  // divides), read as one.
  const std::string large = std::string(0xffffff, 'L') + "the rest";
  const std::string exact(0xffffff, 'E');
  std::thread server([&] {
    sockets.send(framed("before", 254) + framed(std::string_view(large).substr(0, 0xffffff), 255) +
                 framed(std::string_view(large).substr(0xffffff), 0));
    sockets.send(framed(exact, 1) + framed("", 2) + framed("after", 3));
  });
  const Joined joined{sockets, server};
  // Compared without printing 16 MiB where they differ.
  const auto next_is = [&](std::string_view expected) {
    const std::string_view got = reader.next();
    UNSCOPED_INFO("got " << got.size() << " bytes, " << expected.size() << " expected");
    return got == expected;
  };
  REQUIRE(next_is("before"));
  REQUIRE(next_is(large));
  REQUIRE(next_is(exact));
  REQUIRE(next_is("after"));
}

TEST_CASE("a binlog's socket that breaks, stalls or skips a packet fails the read", "[cdc]") {
  const auto fails_with = [](PacketReader& reader, const std::string& why) {
    try {
      reader.next();
      FAIL("the read succeeded");
    } catch (const MySqlError& e) {
      CHECK(e.code() == 2013);  // CR_SERVER_LOST: a restart reads on
      CHECK_THAT(e.what(), Catch::Contains(why));
    }
  };
  SECTION("a packet out of sequence") {
    SocketPair sockets;
    PacketReader reader(sockets.fds[0], std::chrono::seconds(10));
    sockets.send(framed("one", 1) + framed("three", 3));
    CHECK(reader.next() == "one");
    fails_with(reader, "packets out of order (packet 3 where 2 was next)");
  }
  SECTION("the server closing the connection inside a packet") {
    SocketPair sockets;
    PacketReader reader(sockets.fds[0], std::chrono::seconds(10));
    sockets.send(framed("a whole packet", 0) + framed("cut short", 1).substr(0, 8));
    ::close(std::exchange(sockets.fds[1], -1));
    CHECK(reader.next() == "a whole packet");
    CHECK(reader.has_data());
    fails_with(reader, "the server closed the connection");
  }
  SECTION("nothing coming for the timeout") {
    SocketPair sockets;
    PacketReader reader(sockets.fds[0], std::chrono::milliseconds(100));
    sockets.send(framed("half", 0).substr(0, 6));
    fails_with(reader, "nothing came for 100 ms");
  }
}
