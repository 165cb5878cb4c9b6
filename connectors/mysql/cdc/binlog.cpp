#include "sluice/connectors/mysql/cdc/binlog.hpp"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <spdlog/spdlog.h>
// After mysql.h, which they need.
#include <mariadb_rpl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <set>

#include "sluice/connectors/mysql/cdc/binlog_events.hpp"
#include "sluice/connectors/mysql/cdc/binlog_packets.hpp"
#include "sluice/connectors/mysql/cdc/binlog_rows.hpp"
#include "sluice/connectors/mysql/cdc/ddl.hpp"
#include "sluice/connectors/mysql/cdc/schema_history.hpp"
#include "sluice/connectors/mysql/pvio.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {

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

std::string show_create_table(MySqlConnection& connection, const std::string& database,
                              const std::string& table) {
  return connection
      .query("SHOW CREATE TABLE " + quote_identifier(database) + "." + quote_identifier(table))
      .at(0)
      .at(1)
      .value_or("");
}

CapturedTable capture_table(MySqlConnection& connection, const std::string& table,
                            const std::vector<std::string>& keep, const std::string& database) {
  // Read in a transaction that holds the table's metadata lock, which an
  // ALTER TABLE waits for: its columns and definition as of one moment.
  connection.execute("START TRANSACTION");
  struct Ended {
    MySqlConnection& connection;
    ~Ended() {
      try {
        connection.execute("ROLLBACK");
      } catch (const MySqlError&) {  // a lost connection ended it
      }
    }
  } ended{connection};
  try {
    connection.query("SELECT 1 FROM " + (database.empty() ? "" : quote_identifier(database) + ".") +
                     quote_identifier(table) + " LIMIT 0");
  } catch (const MySqlError& e) {
    // Read unlocked then: describe_table() says which table is missing,
    // and a user without SELECT on it may still read its binlog.
    if (e.retriable()) throw;
  }
  const TableInfo info = connection.describe_table(table, database);
  CapturedTable captured{
      .database = database.empty() ? connection.query("SELECT DATABASE()").at(0).at(0).value_or("")
                                   : database,
      .table = table,
      .schema = info.schema()};
  captured.definition = show_create_table(connection, captured.database, table);
  const auto type = connection.query(
      "SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
      connection.quote(captured.database) + " AND TABLE_NAME = " + connection.quote(table));
  if (!type.empty() && type[0].at(0) == "SYSTEM VERSIONED") {
    throw ConfigError("table '" + captured.database + "." + table +
                      "' is system-versioned (WITH SYSTEM VERSIONING): its binlog gives each "
                      "update and delete as changes of history rows beside the current one, "
                      "which mysql-cdc does not tell apart yet. Capture a table without system "
                      "versioning");
  }
  Charsets charsets(connection);
  for (const TableColumn& column : info.columns) {
    const bool kept =
        keep.empty() || std::find(keep.begin(), keep.end(), column.name) != keep.end();
    try {
      decoding_of(column, charsets);  // throws for a type it does not take
    } catch (const ConfigError&) {
      if (kept) throw;
      captured.read_past.insert(column.name);
    }
    captured.columns.push_back(column);
  }
  take_expressions(captured.columns, captured.definition);
  return captured;
}

