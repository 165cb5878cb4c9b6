#include "sluice/connectors/mysql/cdc/binlog_events.hpp"

#include <mysql.h>
// After mysql.h, which it needs.
#include <mariadb_rpl.h>

#include <optional>
#include <utility>

#include "sluice/connectors/mysql/cdc/binlog_rows.hpp"
#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// An event's header: timestamp (4), type (1), server id (4), the event's
// length (4), the next event's position (4), flags (2).
constexpr size_t kHeader = 19;
constexpr size_t kChecksum = 4;
constexpr size_t kTableIdBytes = 6;  // a table id in TABLE_MAP and rows events

// Reads an event's fields in order; a field past the end throws. Inlined:
// every event goes through a few of these.
class Fields {
 public:
  Fields(std::string_view bytes, const char* event) : bytes_(bytes), event_(event) {}

  [[gnu::always_inline]] std::string_view take(size_t n) {
    if (n > bytes_.size()) [[unlikely]]
      malformed("shorter than its fields");
    const std::string_view taken(bytes_.data(), n);
    bytes_.remove_prefix(n);
    return taken;
  }
  [[gnu::always_inline]] const uint8_t* bytes(size_t n) {
    return reinterpret_cast<const uint8_t*>(take(n).data());
  }
  [[gnu::always_inline]] uint64_t little_endian(size_t n) {
    const uint8_t* b = bytes(n);
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) value |= uint64_t{b[i]} << (8 * i);
    return value;
  }
  // A length-encoded integer: one byte below 251, else 252, 253 or 254 and
  // the value in 2, 3 or 8 bytes.
  uint64_t packed() {
    const uint8_t first = *bytes(1);
    switch (first) {
      case 252:
        return little_endian(2);
      case 253:
        return little_endian(3);
      case 254:
        return little_endian(8);
      case 251:  // NULL
      case 255:
        malformed("holds no length where one belongs");
      default:
        return first;
    }
  }
  void skip(size_t n) { take(n); }
  bool empty() const { return bytes_.empty(); }
  std::string_view rest() { return std::exchange(bytes_, {}); }
  [[noreturn, gnu::cold]] void malformed(const char* how) const {
    throw Error(std::string("a binlog ") + event_ + " event " + how);
  }

 private:
  std::string_view bytes_;
  const char* event_;
};

// A compressed part of an event (`what`) inflated into `buffer`, which it
// then views.
std::string_view inflate_into(std::string& buffer, std::string_view compressed, const char* what) {
  std::optional<std::string> out = inflated(compressed);
  if (!out) {
    throw Error(std::string("a compressed binlog ") + what +
                " is not zlib data as MariaDB writes it");
  }
  buffer = std::move(*out);
  return buffer;
}

}  // namespace

BinlogEvent parse_binlog_event(std::string_view bytes, bool checksums) {
  Fields header(bytes, "event's header");
  BinlogEvent event;
  event.timestamp = static_cast<uint32_t>(header.little_endian(4));
  event.type = *header.bytes(1);
  header.skip(4);  // server id
  const uint64_t length = header.little_endian(4);
  event.next_position = static_cast<uint32_t>(header.little_endian(4));
  const size_t trailer = checksums ? kChecksum : 0;
  if (length > bytes.size() || length < kHeader + trailer) {
    throw Error("a binlog event of type " + std::to_string(event.type) + " is " +
                std::to_string(bytes.size()) + " bytes where its header says " +
                std::to_string(length));
  }
  event.body = std::string_view(bytes.data() + kHeader, length - kHeader - trailer);
  return event;
}

bool describes_checksums(std::string_view bytes) {
  // After the header: the binlog version (2), the server's (50), a time
  // (4), the header's length (1) and at least one post-header length.
  constexpr size_t kLeast = kHeader + 2 + 50 + 4 + 1 + 1 + 1 + kChecksum;
  if (bytes.size() < kLeast) throw Error("a binlog FORMAT_DESCRIPTION event is too short");
  return bytes[bytes.size() - kChecksum - 1] == 1;  // BINLOG_CHECKSUM_ALG_CRC32
}

BinlogPosition rotation_of(const BinlogEvent& event) {
  Fields fields(event.body, "ROTATE");
  const uint64_t position = fields.little_endian(8);
  return {std::string(fields.rest()), position};
}

BinlogGtid gtid_of(const BinlogEvent& event) {
  Fields fields(event.body, "GTID");
  fields.skip(8 + 4);  // sequence number, domain
  BinlogGtid gtid{.flags = *fields.bytes(1)};
  if ((gtid.flags & (FL_PREPARED_XA | FL_COMPLETED_XA)) == 0) return gtid;
  if (gtid.flags & FL_GROUP_COMMIT_ID) fields.skip(8);
  const uint64_t format = fields.little_endian(4);
  const size_t gtrid = *fields.bytes(1), bqual = *fields.bytes(1);
  gtid.xid = std::to_string(format) + ":" + std::to_string(gtrid) + ":" + std::to_string(bqual) +
             ":" + std::string(fields.take(gtrid + bqual));
  return gtid;
}

