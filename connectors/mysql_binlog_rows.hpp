#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/engine/data/value.hpp"

/// The values in a binlog's row images, as the server writes them
/// (sql/log_event.cc and the binary formats of sql/field.cc): what the
/// binlog reader decodes its captured tables' rows with.
namespace sluice {

/// How a column's values are written in the binlog's row images: its
/// binlog type and metadata, as a TABLE_MAP event gives them.
struct BinlogColumnFormat {
  uint8_t type = 0;
  uint16_t meta = 0;
};

/// The formats of a TABLE_MAP event's columns: a type byte each, and the
/// metadata bytes that each type carries, in column order.
std::vector<BinlogColumnFormat> column_formats(std::string_view types, std::string_view metadata);

/// What a column's binlog values become, where the binlog does not say:
/// integers are written without their signedness.
struct BinlogDecoding {
  enum How {
    kAsWritten,   // what the binlog type says
    kBoolean,     // TINYINT(1)
    kSigned,      // an integer
    kUnsigned,    // an integer of fewer than 64 bits
    kUnsigned64,  // BIGINT UNSIGNED, as DECIMAL(20,0)
  };
  How how = kAsWritten;
};

/// How values of `column`, of the type the server spells `type`
/// (information_schema's COLUMN_TYPE), are read. Throws ConfigError, naming
/// the column, for a type the reader does not take.
BinlogDecoding decoding_of(const std::string& column, const std::string& type);

/// Reads the values of row images, bounds-checked: a corrupt image throws
/// Error naming `table`.
class RowImageReader {
 public:
  RowImageReader(const uint8_t* data, size_t size, const std::string& table)
      : p_(data), end_(data + size), table_(table) {}

  bool at_end() const { return p_ == end_; }
  /// The next `n` bytes.
  const uint8_t* take(size_t n);
  /// The next value, of a column of format `f` read as `d` says.
  Value value(const BinlogColumnFormat& f, const BinlogDecoding& d);

 private:
  uint64_t little_endian(size_t n);
  uint64_t big_endian(size_t n);
  Value integer(size_t n, const BinlogDecoding& d);
  Value decimal(int precision, int scale);
  Value datetime(int fsp);
  int64_t fraction(int fsp);
  Value bytes(size_t length_bytes);

  const uint8_t* p_;
  const uint8_t* end_;
  const std::string& table_;
};

}  // namespace sluice
