#include "sluice/connectors/mysql/cdc/schema_history.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>

#include "sluice/connectors/mysql/cdc/binlog_rows.hpp"
#include "sluice/connectors/mysql/cdc/ddl.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

// The copy's name, in the source URL's database.
constexpr char kCopy[] = "`sluice_schema_history`";

}  // namespace

void take_expressions(std::vector<TableColumn>& columns, std::string_view definition) {
  const std::map<std::string, ColumnExpressions> expressions = column_expressions(definition);
  for (TableColumn& column : columns) {
    if (const auto found = expressions.find(column.name); found != expressions.end()) {
      column.default_sql = found->second.default_sql;
      column.generated_sql = found->second.generated;
      column.auto_increment = found->second.auto_increment;
    }
  }
}

MySqlConnection& SchemaHistory::connection() {
  if (!connection_) {
    connection_ = std::make_unique<MySqlConnection>(url_, MySqlSession{.canceller = canceller_});
  }
  return *connection_;
}

CapturedTable SchemaHistory::table(const std::string& database, const std::string& table,
                                   const std::string& definition) {
  MySqlConnection& sql = connection();
  sql.execute(std::string("DROP TEMPORARY TABLE IF EXISTS ") + kCopy);
  sql.execute(temporary_copy(definition, kCopy));
  return read_copy(database, table);
}

void SchemaHistory::execute_as(const std::string& sql, std::optional<uint64_t> sql_mode) {
  MySqlConnection& connection = this->connection();
  if (sql_mode) connection.execute("SET SESSION sql_mode = " + std::to_string(*sql_mode));
  std::exception_ptr failed;
  try {
    connection.execute(sql);
  } catch (...) {
    failed = std::current_exception();
  }
  if (sql_mode) {
    try {
      connection.execute(std::string("SET SESSION sql_mode = '") + kSessionSqlMode + "'");
    } catch (const MySqlError&) {
      connection_.reset();  // not used again in another session's sql_mode
      if (!failed) throw;
    }
  }
  if (failed) std::rethrow_exception(failed);
}

CapturedTable SchemaHistory::altered(const CapturedTable& table, const std::string& statement,
                                     std::optional<uint64_t> sql_mode) {
  MySqlConnection& sql = connection();
  sql.execute(std::string("DROP TEMPORARY TABLE IF EXISTS ") + kCopy);
  sql.execute(temporary_copy(table.definition, kCopy));
  const std::string replayed = alter_clauses(statement, kCopy);
  if (!replayed.empty()) {
    try {
      execute_as(replayed, sql_mode);
    } catch (const MySqlError& e) {
      if (e.retriable()) throw;  // the connection, not the statement
      throw ConfigError("DDL on captured table '" + table.database + "." + table.table +
                        "': " + statement + "; its new columns could not be worked out (" +
                        e.message() + ")");
    }
  }
  return read_copy(table.database, table.table);
}

CapturedTable SchemaHistory::created(const std::string& database, const std::string& table,
                                     const std::string& statement,
                                     const std::string& statement_database,
                                     std::optional<uint64_t> sql_mode) {
  MySqlConnection& sql = connection();
  sql.execute(std::string("DROP TEMPORARY TABLE IF EXISTS ") + kCopy);
  const std::string copy = created_copy(statement, statement_database, kCopy);
  const auto fail = [&](const std::string& why) {
    throw ConfigError("DDL making table '" + database + "." + table +
                      "', which the job captures: " + statement +
                      "; its columns could not be worked out (" + why + ")");
  };
  if (copy.empty()) fail("a CREATE TABLE of columns or LIKE another is followed");
  try {
    execute_as(copy, sql_mode);
  } catch (const MySqlError& e) {
    if (e.retriable()) throw;
    // LIKE a table that a temporary one cannot be like (of a FULLTEXT
    // index, ENCRYPTED, …): a copy of its definition.
    const auto like = created_like(statement, statement_database);
    if (!like) fail(e.message());
    try {
      execute_as(temporary_copy(show_create_table(sql, like->first, like->second), kCopy),
                 sql_mode);
    } catch (const MySqlError& again) {
      if (again.retriable()) throw;
      fail(again.message());
    }
  }
  return read_copy(database, table);
}

