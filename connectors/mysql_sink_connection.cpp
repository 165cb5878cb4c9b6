#include "sluice/connectors/mysql_sink_connection.hpp"

#include "sluice/connectors/mysql_bulk_statement.hpp"
#include "sluice/connectors/mysql_collation.hpp"

namespace sluice {
namespace {

// Where each exactly-once transaction leaves a row, committed with it.
constexpr char kMarkerTable[] = "sluice_xa_commits";

}  // namespace

MySqlSinkConnection::MySqlSinkConnection(const MySqlUrl& url, const MySqlSession& session)
    : connection_(url, session) {
  connection_.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  connection_.execute("SET SESSION time_zone = '+00:00'");
  session_ = {connection_.thread_id(), server_started_at(connection_)};
}

// Out of line: BulkStatement is complete here.
MySqlSinkConnection::~MySqlSinkConnection() = default;

KeyImage MySqlSinkConnection::text_image(const TableColumn& column, uint32_t prefix) {
  return collation_image(connection_, column.charset, column.collation, prefix);
}

uint64_t MySqlSinkConnection::execute_bulk(const BulkSql& statement, const Batch& batch,
                                           std::span<const uint32_t> rows) {
  // By its text and types: sinks that share the connection make statements
  // of their own, and a sink made anew may have its statements where an
  // earlier one's were.
  std::string key = statement.sql;
  for (const DataType& type : statement.types) key.append("\n").append(type.to_string());
  std::unique_ptr<BulkStatement>& prepared = statements_[key];
  if (!prepared)
    prepared = std::make_unique<BulkStatement>(connection_, statement.sql, statement.types);
  return prepared->execute(batch, rows, statement.columns);
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
