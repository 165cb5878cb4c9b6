#include "sluice/connectors/mysql/sink/sink_connection.hpp"

#include <mysqld_error.h>

#include <algorithm>
#include <cctype>

#include "sluice/connectors/mysql/collation.hpp"
#include "sluice/connectors/mysql/sink/bulk_statement.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {
namespace {

// The most rows one statement of the sink's holds. Measured on MariaDB
// 10.11 (sluice bench replication, mysql-upsert): 64 costs the server and
// the job less a row than 512 (updates: the server 6.2 against 7.1 µs a
// row, the job 1.3 against 2.1; inserts into an empty table 1.13x the
// rate), and as little as 128; 32 costs more.
constexpr size_t kRowsPerStatement = 64;

// Where each exactly-once transaction leaves a row, committed with it.
constexpr char kMarkerTable[] = "sluice_xa_commits";

// `e` with the row it names ("… at row 3"), which the server counts from
// the first row of the execution, counted from `offset` rows before that.
MySqlError numbered_from(const MySqlError& e, size_t offset) {
  static constexpr std::string_view kAtRow = " at row ";
  const std::string& message = e.message();
  const size_t at = message.rfind(kAtRow);
  if (offset == 0 || at == std::string::npos) return e;
  const size_t digits = at + kAtRow.size();
  size_t end = digits;
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
  if (end == digits) return e;
  const size_t row = std::stoul(message.substr(digits, end - digits)) + offset;
  return MySqlError(e.code(),
                    message.substr(0, digits) + std::to_string(row) + message.substr(end));
}

}  // namespace

MySqlSinkConnection::MySqlSinkConnection(const MySqlUrl& url, const MySqlSession& session)
    : connection_(url, session) {
  connection_.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  connection_.execute(std::string("SET SESSION time_zone = ") + kSinkTimeZone);
  // The sink writes a flush's changes table by table, and each table's
  // last change per key, not in the source's order: a foreign key of the
  // target (made by hand like the source's) would refuse a child written
  // before its parent, or a parent deleted before its children. The
  // source checked them when it wrote the rows; as myloader, the sink does
  // not check them again.
  connection_.execute("SET SESSION foreign_key_checks = 0");
  session_ = {connection_.thread_id(), server_started_at(connection_)};
}

// Out of line: BulkStatement is complete here.
MySqlSinkConnection::~MySqlSinkConnection() = default;

void MySqlSinkConnection::send(std::string sql) {
  sent_ = shortened_sql(sql);
  connection_.send(sql);
}

void MySqlSinkConnection::finish() { connection_.receive(sent_); }

RowEventTarget MySqlSinkConnection::row_event_target(const std::string& table) {
  RowEventTarget target;
  const auto server = connection_.query("SELECT VERSION(), @@server_id, DATABASE()");
  const auto field = [&](size_t i) { return server.at(0).at(i).value_or(""); };
  target.server_id = static_cast<uint32_t>(std::stoul(field(1)));
  target.database = field(2);
  if (field(0).find("MariaDB") == std::string::npos) {
    target.obstacle = "the server is not MariaDB";
    return target;
  }
  // IDEMPOTENT would skip an update of a row the table lacks, where an
  // upsert writes it. (MySQL has renamed the variable: asked of MariaDB only.)
  const std::string mode = connection_.query("SELECT @@slave_exec_mode").at(0).at(0).value_or("");
  if (mode != "STRICT") {
    target.obstacle = "the server's slave_exec_mode is " + mode;
    return target;
  }
  try {
    target.obstacle = table_obstacle(table);
  } catch (const MySqlError& e) {
    if (e.retriable()) throw;
    target.obstacle = "the server could not say what the table has: " + e.message();
  }
  if (!target.obstacle.empty()) return target;
  try {
    connection_.execute("BINLOG '" +
                        base64_encode(RowEventEncoder::format_description(target.server_id)) + "'");
  } catch (const MySqlError& e) {
    if (e.retriable()) throw;
    target.obstacle = e.code() == ER_SPECIFIC_ACCESS_DENIED_ERROR
                          ? "the user lacks the BINLOG REPLAY privilege"
                          : "the server refused a BINLOG statement: " + e.message();
  }
  return target;
}

