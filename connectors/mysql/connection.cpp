#include "sluice/connectors/mysql/connection.hpp"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "sluice/connectors/mysql/pvio.hpp"
#include "sluice/engine/data/batch.hpp"

namespace sluice {
namespace {

// What a column of the server's type holds, as a Sluice type; see the
// README's table of MySQL types. A type it does not know is taken for text.
DataType type_of(const TableColumn& column) {
  const std::string& t = column.column_type;
  const auto starts = [&](std::string_view prefix) { return t.rfind(prefix, 0) == 0; };
  const auto any_of = [&](std::initializer_list<std::string_view> prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(), starts);
  };
  // Beyond BIGINT's range: exact as a DECIMAL, as Flink maps it.
  if (starts("bigint") && t.find("unsigned") != std::string::npos) return DataType::decimal(20, 0);
  // TINYINT(1), which BOOLEAN is, holds -128 to 127 like any TINYINT.
  if (any_of({"bigint", "int", "mediumint", "smallint", "tinyint", "year"})) {
    return DataType::bigint();
  }
  if (starts("bit")) return t == "bit(1)" ? DataType::boolean() : DataType::bytes();
  if (starts("decimal")) {
    int precision = 10, scale = 0;
    std::sscanf(t.c_str(), "decimal(%d,%d)", &precision, &scale);
    return DataType::decimal(precision, scale);
  }
  if (any_of({"double", "float", "real"})) return DataType::float64();
  if (any_of({"datetime", "timestamp"})) return DataType::timestamp();
  if (starts("date")) return DataType::date();
  if (starts("time")) return DataType::time();
  if (any_of({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry",
              "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
              "geomcollection", "geometrycollection"})) {
    return DataType::bytes();
  }
  return DataType::string();
}

}  // namespace

bool MySqlError::retriable() const {
  switch (code_) {
    case CR_SERVER_GONE_ERROR:     // 2006
    case CR_SERVER_LOST:           // 2013
    case CR_CONNECTION_ERROR:      // 2002
    case CR_CONN_HOST_ERROR:       // 2003
    case CR_SERVER_LOST_EXTENDED:  // 2055
    case ER_LOCK_DEADLOCK:         // 1213
    case ER_CONNECTION_KILLED:     // 1927
    case ER_SERVER_SHUTDOWN:       // 1053
      return true;
    default:
      return false;
  }
}

bool MySqlError::rejects_value() const {
  switch (code_) {
    case ER_BAD_NULL_ERROR:                   // 1048
    case ER_DUP_ENTRY:                        // 1062
    case ER_WARN_DATA_OUT_OF_RANGE:           // 1264
    case ER_TRUNCATED_WRONG_VALUE:            // 1292
    case ER_INVALID_CHARACTER_STRING:         // 1300
    case ER_DIVISION_BY_ZERO:                 // 1365
    case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:  // 1366
    case ER_DATA_TOO_LONG:                    // 1406
    case ER_CONSTRAINT_FAILED:                // 4025, a CHECK constraint
      return true;
    default:
      return false;
  }
}

bool MySqlError::rejects_configuration() const {
  switch (code_) {
    case ER_DBACCESS_DENIED_ERROR:            // 1044
    case ER_ACCESS_DENIED_ERROR:              // 1045
    case ER_BAD_DB_ERROR:                     // 1049
    case ER_BAD_FIELD_ERROR:                  // 1054
    case ER_PARSE_ERROR:                      // 1064
    case ER_WRONG_VALUE_COUNT_ON_ROW:         // 1136
    case ER_TABLEACCESS_DENIED_ERROR:         // 1142
    case ER_COLUMNACCESS_DENIED_ERROR:        // 1143
    case ER_NO_SUCH_TABLE:                    // 1146
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:     // 1227
    case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:  // 1698
      return true;
    default:
      return false;
  }
}

