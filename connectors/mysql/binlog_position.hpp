#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>

namespace sluice {

/// A place in the binlog: a file and a byte offset in it.
struct BinlogPosition {
  std::string file;
  uint64_t offset = 0;

  /// "mariadb-bin.000002:831".
  std::string to_string() const;
  /// Reads what to_string() writes; nullopt if `text` is not of that form.
  static std::optional<BinlogPosition> parse(const std::string& text);
  /// In binlog order: by file (mariadb-bin.000010 after mariadb-bin.000009,
  /// and after mariadb-bin.999999 comes mariadb-bin.1000000), then offset.
  friend std::strong_ordering operator<=>(const BinlogPosition& a, const BinlogPosition& b);
  friend bool operator==(const BinlogPosition&, const BinlogPosition&) = default;

  /// As a row's input position (Batch::position()): the file's number and
  /// the offset in one integer, at least 0 and below 2^61, in binlog order;
  /// nullopt where they do not fit (a number from 2^29 on, an offset past
  /// 4 GiB).
  std::optional<int64_t> packed() const;
  /// The position that packed() gave `packed`, in a binlog whose files are
  /// named as `like` is.
  static BinlogPosition unpacked(int64_t packed, const std::string& like);
};

/// A bit of a binlog row's input position (Batch::position(), besides
/// packed()): the server wrote the change with foreign_key_checks=0, so no
/// foreign key's ON DELETE or ON UPDATE action changed other rows with it.
inline constexpr int64_t kUncheckedRow = int64_t{1} << 61;

}  // namespace sluice
