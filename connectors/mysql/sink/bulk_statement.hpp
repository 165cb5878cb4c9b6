#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/data/batch.hpp"

namespace sluice {

/// A prepared statement of a number of rows (`INSERT … VALUES (?, ?), (?, ?)`)
/// run for many times that many in one round trip with MariaDB's array
/// binding (STMT_ATTR_ARRAY_SIZE): each parameter is bound to an array
/// holding its value for every execution. The server executes the statement
/// once per element: rows in one statement save it the work of each
/// execution (a lookup plan, locks, a statement's undo), which costs more
/// than the row itself. BIGINT, DOUBLE and BOOLEAN go as binary
/// numbers, bound straight to the batch's column (and its null flags, which
/// are the indicators) when the rows are consecutive; DECIMAL, TIMESTAMP,
/// DATE and TIME as text, so decimals stay exact; STRING and BYTES as
/// pointers into the column.
class BulkStatement {
 public:
  /// Prepares `sql`, a statement of `rows` rows whose `?` parameters take
  /// `types` in each.
  BulkStatement(MySqlConnection& connection, std::string sql, std::vector<DataType> types,
                size_t rows = 1);
  ~BulkStatement();
  BulkStatement(const BulkStatement&) = delete;
  BulkStatement& operator=(const BulkStatement&) = delete;

  /// Runs the statement for rows `rows` of `batch`, a multiple of its rows,
  /// in order, binding their fields `columns` to each row's parameters;
  /// returns the rows the server says it affected.
  uint64_t execute(const Batch& batch, std::span<const uint32_t> rows,
                   const std::vector<size_t>& columns);

  /// The bytes row `row` adds to a statement's packet, roughly: for sizing
  /// statements under max_allowed_packet.
  static size_t wire_size(const Batch& batch, uint32_t row, const std::vector<size_t>& columns);

 private:
  MySqlConnection& connection_;
  std::string sql_;
  std::vector<DataType> types_;
  size_t rows_;
  st_mysql_stmt* stmt_ = nullptr;
};

}  // namespace sluice