// One connection reading the binlog's events from a position, as replica
// `server_id` (the server refuses a second connection of one id): it waits
// for what the server writes next, with a heartbeat meanwhile; or, when
// `to_the_end`, the server sends what the binlog holds and ends.
class BinlogStream {
 public:
  /// `made`: when the server made `from.file`, if known (BinlogResume::file_made).
  BinlogStream(const MySqlUrl& url, uint32_t server_id, const BinlogPosition& from,
               const BinlogReaderOptions& options, bool to_the_end = false, uint32_t made = 0)
      : connection_(
            std::make_unique<MySqlConnection>(url, MySqlSession{.canceller = options.canceller})),
        position_(from),
        made_file_(from.file),
        made_(made) {
    // Events with the server's checksums, GTID events rather than BEGIN,
    // and a heartbeat while there is nothing to send, so that a read
    // returns. Each file's FORMAT_DESCRIPTION says whether its events have
    // checksums; the ROTATE the server sends first, whether the global
    // setting says so.
    connection_->execute("SET @master_binlog_checksum = @@global.binlog_checksum");
    checksums_ = connection_->query("SELECT @@global.binlog_checksum").at(0).at(0) != "NONE";
    connection_->execute("SET @mariadb_slave_capability = 4");
    connection_->execute(
        "SET @master_heartbeat_period = " +
        std::to_string(std::max<int64_t>(1, options.heartbeat.count()) * 1'000'000));
    rpl_ = mariadb_rpl_init(connection_->raw());
    if (rpl_ == nullptr) throw MySqlError(CR_OUT_OF_MEMORY, "mariadb_rpl_init failed");
    mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FILENAME, from.file.c_str(), from.file.size());
    mariadb_rpl_optionsv(rpl_, MARIADB_RPL_START, static_cast<unsigned long>(from.offset));
    mariadb_rpl_optionsv(rpl_, MARIADB_RPL_SERVER_ID, server_id);
    if (to_the_end) {
      mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FLAGS,
                           static_cast<unsigned>(MARIADB_RPL_BINLOG_DUMP_NON_BLOCK));
    }
    connection_->call_starting();
    if (mariadb_rpl_open(rpl_) != 0) fail("opening the binlog at " + from.to_string());
    // The server's dump thread only writes. Closed the orderly way (after a
    // cancel shut it down, say), the connection can leave it blocked on a
    // full socket until its net_write_timeout, and the next reader of this
    // replica id waits for it that long. Closed with a reset, whenever and
    // by whatever, the thread's next write fails and it ends at once.
    const linger reset{.l_onoff = 1, .l_linger = 0};
    ::setsockopt(static_cast<int>(mysql_get_socket(connection_->raw())), SOL_SOCKET, SO_LINGER,
                 &reset, sizeof reset);
    MYSQL* mysql = connection_->raw();
    plain_ = mysql_get_ssl_cipher(mysql) == nullptr && !mysql->net.compress;
    take_over();
  }
  ~BinlogStream() {
    if (rpl_ != nullptr) mariadb_rpl_close(rpl_);
  }
  BinlogStream(const BinlogStream&) = delete;
  BinlogStream& operator=(const BinlogStream&) = delete;

  /// The next event, valid until the next call; null when a stream read
  /// to the end came to it. Read as it came (a packet: a byte 0, the
  /// event), not by Connector/C's mariadb_rpl_fetch, which copies each one
  /// and fails on compressed rows in a binlog without checksums.
  const BinlogEvent* next() {
    connection_->call_starting();
    const std::string_view packet = read_packet();
    const auto first = packet.empty() ? 0xff : static_cast<uint8_t>(packet[0]);
    if (packet.size() < 9 && first == 0xfe) return nullptr;  // EOF: the end, read to
    if (first != 0) {
      throw Error("reading the binlog after " + position_.to_string() +
                  ": the server sent a packet that is not an event");
    }
    const std::string_view bytes = packet.substr(1);
    event_ = parse_binlog_event(bytes, checksums_);
    if (rotated_) {
      before_.file = position_.file;
      rotated_ = false;
    }
    before_.offset = position_.offset;
    if (event_.type == FORMAT_DESCRIPTION_EVENT) {
      checksums_ = describes_checksums(bytes);
      // Each file begins with it, and the server sends it first from
      // anywhere in a file, with the time it was written then.
      check_made(event_.timestamp);
      made_file_ = position_.file;
      made_ = event_.timestamp;
    } else if (event_.type == ROTATE_EVENT) {
      position_ = rotation_of(event_);
      rotated_ = true;
    } else if (event_.next_position != 0 && event_.type != HEARTBEAT_LOG_EVENT) {
      position_.offset = event_.next_position;
    }
    return &event_;
  }

  /// Where a compressed event's fields are inflated to, until the next.
  std::string& inflated() { return inflated_; }

  /// Whether an event has come in, in part at least, so that next() would
  /// not wait for the server: bytes read ahead (by packets_, or in the
  /// client library's cache), or on the socket.
  bool has_data() const {
    if (packets_) return packets_->has_data();
    if (has_unread_bytes(connection_->raw())) return true;
    pollfd socket{.fd = static_cast<int>(mysql_get_socket(connection_->raw())), .events = POLLIN};
    return ::poll(&socket, 1, 0) > 0;
  }

  /// When the server made binlog file `file` (BinlogResume::file_made):
  /// known from its FORMAT_DESCRIPTION event on, or as the stream was
  /// given it; else 0.
  uint32_t made(const std::string& file) const { return file == made_file_ ? made_ : 0; }

  /// Where the last event began and where it ended.
  const BinlogPosition& event_start() const { return before_; }
  const BinlogPosition& event_end() const { return position_; }
  /// event_start().packed(), its file's part worked out once a file.
  std::optional<int64_t> packed_start() {
    if (before_.file != packed_file_) {
      packed_file_ = before_.file;
      packed_file_part_ = BinlogPosition{before_.file, 0}.packed();
    }
    if (!packed_file_part_ || before_.offset >= (uint64_t{1} << 32)) return std::nullopt;
    return *packed_file_part_ | static_cast<int64_t>(before_.offset);
  }

  /// The captured tables its TABLE_MAP events announced, by table id.
  struct MappedTable {
    size_t table = 0;
    std::vector<BinlogColumnFormat> columns;
    std::string types, metadata;  // the event's bytes `columns` were read from
    std::string body;             // the last event's bytes after the table id (map_body())
  };
  std::map<uint64_t, MappedTable> mapped;

 private:
  // Fails unless the file the stream reads was made at `made`, as it was
  // given: a file of its name made at another time is another binlog's,
  // whose offsets mean other events.
  void check_made(uint32_t made) const {
    if (made_ == 0 || made_file_ != position_.file || made == made_) return;
    throw ConfigError("binlog file " + position_.file + " on the server was made at " +
                      utc_datetime(made) + " UTC" + ", but the one read up to " +
                      position_.to_string() + " was made at " + utc_datetime(made_) + " UTC" +
                      ": the binlog was reset (RESET MASTER) or replaced since, and the changes "
                      "after that position are not there to read. Use restore=none to start "
                      "afresh with a snapshot");
  }

  // The next packet: read by the client library, or, once it holds no
  // bytes read ahead on a connection without TLS, by packets_.
  std::string_view read_packet() {
    if (!packets_) {
      MYSQL* mysql = connection_->raw();
      const unsigned long length = mysql_net_read_packet(mysql);
      if (length == packet_error) fail(reading());
      const std::string_view packet(reinterpret_cast<const char*>(mysql->net.read_pos), length);
      take_over();
      return packet;
    }
    std::string_view packet;
    try {
      packet = packets_->next();
    } catch (const MySqlError& e) {
      fail(reading(), e.code(), e.message());
    }
    if (!packet.empty() && static_cast<uint8_t>(packet[0]) == 0xff) {
      // An error: its code (2 bytes), '#' and the SQLSTATE (5), the message.
      const auto* bytes = reinterpret_cast<const uint8_t*>(packet.data());
      const unsigned code = packet.size() >= 3 ? bytes[1] | bytes[2] << 8 : CR_UNKNOWN_ERROR;
      std::string_view message = packet.substr(std::min<size_t>(3, packet.size()));
      if (message.starts_with('#')) message.remove_prefix(std::min<size_t>(6, message.size()));
      fail(reading(), code, std::string(message));
    }
    return packet;
  }
  // Hands reading to packets_ where it may.
  void take_over() {
    if (!plain_ || has_unread_bytes(connection_->raw())) return;
    packets_.emplace(static_cast<int>(mysql_get_socket(connection_->raw())),
                     std::chrono::milliseconds(connection_->timeout()));
  }
  std::string reading() const { return "reading the binlog after " + position_.to_string(); }

  [[noreturn]] void fail(const std::string& doing) const {
    fail(doing, mysql_errno(connection_->raw()), mysql_error(connection_->raw()));
  }
  [[noreturn]] void fail(const std::string& doing, unsigned code,
                         const std::string& message) const {
    switch (code) {
      case ER_MASTER_FATAL_ERROR_READING_BINLOG:  // 1236: purged, or no such position
        throw ConfigError(doing + ": the server cannot send it (" + message +
                          "); the binlog may have been purged past that position, or reset "
                          "(RESET MASTER). Use restore=none to start afresh with a snapshot");
      case ER_SPECIFIC_ACCESS_DENIED_ERROR:
      case ER_ACCESS_DENIED_ERROR:
      case ER_DBACCESS_DENIED_ERROR:
        throw ConfigError(doing + ": reading the binlog needs the REPLICATION SLAVE privilege (" +
                          message + ")");
      case ER_SLAVE_SAME_ID:  // 4052: a newer connection took this replica id
        throw ConfigError(doing +
                          ": another replica connected to the server with the same "
                          "server id (" +
                          message +
                          "): another run of this job elsewhere, or "
                          "a job or replica given the same source.server-id; give each its own");
      default:
        throw connection_->error(code, doing + ": " + message);
    }
  }

  std::unique_ptr<MySqlConnection> connection_;
  st_mariadb_rpl* rpl_ = nullptr;        // what opened the stream
  bool plain_ = false;                   // whether the connection has neither TLS nor compression
  std::optional<PacketReader> packets_;  // what reads it, once the client library does not
  BinlogEvent event_;                    // next()'s last
  std::string inflated_;
  bool checksums_ = true;  // whether events end in a CRC32
  BinlogPosition position_;
  BinlogPosition before_;
  bool rotated_ = true;    // whether position_ is in another file than before_
  std::string made_file_;  // the file whose making made_ tells
  uint32_t made_ = 0;
  std::string packed_file_;                  // packed_start()'s last file
  std::optional<int64_t> packed_file_part_;  // and its part of a packed position
};

