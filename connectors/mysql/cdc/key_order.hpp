#pragma once

#include <string>
#include <vector>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {

/// A table's primary-key order as the server sees it: what a snapshot
/// reads its chunks in, and how a key is placed against a chunk's bound,
/// with the values written as sql_literal()s, never left to the server's
/// conversions between types.
class KeyOrder {
 public:
  explicit KeyOrder(const CapturedTable& table);

  /// The key columns, for ORDER BY.
  const std::string& columns() const { return columns_; }
  /// A condition that holds for the rows whose key comes after `key` (the
  /// values of the key's columns): "`a` > 1 OR (`a` = 1 AND `b` > 2)".
  std::string after(MySqlConnection& connection, const std::vector<Value>& key) const;
  /// For each of `keys`, whether it comes after `bound`, as the server
  /// compares them (one round trip for many).
  std::vector<bool> after(MySqlConnection& connection, const std::vector<std::vector<Value>>& keys,
                          const std::vector<Value>& bound) const;

 private:
  // `left` after `right`, each a literal or a column per key column.
  std::string comparison(const std::vector<std::string>& left,
                         const std::vector<std::string>& right) const;
  std::vector<std::string> literals(MySqlConnection& connection,
                                    const std::vector<Value>& key) const;

  std::vector<TableColumn> key_;
  std::vector<std::string> names_;  // quoted
  std::string columns_;
};

}  // namespace sluice
