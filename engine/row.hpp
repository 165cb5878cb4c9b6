#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/value.hpp"

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

  /// "+I[1, abc, NULL]", as Flink prints rows.
  std::string to_string() const;

  friend bool operator==(const Row&, const Row&) = default;
};

}  // namespace sluice