BinlogReader::BinlogReader(const MySqlUrl& url, uint32_t server_id, BinlogResume start,
                           std::vector<CapturedTable> tables, BinlogReaderOptions options)
    : url_(url),
      server_id_(server_id),
      tables_(std::move(tables)),
      options_(options),
      start_(start.position),
      skip_(start.given),
      read_(start.position) {
  {
    MySqlConnection connection(url_, MySqlSession{.canceller = options_.canceller});
    names_fold_case_ =
        connection.query("SELECT @@lower_case_table_names").at(0).at(0).value_or("0") != "0";
    Charsets charsets(connection);
    for (const CapturedTable& table : tables_) {
      std::vector<BinlogDecoding> columns;
      for (const TableColumn& column : table.columns) {
        columns.push_back(table.read_past.contains(column.name) ? BinlogDecoding{.read_past = true}
                                                                : decoding_of(column, charsets));
      }
      decodings_.push_back(std::move(columns));
      schemas_.push_back(std::make_shared<const Schema>(table.schema));
    }
  }
  for (PreparedXa& xa : start.prepared) prepared_[xa.xid] = std::move(xa);
  main_ =
      std::make_unique<BinlogStream>(url_, server_id_, start_, options_, false, start.file_made);
  last_arrival_ = last_event_ = CoarseClock::now();
}

BinlogReader::~BinlogReader() = default;

uint32_t BinlogReader::side_server_id() const {
  // Another id than the main stream's, one no replica has (ids are small).
  return server_id_ ^ 0x80000000U;
}

bool BinlogReader::stopped() const { return stop_at_ && !group_ && !side_ && read_ >= *stop_at_; }

BinlogResume BinlogReader::resume() const {
  BinlogResume resume;
  if (group_) {
    resume.position = group_->start;
    resume.given = std::max(group_->changes, group_->skip);
  } else {
    resume.position = read_;
    resume.given = skip_;
  }
  for (const auto& [xid, xa] : prepared_) resume.prepared.push_back(xa);
  resume.file_made = main_->made(resume.position.file);
  return resume;
}

uint32_t binlog_file_made(const MySqlUrl& url, uint32_t server_id, const std::string& file) {
  BinlogStream stream(url, server_id, {file, 4}, BinlogReaderOptions{}, true);
  // A ROTATE to the file, then its FORMAT_DESCRIPTION.
  for (const BinlogEvent* event = stream.next(); event != nullptr; event = stream.next()) {
    if (event->type == FORMAT_DESCRIPTION_EVENT) return event->timestamp;
  }
  return 0;
}

void BinlogReader::read(BinlogChanges& out) {
  idle_ = false;
  schema_changed_ = false;
  const auto deadline = CoarseClock::now() + options_.budget;
  const size_t enough = out.size() + options_.max_changes;
  while (!stopped()) {
    CoarseClock::time_point handled;  // one clock read an event
    if (side_) {
      // What it reads is in the binlog already: it comes at once.
      const BinlogEvent* event = side_->next();
      if (event == nullptr) {
        throw Error("the binlog ends inside the XA PREPARE of " + group_->xid + ", committed at " +
                    group_->start.to_string());
      }
      handle(*side_, *event, out);
      handled = CoarseClock::now();
    } else if (!main_->has_data()) {
      // Caught up: return rather than wait for the server, whose heartbeat
      // says every so often that it is still there.
      idle_ = true;
      const auto now = CoarseClock::now();
      if (now - last_arrival_ > kSilence) {
        throw MySqlError(CR_SERVER_LOST, "reading the binlog after " + read_.to_string() +
                                             ": the server sent "
                                             "nothing, not even a heartbeat, for " +
                                             std::to_string(kSilence.count()) + " s");
      }
      if (!group_ && now - std::max(last_event_, last_checked_) > kStalled) {
        last_checked_ = now;
        check_not_stalled();
      }
      return;
    } else {
      const BinlogEvent* event = main_->next();
      if (event == nullptr) {
        // As after a binlog reset (RESET MASTER) under it: a new stream
        // finds out (BinlogStream::check_made()).
        throw MySqlError(CR_SERVER_LOST, "reading the binlog after " + read_.to_string() +
                                             ": the server ended the stream");
      }
      handle(*main_, *event, out);
      last_arrival_ = handled = CoarseClock::now();
      if (event->type != HEARTBEAT_LOG_EVENT) last_event_ = handled;
    }
    if (out.size() >= enough || handled >= deadline) return;
    if (schema_changed_ && !group_) return;
  }
}

