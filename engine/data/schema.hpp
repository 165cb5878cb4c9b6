#pragma once

#include <cstdint>
#include <memory>
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

/// What a source knows of a schema change beyond the new columns (the
/// statement parsed, the columns' types in the database): a sink of the
/// same system reads it with dynamic_cast.
struct SchemaChangeDetail {
  virtual ~SchemaChangeDetail() = default;
};

/// A table of a stream of several changed its columns: it travels in the
/// stream in order with the rows, as a barrier does, and the rows of the
/// table after it have the new columns.
struct SchemaChange {
  /// The table's index in the stream's tables.
  uint32_t table = 0;
  /// Its name and its columns from here on.
  TableSchema after;
  /// What changed it, for messages: "ALTER TABLE orders ADD note TEXT".
  std::string statement;
  /// Whether the target already has this shape, as far as the source knows:
  /// the columns a restore resumes with, rather than a change it read.
  bool restored = false;
  /// A checkpoint that completed before the source sent the change, after
  /// every row before it: the source held the change back until then. A
  /// sink that makes the change outside its transactions (DDL commits by
  /// itself) commits what it holds up to that checkpoint first, as
  /// notify_checkpoint_complete() would; the engine's own notice may come
  /// after the change.
  std::optional<int64_t> completed_checkpoint;
  std::shared_ptr<const SchemaChangeDetail> detail;
};

}  // namespace sluice
