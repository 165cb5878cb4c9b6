#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/connectors/mysql/binlog_position.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/schema_change.hpp"
#include "sluice/engine/data/schema.hpp"

namespace sluice {

/// Sets each of `columns`' default_sql and generated_sql as `definition`
/// (SHOW CREATE TABLE of their table) writes them.
void take_expressions(std::vector<TableColumn>& columns, std::string_view definition);

/// The columns of captured tables as the DDL in the binlog changes them
/// (Debezium's schema history), worked out by the server itself: a table is
/// kept as its CREATE TABLE (CapturedTable::definition), and an ALTER TABLE
/// of it runs again on a temporary copy in the source's database, whose
/// columns are then read back. Temporary tables are the session's own, and
/// the binlog does not log them in ROW format: nothing of this reaches the
/// source's binlog or other sessions. The user needs CREATE TEMPORARY
/// TABLES on the URL's database.
class SchemaHistory {
 public:
  SchemaHistory(MySqlUrl url, MySqlCanceller* canceller)
      : url_(std::move(url)), canceller_(canceller) {}

  /// The table `definition` (a CREATE TABLE as SHOW CREATE TABLE writes it)
  /// defines, as `database`.`table`, its columns read as capture_table()
  /// reads them.
  CapturedTable table(const std::string& database, const std::string& table,
                      const std::string& definition);
  /// `table` after ALTER TABLE `statement`, run under `sql_mode` (the
  /// session's that ran it, as BinlogQuery has it: ANSI_QUOTES changes how
  /// it reads). Throws ConfigError naming the statement when the server
  /// does not run it on the copy.
  CapturedTable altered(const CapturedTable& table, const std::string& statement,
                        std::optional<uint64_t> sql_mode = std::nullopt);
  /// Table `database`.`table` as CREATE TABLE `statement` (run with default
  /// database `statement_database`, under `sql_mode`) makes it. Throws
  /// ConfigError naming the statement when it is not of a form
  /// created_copy() takes, or the server does not run it on the copy.
  CapturedTable created(const std::string& database, const std::string& table,
                        const std::string& statement, const std::string& statement_database,
                        std::optional<uint64_t> sql_mode = std::nullopt);

  /// Time zone `zone` (a session's time_zone as a QUERY event names it:
  /// "+05:30", "Europe/Berlin", "SYSTEM") as its offset from UTC at
  /// `epoch_seconds`, in the form any server takes ("+01:00"): a target
  /// need not know the source's named zones. Empty when the server does not
  /// know the zone (its time zone tables lack it).
  std::string utc_offset(const std::string& zone, int64_t epoch_seconds);

  /// Its connection to the server.
  MySqlConnection& connection();

 private:
  // Runs `sql` as a statement of a session with `sql_mode` would.
  void execute_as(const std::string& sql, std::optional<uint64_t> sql_mode);
  // Reads the copy's columns and definition back, and drops it.
  CapturedTable read_copy(const std::string& database, const std::string& table);

  MySqlUrl url_;
  MySqlCanceller* canceller_;
  std::unique_ptr<MySqlConnection> connection_;
};

}  // namespace sluice
