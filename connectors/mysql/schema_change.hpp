#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/data/schema.hpp"

namespace sluice {

/// What the MySQL source knows of a captured table's schema change, for a
/// MySQL sink to make the same change to its target (SchemaChange::detail).
struct MySqlSchemaChange final : SchemaChangeDetail {
  /// What happened to the table.
  enum class Kind {
    kColumns,    ///< its columns changed (ALTER TABLE), or a restore says what they are
    kCreated,    ///< CREATE TABLE; restored: a table the checkpoint had that is new to the job
    kDropped,    ///< DROP TABLE: `after` is empty
    kTruncated,  ///< TRUNCATE TABLE: its rows are gone; the columns stay
    /// The columns a snapshot that starts afresh reads: whatever a target
    /// has (an earlier run's, say), it is brought to them.
    kFit,
    /// The source reads the table again whole from here on (a restore in
    /// its snapshot found it keyed anew): its target, whatever the
    /// behavior, loses the table's rows, which come again.
    kReread,
  };
  Kind kind = Kind::kColumns;
  std::vector<TableColumn> before;  ///< the columns it had; empty for a restore
  std::vector<TableColumn> after;   ///< the columns it has
  /// The names of its primary key's columns now; empty: it has none.
  std::vector<std::string> key;
  /// Columns renamed (CHANGE old new, RENAME COLUMN old TO new).
  std::vector<std::pair<std::string, std::string>> renames;
  /// Of a RENAME TABLE, the table's other name ("db.table"): a kDropped
  /// of the old name names the new one, the kCreated of the new name that
  /// follows it the old one (`before` the old table's columns).
  std::string renamed;
  /// The table's default collation after it.
  std::string collation;
  /// Where it is in the binlog ("mariadb-bin.000002:831"): a sink that
  /// made a change at a later place has this one too. Empty: unknown.
  std::string position;
  /// Of a statement that changes several tables, this change's place among
  /// its changes (RENAME TABLE a TO b, b TO a changes table a twice).
  uint32_t part = 0;
  /// When the source ran it, in microseconds since the epoch; 0: unknown.
  /// The target's change runs as of then, as a replica's does: a column
  /// added with DEFAULT CURRENT_TIMESTAMP takes the same values.
  int64_t ran_at = 0;
  /// The time zone it ran in, as an offset from UTC then ("+05:30"); empty:
  /// it used none. A DATETIME DEFAULT CURRENT_TIMESTAMP added takes the
  /// source's local time.
  std::string time_zone;
  /// The sql_mode it ran under, of it the modes that decide what it does to
  /// values (value_modes()): "" where none, so that what the source cut
  /// with a warning the target cuts too. None: unknown.
  std::optional<std::string> sql_mode;
};

}  // namespace sluice
