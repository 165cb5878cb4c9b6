#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/engine/data/typed_column.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {

/// What a row means in a changelog.
enum class RowKind : uint8_t {
  kInsert,        ///< +I
  kUpdateBefore,  ///< -U: the old image of an update; upsert sinks ignore it
  kUpdateAfter,   ///< +U
  kDelete,        ///< -D
};

/// "+I", "-U", "+U" or "-D".
std::string_view to_string(RowKind kind);
/// Reads "+I", "-U", "+U" or "-D"; throws DataError otherwise.
RowKind parse_row_kind(std::string_view text);

/// A changelog record: its kind and its fields in schema order.
struct Row {
  RowKind kind = RowKind::kInsert;
  std::vector<Value> fields;

  Row() = default;
  Row(RowKind k, std::vector<Value> f) : kind(k), fields(std::move(f)) {}

  /// The value of `column`; throws DataError naming the column if it is NULL.
  /// Writing through it replaces the value; set() also fills a NULL.
  template <typename T>
  T& operator[](const TypedColumn<T>& column) {
    Value& value = fields.at(column.index());
    if (value.is_null()) throw_null(column.name());
    return value.as<T>();
  }
  template <typename T>
  const T& operator[](const TypedColumn<T>& column) const {
    const Value& value = fields.at(column.index());
    if (value.is_null()) throw_null(column.name());
    return value.as<T>();
  }
  template <typename T>
  bool is_null(const TypedColumn<T>& column) const {
    return fields.at(column.index()).is_null();
  }
  template <typename T>
  void set(const TypedColumn<T>& column, T value) {
    fields.at(column.index()) = Value::of(std::move(value));
  }
  template <typename T>
  void set_null(const TypedColumn<T>& column) {
    fields.at(column.index()) = Value();
  }

  /// "+I[1, abc, NULL]", as Flink prints rows.
  std::string to_string() const;

  friend bool operator==(const Row&, const Row&) = default;

 private:
  [[noreturn]] void throw_null(const std::string& column) const;
};

}  // namespace sluice
