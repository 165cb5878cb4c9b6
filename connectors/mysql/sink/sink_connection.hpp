#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/row_events.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/xa.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

class BulkStatement;

/// A statement the sink runs for many rows at once: `head`, then `row` for
/// each row, joined by `separator`, then `tail`. `row` has one `?` per entry
/// of `columns`, the input columns bound to it, of types `types`.
struct BulkSql {
  std::string head;       ///< "INSERT INTO t (a, b) VALUES ", "… DELETE FROM t WHERE k IN ("
  std::string row;        ///< "(?, ?)", "?", "(a=? AND b=?)"
  std::string separator;  ///< ", ", " OR "
  std::string tail;       ///< " ON DUPLICATE KEY UPDATE ...", ")"
  std::vector<size_t> columns;
  std::vector<DataType> types;
  /// Whether a statement takes one row only ("… LIMIT 1"); the array
  /// binding still runs it for many in one round trip.
  bool one_row = false;

  /// The statement for `rows` rows.
  std::string sql(size_t rows = 1) const;
};

/// Which connection of which server run: what recovery waits for to leave
/// before it commits a transaction that connection prepared.
struct SessionId {
  uint64_t connection = 0;     ///< the server's id for the connection
  int64_t server_started = 0;  ///< see server_started_at(); 0 = unknown
};

/// What the MySQL sink's writer and committer need of a connection. Every
/// call throws MySqlError on failure. MySqlSinkConnection runs it on a
/// server; unit tests run the same decisions against a fake.
class SinkConnection {
 public:
  virtual ~SinkConnection() = default;

  /// Runs a statement without result rows.
  virtual void execute(std::string_view sql) = 0;
  /// Sends `sql`, a statement without result rows, and may return before
  /// the server has run it: finish() then waits for its end and throws
  /// its error. The connection runs nothing else in between. By default it
  /// runs it at once.
  virtual void send(std::string sql) { execute(sql); }
  virtual void finish() {}
  /// Whether this connection shares its session with others (the tables
  /// sink's share one): then none may run while another waits on send().
  virtual bool shares_session() const { return false; }
  /// Runs `statement` for rows `rows` of `batch`, in as few round trips as
  /// it can; returns the rows affected.
  virtual uint64_t execute_bulk(const BulkSql& statement, const Batch& batch,
                                std::span<const uint32_t> rows) = 0;
  /// The table, or nullopt when the database has no such table.
  virtual std::optional<TableInfo> find_table(const std::string& table) = 0;
  virtual uint64_t max_allowed_packet() = 0;
  /// What text `column` holds is equal by in the table (its collation's
  /// image, see collation_image()), of its first `prefix` characters (0:
  /// all); null: by its bytes.
  virtual KeyImage text_image(const TableColumn& column, uint32_t prefix) = 0;
  /// Whether `table` takes changes as row events on this connection (see
  /// RowEventEncoder); by default it does not.
  virtual RowEventTarget row_event_target(const std::string& table) {
    (void)table;
    return {.obstacle = "its connection sends statements only"};
  }

  /// `XA <command> <xid>`: START, END, PREPARE, COMMIT or ROLLBACK.
  virtual void xa(std::string_view command, const Xid& xid) = 0;
  /// The transactions the server holds prepared (XA RECOVER).
  virtual std::vector<Xid> xa_recover() = 0;
  /// Markers: one row per exactly-once transaction, written inside it, so
  /// that a committed transaction can be told from a lost one.
  virtual void create_marker_table() = 0;
  virtual void insert_marker(const Xid& xid) = 0;
  virtual bool has_marker(const Xid& xid) = 0;
  virtual void delete_marker(const Xid& xid) = 0;

  virtual SessionId session() const = 0;
  /// Waits until `session` has left the server; at once if the server
  /// restarted since (its connection ids started again).
  virtual void wait_until_gone(const SessionId& session) = 0;
};

/// Opens a new connection.
using SinkConnector = std::function<std::unique_ptr<SinkConnection>()>;
/// Opens a new connection with a session's timeout and canceller.
using SessionConnector = std::function<std::unique_ptr<SinkConnection>(const MySqlSession&)>;

/// The time zone of every sink session, as SQL.
inline constexpr const char* kSinkTimeZone = "'+00:00'";

/// A SinkConnection on a MySQL/MariaDB server. Every session reads
/// committed data (no gap locks: under REPEATABLE READ a delete of an absent
/// key locks the gap, and a prepared XA transaction would hold that lock
/// until its checkpoint completes) and runs in UTC (TIMESTAMP columns
/// convert from the session's time zone; Sluice's timestamps are UTC).
class MySqlSinkConnection final : public SinkConnection {
 public:
  MySqlSinkConnection(const MySqlUrl& url, const MySqlSession& session);
  ~MySqlSinkConnection() override;

  void execute(std::string_view sql) override { connection_.execute(sql); }
  void send(std::string sql) override;
  void finish() override;
  uint64_t execute_bulk(const BulkSql& statement, const Batch& batch,
                        std::span<const uint32_t> rows) override;
  std::optional<TableInfo> find_table(const std::string& table) override {
    return connection_.find_table(table);
  }
  uint64_t max_allowed_packet() override { return connection_.max_allowed_packet(); }
  KeyImage text_image(const TableColumn& column, uint32_t prefix) override;
  /// Asks the server: MariaDB, slave_exec_mode STRICT, the BINLOG REPLAY
  /// privilege (a BINLOG statement of the format description alone), and
  /// the table without triggers, CHECK constraints and generated columns.
  RowEventTarget row_event_target(const std::string& table) override;
  void xa(std::string_view command, const Xid& xid) override;
  std::vector<Xid> xa_recover() override { return sluice::xa_recover(connection_); }
  void create_marker_table() override;
  void insert_marker(const Xid& xid) override;
  bool has_marker(const Xid& xid) override;
  void delete_marker(const Xid& xid) override;
  SessionId session() const override { return session_; }
  void wait_until_gone(const SessionId& session) override;
  /// The connection, in the sink's session, for what a SinkConnection does
  /// not do: a query, a literal (sql_literal()).
  MySqlConnection& connection() { return connection_; }

 private:
  // What in `table` a row event would pass by (a trigger, a CHECK
  // constraint, a generated column), or empty.
  std::string table_obstacle(const std::string& table);
  // `statement` of `rows` rows, prepared on first use.
  BulkStatement& prepared(const BulkSql& statement, size_t rows);

  MySqlConnection connection_;
  SessionId session_;
  std::string sent_;  // what send() sent, shortened, for its error
  // Prepared on first use, one per statement and parameter types.
  std::map<std::string, std::unique_ptr<BulkStatement>> statements_;
};

/// mysql_sink(options) whose connections `connect` opens rather than a
/// MySqlSinkConnection to options.url: the tables sink shares one there,
/// tests put a server in memory. Null `connect`: mysql_sink(options).
SinkDef mysql_sink(const MySqlSinkOptions& options, SessionConnector connect);

}  // namespace sluice
