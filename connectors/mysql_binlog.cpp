#include "sluice/connectors/mysql_binlog.hpp"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <spdlog/spdlog.h>
// After mysql.h, which it needs.
#include <mariadb_rpl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <regex>

#include "sluice/engine/common/error.hpp"

namespace sluice {

// What a column's binlog values become, where the binlog does not say:
// integers are written without their signedness.
struct BinlogDecoding {
  enum How {
    kAsWritten,   // what the binlog type says
    kBoolean,     // TINYINT(1)
    kSigned,      // an integer
    kUnsigned,    // an integer of fewer than 64 bits
    kUnsigned64,  // BIGINT UNSIGNED, as DECIMAL(20,0)
  };
  How how = kAsWritten;
};

namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.rfind(prefix, 0) == 0;
}

// How values of a column the server spells `type` are read; throws
// ConfigError for the types this reader does not take.
BinlogDecoding decoding_of(const std::string& column, const std::string& type) {
  const bool is_unsigned = type.find("unsigned") != std::string::npos;
  if (starts_with(type, "tinyint(1)") || starts_with(type, "boolean"))
    return {BinlogDecoding::kBoolean};
  for (const char* integer : {"tinyint", "smallint", "mediumint", "int", "bigint"}) {
    if (!starts_with(type, integer)) continue;
    if (!is_unsigned) return {BinlogDecoding::kSigned};
    return {starts_with(type, "bigint") ? BinlogDecoding::kUnsigned64 : BinlogDecoding::kUnsigned};
  }
  for (const char* taken :
       {"year",   "decimal",   "float",    "double",   "real",       "datetime",   "timestamp",
        "date",   "char",      "varchar",  "tinytext", "text",       "mediumtext", "longtext",
        "binary", "varbinary", "tinyblob", "blob",     "mediumblob", "longblob"}) {
    if (starts_with(type, taken)) return {BinlogDecoding::kAsWritten};
  }
  throw ConfigError("column '" + column + "' is " + type +
                    ", which the binlog reader does not take yet (it takes integers, DECIMAL, "
                    "FLOAT, DOUBLE, DATE, DATETIME, TIMESTAMP, YEAR, CHAR, VARCHAR, TEXT and "
                    "BLOB)");
}

// Reads a row image's values, as the server writes them (sql/log_event.cc
// and the binary formats of sql/field.cc). Every read is bounds-checked.
class RowImageReader {
 public:
  RowImageReader(const uint8_t* data, size_t size, const std::string& table)
      : p_(data), end_(data + size), table_(table) {}

  bool at_end() const { return p_ == end_; }

  const uint8_t* take(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) {
      throw Error("a binlog row of table '" + table_ + "' ends early: the row image is corrupt");
    }
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  uint64_t little_endian(size_t n) {
    const uint8_t* b = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{b[i]} << (8 * i);
    return v;
  }
  uint64_t big_endian(size_t n) {
    const uint8_t* b = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | b[i];
    return v;
  }

  Value value(const BinlogColumnFormat& f, const BinlogDecoding& d) {
    switch (f.type) {
      case MYSQL_TYPE_TINY:
        return integer(1, d);
      case MYSQL_TYPE_SHORT:
        return integer(2, d);
      case MYSQL_TYPE_INT24:
        return integer(3, d);
      case MYSQL_TYPE_LONG:
        return integer(4, d);
      case MYSQL_TYPE_LONGLONG:
        return integer(8, d);
      case MYSQL_TYPE_YEAR: {
        const uint64_t year = little_endian(1);
        return static_cast<int64_t>(year == 0 ? 0 : 1900 + year);
      }
      case MYSQL_TYPE_FLOAT: {
        const auto bits = static_cast<uint32_t>(little_endian(4));
        float f32;
        std::memcpy(&f32, &bits, sizeof f32);
        return static_cast<double>(f32);
      }
      case MYSQL_TYPE_DOUBLE: {
        const uint64_t bits = little_endian(8);
        double f64;
        std::memcpy(&f64, &bits, sizeof f64);
        return f64;
      }
      case MYSQL_TYPE_NEWDECIMAL:
        return decimal(f.meta >> 8, f.meta & 0xff);
      case MYSQL_TYPE_DATETIME2:
        return datetime(f.meta);
      case MYSQL_TYPE_TIMESTAMP2: {
        const int64_t seconds = static_cast<int64_t>(big_endian(4));
        return Timestamp{seconds * 1'000'000 + fraction(f.meta)};
      }
      case MYSQL_TYPE_DATE: {
        const uint64_t v = little_endian(3);
        char text[16];
        std::snprintf(text, sizeof text, "%04u-%02u-%02u", static_cast<unsigned>(v >> 9),
                      static_cast<unsigned>((v >> 5) & 15), static_cast<unsigned>(v & 31));
        return std::string(text);
      }
      case MYSQL_TYPE_VARCHAR:
      case MYSQL_TYPE_VAR_STRING:
        return bytes(f.meta < 256 ? 1 : 2);
      case MYSQL_TYPE_STRING: {
        // CHAR and BINARY: the metadata packs the real type and the length.
        const unsigned high = f.meta >> 8, low = f.meta & 0xff;
        const unsigned length = (high & 0x30) != 0x30 ? low | (((high & 0x30) ^ 0x30) << 4) : low;
        return bytes(length < 256 ? 1 : 2);
      }
      case MYSQL_TYPE_BLOB:
        return bytes(f.meta);
      default:
        throw ConfigError("table '" + table_ + "' has a column of binlog type " +
                          std::to_string(f.type) + ", which the binlog reader does not take");
    }
  }