std::string create_table_sql(const std::string& table, const Schema& schema,
                             const std::vector<std::string>& key) {
  std::string sql = "CREATE TABLE " + quote_identifier(table) + " (";
  for (size_t i = 0; i < schema.size(); ++i) {
    const Column& c = schema.column(i);
    std::string type;
    switch (c.type.id) {
      case TypeId::kBigint:
        type = "BIGINT";
        break;
      case TypeId::kDouble:
        type = "DOUBLE";
        break;
      case TypeId::kDecimal:
        type = c.type.to_string();
        break;
      case TypeId::kString:
        type = "VARCHAR(255)";
        break;
      case TypeId::kBoolean:
        type = "BOOLEAN";
        break;
      case TypeId::kTimestamp:
        type = "DATETIME(6)";
        break;
      case TypeId::kDate:
        type = "DATE";
        break;
      case TypeId::kTime:
        type = "TIME(6)";
        break;
      case TypeId::kBytes:
        type = "VARBINARY(255)";
        break;
    }
    const bool in_key = std::find(key.begin(), key.end(), c.name) != key.end();
    sql +=
        (i == 0 ? "" : ", ") + quote_identifier(c.name) + " " + type + (in_key ? " NOT NULL" : "");
  }
  if (!key.empty()) {
    sql += ", PRIMARY KEY (";
    for (size_t k = 0; k < key.size(); ++k) sql += (k == 0 ? "" : ", ") + quote_identifier(key[k]);
    sql += ")";
  }
  return sql + ")";
}

std::string column_sql(const TableColumn& c) {
  std::string sql = quote_identifier(c.name) + " " + c.column_type;
  if (!c.charset.empty()) sql += " CHARACTER SET " + c.charset + " COLLATE " + c.collation;
  sql += c.nullable ? " NULL" : " NOT NULL";
  if (!c.default_sql.empty()) sql += " DEFAULT " + c.default_sql;
  if (c.invisible) sql += " INVISIBLE";
  return sql;
}

std::string create_table_sql(const std::string& table, const TableInfo& like) {
  std::string sql = "CREATE TABLE " + table + " (";
  for (size_t i = 0; i < like.columns.size(); ++i) {
    sql += (i == 0 ? "" : ", ") + column_sql(like.columns[i]);
  }
  if (!like.primary_key.empty()) {
    sql += ", PRIMARY KEY (";
    for (size_t k = 0; k < like.primary_key.size(); ++k) {
      sql += (k == 0 ? "" : ", ") + quote_identifier(like.primary_key[k]);
    }
    sql += ")";
  }
  sql += ")";
  if (!like.collation.empty()) sql += " COLLATE=" + like.collation;
  return sql;
}

std::vector<std::string> TableColumn::members() const {
  // enum('a','it''s','back\\slash',…): quoted as the server's
  // append_unescaped() quotes them, a quote doubled, a backslash, NUL,
  // newline and carriage return escaped by a backslash.
  std::vector<std::string> out;
  if (column_type.rfind("enum(", 0) != 0 && column_type.rfind("set(", 0) != 0) return out;
  std::optional<std::string> value;
  for (size_t i = column_type.find('(') + 1; i < column_type.size(); ++i) {
    const char c = column_type[i];
    if (!value) {
      if (c == '\'') value.emplace();
      continue;
    }
    if (c == '\\' && i + 1 < column_type.size()) {
      const char escaped = column_type[++i];
      value->push_back(escaped == '0'   ? '\0'
                       : escaped == 'n' ? '\n'
                       : escaped == 'r' ? '\r'
                                        : escaped);
    } else if (c == '\'' && i + 1 < column_type.size() && column_type[i + 1] == '\'') {
      value->push_back('\'');
      ++i;
    } else if (c == '\'') {
      out.push_back(std::move(*value));
      value.reset();
    } else {
      value->push_back(c);
    }
  }
  return out;
}

