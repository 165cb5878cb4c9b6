#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/schema.hpp"

namespace sluice {

/// What a server says of itself that decides whether a table's changes
/// can go to it as row events (SinkConnection::row_event_target()).
struct RowEventTarget {
  /// Why the server takes no row events from this session (not MariaDB, no
  /// BINLOG REPLAY privilege, slave_exec_mode IDEMPOTENT), or why this
  /// table takes none (a trigger, a CHECK constraint, a generated column,
  /// which a row event would pass by); empty if it takes them.
  std::string obstacle;
  uint32_t server_id = 0;  ///< @@server_id, the events' origin
  std::string database;    ///< the table's database
};

/// A sink's changes of one table as the row events a MariaDB replica
/// applies (Write_rows, Update_rows, Delete_rows after a Table_map), sent
/// in a `BINLOG '…'` statement: the server finds each row by its primary
/// key and writes the image, with no SQL to parse and no insert attempt
/// before an update (an upsert's ON DUPLICATE KEY UPDATE makes one).
///
/// An update's and a delete's before image is the key alone; an update's
/// after image and an insert's image are the whole row. The server applies
/// them strictly: a Write_rows of a key the table holds fails (1062), an
/// Update_rows or Delete_rows of one it lacks fails (1032), and the whole
/// statement is undone. A writer then writes the same changes as
/// statements, which converge whatever the table holds; a statement that
/// succeeds has left the table as those statements would.
///
/// The events carry the table's own binary formats, which the encoder
/// writes from the table's column types. It takes a value only where that
/// leaves the table as a statement would, and refuses the rest (add()
/// returns false): a value too long or out of range, a fraction finer than
/// the column keeps, text that is not UTF-8. Those, too, go as statements,
/// which round, convert or refuse them as the server does.
class RowImageCursor;  // where append_image() writes

class RowEventEncoder {
 public:
  enum class Kind : uint8_t { kWrite = 23, kUpdate = 24, kDelete = 25 };

  /// An encoder for `table` (its info), the changes of `input` with the
  /// key columns `key`, or nullopt and `why_not` saying why the table
  /// cannot take them as row events: the target's obstacle, a key that is
  /// not the primary key, another unique key, a column the input does not
  /// fill or of a type the encoder does not write.
  static std::optional<RowEventEncoder> fit(const RowEventTarget& target,
                                            const std::string& table_name, const TableInfo& table,
                                            const Schema& input, const std::vector<size_t>& key,
                                            std::string& why_not);

  /// Adds the change `row` of `batch` as `kind`: the events keep the
  /// order of the changes added. False for a row the encoder does not take
  /// (see the class): what was added since the last statement() is then
  /// for clear().
  bool add(Kind kind, const Batch& batch, uint32_t row);
  /// Writes an ENUM's '' that is none of its members as index 0: the
  /// invalid value a session not in strict mode stores, which a copy of a
  /// MySQL table's rows holds (MySqlSinkOptions::input_is_table_rows).
  /// Otherwise such a '' goes as a statement, which strict mode refuses.
  void keep_invalid_enum_values();
  /// Forgets what was added since the last statement().
  void clear();
  /// The `BINLOG '…'` statement of the changes added, which it forgets.
  std::string statement();

  /// The Format_description event (binlog version 4, no checksums) that
  /// starts every statement: how the server reads the events after it.
  static std::string format_description(uint32_t server_id);

 private:
  // How one column's values are written.
  struct ColumnCode {
    enum How : uint8_t {
      kInteger,
      kDecimal,
      kDouble,
      kFloat,
      kYear,
      kTime,
      kText,
      kBinary,
      kDate,
      kDatetime,
      kTimestamp,
      kEnum,
      kSet
    };
    size_t input = 0;  // the input column
    How how = kInteger;
    uint8_t type = 0;      // the binlog type, MYSQL_TYPE_*
    std::string metadata;  // its Table_map metadata
    bool nullable = true;
    bool is_unsigned = false;
    int bytes = 0;                // kInteger: the width; kText/kBinary: the length's bytes
    int precision = 0;            // kDecimal
    int scale = 0;                // kDecimal; kDatetime/kTimestamp: the fraction's digits
    uint64_t max_bytes = 0;       // kText/kBinary
    uint64_t max_chars = 0;       // kText: the characters a VARCHAR(n)/CHAR(n) holds; 0 = no limit
    bool four_byte_chars = true;  // kText: utf8mb4, not utf8mb3
    std::vector<std::string> members;  // kEnum/kSet: in order, index 1 or bit 0 first
    bool invalid_enum = false;         // kEnum: '' that is no member as index 0
  };

  RowEventEncoder() = default;
  // Appends `row`'s values of `columns` (indexes into columns_) as a row
  // image; false if one is not taken.
  bool append_image(const Batch& batch, uint32_t row, const std::vector<size_t>& columns);
  static bool append_value(const ColumnCode& code, const ColumnVector& column, uint32_t row,
                           RowImageCursor& out);
  // Ends the rows event being written, `last` marking the statement's end.
  void end_event(bool last);
  void start_event(Kind kind);

  std::vector<ColumnCode> columns_;  // in the table's order
  std::vector<size_t> all_;          // 0 … columns_.size()-1
  std::vector<size_t> key_;          // the key's entries of columns_
  std::string head_base64_;          // the format description and the Table_map
  uint32_t server_id_ = 0;
  std::string events_;
  std::optional<Kind> kind_;  // of the rows event being written
  size_t event_start_ = 0;    // where it starts in events_
};

}  // namespace sluice
