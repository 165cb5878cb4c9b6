#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/connectors/mysql_connection.hpp"
#include "sluice/engine/data/row.hpp"
#include "sluice/engine/data/schema.hpp"

struct st_mariadb_rpl;
struct st_mariadb_rpl_event;

/// Reading a MySQL/MariaDB server's binlog as a replica does: the row
/// changes of chosen tables, one committed transaction at a time. The
/// binlog stage of the change-data-capture source.
namespace sluice {

struct BinlogDecoding;  // what one column's values become

/// How a column's values are written in the binlog's row images: its
/// binlog type and metadata, as a TABLE_MAP event gives them.
struct BinlogColumnFormat {
  uint8_t type = 0;
  uint16_t meta = 0;
};

/// A place in the binlog: a file and a byte offset in it.
struct BinlogPosition {
  std::string file;
  uint64_t offset = 0;

  /// "mariadb-bin.000002:831".
  std::string to_string() const;
  friend auto operator<=>(const BinlogPosition&, const BinlogPosition&) = default;
};

/// Where the server's binlog ends now (SHOW MASTER STATUS). Throws ConfigError
/// when the binlog is off, not in ROW format, or the user may not see it.
BinlogPosition current_binlog_position(MySqlConnection& connection);

/// A table whose changes are read: its name and its columns as Sluice types
/// (with the server's spelling of each, which says how to read its values).
struct CapturedTable {
  std::string database;
  std::string table;
  Schema schema;
  std::vector<std::string> column_types;  ///< "int unsigned", "decimal(10,2)", …
};

/// `table` of the connection's database, read from information_schema.
/// Throws ConfigError for a missing table or a column type the binlog
/// reader does not take (ENUM, SET, JSON, BIT, TIME, spatial), naming it.
CapturedTable capture_table(MySqlConnection& connection, const std::string& table);

/// The changes a committed transaction made to captured tables, in order,
/// and the binlog position right after it.
struct BinlogTransaction {
  struct Change {
    size_t table = 0;  ///< index into the reader's tables
    Row row;           ///< +I, -U then +U, or -D, with every column
  };
  std::vector<Change> changes;
  BinlogPosition end;
};

/// Reads the binlog from a transaction's boundary, as replica `server_id`
/// (unique among the server's replicas). Only committed transactions come
/// out: a rolled-back one is never in the binlog, and a prepared XA
/// transaction is held until its XA COMMIT (dropped at XA ROLLBACK). Writes
/// to other tables are skipped without decoding their rows. DDL on a
/// captured table fails, with its statement: schema changes are not
/// followed; but a nullable column added at the end is read past, the
/// table's changes keeping the columns it had.
class BinlogReader {
 public:
  /// `heartbeat`: how long next() waits for an event before it returns.
  BinlogReader(const MySqlUrl& url, uint32_t server_id, BinlogPosition start,
               std::vector<CapturedTable> tables,
               std::chrono::milliseconds heartbeat = std::chrono::milliseconds(100));
  ~BinlogReader();
  BinlogReader(const BinlogReader&) = delete;
  BinlogReader& operator=(const BinlogReader&) = delete;

  /// The next committed transaction that changed a captured table; nullopt
  /// when the server sent none within the heartbeat.
  std::optional<BinlogTransaction> next();

  /// Where a new reader would start to miss nothing that has not come out of
  /// next(): the end of the last transaction read, or the start of the
  /// oldest prepared XA transaction still held.
  BinlogPosition resume_position() const;

  const std::vector<CapturedTable>& tables() const { return tables_; }

 private:
  // A transaction (event group) being read.
  struct Group {
    BinlogPosition start;
    std::vector<BinlogTransaction::Change> changes;
    bool prepared_xa = false;   // ends with XA PREPARE
    bool completed_xa = false;  // XA COMMIT or XA ROLLBACK of a held one
    bool ddl = false;
    std::string xid;
  };
  void handle(st_mariadb_rpl_event* event, std::optional<BinlogTransaction>& out);
  void read_rows(st_mariadb_rpl_event* event);
  void end_group(st_mariadb_rpl_event* event, std::optional<BinlogTransaction>& out);
  [[noreturn]] void fail(const std::string& doing) const;

  std::vector<CapturedTable> tables_;
  std::vector<std::vector<BinlogDecoding>> decodings_;  // per table, per column
  std::unique_ptr<MySqlConnection> connection_;
  st_mariadb_rpl* rpl_ = nullptr;
  bool checksums_ = true;       // whether events end in a CRC32
  std::string file_;            // the binlog file being read
  BinlogPosition read_;         // end of the last whole group
  std::optional<Group> group_;  // between its GTID and its end
  // A captured table as a TABLE_MAP event announced it, by the event's id.
  struct MappedTable {
    size_t table = 0;
    std::vector<BinlogColumnFormat> columns;
  };
  std::map<uint64_t, MappedTable> mapped_;
  std::map<std::string, Group> prepared_;  // held XA transactions, by XID
};

}  // namespace sluice
