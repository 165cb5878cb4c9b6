#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/engine/data/data_type.hpp"
#include "sluice/engine/data/row.hpp"

namespace sluice {

struct Column {
  std::string name;
  DataType type;
};

/// Named, typed columns and an optional primary key of one or more of them.
class Schema {
 public:
  Schema() = default;
  /// Throws ConfigError if a name repeats or a key column is not a column.
  explicit Schema(std::vector<Column> columns, std::vector<std::string> primary_key = {});

  const std::vector<Column>& columns() const { return columns_; }
  size_t size() const { return columns_.size(); }
  const Column& column(size_t i) const { return columns_[i]; }
  std::vector<std::string> column_names() const;

  std::optional<size_t> index_of(std::string_view name) const;
  /// The index of `name`; throws ConfigError listing the columns if there is none.
  size_t require(std::string_view name) const;

  /// Column indexes of the primary key, in key order; empty when there is none.
  const std::vector<size_t>& primary_key() const { return primary_key_; }
  bool has_primary_key() const { return !primary_key_.empty(); }
  std::vector<std::string> primary_key_names() const;

  /// Throws DataError naming the column if `row` has the wrong arity or a
  /// field that does not fit its column's type.
  void check(const Row& row) const;

  /// "id BIGINT, amount DECIMAL(10,2), PRIMARY KEY (id)".
  std::string to_string() const;
  /// Reads what to_string() writes. Throws ConfigError naming the part at fault.
  static Schema parse(std::string_view text);

 private:
  std::vector<Column> columns_;
  std::vector<size_t> primary_key_;
};

/// One table of a stream that carries several (a database's tables, say):
/// its name ("shop.orders") and its columns.
struct TableSchema {
  std::string name;
  Schema schema;
};

}  // namespace sluice