void BinlogReader::check_not_stalled() {
  if (!status_) {
    status_ =
        std::make_unique<MySqlConnection>(url_, MySqlSession{.canceller = options_.canceller});
  }
  const BinlogPosition end = current_binlog_position(*status_);
  if (end == main_->event_end()) return;
  // The server wrote what it did not send: a binlog reset (RESET MASTER)
  // leaves the stream waiting at the end of a file that is gone. Read on
  // from where the last transaction ended, on a stream that finds out.
  spdlog::info("binlog: the server is at {}, but sent nothing past {} for {} s: reading on anew",
               end.to_string(), main_->event_end().to_string(), kStalled.count());
  const uint32_t made = main_->made(read_.file);
  main_.reset();
  main_ = std::make_unique<BinlogStream>(url_, server_id_, read_, options_, false, made);
}

void BinlogReader::handle(BinlogStream& stream, const BinlogEvent& event, BinlogChanges& out) {
  const bool side = &stream == side_.get();
  if (!side && event.timestamp != 0 && event.type != HEARTBEAT_LOG_EVENT) {
    last_event_time_ = std::chrono::system_clock::time_point(std::chrono::seconds(event.timestamp));
  }
  switch (event.type) {
    case HEARTBEAT_LOG_EVENT:
      return;
    case TABLE_MAP_EVENT: {
      // Every transaction maps its tables again, mostly as the last did:
      // in the same bytes, after the table id.
      const uint64_t table_id = table_id_of(event);
      const auto known = stream.mapped.find(table_id);
      if (known != stream.mapped.end() && known->second.body == map_body(event) &&
          !absent(known->second.table)) {
        if (group_ && group_->prepare) group_->captured = true;
        return;
      }
      const BinlogTableMap map = table_map_of(event);
      if (known != stream.mapped.end()) {
        auto& mapped = known->second;
        const CapturedTable& captured = tables_[mapped.table];
        if (captured.database == map.database && captured.table == map.table &&
            mapped.types == map.types && mapped.metadata == map.metadata && !absent(mapped.table)) {
          mapped.body = map_body(event);
          if (group_ && group_->prepare) group_->captured = true;
          return;
        }
      }
      const std::string database(map.database), table(map.table);
      stream.mapped.erase(map.table_id);
      for (size_t t = 0; t < tables_.size(); ++t) {
        if (tables_[t].database == database && tables_[t].table == table) {
          if (absent(t)) {
            if (options_.not_captured_yet.contains(t)) return;
            throw Error("binlog at " + stream.event_start().to_string() + ": rows of table '" +
                        database + "." + table +
                        "', which the binlog dropped before (or has not created yet)");
          }
          stream.mapped[map.table_id] = {t, column_formats(map.types, map.metadata),
                                         std::string(map.types), std::string(map.metadata),
                                         std::string(map_body(event))};
          if (group_ && group_->prepare) group_->captured = true;
          return;
        }
      }
      return;
    }
    default:
      if (is_rows_event(event.type)) {
        read_rows(stream, event, out);
        return;
      }
      break;
  }
  if (side) {
    // The prepare of the committed XA transaction: its rows (above), ended
    // by XA PREPARE, and then the commit's group ends too.
    if (event.type == GTID_EVENT && gtid_of(event).xid != group_->xid) {
      throw Error("the binlog holds no XA PREPARE of " + group_->xid + " at " +
                  stream.event_start().to_string());
    }
    if (event.type == XA_PREPARE_LOG_EVENT) {
      side_.reset();
      end_group(side_end_);
    }
    return;
  }
  switch (event.type) {
    case GTID_EVENT: {
      BinlogGtid gtid = gtid_of(event);
      // The start's file in the last group's string: no allocation a
      // transaction.
      BinlogPosition start{std::move(spare_file_), 0};
      start = stream.event_start();
      group_ = Group{.start = std::move(start),
                     .skip = std::exchange(skip_, 0),
                     .prepare = (gtid.flags & FL_PREPARED_XA) != 0,
                     .completion = (gtid.flags & FL_COMPLETED_XA) != 0,
                     // One statement, no COMMIT: DDL.
                     .ddl = (gtid.flags & (FL_DDL | FL_STANDALONE)) != 0,
                     .standalone = (gtid.flags & FL_STANDALONE) != 0};
      group_->xid = std::move(gtid.xid);
      return;
    }
    case QUERY_EVENT:
    case QUERY_COMPRESSED_EVENT:
      handle_query(stream, event, out);
      return;
    case XID_EVENT:
      end_group(stream.event_end());
      return;
    case XA_PREPARE_LOG_EVENT:
      if (group_ && group_->prepare) {
        prepared_[group_->xid] = {group_->xid, group_->start, group_->captured};
        end_group(stream.event_end());
      }
      read_ = stream.event_end();
      return;
    default:
      if (!group_) read_ = stream.event_end();
      return;
  }
}

void BinlogReader::handle_query(BinlogStream& stream, const BinlogEvent& event,
                                BinlogChanges& out) {
  const BinlogQuery query = query_of(event, stream.inflated());
  const std::string statement(query.statement), database(query.database);
  statement_mode_ = query.sql_mode;
  if (statement == "BEGIN") return;
  if (group_ && group_->completion) {
    complete_xa(statement, stream.event_end());
    return;
  }
  if (group_ && group_->ddl) {
    const size_t first = out.size();
    check_ddl(statement, database, stream, out);
    // The statement's changes: when it ran, in which time zone, and their
    // places among them when there are several.
    std::optional<std::string> time_zone;
    for (size_t i = first; i < out.size(); ++i) {
      if (!out[i].schema_change) continue;
      if (!time_zone) time_zone = utc_offset(query.time_zone, event.timestamp, statement);
      auto stamped = std::make_shared<BinlogSchemaChange>(*out[i].schema_change);
      stamped->ran_at = int64_t{event.timestamp} * 1'000'000 + query.microseconds;
      stamped->time_zone = *time_zone;
      stamped->sql_mode = value_modes(query.sql_mode);
      if (out.size() - first > 1) stamped->part = static_cast<uint32_t>(i - first);
      out[i].schema_change = std::move(stamped);
    }
  }
  check_statement(statement, database, stream);
  // CREATE TABLE … SELECT: DDL, its rows, and COMMIT (an XID event).
  if (statement == "COMMIT" || (group_ && group_->ddl && group_->standalone)) {
    end_group(stream.event_end());
  }
}

