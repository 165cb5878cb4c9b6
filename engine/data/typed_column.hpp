#pragma once

#include <cstddef>
#include <string>

#include "sluice/engine/data/value.hpp"

namespace sluice {

/// A named column of a stream whose values are `T`s, taken from the stream's
/// schema when the graph is built (Stream::column), so that a wrong name or
/// type fails validate() naming the operator, before anything runs. A row
/// of that stream (a RowRef into a batch, or a Row) reads and writes it as
/// `row[column]`.
///
/// @code
///   const auto amount = orders.column<Decimal>("amount");
///   orders.map("add-fee", [amount](RowRef order) {
///     order[amount] = order[amount] + Decimal(99, 2);
///   });
/// @endcode
template <typename T>
class TypedColumn {
 public:
  using Type = T;
  const std::string& name() const { return name_; }
  size_t index() const { return index_; }

 private:
  friend class Stream;
  TypedColumn(std::string name, size_t index) : name_(std::move(name)), index_(index) {}

  std::string name_;
  size_t index_;
};

}  // namespace sluice
