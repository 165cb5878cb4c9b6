#include <catch2/catch.hpp>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/every_type.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

std::string checksum(MySqlConnection& sql, const std::string& table) {
  return sql.query("CHECKSUM TABLE " + table).at(0).at(1).value_or("NULL");
}

}  // namespace

TEST_CASE("mysql-cdc copies a column of every type exactly, from the snapshot and the binlog",
          "[mysql][cdc][serial]") {
  // Users' servers write the binlog's column metadata or not: read both.
  const std::string metadata = GENERATE("NO_LOG", "FULL");
  INFO("binlog_row_metadata=" << metadata);
  const testing::ScopedGlobal row_metadata("binlog_row_metadata", metadata);

  testing::TestTable source("cdc_every_type", testing::kEveryType);
  MySqlConnection& sql = source.connection();
  const std::string copy = testing::unique_name("cdc_every_type_copy");
  sql.execute("CREATE TABLE " + copy + " LIKE " + source.name());
  struct Drop {
    MySqlConnection& sql;
    std::string table;
    ~Drop() { sql.execute("DROP TABLE IF EXISTS " + table); }
  } drop{sql, copy};
  sql.execute("SET time_zone = '+00:00'");
  for (const std::string& row : testing::kEveryTypeRows) {
    sql.execute("INSERT INTO " + source.name() + " VALUES " + row);
  }
  REQUIRE(sql.query("SELECT COUNT(*) FROM " + source.name()).at(0).at(0) == "4");

  MySqlCdcOptions options;
  options.url = testing::test_mysql_url();
  options.tables = {source.name()};
  testing::Replication replication(options, copy);
  const auto same = [&] { return checksum(sql, copy) == checksum(sql, source.name()); };
  CHECK(testing::wait_until(same, 30s));
  for (const std::string& update : testing::kEveryTypeUpdates) {
    sql.execute(testing::with_table(update, source.name()));
  }
  const bool after_binlog = testing::wait_until(same, 30s);
  const JobResult& result = replication.stop();
  INFO(result.error);
  CHECK(after_binlog);
  CHECK(sql.query("SELECT COUNT(*) FROM " + copy).at(0).at(0) == "4");
  if (!after_binlog) {
    // Which column differs, for the failure's message.
    for (const auto& column : sql.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                                        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = " +
                                        sql.quote(source.name()))) {
      const std::string c = *column.at(0);
      const auto differs = sql.query("SELECT s.id FROM " + source.name() + " s LEFT JOIN " + copy +
                                     " t ON t.id = s.id WHERE NOT (s." + c + " <=> t." + c + ")");
      for (const auto& row : differs)
        UNSCOPED_INFO("column " << c << " differs in row " << *row[0]);
    }
  }
}

TEST_CASE("mysql-cdc reads every key type's snapshot in exact chunks, and its keys in the binlog",
          "[mysql][cdc]") {
  const testing::KeyCase c =
      GENERATE(from_range(std::begin(testing::kKeyCases), std::end(testing::kKeyCases)));
  INFO("key: " << c.columns);
  testing::TestTable source("cdc_key",
                            std::string(c.columns) + ", v INT, PRIMARY KEY (" + c.key + ")");
  MySqlConnection& sql = source.connection();
  const std::string t = source.name();
  sql.execute("INSERT INTO " + t + " SELECT " + c.values + ", seq FROM seq_1_to_" +
              std::to_string(c.rows));
  MySqlCdcOptions options;
  options.url = testing::test_mysql_url();
  options.tables = {t};
  options.chunk_rows = 7;  // tens of chunks, each bound one compared key

  // The snapshot gives each row once: none skipped, none repeated.
  options.startup = MySqlCdcOptions::Startup::kSnapshot;
  auto collected = std::make_shared<CollectedRows>();
  {
    JobGraph graph(t);
    graph.source("mysql-cdc", mysql_cdc_source(options, capture_tables(options)))
        .sink("collect", collect_sink(collected));
    const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
    REQUIRE(result.finished());
  }
  std::set<int64_t> seen;
  for (const Row& row : collected->rows()) seen.insert(row.fields.back().as_bigint());
  CHECK(collected->size() == static_cast<size_t>(c.rows));
  CHECK(seen.size() == static_cast<size_t>(c.rows));

  // Replicated, then changed by key: every row the binlog names is found.
  const std::string copy = testing::unique_name("cdc_key_copy");
  sql.execute("CREATE TABLE " + copy + " LIKE " + t);
  struct Drop {
    MySqlConnection& sql;
    std::string table;
    ~Drop() { sql.execute("DROP TABLE IF EXISTS " + table); }
  } drop{sql, copy};
  options.startup = MySqlCdcOptions::Startup::kInitial;
  testing::Replication replication(options, copy);
  const auto same = [&] {
    return checksum(sql, copy) == checksum(sql, t) &&
           sql.query("SELECT COUNT(*) FROM " + copy) == sql.query("SELECT COUNT(*) FROM " + t);
  };
  CHECK(testing::wait_until(same, 30s));
  sql.execute("UPDATE " + t + " SET v = -v WHERE v % 3 = 0");
  sql.execute("DELETE FROM " + t + " WHERE v % 3 = 1");
  const bool converged = testing::wait_until(same, 30s);
  if (!converged) {
    // The rows that differ, by their v (one per row), for the failure's message.
    for (const auto& row :
         sql.query("SELECT s.v, c.v FROM " + t + " s LEFT JOIN " + copy +
                   " c USING (v) WHERE c.v IS NULL UNION SELECT s.v, c.v FROM " + copy +
                   " c LEFT JOIN " + t + " s USING (v) WHERE s.v IS NULL LIMIT 10")) {
      UNSCOPED_INFO("only in one table: source v " << row[0].value_or("-") << ", copy v "
                                                   << row[1].value_or("-"));
    }
    UNSCOPED_INFO("rows: source " << *sql.query("SELECT COUNT(*) FROM " + t).at(0).at(0)
                                  << ", copy "
                                  << *sql.query("SELECT COUNT(*) FROM " + copy).at(0).at(0));
    UNSCOPED_INFO("the replication: " << replication.stop().error);
  }
  CHECK(converged);
}