std::string MySqlSinkConnection::table_obstacle(const std::string& table) {
  const auto count = [&](const std::string& sql) {
    return std::stoull(connection_.query(sql).at(0).at(0).value_or("0"));
  };
  const std::string quoted = connection_.quote(table);
  if (count("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = "
            "DATABASE() AND EVENT_OBJECT_TABLE = " +
            quoted) > 0) {
    return "it has triggers, which row events do not fire";
  }
  if (count("SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS WHERE "
            "CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = " +
            quoted) > 0) {
    return "it has CHECK constraints, which row events do not check";
  }
  if (count("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
            "AND TABLE_NAME = " +
            quoted + " AND IS_GENERATED <> 'NEVER'") > 0) {
    return "it has generated columns";
  }
  return "";
}

KeyImage MySqlSinkConnection::text_image(const TableColumn& column, uint32_t prefix) {
  return collation_image(connection_, column.charset, column.collation, prefix);
}

std::string BulkSql::sql(size_t rows) const {
  std::string out = head;
  for (size_t i = 0; i < rows; ++i) out.append(i == 0 ? "" : separator).append(row);
  return out + tail;
}

uint64_t MySqlSinkConnection::execute_bulk(const BulkSql& statement, const Batch& batch,
                                           std::span<const uint32_t> rows) {
  // Statements of kRowsPerStatement rows, as many as fit, then of an eighth
  // of that, and so on down to one row: at most three round trips (64, 8,
  // 1), fewer than eight rows in statements of one, three statements
  // prepared.
  // MariaDB takes at most 65,535 parameters in a statement.
  uint64_t affected = 0;
  size_t tuples = statement.one_row ? 1 : kRowsPerStatement;
  while (tuples > 1 && tuples * statement.columns.size() > 65535) tuples /= 8;
  for (size_t begin = 0; begin < rows.size(); tuples = std::max<size_t>(tuples / 8, 1)) {
    const size_t n = (rows.size() - begin) / tuples * tuples;
    if (n == 0) continue;
    try {
      affected +=
          prepared(statement, tuples).execute(batch, rows.subspan(begin, n), statement.columns);
    } catch (const MySqlError& e) {
      throw numbered_from(e, begin);
    }
    begin += n;
  }
  return affected;
}

BulkStatement& MySqlSinkConnection::prepared(const BulkSql& statement, size_t rows) {
  // By its text and types: sinks that share the connection make statements
  // of their own, and a sink made anew may have its statements where an
  // earlier one's were.
  std::string sql = statement.sql(rows);
  std::string key = sql;
  for (const DataType& type : statement.types) key.append("\n").append(type.to_string());
  std::unique_ptr<BulkStatement>& prepared = statements_[key];
  if (!prepared) {
    prepared = std::make_unique<BulkStatement>(connection_, std::move(sql), statement.types, rows);
  }
  return *prepared;
}

void MySqlSinkConnection::xa(std::string_view command, const Xid& xid) {
  connection_.execute("XA " + std::string(command) + " " + xid.sql());
}

void MySqlSinkConnection::create_marker_table() {
  connection_.execute(std::string("CREATE TABLE IF NOT EXISTS ") + kMarkerTable +
                      " (gtrid VARBINARY(64) NOT NULL, bqual VARBINARY(64) NOT NULL, "
                      "PRIMARY KEY (gtrid, bqual))");
}

void MySqlSinkConnection::insert_marker(const Xid& xid) {
  connection_.execute("INSERT INTO " + std::string(kMarkerTable) + " VALUES (" + xid.sql() + ")");
}

bool MySqlSinkConnection::has_marker(const Xid& xid) {
  return connection_
             .query("SELECT COUNT(*) FROM " + std::string(kMarkerTable) + " WHERE " + xid.where())
             .at(0)
             .at(0) == "1";
}

void MySqlSinkConnection::delete_marker(const Xid& xid) {
  // A point lookup: a scan would wait on the markers of prepared transactions.
  connection_.execute("DELETE FROM " + std::string(kMarkerTable) + " WHERE " + xid.where());
}

void MySqlSinkConnection::wait_until_gone(const SessionId& session) {
  wait_until_disconnected(connection_, session.connection, session.server_started);
}

}  // namespace sluice