 private:
  Value integer(size_t n, const BinlogDecoding& d) {
    const uint64_t raw = little_endian(n);
    const int bits = static_cast<int>(8 * n);
    switch (d.how) {
      case BinlogDecoding::kBoolean:
        return Value::boolean(raw != 0);
      case BinlogDecoding::kUnsigned:
        return static_cast<int64_t>(raw);
      case BinlogDecoding::kUnsigned64:
        return Decimal::parse(std::to_string(raw), 20, 0);
      default: {
        const int shift = 64 - bits;  // sign-extend
        return static_cast<int64_t>(raw << shift) >> shift;
      }
    }
  }

  // MySQL's binary DECIMAL: groups of nine digits in four bytes, big-endian,
  // the leftover digits in fewer; the sign bit flipped, and every bit of a
  // negative number inverted.
  Value decimal(int precision, int scale) {
    static constexpr int kBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
    const int intg = precision - scale;
    const int size = intg / 9 * 4 + kBytes[intg % 9] + scale / 9 * 4 + kBytes[scale % 9];
    const uint8_t* b = take(static_cast<size_t>(size));
    const bool negative = (b[0] & 0x80) == 0;
    const uint8_t invert = negative ? 0xff : 0;
    int at = 0;
    const auto group = [&](int bytes) {
      uint64_t v = 0;
      for (int i = 0; i < bytes; ++i, ++at) {
        v = (v << 8) | static_cast<uint8_t>(b[at] ^ invert ^ (at == 0 ? 0x80 : 0));
      }
      return v;
    };
    const auto digits = [](uint64_t v, int width) {
      std::string text = std::to_string(v);
      return std::string(static_cast<size_t>(std::max(0, width - static_cast<int>(text.size()))),
                         '0') +
             text;
    };
    std::string whole = std::to_string(group(kBytes[intg % 9]));
    for (int g = 0; g < intg / 9; ++g) whole += digits(group(4), 9);
    whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size() - 1));
    std::string fraction;
    for (int g = 0; g < scale / 9; ++g) fraction += digits(group(4), 9);
    if (scale % 9 > 0) fraction += digits(group(kBytes[scale % 9]), scale % 9);
    const std::string text = (negative ? "-" : "") + whole + (scale > 0 ? "." + fraction : "");
    return Decimal::parse(text, precision, scale);
  }

  // DATETIME2: year*13+month, day, hour, minute, second packed in 40 bits
  // above 2^39, then the fraction.
  Value datetime(int fsp) {
    const uint64_t packed = big_endian(5) - 0x8000000000ULL;
    const uint64_t ymd = packed >> 17, hms = packed & ((1 << 17) - 1);
    const uint64_t year_month = ymd >> 5;
    char text[40];
    std::snprintf(text, sizeof text, "%04u-%02u-%02u %02u:%02u:%02u",
                  static_cast<unsigned>(year_month / 13), static_cast<unsigned>(year_month % 13),
                  static_cast<unsigned>(ymd & 31), static_cast<unsigned>(hms >> 12),
                  static_cast<unsigned>((hms >> 6) & 63), static_cast<unsigned>(hms & 63));
    Timestamp at = Timestamp::parse(text);
    at.micros += fraction(fsp);
    return at;
  }

  // The fraction of a second after DATETIME2, TIMESTAMP2 and TIME2, in micros.
  int64_t fraction(int fsp) {
    switch ((fsp + 1) / 2) {
      case 1:
        return static_cast<int64_t>(big_endian(1)) * 10'000;
      case 2:
        return static_cast<int64_t>(big_endian(2)) * 100;
      case 3:
        return static_cast<int64_t>(big_endian(3));
      default:
        return 0;
    }
  }

  Value bytes(size_t length_bytes) {
    const size_t n = little_endian(length_bytes);
    const uint8_t* data = take(n);
    return std::string(reinterpret_cast<const char*>(data), n);
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const std::string& table_;
};