std::string SchemaHistory::utc_offset(const std::string& zone, int64_t epoch_seconds) {
  if (zone.size() >= 5 && (zone[0] == '+' || zone[0] == '-') && zone.find(':') != std::string::npos)
    return zone;
  // The moment as a UTC DATETIME, converted: no session time zone between.
  const std::string moment = "'" + utc_datetime(epoch_seconds) + "'";
  MySqlConnection& sql = connection();
  const auto offset = sql.query(std::string("SELECT TIMESTAMPDIFF(SECOND, ") + moment +
                                ", CONVERT_TZ(" + moment + ", '+00:00', " + sql.quote(zone) + "))")
                          .at(0)
                          .at(0);
  if (!offset) return "";
  const long long east = std::stoll(*offset);
  char out[48];
  std::snprintf(out, sizeof out, "%c%02lld:%02lld", east < 0 ? '-' : '+', std::llabs(east) / 3600,
                std::llabs(east) % 3600 / 60);
  return out;
}

CapturedTable SchemaHistory::read_copy(const std::string& database, const std::string& table) {
  MySqlConnection& sql = connection();
  TableInfo info;
  std::map<std::string, std::string> charsets;  // by collation
  for (const auto& row : sql.query(std::string("SHOW FULL COLUMNS FROM ") + kCopy)) {
    // Field, Type, Collation, Null, Key, Default, Extra, …
    TableColumn column{.name = row.at(0).value_or(""),
                       .column_type = row.at(1).value_or(""),
                       .nullable = row.at(3) == "YES",
                       .collation = row.at(2).value_or("")};
    if (!column.collation.empty()) {
      auto& charset = charsets[column.collation];
      if (charset.empty()) {
        charset = sql.query(
                         "SELECT CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE "
                         "COLLATION_NAME = " +
                         sql.quote(column.collation))
                      .at(0)
                      .at(0)
                      .value_or("");
      }
      column.charset = charset;
    }
    // BINARY(n): the bytes a value takes, which the binlog leaves short.
    if (column.column_type.rfind("binary(", 0) == 0) {
      column.octet_length = std::stoull(column.column_type.substr(7));
    }
    const std::string extra = row.at(6).value_or("");
    column.filled_by_server = column.nullable || row.at(5).has_value() ||
                              extra.find("auto_increment") != std::string::npos ||
                              extra.find("GENERATED") != std::string::npos;
    column.invisible = extra.find("INVISIBLE") != std::string::npos;
    info.columns.push_back(std::move(column));
  }
  for (const auto& row :
       sql.query(std::string("SHOW KEYS FROM ") + kCopy + " WHERE Key_name = 'PRIMARY'")) {
    info.primary_key.push_back(row.at(4).value_or(""));  // by Seq_in_index
  }
  std::string definition =
      sql.query(std::string("SHOW CREATE TABLE ") + kCopy).at(0).at(1).value_or("");
  sql.execute(std::string("DROP TEMPORARY TABLE ") + kCopy);
  // As SHOW CREATE TABLE writes the table itself.
  const std::string copy = std::string("CREATE TEMPORARY TABLE ") + kCopy;
  if (definition.rfind(copy, 0) == 0) {
    definition = "CREATE TABLE " + quote_identifier(table) + definition.substr(copy.size());
  }
  Charsets decoders(sql);
  take_expressions(info.columns, definition);
  CapturedTable captured{.database = database,
                         .table = table,
                         .schema = info.schema(),
                         .columns = info.columns,
                         .definition = std::move(definition)};
  // A type the binlog reader does not take fails here, naming the column.
  for (const TableColumn& column : captured.columns) decoding_of(column, decoders);
  return captured;
}

}  // namespace sluice