const TableColumn* TableInfo::column(std::string_view name) const {
  for (const TableColumn& c : columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

Schema TableInfo::schema() const {
  std::vector<Column> out;
  for (const auto& c : columns) out.push_back({c.name, type_of(c)});
  return Schema(std::move(out), primary_key);
}

void MySqlCanceller::cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ = true;
  for (MySqlConnection* connection : connections_) connection->cancel();
  woken_.notify_all();
}

bool MySqlCanceller::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

bool MySqlCanceller::sleep_for(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !woken_.wait_for(lock, duration, [this] { return cancelled_; });
}

void MySqlCanceller::add(MySqlConnection* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.insert(connection);
  if (cancelled_) connection->cancel();
}

void MySqlCanceller::remove(MySqlConnection* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.erase(connection);
}

MySqlConnection::MySqlConnection(const MySqlUrl& url, const MySqlSession& session)
    : timeout_(session.timeout), canceller_(session.canceller) {
  // TLS over TCP unless disabled; a server that does not offer it is met
  // without, but only when merely preferred.
  const bool tcp = url.socket.empty();
  const bool tls = tcp && url.ssl_mode != SslMode::kDisabled;
  try {
    connect(url, session, tls);
  } catch (const MySqlError& e) {
    if (!tls || e.code() != CR_SSL_CONNECTION_ERROR) throw;
    // The server does not speak TLS, or its certificate fails the check:
    // a retry would meet the same.
    if (url.ssl_mode != SslMode::kPreferred) {
      throw ConfigError(std::string(e.what()) + " (ssl-mode=" + to_string(url.ssl_mode) +
                        (url.ssl_ca.empty() ? "" : ", ssl-ca=" + url.ssl_ca) + ")");
    }
    connect(url, session, false);
  }
  if (tls && url.ssl_mode >= SslMode::kVerifyCa && !server_certificate_verified(mysql_)) {
    mysql_close(mysql_);
    mysql_ = nullptr;
    throw ConfigError("connecting to " + url.to_string() + " (ssl-mode=" + to_string(url.ssl_mode) +
                      "): the server's certificate is not signed by " +
                      (url.ssl_ca.empty() ? "a CA (set ssl-ca)" : "the CA of " + url.ssl_ca));
  }
  if (canceller_) canceller_->add(this);
}

void MySqlConnection::connect(const MySqlUrl& url, const MySqlSession& session, bool tls) {
  mysql_ = mysql_init(nullptr);
  if (mysql_ == nullptr) throw MySqlError(CR_OUT_OF_MEMORY, "mysql_init failed");
  const my_bool no = 0;
  mysql_optionsv(mysql_, MYSQL_OPT_RECONNECT, &no);
  mysql_optionsv(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  // Whatever the server's sql_mode (MySQL 8's NO_ZERO_DATE, ANSI_QUOTES,
  // PAD_CHAR_TO_FULL_LENGTH, ORACLE…), values are read and written as they
  // are and statements read alike: a key 0 goes into an AUTO_INCREMENT
  // column as 0 and a zero date as one, as a replica writes them; a value a
  // column cannot hold fails rather than being cut.
  const std::string init = std::string("SET SESSION sql_mode = '") + kSessionSqlMode + "'";
  mysql_optionsv(mysql_, MYSQL_INIT_COMMAND, init.c_str());
  const unsigned connect_s = 10;
  mysql_optionsv(mysql_, MYSQL_OPT_CONNECT_TIMEOUT, &connect_s);
  const unsigned timeout_s = static_cast<unsigned>(std::max<int64_t>(1, timeout_.count()));
  mysql_optionsv(mysql_, MYSQL_OPT_READ_TIMEOUT, &timeout_s);
  mysql_optionsv(mysql_, MYSQL_OPT_WRITE_TIMEOUT, &timeout_s);
  if (session.local_infile) {
    const unsigned yes = 1;
    mysql_optionsv(mysql_, MYSQL_OPT_LOCAL_INFILE, &yes);
  }
  if (url.host == "localhost" && url.socket.empty()) {
    // The client library takes "localhost" for its default Unix socket;
    // a URL with a host means TCP (a socket is ?socket=PATH).
    const unsigned protocol = MYSQL_PROTOCOL_TCP;
    mysql_optionsv(mysql_, MYSQL_OPT_PROTOCOL, &protocol);
  }
  if (tls) {
    const my_bool yes = 1;
    mysql_optionsv(mysql_, MYSQL_OPT_SSL_ENFORCE, &yes);
    const auto path = [](const std::string& file) { return file.empty() ? nullptr : file.c_str(); };
    // With a CA the handshake checks the chain (verify-ca reads its result
    // after); verify-identity has the library check the host name too.
    mysql_ssl_set(mysql_, path(url.ssl_key), path(url.ssl_cert), path(url.ssl_ca), nullptr,
                  nullptr);
    const my_bool identity = url.ssl_mode == SslMode::kVerifyIdentity ? 1 : 0;
    mysql_optionsv(mysql_, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &identity);
  }
  if (canceller_ && canceller_->cancelled()) {
    mysql_close(mysql_);
    mysql_ = nullptr;
    throw MySqlError(CR_SERVER_LOST,
                     "connecting to " + url.to_string() + ": the job was cancelled");
  }
  call_starting();
  if (mysql_real_connect(mysql_, url.host.empty() ? nullptr : url.host.c_str(), url.user.c_str(),
                         url.password.c_str(), url.database.c_str(), url.port,
                         url.socket.empty() ? nullptr : url.socket.c_str(), 0) == nullptr) {
    std::string message = "connecting to " + url.to_string() + ": " + mysql_error(mysql_);
    if (mysql_errno(mysql_) == ER_ACCESS_DENIED_ERROR && url.password.empty()) {
      message +=
          "; no password was given: write it in the URL (mysql://USER:PASSWORD@...) or "
          "set SLUICE_MYSQL_PASSWORD";
    }
    const MySqlError failure = error(mysql_errno(mysql_), message);
    mysql_close(mysql_);
    mysql_ = nullptr;
    // A user, password or database the server refuses: no retry or
    // restart helps, the configuration must change.
    if (failure.rejects_configuration()) throw ConfigError(failure.what());
    throw failure;
  }
  connected_ = true;
}

MySqlConnection::~MySqlConnection() {
  if (canceller_) canceller_->remove(this);
  if (mysql_ != nullptr) mysql_close(mysql_);
}

// Called with the canceller's lock held, from any thread: shuts the socket
// down, so that a call blocked on it returns, and every later one fails.
void MySqlConnection::cancel() { mariadb_cancel(mysql_); }

MySqlError MySqlConnection::error(unsigned code, const std::string& message) const {
  // Over TLS a connection that breaks is a TLS error ("unexpected eof"):
  // once connected, a lost connection like any other.
  if (code == CR_SSL_CONNECTION_ERROR && connected_) code = CR_SERVER_LOST;
  const bool lost =
      code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR || code == CR_SERVER_LOST_EXTENDED;
  if (lost && canceller_ && canceller_->cancelled()) {
    return MySqlError(code, message + " (the job was cancelled)");
  }
  if (lost && CoarseClock::now() - call_started_ >= timeout_ - std::chrono::milliseconds(500)) {
    return MySqlError(code, "the server did not answer within " + std::to_string(timeout_.count()) +
                                " s (sink.socket-timeout): " + message);
  }
  return MySqlError(code, message);
}

void MySqlConnection::throw_error(const std::string& doing) const {
  throw error(mysql_errno(mysql_), doing + ": " + mysql_error(mysql_));
}

void MySqlConnection::execute(std::string_view sql) {
  call_starting();
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) {
    throw_error(shortened_sql(sql));
  }
  // Statements that return rows would leave them pending.
  if (MYSQL_RES* result = mysql_store_result(mysql_)) mysql_free_result(result);
}

void MySqlConnection::send(std::string_view sql) {
  call_starting();
  if (mysql_send_query(mysql_, sql.data(), sql.size()) != 0) throw_error(shortened_sql(sql));
}

void MySqlConnection::receive(std::string_view sql) {
  if (mysql_read_query_result(mysql_) != 0) throw_error(std::string(sql));
  if (MYSQL_RES* result = mysql_store_result(mysql_)) mysql_free_result(result);
}

std::vector<std::vector<std::optional<std::string>>> MySqlConnection::query(std::string_view sql) {
  MySqlResult result = query_result(sql);
  std::vector<std::vector<std::optional<std::string>>> rows;
  rows.reserve(result.size());
  while (result.next()) {
    auto& out = rows.emplace_back();
    out.reserve(result.fields().size());
    for (const auto& field : result.fields()) {
      out.push_back(field ? std::optional<std::string>(*field) : std::nullopt);
    }
  }
  return rows;
}

MySqlResult MySqlConnection::query_result(std::string_view sql) { return run_query(sql, false); }

MySqlResult MySqlConnection::query_stream(std::string_view sql) { return run_query(sql, true); }

MySqlResult MySqlConnection::run_query(std::string_view sql, bool streamed) {
  call_starting();
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) {
    throw_error(shortened_sql(sql));
  }
  MYSQL_RES* result = streamed ? mysql_use_result(mysql_) : mysql_store_result(mysql_);
  if (result == nullptr && mysql_errno(mysql_) != 0) throw_error(shortened_sql(sql));
  return MySqlResult(result, streamed ? this : nullptr);
}