std::optional<std::string> value_modes(std::optional<uint64_t> sql_mode) {
  if (!sql_mode) return std::nullopt;
  // The server's bits (sql/sql_class.h), as the binlog has them.
  static constexpr std::pair<int, const char*> kValueModes[] = {
      {21, "STRICT_TRANS_TABLES"},  {22, "STRICT_ALL_TABLES"},   {23, "NO_ZERO_IN_DATE"},
      {24, "NO_ZERO_DATE"},         {25, "ALLOW_INVALID_DATES"}, {26, "ERROR_FOR_DIVISION_BY_ZERO"},
      {34, "TIME_ROUND_FRACTIONAL"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : kValueModes) {
    if ((*sql_mode >> bit) & 1) names.emplace_back(name);
  }
  return join(names, ",");
}

namespace {

// Warns of each column `change` adds whose DEFAULT gives each row a value
// of its own (UUID(), RAND()): the target's rows cannot get the source's.
void warn_of_random_defaults(const BinlogSchemaChange& change) {
  static const char* const kRandom[] = {"uuid(",         "uuid_short(", "rand(",
                                        "random_bytes(", "sys_guid(",   "connection_id("};
  for (const TableColumn& column : change.after.columns) {
    const bool added = std::none_of(change.before.columns.begin(), change.before.columns.end(),
                                    [&](const TableColumn& c) { return c.name == column.name; });
    const std::string value = lower(column.default_sql);
    if (!added || std::none_of(std::begin(kRandom), std::end(kRandom),
                               [&](const char* f) { return value.find(f) != std::string::npos; })) {
      continue;
    }
    spdlog::warn(
        "binlog: {} adds column '{}' to table '{}.{}' with DEFAULT {}: the table's rows took "
        "values of it that the binlog does not log, and its target's rows take values of their "
        "own, as a replica's do; the rows' later changes bring the source's",
        change.statement, column.name, change.after.database, change.after.table,
        column.default_sql);
  }
}

}  // namespace

std::string BinlogReader::utc_offset(std::string_view zone, uint32_t timestamp,
                                     const std::string& statement) {
  if (zone.empty()) return "";
  std::string offset = history().utc_offset(std::string(zone), timestamp);
  if (offset.empty()) {
    spdlog::warn(
        "binlog: {} ran in time zone '{}', which the server no longer knows: its target "
        "runs it in UTC",
        statement, zone);
  }
  return offset;
}

SchemaHistory& BinlogReader::history() {
  if (!history_) history_ = std::make_unique<SchemaHistory>(url_, options_.canceller);
  return *history_;
}

bool BinlogReader::same_name(std::string_view a, std::string_view b) const {
  return names_fold_case_ ? lower(a) == lower(b) : a == b;
}

void BinlogReader::check_statement(const std::string& statement, const std::string& database,
                                   BinlogStream& stream) const {
  for (const auto& [db, name] : written_tables(statement, database)) {
    for (size_t t = 0; t < tables_.size(); ++t) {
      if (absent(t) || !same_name(tables_[t].database, db) || !same_name(tables_[t].table, name)) {
        continue;
      }
      throw ConfigError(
          "binlog at " + stream.event_start().to_string() + ": " + statement +
          "; a change of captured table '" + db + "." + name +
          "' logged as an SQL statement, not as rows (its session's binlog_format was STATEMENT "
          "or MIXED), which the job cannot read. Let every session that changes a captured "
          "table keep binlog_format=ROW. To go on: make the target hold what the source holds, "
          "then start the job afresh with restore=none: it reads a new snapshot of every "
          "captured table");
    }
  }
}

void BinlogReader::check_ddl(const std::string& statement, const std::string& database,
                             BinlogStream& stream, BinlogChanges& out) {
  const auto captured_as = [&](const DdlChange& change) -> std::optional<size_t> {
    for (size_t t = 0; t < tables_.size(); ++t) {
      if (same_name(change.database, tables_[t].database) &&
          same_name(change.table, tables_[t].table)) {
        return t;
      }
    }
    return std::nullopt;
  };
  const auto wants = [&](const DdlChange& change) {
    return captured_as(change).has_value() || (options_.new_tables && !change.table.empty() &&
                                               options_.new_tables(change.database, change.table));
  };
  const std::vector<DdlChange> changes = ddl_changes(statement, database);
  for (size_t c = 0; c < changes.size(); ++c) {
    const DdlChange& change = changes[c];
    const std::optional<size_t> captured = captured_as(change);
    const bool wanted = wants(change);
    using Action = DdlChange::Action;
    // RENAME TABLE (or ALTER TABLE … RENAME TO) of a captured table: its
    // old name, then its new one.
    if (options_.follow_schema_changes && captured && !absent(*captured) &&
        change.action == Action::kRename && !change.creates && c + 1 < changes.size()) {
      const DdlChange& to = changes[++c];
      for (auto& moved :
           rename(*captured, to,
                  wants(to) ? captured_as(to).value_or(tables_.size()) : std::optional<size_t>(),
                  statement, stream)) {
        out.add_schema_change(moved.table, std::move(moved.schema_change));
      }
      schema_changed_ = true;
      continue;
    }
    if (options_.follow_schema_changes && wanted) {
      const bool exists = captured && !absent(*captured);
      if (change.action == Action::kCreate && !exists) {
        const size_t index = captured.value_or(tables_.size());
        out.add_schema_change(index, create(captured, change, statement, database, stream));
        schema_changed_ = true;
        continue;
      }
      if (exists && (change.action == Action::kDrop || change.action == Action::kTruncate)) {
        out.add_schema_change(*captured, drop(*captured, change.action, statement, stream));
        schema_changed_ = true;
        continue;
      }
    }
    if (change.creates && (!captured || absent(*captured)) && wanted) {
      throw ConfigError("DDL at " + stream.event_end().to_string() + ": " + statement +
                        "; it makes table '" + change.database + "." + change.table +
                        "', which source.tables matches, from a table it does not capture, "
                        "whose rows the job has not read. To follow such a rename (an online "
                        "schema change's shadow table, say), let source.tables match the table "
                        "renamed too; to capture the table now, start the job afresh with "
                        "restore=none: it reads a new snapshot of every table it matches");
    }
    for (size_t t = 0; t < tables_.size(); ++t) {
      const CapturedTable& table = tables_[t];
      if (absent(t)) continue;  // dropped: DDL of another table of its name
      // An unknown database (no default) might be the table's.
      const bool concerns =
          (change.database.empty() || same_name(change.database, table.database)) &&
          (change.table.empty() || same_name(change.table, table.table));
      if (!concerns) continue;
      if (change.rows_unlogged) {
        throw ConfigError(
            "DDL on captured table '" + table.database + "." + table.table + "' at " +
            stream.event_end().to_string() + ": " + statement +
            "; it deletes or brings in rows of the table without logging them as rows, so the "
            "target would not hold what the source does. " +
            (change.action == Action::kTruncate
                 ? "A job of source.tables follows TRUNCATE TABLE (schema.change.behavior=evolve "
                   "empties the target too); one of source.table does not. "
                 : "") +
            "To go on: make the target hold what the source holds, then start the job afresh "
            "with restore=none: it reads a new snapshot of every captured table");
      }
      if (change.effect == DdlChange::Effect::kRowsAlike &&
          !(change.defaults && options_.follow_schema_changes)) {
        continue;
      }
      if (options_.follow_schema_changes && change.altered_in_place) {
        out.add_schema_change(t, follow(t, statement, stream));
        schema_changed_ = true;
        continue;
      }
      if (change.effect == DdlChange::Effect::kNullableColumnAtEnd) {
        spdlog::info("binlog: {} on captured table '{}': the new column is not read", statement,
                     table.table);
        continue;
      }
      throw ConfigError(
          "DDL on captured table '" + table.database + "." + table.table + "' at " +
          stream.event_end().to_string() + ": " + statement +
          "; the rows after it do not have the columns the job reads, and of the changes to a "
          "captured table's schema only indexes, table options and a nullable column added at "
          "the end are read past yet. To go on: adapt the job and the target to the new schema "
          "(the same change on the target table), then start the job afresh with restore=none: "
          "it reads a new snapshot of every captured table and writes all of its rows again, and "
          "rows deleted from the source since the job stopped stay in the target unless it is "
          "emptied first");
    }
  }
}

std::shared_ptr<const BinlogSchemaChange> BinlogReader::follow(size_t t,
                                                               const std::string& statement,
                                                               BinlogStream& stream) {
  auto change = std::make_shared<BinlogSchemaChange>();
  change->before = tables_[t];
  change->after = history().altered(tables_[t], statement, statement_mode_);
  change->statement = statement;
  change->renames = column_renames(statement);
  change->position = stream.event_end();
  change->resume_before = resume();  // at the start of the statement's group
  spdlog::info("binlog: {} on captured table '{}.{}' at {}: its rows have the new columns",
               statement, tables_[t].database, tables_[t].table, stream.event_end().to_string());
  warn_of_random_defaults(*change);
  set_table(t, change->after);
  return change;
}

std::shared_ptr<const BinlogSchemaChange> BinlogReader::create(std::optional<size_t> t,
                                                               const DdlChange& ddl,
                                                               const std::string& statement,
                                                               const std::string& database,
                                                               BinlogStream& stream) {
  auto change = std::make_shared<BinlogSchemaChange>();
  change->kind = BinlogSchemaChange::Kind::kCreated;
  change->resume_before = resume();
  // LIKE a captured table: as the binlog has that one here, not as it is now.
  std::optional<size_t> like;
  if (const auto other = created_like(statement, database)) {
    for (size_t u = 0; u < tables_.size(); ++u) {
      if (tables_[u].database == other->first && tables_[u].table == other->second && !absent(u)) {
        like = u;
      }
    }
  }
  change->after =
      like ? history().table(ddl.database, ddl.table, tables_[*like].definition)
           : history().created(ddl.database, ddl.table, statement, database, statement_mode_);
  change->before = t ? tables_[*t] : CapturedTable{.database = ddl.database, .table = ddl.table};
  change->statement = statement;
  change->position = stream.event_end();
  if (!t) {
    t = tables_.size();
    tables_.push_back(change->after);
    decodings_.emplace_back();
  }
  spdlog::info("binlog: {} at {}: table '{}.{}' is captured from here on", statement,
               stream.event_end().to_string(), ddl.database, ddl.table);
  set_table(*t, change->after);
  return change;
}

std::shared_ptr<const BinlogSchemaChange> BinlogReader::drop(size_t t, DdlChange::Action action,
                                                             const std::string& statement,
                                                             BinlogStream& stream) {
  auto change = std::make_shared<BinlogSchemaChange>();
  change->resume_before = resume();
  change->before = tables_[t];
  change->statement = statement;
  change->position = stream.event_end();
  if (action == DdlChange::Action::kTruncate) {
    change->kind = BinlogSchemaChange::Kind::kTruncated;
    change->after = tables_[t];
  } else {
    change->kind = BinlogSchemaChange::Kind::kDropped;
    change->after = CapturedTable{.database = tables_[t].database, .table = tables_[t].table};
    set_table(t, change->after);
  }
  spdlog::info("binlog: {} on captured table '{}.{}' at {}", statement, tables_[t].database,
               tables_[t].table, stream.event_end().to_string());
  return change;
}

std::vector<BinlogChange> BinlogReader::rename(size_t t, const DdlChange& to,
                                               std::optional<size_t> as,
                                               const std::string& statement, BinlogStream& stream) {
  // ALTER TABLE … RENAME TO may change the columns too.
  const CapturedTable altered = alter_clauses(statement, "t").empty()
                                    ? tables_[t]
                                    : history().altered(tables_[t], statement, statement_mode_);
  const std::string name = to.database + "." + to.table;
  auto gone = std::make_shared<BinlogSchemaChange>();
  gone->kind = BinlogSchemaChange::Kind::kDropped;
  gone->resume_before = resume();
  gone->before = tables_[t];
  gone->after = CapturedTable{.database = tables_[t].database, .table = tables_[t].table};
  gone->statement = statement;
  gone->position = stream.event_end();
  std::vector<BinlogChange> out;
  if (!as) {
    spdlog::info(
        "binlog: {} at {}: table '{}.{}' is renamed '{}', which the job does not "
        "capture: it is gone from the stream",
        statement, stream.event_end().to_string(), tables_[t].database, tables_[t].table, name);
    set_table(t, gone->after);
    out.push_back({t, std::move(gone)});
    return out;
  }
  if (*as < tables_.size() && !absent(*as)) {
    throw ConfigError("DDL at " + stream.event_end().to_string() + ": " + statement + "; table '" +
                      name + "' is captured already");
  }
  gone->renamed = name;
  auto made = std::make_shared<BinlogSchemaChange>(*gone);
  made->kind = BinlogSchemaChange::Kind::kCreated;
  made->after = history().table(to.database, to.table, altered.definition);
  made->renamed = tables_[t].database + "." + tables_[t].table;
  made->renames = column_renames(statement);
  spdlog::info("binlog: {} at {}: table '{}' is captured as '{}' from here on", statement,
               stream.event_end().to_string(), made->renamed, name);
  set_table(t, gone->after);
  if (*as == tables_.size()) {
    tables_.push_back(made->after);
    decodings_.emplace_back();
  }
  set_table(*as, made->after);
  out.push_back({t, std::move(gone)});
  out.push_back({*as, std::move(made)});
  return out;
}

void BinlogReader::set_table(size_t t, CapturedTable table) {
  std::vector<BinlogDecoding> columns;
  if (!table.columns.empty()) {
    Charsets charsets(history().connection());
    for (const TableColumn& column : table.columns) {
      columns.push_back(table.read_past.contains(column.name) ? BinlogDecoding{.read_past = true}
                                                              : decoding_of(column, charsets));
    }
  }
  decodings_[t] = std::move(columns);
  tables_[t] = std::move(table);
  if (schemas_.size() <= t) schemas_.resize(t + 1);
  schemas_[t] = std::make_shared<const Schema>(tables_[t].schema);
  // Its next TABLE_MAP is checked against its name and columns again.
  for (BinlogStream* stream : {main_.get(), side_.get()}) {
    if (stream == nullptr) continue;
    for (auto& [id, mapped] : stream->mapped) {
      if (mapped.table == t) mapped.body.clear();
    }
  }
}

void BinlogReader::complete_xa(const std::string& statement, const BinlogPosition& end) {
  if (lower(statement).rfind("xa commit", 0) != 0) {  // XA ROLLBACK: nothing counts
    end_group(end);
    return;
  }
  std::optional<PreparedXa> prepare;
  if (const auto held = prepared_.find(group_->xid); held != prepared_.end()) {
    prepare = held->second;
  } else {
    // Prepared before this reader started (or its resume did not say).
    prepare = look_back_for(group_->xid);
    if (!prepare) {
      throw Error("XA transaction " + group_->xid + " committed at " + group_->start.to_string() +
                  " was prepared before " + start_.to_string() +
                  ", in a part of the binlog the server no longer has: its changes cannot be "
                  "read");
    }
  }
  if (!prepare->captured) {
    end_group(end);
    return;
  }
  // Its changes come out now, read from where it was prepared.
  side_ = std::make_unique<BinlogStream>(url_, side_server_id(), prepare->start, options_, true);
  side_end_ = end;
}

std::optional<PreparedXa> BinlogReader::look_back_for(const std::string& xid) {
  // The files before start_ are read once, newest first, as far back as a
  // commit asks: every XA PREPARE in them that no XA COMMIT or ROLLBACK
  // before start_ ended is kept, for the commits after start_ to find.
  if (!looking_back_) {
    MySqlConnection sql(url_, MySqlSession{.canceller = options_.canceller});
    std::vector<std::string> files;
    for (const auto& row : sql.query("SHOW BINARY LOGS")) files.push_back(row.at(0).value_or(""));
    const auto last = std::find(files.begin(), files.end(), start_.file);
    looking_back_.emplace();
    if (last != files.end()) looking_back_->unread.assign(files.begin(), last + 1);
  }
  LookBack& back = *looking_back_;
  while (!back.found.count(xid) && !back.ended.count(xid) && !back.unread.empty()) {
    const std::string file = back.unread.back();
    back.unread.pop_back();
    spdlog::info("binlog: XA transaction {} was prepared before {}: reading {} for its XA PREPARE",
                 xid, start_.to_string(), file);
    BinlogStream stream(url_, side_server_id(), {file, 4}, options_, true);
    std::map<std::string, PreparedXa> prepared;  // in this file, not ended in it
    std::set<std::string> ended;                 // prepares this file ended
    std::optional<PreparedXa> reading;
    while (const BinlogEvent* event = stream.next()) {
      if (stream.event_start().file != file || stream.event_start() >= start_) break;
      if (event->type == GTID_EVENT) {
        reading.reset();
        const BinlogGtid gtid = gtid_of(*event);
        if (gtid.flags & FL_PREPARED_XA) reading = PreparedXa{gtid.xid, stream.event_start()};
        if (gtid.flags & FL_COMPLETED_XA) {
          prepared.erase(gtid.xid);
          ended.insert(gtid.xid);
        }
      } else if (event->type == TABLE_MAP_EVENT && reading) {
        const BinlogTableMap map = table_map_of(*event);
        for (const CapturedTable& table : tables_) {
          if (table.database == map.database && table.table == map.table) {
            reading->captured = true;
          }
        }
      } else if (event->type == XA_PREPARE_LOG_EVENT && reading) {
        PreparedXa xa = *std::exchange(reading, std::nullopt);
        ended.erase(xa.xid);
        prepared[xa.xid] = std::move(xa);
      }
    }
    // What a newer file decided stands: its prepare is the later one, its
    // end ended every earlier prepare.
    for (auto& [id, xa] : prepared) {
      if (!back.ended.count(id)) back.found.try_emplace(id, std::move(xa));
    }
    for (const std::string& id : ended) {
      if (!back.found.count(id)) back.ended.insert(id);
    }
  }
  const auto found = back.found.find(xid);
  if (found == back.found.end()) return std::nullopt;
  return found->second;
}

void BinlogReader::read_rows(BinlogStream& stream, const BinlogEvent& event, BinlogChanges& out) {
  const auto mapped = stream.mapped.find(table_id_of(event));
  if (mapped == stream.mapped.end() || !group_) return;  // another table's rows: not decoded
  if (group_->prepare) return;                           // read when it commits
  const BinlogRows rows = rows_of(event, stream.inflated());
  const size_t t = mapped->second.table;
  const CapturedTable& table = tables_[t];
  const std::vector<BinlogColumnFormat>& formats = mapped->second.columns;
  const std::vector<BinlogDecoding>& decodings = decodings_[t];
  // Columns added at the end since the job started are read past, where
  // the reader does not follow schema changes. Where it does, the rows hold
  // the columns it knows, and after them only those MariaDB hides: the
  // hashes of long unique keys (USING HASH), a BIGINT UNSIGNED each.
  const auto only_hashes_after = [&] {
    return std::all_of(formats.begin() + static_cast<ptrdiff_t>(decodings.size()), formats.end(),
                       [](const BinlogColumnFormat& f) { return f.type == MYSQL_TYPE_LONGLONG; });
  };
  if (formats.size() < decodings.size() || rows.columns != formats.size() ||
      (options_.follow_schema_changes && !only_hashes_after())) {
    throw ConfigError("table '" + table.table + "' has " + std::to_string(formats.size()) +
                      " columns in the binlog at " + stream.event_end().to_string() + ", " +
                      std::to_string(decodings.size()) +
                      " as the job reads it: its schema changed");
  }
  // Each row image: a NULL bit per column it holds, then the values of the
  // others. With binlog_row_image=FULL every image holds every column.
  const size_t columns = formats.size();
  const auto every_column = [&](const unsigned char* bitmap) {
    for (size_t c = 0; c < columns; ++c) {
      if ((bitmap[c / 8] & (1 << (c % 8))) == 0) return false;
    }
    return true;
  };
  if (!every_column(rows.present) || !every_column(rows.present_after)) {
    throw ConfigError("the binlog holds partial row images of table '" + table.table +
                      "': set binlog_row_image=FULL on the server");
  }
  RowImageReader reader(reinterpret_cast<const uint8_t*>(rows.images.data()), rows.images.size(),
                        table.table);
  const std::optional<int64_t> position = stream.packed_start();
  Batch& batch = out.rows_of(t, schemas_[t]);
  if (batch.schema().size() != decodings.size()) {
    throw std::logic_error("binlog: table '" + table.table + "' has " +
                           std::to_string(decodings.size()) + " columns, its schema " +
                           std::to_string(batch.schema().size()));
  }
  static const BinlogDecoding kReadPast;
  bool before = true;  // an update's images come in pairs: before, after
  while (!reader.at_end()) {
    RowKind kind = RowKind::kInsert;
    if (rows.kind == BinlogRows::kDelete) {
      kind = RowKind::kDelete;
    } else if (rows.kind == BinlogRows::kUpdate) {
      kind = before ? RowKind::kUpdateBefore : RowKind::kUpdateAfter;
      before = !before;
    }
    const uint8_t* nulls = reader.take((columns + 7) / 8);
    const uint32_t at = out.next_row(t);
    batch.set_kind(at, kind);
    for (size_t c = 0; c < columns; ++c) {
      const bool null = (nulls[c / 8] & (1 << (c % 8))) != 0;
      if (c >= decodings.size()) {  // read past
        if (!null) reader.value(formats[c], kReadPast);
        continue;
      }
      ColumnVector& column = batch.column(c);
      column.set_null(at, null || decodings[c].read_past);
      if (null) continue;
      if (decodings[c].read_past) {
        reader.value(formats[c], decodings[c]);
        continue;
      }
      try {
        reader.read_into(column, at, formats[c], decodings[c]);
      } catch (const DataError& e) {
        throw DataError("binlog: column '" + batch.schema().column(c).name + "' of table '" +
                        table.table + "': " + e.what());
      }
    }
    // Changes that came out before this reader started are read past: the
    // next row takes the place.
    if (++group_->changes <= group_->skip) continue;
    if (position) batch.set_position(at, *position | (rows.unchecked ? kUncheckedRow : 0));
    out.add_row(t, position);
    last_change_time_ = last_event_time_;
  }
}

void BinlogChanges::add_schema_change(size_t table,
                                      std::shared_ptr<const BinlogSchemaChange> change) {
  changes_.push_back({.table = table, .schema_change = std::move(change)});
}

Batch& BinlogChanges::rows_of(size_t table, const std::shared_ptr<const Schema>& schema) {
  if (table < open_.size() && open_[table] < used_ && batches_[open_[table]].schema == schema) {
    return *batches_[open_[table]].rows;
  }
  if (used_ == batches_.size()) batches_.push_back({schema, std::make_unique<Batch>(*schema)});
  Rows& rows = batches_[used_];
  if (rows.schema != schema) {
    rows.rows->set_table(*schema, 0);
    rows.schema = schema;
  }
  rows.filled = 0;
  if (open_.size() <= table) open_.resize(table + 1, UINT32_MAX);
  open_[table] = used_++;
  return *rows.rows;
}

uint32_t BinlogChanges::next_row(size_t table) {
  Rows& rows = batches_[open_[table]];
  if (rows.filled == rows.rows->size()) {
    rows.rows->add_rows(std::clamp<uint32_t>(rows.filled, 1, 64));
  }
  return rows.filled;
}

void BinlogChanges::add_row(size_t table, std::optional<int64_t> position) {
  const uint32_t batch = open_[table];
  changes_.push_back({.table = table,
                      .batch = batch,
                      .row = batches_[batch].filled++,
                      .position = std::move(position)});
}

Batch* BinlogChanges::whole_batch(const BinlogChange& first, size_t n) {
  Rows& rows = batches_[first.batch];
  if (first.row != 0 || n != rows.filled) return nullptr;
  rows.rows->truncate(rows.filled);  // the blank rows of its last block
  return rows.rows.get();
}

void BinlogChanges::clear() {
  changes_.clear();
  for (uint32_t b = 0; b < used_; ++b) batches_[b].rows->clear();
  used_ = 0;
  std::fill(open_.begin(), open_.end(), UINT32_MAX);
}

void BinlogReader::end_group(const BinlogPosition& end) {
  read_ = end;
  if (!group_) return;
  if (group_->completion) prepared_.erase(group_->xid);
  spare_file_ = std::move(group_->start.file);
  group_.reset();
}

}  // namespace sluice
