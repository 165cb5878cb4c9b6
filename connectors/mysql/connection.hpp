#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/mysql/url.hpp"
#include "sluice/engine/common/coarse_clock.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/schema.hpp"
#include "sluice/engine/data/value.hpp"

struct st_mysql;
struct st_mysql_res;
struct st_mysql_stmt;

namespace sluice {

class ColumnVector;

/// An error the server or the client library reported, with its number.
class MySqlError : public Error {
 public:
  MySqlError(unsigned code, const std::string& message)
      : Error("MySQL error " + std::to_string(code) + ": " + message),
        code_(code),
        message_(message) {}
  unsigned code() const { return code_; }
  /// What() without the "MySQL error N: " before it.
  const std::string& message() const { return message_; }
  /// Whether trying again on a new connection may succeed: the connection was
  /// lost or refused, or the transaction was chosen as a deadlock victim.
  bool retriable() const;
  /// Whether the server refused a value (too long, out of range, NULL in a
  /// NOT NULL column, a duplicate key, a failed CHECK): the same rows would
  /// be refused again.
  bool rejects_value() const;
  /// Whether the table, a column, the database or a privilege is missing:
  /// the configuration or the schema must change.
  bool rejects_configuration() const;

 private:
  unsigned code_;
  std::string message_;
};

/// A column of a table as information_schema describes it.
struct TableColumn {
  std::string name;
  std::string column_type;  ///< as the server spells it: "decimal(10,2)", "varchar(20)"
  bool nullable = true;
  std::string charset;        ///< text columns: "utf8mb4", "latin1"; else empty
  std::string collation;      ///< text columns: "utf8mb4_unicode_ci"; else empty
  uint64_t octet_length = 0;  ///< string and binary columns: the most bytes a value takes
  /// Whether the server fills it when an INSERT leaves it out: a default,
  /// AUTO_INCREMENT, or a generated column.
  bool filled_by_server = true;
  /// Its DEFAULT as SHOW CREATE TABLE writes it ("1.50", "'a''b'",
  /// "current_timestamp()"), where it was read from there; else empty.
  std::string default_sql;
  /// Of a generated column, its expression as SHOW CREATE TABLE writes it
  /// ("(`a` + 1)"), where it was read from there; else empty. A target's
  /// column is a plain one, given the values.
  std::string generated_sql;
  /// Whether it is AUTO_INCREMENT, where read from SHOW CREATE TABLE.
  bool auto_increment = false;
  /// MariaDB's INVISIBLE: left out of `SELECT *` and of an INSERT without
  /// a column list.
  bool invisible = false;

  /// An ENUM's or a SET's values, in the order its type lists them (the
  /// first is ENUM index 1, or SET bit 0); empty for other types.
  std::vector<std::string> members() const;
};

/// A unique index of a table.
struct TableIndex {
  std::string name;
  std::vector<std::string> columns;
  /// Per column, how much of its values the index takes: characters (bytes
  /// of a binary column), 0 = all.
  std::vector<uint32_t> prefixes;
};

/// A foreign key of a table, as SHOW CREATE TABLE writes it.
struct ForeignKey {
  /// What a change of the parent's row does to the rows that refer to it.
  enum class Action {
    kNone,     ///< RESTRICT, NO ACTION: the change fails while they do
    kCascade,  ///< they are deleted, or take the parent's new values
    kSetNull,  ///< their columns of the key become NULL
  };
  std::vector<std::string> columns;  ///< the child's, in order
  std::string parent_database, parent_table;
  std::vector<std::string> parent_columns;
  Action on_delete = Action::kNone;
  Action on_update = Action::kNone;
  bool operator==(const ForeignKey&) const = default;
};

/// What a sink needs to know of its target table.
struct TableInfo {
  std::vector<TableColumn> columns;
  std::vector<std::string> primary_key;
  std::vector<TableIndex> unique_keys;  ///< every unique index, PRIMARY too
  std::string collation;                ///< the table's default collation