MySqlResult::MySqlResult(MYSQL_RES* result, MySqlConnection* streamed_from)
    : result_(result),
      streamed_from_(streamed_from),
      fields_(result ? mysql_num_fields(result) : 0) {}

MySqlResult::~MySqlResult() {
  if (result_) mysql_free_result(result_);
}

MySqlResult::MySqlResult(MySqlResult&& other) noexcept
    : result_(std::exchange(other.result_, nullptr)),
      streamed_from_(other.streamed_from_),
      fields_(std::move(other.fields_)) {}

size_t MySqlResult::size() const { return result_ ? mysql_num_rows(result_) : 0; }

bool MySqlResult::next() {
  if (result_ == nullptr) return false;
  if (streamed_from_) streamed_from_->call_starting();
  MYSQL_ROW values = mysql_fetch_row(result_);
  if (values == nullptr) {
    // The end, or a stream that broke off.
    if (streamed_from_ && mysql_errno(streamed_from_->raw()) != 0) {
      streamed_from_->throw_error("reading a result");
    }
    return false;
  }
  const unsigned long* lengths = mysql_fetch_lengths(result_);
  for (size_t i = 0; i < fields_.size(); ++i) {
    fields_[i] = values[i] ? std::optional<std::string_view>(std::in_place, values[i], lengths[i])
                           : std::nullopt;
  }
  return true;
}