// The metadata bytes each binlog type carries in a TABLE_MAP event.
size_t metadata_size(uint8_t type) {
  switch (type) {
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE:
    case MYSQL_TYPE_BLOB:
    case MYSQL_TYPE_GEOMETRY:
    case MYSQL_TYPE_JSON:
    case MYSQL_TYPE_TIMESTAMP2:
    case MYSQL_TYPE_DATETIME2:
    case MYSQL_TYPE_TIME2:
      return 1;
    case MYSQL_TYPE_VARCHAR:
    case MYSQL_TYPE_VAR_STRING:
    case MYSQL_TYPE_NEWDECIMAL:
    case MYSQL_TYPE_STRING:
    case MYSQL_TYPE_BIT:
    case MYSQL_TYPE_ENUM:
    case MYSQL_TYPE_SET:
      return 2;
    default:
      return 0;
  }
}

// The columns of a TABLE_MAP event.
std::vector<BinlogColumnFormat> formats_of(const st_mariadb_rpl_table_map_event& map) {
  std::vector<BinlogColumnFormat> out;
  size_t at = 0;
  const auto* meta = reinterpret_cast<const uint8_t*>(map.metadata.str);
  for (size_t c = 0; c < map.column_types.length; ++c) {
    BinlogColumnFormat f{.type = static_cast<uint8_t>(map.column_types.str[c])};
    const size_t n = metadata_size(f.type);
    if (at + n > map.metadata.length) throw Error("a binlog TABLE_MAP event is corrupt");
    if (n == 1) f.meta = meta[at];
    // NEWDECIMAL and STRING keep their two bytes in order; the others are little-endian.
    if (n == 2) {
      const bool in_order = f.type == MYSQL_TYPE_NEWDECIMAL || f.type == MYSQL_TYPE_STRING ||
                            f.type == MYSQL_TYPE_ENUM || f.type == MYSQL_TYPE_SET;
      f.meta = in_order ? static_cast<uint16_t>(meta[at] << 8 | meta[at + 1])
                        : static_cast<uint16_t>(meta[at] | meta[at + 1] << 8);
    }
    at += n;
    out.push_back(f);
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether DDL `statement` only adds one nullable column at the end of a
// table: ALTER TABLE t ADD [COLUMN] name type, with no NOT NULL, FIRST or
// AFTER, and nothing else.
bool adds_nullable_column_at_end(const std::string& statement) {
  static const std::regex add(R"(^\s*alter\s+table\s+\S+\s+add\s+(column\s+)?[^,;]+$)",
                              std::regex::icase);
  static const std::regex excluded(
      R"(\bnot\s+null\b|\bfirst\b|\bafter\b|\bprimary\b|\bunique\b|)"
      R"(\badd\s+(index|key|constraint|foreign|fulltext|spatial|partition|check|period|system)\b)",
      std::regex::icase);
  return std::regex_search(statement, add) && !std::regex_search(statement, excluded);
}

// Whether SQL `statement` names `table` as a word (backquoted or not).
bool mentions(const std::string& statement, const std::string& table) {
  const std::string text = lower(statement);
  const std::string name = lower(table);
  const auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || !word(text[at - 1]);
    const bool ends = at + name.size() == text.size() || !word(text[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

bool is_rows_event(int type) {
  switch (type) {
    case WRITE_ROWS_EVENT_V1:
    case UPDATE_ROWS_EVENT_V1:
    case DELETE_ROWS_EVENT_V1:
    case WRITE_ROWS_EVENT:
    case UPDATE_ROWS_EVENT:
    case DELETE_ROWS_EVENT:
    case WRITE_ROWS_COMPRESSED_EVENT_V1:
    case UPDATE_ROWS_COMPRESSED_EVENT_V1:
    case DELETE_ROWS_COMPRESSED_EVENT_V1:
    case WRITE_ROWS_COMPRESSED_EVENT:
    case UPDATE_ROWS_COMPRESSED_EVENT:
    case DELETE_ROWS_COMPRESSED_EVENT:
      return true;
    default:
      return false;
  }
}

std::string text_of(const MARIADB_STRING& s) { return std::string(s.str, s.length); }

// Where a ROTATE event says the binlog goes on. Read from the event's bytes:
// Connector/C 3.3.20 takes the position and the name 8 bytes late in a
// ROTATE that follows a FORMAT_DESCRIPTION (every real one, at the end of a
// file). The event: a 19-byte header, the position (8 bytes), the file
// name, and the checksum (4 bytes) when the binlog has them.
BinlogPosition rotation_of(const st_mariadb_rpl_event& event, bool checksums) {
  constexpr size_t kHeader = 19, kPosition = 8;
  const size_t trailer = checksums ? 4 : 0;
  const uint8_t* at = event.raw_data + event.raw_data_ofs;
  const size_t size = event.raw_data_size - event.raw_data_ofs;
  if (size < kHeader + kPosition + trailer || event.event_length > size) {
    throw Error("a binlog ROTATE event is corrupt");
  }
  uint64_t position = 0;
  for (size_t i = 0; i < kPosition; ++i) position |= uint64_t{at[kHeader + i]} << (8 * i);
  const size_t name = event.event_length - kHeader - kPosition - trailer;
  return {std::string(reinterpret_cast<const char*>(at + kHeader + kPosition), name), position};
}

}  // namespace

std::string BinlogPosition::to_string() const { return file + ":" + std::to_string(offset); }

BinlogPosition current_binlog_position(MySqlConnection& connection) {
  std::vector<std::vector<std::optional<std::string>>> rows;
  try {
    rows = connection.query("SHOW MASTER STATUS");
  } catch (const MySqlError& e) {
    if (e.code() == ER_SPECIFIC_ACCESS_DENIED_ERROR || e.code() == ER_ACCESS_DENIED_ERROR) {
      throw ConfigError(
          "reading the binlog position needs the BINLOG MONITOR (REPLICATION "
          "CLIENT) privilege: " +
          e.message());
    }
    throw;
  }
  if (rows.empty()) {
    throw ConfigError(
        "the server's binlog is off: start it with --log-bin (and --binlog-format=ROW)");
  }
  const auto format = connection.query("SELECT @@global.binlog_format");
  if (format.at(0).at(0).value_or("") != "ROW") {
    throw ConfigError("the server's binlog_format is " + format.at(0).at(0).value_or("?") +
                      "; reading changes needs ROW (--binlog-format=ROW)");
  }
  return {rows[0].at(0).value_or(""), std::stoull(rows[0].at(1).value_or("0"))};
}

CapturedTable capture_table(MySqlConnection& connection, const std::string& table) {
  const TableInfo info = connection.describe_table(table);
  CapturedTable captured{.database = connection.query("SELECT DATABASE()").at(0).at(0).value_or(""),
                         .table = table,
                         .schema = info.schema()};
  for (const TableColumn& column : info.columns) {
    decoding_of(column.name, column.column_type);  // throws for a type it does not take
    captured.column_types.push_back(column.column_type);
  }
  return captured;
}

BinlogReader::BinlogReader(const MySqlUrl& url, uint32_t server_id, BinlogPosition start,
                           std::vector<CapturedTable> tables, std::chrono::milliseconds heartbeat)
    : tables_(std::move(tables)),
      connection_(std::make_unique<MySqlConnection>(url)),
      file_(start.file),
      read_(std::move(start)) {
  for (const CapturedTable& table : tables_) {
    std::vector<BinlogDecoding> columns;
    for (size_t c = 0; c < table.column_types.size(); ++c) {
      columns.push_back(decoding_of(table.schema.column(c).name, table.column_types[c]));
    }
    decodings_.push_back(std::move(columns));
  }
  // Events with the server's checksums (the client library strips them),
  // GTID events rather than BEGIN, and a heartbeat while there is nothing
  // to send, so that next() returns.
  connection_->execute("SET @master_binlog_checksum = @@global.binlog_checksum");
  checksums_ = connection_->query("SELECT @@global.binlog_checksum").at(0).at(0) != "NONE";
  connection_->execute("SET @mariadb_slave_capability = 4");
  connection_->execute("SET @master_heartbeat_period = " +
                       std::to_string(std::max<int64_t>(1, heartbeat.count()) * 1'000'000));
  rpl_ = mariadb_rpl_init(connection_->raw());
  if (rpl_ == nullptr) throw MySqlError(CR_OUT_OF_MEMORY, "mariadb_rpl_init failed");
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FILENAME, read_.file.c_str(), read_.file.size());
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_START, static_cast<unsigned long>(read_.offset));
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_SERVER_ID, server_id);
  connection_->call_starting();
  if (mariadb_rpl_open(rpl_) != 0) fail("opening the binlog at " + read_.to_string());
}

BinlogReader::~BinlogReader() {
  if (rpl_ != nullptr) mariadb_rpl_close(rpl_);
}

void BinlogReader::fail(const std::string& doing) const {
  const unsigned code = mysql_errno(connection_->raw());
  const std::string message = mysql_error(connection_->raw());
  switch (code) {
    case ER_MASTER_FATAL_ERROR_READING_BINLOG:  // 1236: purged, or no such position
      throw ConfigError(doing + ": the server cannot send it (" + message +
                        "); the binlog may have been purged past that position");
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
      throw ConfigError(doing + ": reading the binlog needs the REPLICATION SLAVE privilege (" +
                        message + ")");
    default:
      throw connection_->error(code, doing + ": " + message);
  }
}

std::optional<BinlogTransaction> BinlogReader::next() {
  std::optional<BinlogTransaction> out;
  while (!out) {
    connection_->call_starting();
    st_mariadb_rpl_event* event = mariadb_rpl_fetch(rpl_, nullptr);
    if (event == nullptr) fail("reading the binlog after " + read_.to_string());
    const bool heartbeat = event->event_type == HEARTBEAT_LOG_EVENT;
    try {
      handle(event, out);
    } catch (...) {
      mariadb_free_rpl_event(event);
      throw;
    }
    mariadb_free_rpl_event(event);
    if (heartbeat) break;
  }
  return out;
}

BinlogPosition BinlogReader::resume_position() const {
  BinlogPosition position = read_;
  for (const auto& [xid, group] : prepared_) position = std::min(position, group.start);
  return position;
}

void BinlogReader::handle(st_mariadb_rpl_event* event, std::optional<BinlogTransaction>& out) {
  switch (event->event_type) {
    case ROTATE_EVENT: {
      const BinlogPosition next = rotation_of(*event, checksums_);
      file_ = next.file;
      if (!group_) read_ = next;
      return;
    }
    case GTID_EVENT: {
      const auto& gtid = event->event.gtid;
      group_ = Group{.start = read_,
                     .prepared_xa = (gtid.flags & FL_PREPARED_XA) != 0,
                     .completed_xa = (gtid.flags & FL_COMPLETED_XA) != 0,
                     .ddl = (gtid.flags & FL_DDL) != 0};
      if (group_->prepared_xa || group_->completed_xa) {
        group_->xid = std::to_string(gtid.format_id) + ":" + text_of(gtid.xid);
      }
      if (gtid.flags & FL_STANDALONE) group_->ddl = true;  // one statement, no COMMIT
      return;
    }
    case TABLE_MAP_EVENT: {
      const auto& map = event->event.table_map;
      const std::string database = text_of(map.database), table = text_of(map.table);
      mapped_.erase(map.table_id);
      for (size_t t = 0; t < tables_.size(); ++t) {
        if (tables_[t].database == database && tables_[t].table == table) {
          mapped_[map.table_id] = {t, formats_of(map)};
          return;
        }
      }
      return;
    }
    case QUERY_EVENT: {
      const std::string statement = text_of(event->event.query.statement);
      if (statement == "BEGIN") return;
      if (group_ && group_->completed_xa) {
        // XA COMMIT or XA ROLLBACK of a transaction prepared earlier.
        const auto held = prepared_.find(group_->xid);
        if (held != prepared_.end()) {
          if (lower(statement).rfind("xa commit", 0) == 0) {
            group_->changes = std::move(held->second.changes);
          }
          prepared_.erase(held);
        }
        end_group(event, out);
        return;
      }
      if (group_ && group_->ddl) {
        for (const CapturedTable& table : tables_) {
          if (mentions(statement, table.table) && adds_nullable_column_at_end(statement)) {
            spdlog::info("binlog: {} on captured table '{}': the new column is not read", statement,
                         table.table);
          } else if (mentions(statement, table.table)) {
            throw ConfigError("DDL on captured table '" + table.table + "' at " +
                              BinlogPosition{file_, event->next_event_pos}.to_string() + ": " +
                              statement +
                              "; of the changes to a captured table's schema only a nullable "
                              "column added at the end is taken (and not read) yet: adapt the "
                              "job and start it afresh");
          }
        }
      }
      if (statement == "COMMIT" || (group_ && group_->ddl)) end_group(event, out);
      return;
    }
    case XID_EVENT:
      end_group(event, out);
      return;
    case XA_PREPARE_LOG_EVENT:
      if (group_) {
        group_->prepared_xa = true;
        if (!group_->changes.empty()) prepared_[group_->xid] = std::move(*group_);
        group_.reset();
      }
      if (event->next_event_pos != 0) read_ = {file_, event->next_event_pos};
      return;
    default:
      if (is_rows_event(event->event_type)) read_rows(event);
      if (!group_ && event->next_event_pos != 0 && event->event_type != HEARTBEAT_LOG_EVENT) {
        read_ = {file_, event->next_event_pos};
      }
      return;
  }
}

void BinlogReader::read_rows(st_mariadb_rpl_event* event) {
  const auto mapped = mapped_.find(event->event.rows.table_id);
  if (mapped == mapped_.end() || !group_) return;  // another table's rows: not decoded
  const size_t t = mapped->second.table;
  const CapturedTable& table = tables_[t];
  const std::vector<BinlogColumnFormat>& formats = mapped->second.columns;
  const std::vector<BinlogDecoding>& decodings = decodings_[t];
  const auto& rows = event->event.rows;
  // Columns added at the end since the job started are read past.
  if (formats.size() < decodings.size() || rows.column_count != formats.size()) {
    throw ConfigError("table '" + table.table + "' has " + std::to_string(formats.size()) +
                      " columns in the binlog, " + std::to_string(decodings.size()) +
                      " when the job started: its schema changed");
  }
  if (rows.compressed)
    throw ConfigError("compressed binlog events (log_bin_compress) are not read yet");
  // Each row image: a NULL bit per column it holds, then the values of the
  // others. With binlog_row_image=FULL every image holds every column.
  const size_t columns = formats.size();
  const auto every_column = [&](const unsigned char* bitmap) {
    for (size_t c = 0; c < columns; ++c) {
      if (bitmap == nullptr || (bitmap[c / 8] & (1 << (c % 8))) == 0) return false;
    }
    return true;
  };
  const bool update = rows.type == UPDATE_ROWS;
  if (!every_column(rows.column_bitmap) || (update && !every_column(rows.column_update_bitmap))) {
    throw ConfigError("the binlog holds partial row images of table '" + table.table +
                      "': set binlog_row_image=FULL on the server");
  }
  RowImageReader reader(static_cast<const uint8_t*>(rows.row_data), rows.row_data_size,
                        table.table);
  bool before = true;  // an update's images come in pairs: before, after
  while (!reader.at_end()) {
    Row row;
    if (rows.type == WRITE_ROWS) {
      row.kind = RowKind::kInsert;
    } else if (rows.type == DELETE_ROWS) {
      row.kind = RowKind::kDelete;
    } else {
      row.kind = before ? RowKind::kUpdateBefore : RowKind::kUpdateAfter;
      before = !before;
    }
    const uint8_t* nulls = reader.take((columns + 7) / 8);
    row.fields.reserve(decodings.size());
    for (size_t c = 0; c < columns; ++c) {
      const bool null = (nulls[c / 8] & (1 << (c % 8))) != 0;
      const BinlogDecoding& decoding = c < decodings.size() ? decodings[c] : BinlogDecoding{};
      Value value = null ? Value() : reader.value(formats[c], decoding);
      if (c < decodings.size()) row.fields.push_back(std::move(value));
    }
    group_->changes.push_back({t, std::move(row)});
  }
}

void BinlogReader::end_group(st_mariadb_rpl_event* event, std::optional<BinlogTransaction>& out) {
  if (event->next_event_pos != 0) read_ = {file_, event->next_event_pos};
  if (group_ && !group_->changes.empty())
    out = BinlogTransaction{std::move(group_->changes), read_};
  group_.reset();
}

}  // namespace sluice
