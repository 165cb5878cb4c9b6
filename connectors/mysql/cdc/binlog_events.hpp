#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/connectors/mysql/binlog_position.hpp"

/// The binlog's events as a MariaDB server sends them to a replica
/// (sql/log_event.h, log_event.cc), read from the bytes of each: the
/// fields the binlog reader looks at, bounds-checked. Views point into the
/// event, or into the buffer a compressed event was inflated into.
namespace sluice {

/// An event: its header, then its own fields (`body`), and a CRC32 at the
/// end when the binlog has checksums.
struct BinlogEvent {
  uint8_t type = 0;            ///< Log_event_type, as mariadb_rpl.h names them
  uint32_t timestamp = 0;      ///< 0 in events the server makes up
  uint32_t next_position = 0;  ///< where the next event begins; 0 in made-up ones
  std::string_view body;       ///< after the header, before the checksum
};

/// The event in `bytes` (an event as the server sends it, after the
/// packet's first byte); `checksums`: whether it ends in a CRC32. Throws
/// Error if it is shorter than its header says.
BinlogEvent parse_binlog_event(std::string_view bytes, bool checksums);

/// Whether the events after FORMAT_DESCRIPTION event `bytes` (as given to
/// parse_binlog_event) end in a CRC32: its checksum algorithm, in the
/// fifth byte from its end, is 1.
bool describes_checksums(std::string_view bytes);

/// ROTATE: where the binlog goes on.
BinlogPosition rotation_of(const BinlogEvent& event);

/// MariaDB's GTID event, which begins a group: its flags (FL_DDL, …) and,
/// of an XA transaction's, the XID as "formatID:gtrid length:bqual
/// length:data".
struct BinlogGtid {
  uint8_t flags = 0;
  std::string xid;
};
BinlogGtid gtid_of(const BinlogEvent& event);

/// QUERY and QUERY_COMPRESSED: the statement and the session's database.
/// A compressed statement is inflated into `buffer`.
struct BinlogQuery {
  std::string_view database;
  std::string_view statement;
  /// The sql_mode of the session that ran it, as the server's bits
  /// (`SET sql_mode = N` takes them), where the event says.
  std::optional<uint64_t> sql_mode;
  /// The microseconds of the second (the event's timestamp) it ran at, where
  /// the event says.
  uint32_t microseconds = 0;
  /// The session's time_zone ("+05:30", "Europe/Berlin", "SYSTEM"), where
  /// the statement used it: a DATETIME DEFAULT CURRENT_TIMESTAMP did.
  std::string_view time_zone;
};
BinlogQuery query_of(const BinlogEvent& event, std::string& buffer);

/// TABLE_MAP: the table a table id stands for in the rows events after
/// it, and its columns' binlog types and metadata.
struct BinlogTableMap {
  uint64_t table_id = 0;
  std::string_view database, table;
  std::string_view types, metadata;
};
BinlogTableMap table_map_of(const BinlogEvent& event);
/// The table id of a TABLE_MAP or rows event, read alone.
uint64_t table_id_of(const BinlogEvent& event);
/// Of a TABLE_MAP event, the bytes after the table id: the same while the
/// id maps the same table with the same columns.
std::string_view map_body(const BinlogEvent& event);

/// WRITE_ROWS, UPDATE_ROWS and DELETE_ROWS, in any version, compressed or
/// not: row images of table `table_id`, an update's in pairs (before,
/// after). A bitmap tells the columns the images hold; an update's second
/// one those of its after images. Compressed images are inflated into
/// `buffer`.
struct BinlogRows {
  enum Kind { kWrite, kUpdate, kDelete };
  Kind kind = kWrite;
  uint64_t table_id = 0;
  /// Written with foreign_key_checks=0 (the flag NO_FOREIGN_KEY_CHECKS_F).
  bool unchecked = false;
  size_t columns = 0;
  const uint8_t* present = nullptr;
  const uint8_t* present_after = nullptr;  ///< of an update; else `present`
  std::string_view images;
};
bool is_rows_event(uint8_t type);
BinlogRows rows_of(const BinlogEvent& event, std::string& buffer);

}  // namespace sluice
