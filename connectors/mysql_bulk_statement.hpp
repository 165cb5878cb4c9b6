#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "connectors/mysql_connection.hpp"
#include "engine/row.hpp"

namespace sluice {

/// A prepared statement run for many rows in one round trip with MariaDB's
/// array binding (STMT_ATTR_ARRAY_SIZE): each parameter is bound to an array
/// holding its value for every row. BIGINT, DOUBLE and BOOLEAN go as binary
/// numbers; DECIMAL, STRING and TIMESTAMP as text, so decimals stay exact.
class BulkStatement {
 public:
  /// Prepares `sql`, whose `?` parameters take `types`.
  BulkStatement(MySqlConnection& connection, std::string sql, std::vector<DataType> types);
  ~BulkStatement();
  BulkStatement(const BulkStatement&) = delete;
  BulkStatement& operator=(const BulkStatement&) = delete;

  /// Runs the statement once per row, binding fields `columns` of each row to
  /// the parameters; returns the rows the server says it affected.
  uint64_t execute(std::span<const Row* const> rows, const std::vector<size_t>& columns);

  /// The bytes a row adds to a statement's packet, roughly: for sizing
  /// statements under max_allowed_packet.
  static size_t wire_size(const Row& row, const std::vector<size_t>& columns);

 private:
  MySqlConnection& connection_;
  std::string sql_;
  std::vector<DataType> types_;
  st_mysql_stmt* stmt_ = nullptr;
};

}  // namespace sluice