  /// The column named `name`, or null.
  const TableColumn* column(std::string_view name) const;
  /// The table's columns as a Schema with its primary key.
  Schema schema() const;
};

/// A CREATE TABLE for `table` whose columns take `schema`'s values, keyed
/// by `key` (none: no primary key): what to suggest when it is missing.
std::string create_table_sql(const std::string& table, const Schema& schema,
                             const std::vector<std::string>& key);

/// `c` as a column definition: its quoted name, type, charset and
/// collation, NULL or NOT NULL, and its default_sql.
std::string column_sql(const TableColumn& c);

/// A CREATE TABLE for `table` (a quoted name) with the columns, their
/// types, charsets and collations, the primary key and the default
/// collation of `like`: a copy of a table's shape, for its rows.
std::string create_table_sql(const std::string& table, const TableInfo& like);

class MySqlConnection;

/// Cancels, from any thread, every connection made with it: a call blocked
/// on the server returns at once with a lost-connection error, and a
/// connection made after cancel() fails at once.
class MySqlCanceller {
 public:
  void cancel();
  bool cancelled() const;
  /// Waits `duration`, or less if cancel() comes first; returns whether it
  /// waited it all.
  bool sleep_for(std::chrono::milliseconds duration);

 private:
  friend class MySqlConnection;
  void add(MySqlConnection* connection);
  void remove(MySqlConnection* connection);

  mutable std::mutex mutex_;
  std::condition_variable woken_;
  bool cancelled_ = false;
  std::set<MySqlConnection*> connections_;
};

/// The sql_mode every connection sets as it connects: values read and
/// written as they are, statements read alike, whatever the server's.
inline constexpr char kSessionSqlMode[] =
    "STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION";
/// kSessionSqlMode but its strictness: what a session that acts as another
/// (whose modes decide what values become) keeps of its own.
inline constexpr char kSessionSqlModeBase[] = "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION";

/// How a connection behaves.
struct MySqlSession {
  /// The longest a read or a write may wait on the server: a server that does
  /// not answer within it counts as a lost connection. Default: 60 s.
  std::chrono::seconds timeout{60};
  /// Allows LOAD DATA LOCAL INFILE. Default: off.
  bool local_infile = false;
  /// What can cancel the connection's calls from another thread; none if null.
  MySqlCanceller* canceller = nullptr;
};

class MySqlConnection;

/// A query's result, read whole from the server, or as it sends it
/// (MySqlConnection::query_stream()): its rows, one after the other, as
/// views of their fields.
class MySqlResult {
 public:
  /// `result` may be null: no rows. `streamed_from`: the connection a
  /// result not read whole comes on, whose errors next() throws.
  explicit MySqlResult(st_mysql_res* result, MySqlConnection* streamed_from = nullptr);
  ~MySqlResult();
  MySqlResult(MySqlResult&& other) noexcept;
  MySqlResult& operator=(MySqlResult&&) = delete;
  MySqlResult(const MySqlResult&) = delete;
  MySqlResult& operator=(const MySqlResult&) = delete;

  /// Rows in the result (read so far, of one streamed).
  size_t size() const;
  /// Moves to the next row (the first, at the start); false past the last.
  /// Throws MySqlError where a streamed result broke off.
  bool next();
  /// The current row's fields, one per column, nullopt for NULL; valid
  /// until next().
  std::span<const std::optional<std::string_view>> fields() const { return fields_; }

 private:
  st_mysql_res* result_;
  MySqlConnection* streamed_from_;
  std::vector<std::optional<std::string_view>> fields_;
};

/// One connection to a MySQL/MariaDB server. Automatic reconnection
/// (MYSQL_OPT_RECONNECT) stays off: it would silently lose a transaction.
/// Every failure throws MySqlError; one that came after the server was
/// silent for the whole timeout says that the server did not answer.
class MySqlConnection {
 public:
  /// Connects, with utf8mb4 and autocommit on.
  explicit MySqlConnection(const MySqlUrl& url, const MySqlSession& session = {});
  ~MySqlConnection();
  MySqlConnection(const MySqlConnection&) = delete;
  MySqlConnection& operator=(const MySqlConnection&) = delete;