uint64_t MySqlConnection::affected_rows() const { return mysql_affected_rows(mysql_); }

uint64_t MySqlConnection::thread_id() const { return mysql_thread_id(mysql_); }

std::string MySqlConnection::quote(std::string_view text) {
  std::string out(text.size() * 2 + 3, '\0');
  out[0] = '\'';
  const unsigned long n =
      mysql_real_escape_string(mysql_, out.data() + 1, text.data(), text.size());
  out.resize(n + 1);
  out.push_back('\'');
  return out;
}

uint64_t MySqlConnection::max_allowed_packet() {
  const auto rows = query("SELECT @@max_allowed_packet");
  return std::stoull(rows.at(0).at(0).value());
}

TableInfo MySqlConnection::describe_table(const std::string& table, const std::string& database) {
  if (std::optional<TableInfo> info = find_table(table, database)) return std::move(*info);
  const std::string db =
      database.empty() ? query("SELECT DATABASE()").at(0).at(0).value_or("?") : database;
  throw ConfigError("table '" + table + "' does not exist in database '" + db + "'");
}

std::optional<TableInfo> MySqlConnection::find_table(const std::string& table,
                                                     const std::string& database) {
  const std::string schema = database.empty() ? "DATABASE()" : quote(database);
  TableInfo info;
  for (const auto& row :
       query("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME, "
             "COLLATION_NAME, CHARACTER_OCTET_LENGTH, COLUMN_DEFAULT IS NOT NULL OR "
             "EXTRA LIKE '%auto_increment%' OR EXTRA LIKE '%GENERATED%', "
             "EXTRA LIKE '%INVISIBLE%' FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
             schema + " AND TABLE_NAME = " + quote(table) + " ORDER BY ORDINAL_POSITION")) {
    // (A nullable column without a default gets NULL.)
    info.columns.push_back({.name = *row[0],
                            .column_type = *row[1],
                            .nullable = row[2] == "YES",
                            .charset = row[3].value_or(""),
                            .collation = row[4].value_or(""),
                            .octet_length = std::stoull(row[5].value_or("0")),
                            .filled_by_server = row[2] == "YES" || row[6] == "1",
                            .invisible = row[7] == "1"});
  }
  if (info.columns.empty()) return std::nullopt;
  std::map<std::string, TableIndex> unique;
  for (const auto& row :
       query("SELECT INDEX_NAME, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS "
             "WHERE TABLE_SCHEMA = " +
             schema + " AND TABLE_NAME = " + quote(table) +
             " AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX")) {
    TableIndex& index = unique[*row[0]];
    index.name = *row[0];
    index.columns.push_back(*row[1]);
    index.prefixes.push_back(static_cast<uint32_t>(std::stoul(row[2].value_or("0"))));
  }
  for (auto& [name, index] : unique) {
    if (name == "PRIMARY") info.primary_key = index.columns;
    info.unique_keys.push_back(std::move(index));
  }
  const auto collation =
      query("SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema +
            " AND TABLE_NAME = " + quote(table));
  if (!collation.empty()) info.collation = collation.at(0).at(0).value_or("");
  return info;
}

