#pragma once

#include <cstdint>
#include <string>

#include "sluice/engine/data/row.hpp"

namespace sluice {

/// The row kinds a stream may carry. Sources declare theirs; sinks say which
/// they accept; validate() compares the two before anything runs.
class ChangelogMode {
 public:
  static ChangelogMode insert_only() { return ChangelogMode(bit(RowKind::kInsert)); }
  static ChangelogMode all() {
    return ChangelogMode(bit(RowKind::kInsert) | bit(RowKind::kUpdateBefore) |
                         bit(RowKind::kUpdateAfter) | bit(RowKind::kDelete));
  }
  /// Upserts: inserts, update-afters and deletes, without update-befores.
  static ChangelogMode upsert() {
    return ChangelogMode(bit(RowKind::kInsert) | bit(RowKind::kUpdateAfter) |
                         bit(RowKind::kDelete));
  }

  ChangelogMode() = default;
  ChangelogMode with(RowKind kind) const { return ChangelogMode(bits_ | bit(kind)); }

  bool contains(RowKind kind) const { return (bits_ & bit(kind)) != 0; }
  bool contains_all(ChangelogMode other) const { return (bits_ & other.bits_) == other.bits_; }
  bool is_insert_only() const { return bits_ == bit(RowKind::kInsert); }

  /// "[+I, +U, -D]".
  std::string to_string() const;

  friend bool operator==(ChangelogMode, ChangelogMode) = default;

 private:
  explicit ChangelogMode(uint8_t bits) : bits_(bits) {}
  static uint8_t bit(RowKind kind) { return static_cast<uint8_t>(1u << static_cast<int>(kind)); }

  uint8_t bits_ = 0;
};

}  // namespace sluice