  void execute(std::string_view sql);
  /// execute() in two halves: send() returns once `sql` is sent,
  /// receive() waits for the server's answer and throws its error, naming
  /// `sql` as given. Nothing else may run on the connection in between.
  void send(std::string_view sql);
  void receive(std::string_view sql);
  /// Runs a query and returns its rows; NULL is nullopt.
  std::vector<std::vector<std::optional<std::string>>> query(std::string_view sql);
  /// Runs a query and returns its result, read whole, to be gone through
  /// row by row with no copy.
  MySqlResult query_result(std::string_view sql);
  /// Runs a query and returns its result as the server sends it
  /// (mysql_use_result): for rows too many to hold. Nothing else runs on
  /// the connection until the result is gone, which reads what is left.
  MySqlResult query_stream(std::string_view sql);
  uint64_t affected_rows() const;
  /// The server's id for this connection (what KILL takes).
  uint64_t thread_id() const;
  /// `text` as a quoted SQL string literal.
  std::string quote(std::string_view text);
  /// The server's max_allowed_packet.
  uint64_t max_allowed_packet();
  /// The columns and keys of `table` of `database` (empty: the connection's
  /// database); throws ConfigError if there is no such table.
  TableInfo describe_table(const std::string& table, const std::string& database = "");
  /// The same, or nullopt when the database has no such table.
  std::optional<TableInfo> find_table(const std::string& table, const std::string& database = "");

  st_mysql* raw() const { return mysql_; }
  /// Marks the start of a call to the server, for the error it may end in
  /// (by a coarse clock: the binlog reader marks every event it reads).
  void call_starting() { call_started_ = CoarseClock::now(); }
  /// The longest a read or a write waits on the server (MySqlSession::timeout).
  std::chrono::seconds timeout() const { return timeout_; }
  /// The error `code` with `message` of the call in progress.
  MySqlError error(unsigned code, const std::string& message) const;
  [[noreturn]] void throw_error(const std::string& doing) const;

 private:
  friend class MySqlCanceller;
  void cancel();
  // query_result(), or query_stream() if `streamed`.
  MySqlResult run_query(std::string_view sql, bool streamed);
  // One attempt, with TLS or without, as `url` asks.
  void connect(const MySqlUrl& url, const MySqlSession& session, bool tls);

  st_mysql* mysql_ = nullptr;
  bool connected_ = false;  // past mysql_real_connect()
  std::chrono::seconds timeout_;
  MySqlCanceller* canceller_;
  CoarseClock::time_point call_started_;
};

/// `name` backquoted, with backquotes doubled: a safe SQL identifier.
std::string quote_identifier(std::string_view name);

/// `value`, of `column`, as a SQL literal that the server reads as exactly
/// that value of the column's type (a DECIMAL as a DECIMAL, text in the
/// column's charset and collation, bytes as bytes), so that comparing it
/// with the column compares as two values of the column would.
std::string sql_literal(MySqlConnection& connection, const Value& value, const TableColumn& column);

/// Whether the table compares `column`'s values as text, by a collation.
bool holds_text(const TableColumn& column);

/// Sets `row` of `column` to `field`, a value of `type` as the server sends
/// it in a query's result: bytes as they are (a BIT(1) one byte), anything
/// else as text.
void set_field(ColumnVector& column, uint32_t row, std::string_view field, const DataType& type);

/// `sql` for a message: whole if it has at most `limit` characters, else
/// cut before a clause (" VALUES", " WHERE", …) or at least between words,
/// and marked " …".
std::string shortened_sql(std::string_view sql, size_t limit = 200);

}  // namespace sluice