std::string shortened_sql(std::string_view sql, size_t limit) {
  if (sql.size() <= limit) return std::string(sql);
  size_t cut = std::string_view::npos;
  for (const std::string_view clause :
       {" VALUES", " ON DUPLICATE KEY UPDATE", " WHERE", " SET", " FROM", " ORDER BY", " LIMIT"}) {
    const size_t at = sql.rfind(clause, limit);  // a clause starting within the limit
    if (at != std::string_view::npos && at > 0 && (cut == std::string_view::npos || at > cut)) {
      cut = at;
    }
  }
  if (cut == std::string_view::npos) cut = sql.substr(0, limit).rfind(' ');
  if (cut == std::string_view::npos || cut == 0) cut = limit;
  return std::string(sql.substr(0, cut)) + " …";
}

std::string quote_identifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  return out + "`";
}

namespace {

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "X'";
  for (const char c : bytes) {
    out.push_back(kDigits[static_cast<unsigned char>(c) >> 4]);
    out.push_back(kDigits[static_cast<unsigned char>(c) & 15]);
  }
  return out + "'";
}

}  // namespace

bool holds_text(const TableColumn& column) {
  return !column.charset.empty() && column.charset != "binary";
}

void set_field(ColumnVector& column, uint32_t row, std::string_view field, const DataType& type) {
  if (type.id == TypeId::kBytes) {
    column.set_null(row, false);
    column.set_string(row, field);
  } else if (type.id == TypeId::kBoolean) {
    column.set_value(row, Value::boolean(field.size() == 1 && field[0] != '\0'));
  } else {
    column.parse(row, field, type);
  }
}

std::string sql_literal(MySqlConnection& connection, const Value& value,
                        const TableColumn& column) {
  if (value.is_null()) return "NULL";
  const std::string& type = column.column_type;
  switch (value.type_id()) {
    case TypeId::kBigint:
      return value.to_string();
    case TypeId::kBoolean:
      return value.as_boolean() ? "1" : "0";
    case TypeId::kDouble: {
      // The shortest text that reads back as the same double, as a DOUBLE
      // literal (an exponent makes it one).
      char text[32];
      const auto end = std::to_chars(text, text + sizeof text, value.as_double()).ptr;
      std::string out(text, end);
      if (out.find_first_of("eE") == std::string::npos) out += "E0";
      return out;
    }
    case TypeId::kDecimal:
      if (type.starts_with("bigint")) return value.to_string();  // BIGINT UNSIGNED
      return "CAST('" + value.to_string() + "' AS DECIMAL(65," +
             std::to_string(value.as_decimal().scale()) + "))";
    case TypeId::kTimestamp:
      return "CAST('" + value.to_string() + "' AS DATETIME(6))";
    case TypeId::kDate:
      return "CAST('" + value.to_string() + "' AS DATE)";
    case TypeId::kTime:
      return "CAST('" + value.to_string() + "' AS TIME(6))";
    case TypeId::kBytes: {
      // A BIT compares as the number its bytes make, big-endian.
      if (!type.starts_with("bit")) return hex(value.as_bytes());
      uint64_t number = 0;
      for (const char b : value.as_bytes()) number = number << 8 | static_cast<unsigned char>(b);
      return std::to_string(number);
    }
    case TypeId::kString: {
      // An ENUM or a SET sorts by its number, and compares with one so.
      if (type.starts_with("enum(") || type.starts_with("set(")) {
        const std::vector<std::string> members = column.members();
        uint64_t number = 0;
        for (size_t m = 0; m < members.size(); ++m) {
          const bool in_set =
              type.starts_with("set(") &&
              ("," + value.as_string() + ",").find("," + members[m] + ",") != std::string::npos;
          if (in_set) number |= uint64_t{1} << m;
          if (type.starts_with("enum(") && members[m] == value.as_string()) number = m + 1;
        }
        return std::to_string(number);
      }
      for (const char* own : {"uuid", "inet6", "inet4"}) {
        if (type == own) return "CAST(" + connection.quote(value.as_string()) + " AS " + own + ")";
      }
      return "CONVERT(_utf8mb4" + connection.quote(value.as_string()) + " USING " + column.charset +
             ") COLLATE " + column.collation;
    }
  }
  throw DataError("no SQL literal for " + value.to_string());
}

}  // namespace sluice