// A QUERY event's status variables, each a code and its value
// (sql/log_event.h): the session's sql_mode and time_zone, and the
// microseconds of the moment it ran (MariaDB's Q_HRNOW). Read until one
// whose size is not known here.
void read_status(std::string_view status, BinlogQuery& query) {
  Fields fields(status, "QUERY");
  while (!fields.empty()) {
    switch (*fields.bytes(1)) {
      case 1:  // Q_SQL_MODE_CODE
        query.sql_mode = fields.little_endian(8);
        break;
      case 128:  // Q_HRNOW
        query.microseconds = static_cast<uint32_t>(fields.little_endian(3));
        break;
      case 0:   // Q_FLAGS2_CODE
      case 10:  // Q_MASTER_DATA_WRITTEN_CODE
      case 3:   // Q_AUTO_INCREMENT
        fields.skip(4);
        break;
      case 4:  // Q_CHARSET_CODE
        fields.skip(6);
        break;
      case 7:  // Q_LC_TIME_NAMES_CODE
      case 8:  // Q_CHARSET_DATABASE_CODE
        fields.skip(2);
        break;
      case 9:    // Q_TABLE_MAP_FOR_UPDATE_CODE
      case 129:  // Q_XID
        fields.skip(8);
        break;
      case 2:  // Q_CATALOG_CODE, ended by a zero
        fields.skip(*fields.bytes(1) + 1);
        break;
      case 5:  // Q_TIME_ZONE_CODE
        query.time_zone = fields.take(*fields.bytes(1));
        break;
      case 6:  // Q_CATALOG_NZ_CODE
        fields.skip(*fields.bytes(1));
        break;
      case 11:  // Q_INVOKER: user, host
        fields.skip(*fields.bytes(1));
        fields.skip(*fields.bytes(1));
        break;
      default:
        return;
    }
  }
}

BinlogQuery query_of(const BinlogEvent& event, std::string& buffer) {
  Fields fields(event.body, "QUERY");
  fields.skip(4 + 4);  // thread id, execution time
  const size_t database = *fields.bytes(1);
  fields.skip(2);  // error code
  const size_t status = fields.little_endian(2);
  BinlogQuery query;
  read_status(fields.take(status), query);
  query.database = fields.take(database);
  fields.skip(1);  // the database's terminating zero
  query.statement = fields.rest();
  if (event.type == QUERY_COMPRESSED_EVENT) {
    query.statement = inflate_into(buffer, query.statement, "statement");
  }
  return query;
}

BinlogTableMap table_map_of(const BinlogEvent& event) {
  Fields fields(event.body, "TABLE_MAP");
  BinlogTableMap map{.table_id = fields.little_endian(kTableIdBytes)};
  fields.skip(2);  // flags
  map.database = fields.take(*fields.bytes(1));
  fields.skip(1);
  map.table = fields.take(*fields.bytes(1));
  fields.skip(1);
  map.types = fields.take(fields.packed());
  map.metadata = fields.take(fields.packed());
  return map;
}

uint64_t table_id_of(const BinlogEvent& event) {
  return Fields(event.body, "TABLE_MAP or rows").little_endian(kTableIdBytes);
}

std::string_view map_body(const BinlogEvent& event) {
  return event.body.substr(std::min(event.body.size(), kTableIdBytes));
}

bool is_rows_event(uint8_t type) {
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

// A rows event's flag: written with foreign_key_checks=0.
constexpr uint64_t kNoForeignKeyChecks = 1 << 1;

BinlogRows rows_of(const BinlogEvent& event, std::string& buffer) {
  // Each version's write, update and delete events are numbered in a row.
  uint8_t first = WRITE_ROWS_EVENT_V1;
  for (const uint8_t version :
       {WRITE_ROWS_EVENT, WRITE_ROWS_COMPRESSED_EVENT_V1, WRITE_ROWS_COMPRESSED_EVENT}) {
    if (event.type >= version && event.type < version + 3) first = version;
  }
  const bool compressed = first >= WRITE_ROWS_COMPRESSED_EVENT_V1;
  const bool version2 = first == WRITE_ROWS_EVENT || first == WRITE_ROWS_COMPRESSED_EVENT;
  Fields fields(event.body, "rows");
  BinlogRows rows{.kind = static_cast<BinlogRows::Kind>(event.type - first),
                  .table_id = fields.little_endian(kTableIdBytes)};
  rows.unchecked = (fields.little_endian(2) & kNoForeignKeyChecks) != 0;
  if (version2) fields.skip(fields.little_endian(2) - 2);  // extra data, its length counted
  rows.columns = fields.packed();
  const size_t bitmap = (rows.columns + 7) / 8;
  rows.present = rows.present_after = fields.bytes(bitmap);
  if (rows.kind == BinlogRows::kUpdate) rows.present_after = fields.bytes(bitmap);
  rows.images = fields.rest();
  if (compressed) rows.images = inflate_into(buffer, rows.images, "rows event");
  return rows;
}

}  // namespace sluice
