#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/mysql/charset.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/data/batch.hpp"
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

/// What a column's binlog values become, where the binlog does not say: it
/// writes integers without their signedness, text without its charset,
/// BINARY(n) without its trailing zero bytes, an ENUM as its number.
struct BinlogDecoding {
  enum How {
    kAsWritten,  // numbers and times: what the binlog type says
    kText,       // text in `text`'s charset (null: UTF-8 already), as a STRING
    kBytes,      // BYTES; BINARY(n) padded to `length`
    kBit1,       // BIT(1), as a BOOLEAN
    kMembers,    // an ENUM's or a SET's `members`, as a STRING
    kUuid,       // MariaDB's UUID, INET6 and INET4: their text
    kInet6,
    kInet4,
    kJson,  // MySQL's binary JSON, as its text
  };
  How how = kAsWritten;
  bool is_unsigned = false;
  size_t length = 0;  // kBytes of a BINARY(n), kUuid, kInet6, kInet4: the bytes of a value
  std::vector<std::string> members;
  std::shared_ptr<const TextDecoder> text;
  bool read_past = false;  // a column the job does not keep: passed over, its value NULL
  /// The fractional digits of a TIME, DATETIME or TIMESTAMP in MariaDB's
  /// format before 10.1 (`time(3) /* mariadb-5.3 */`), whose binlog type
  /// and metadata are those of a whole-second one; 0 for the others.
  int old_fsp = 0;
};

/// How values of `column` are read, its type as information_schema spells
/// it. Throws ConfigError, naming the column and its type, for a type the
/// reader does not take.
BinlogDecoding decoding_of(const TableColumn& column, Charsets& charsets);

/// MySQL's binary DECIMAL(precision, scale) at `bytes`, and its size.
size_t binary_decimal_size(int precision, int scale);
Decimal decode_binary_decimal(const uint8_t* bytes, int precision, int scale);

/// Bytes MariaDB compressed (sql/log_event.cc binlog_buf_compress, and
/// field_comp.cc): a header 0x8N, the length uncompressed big-endian in
/// N & 7 bytes, then zlib's data (N & 8: without zlib's wrapper).
/// Nothing when they are not.
std::optional<std::string> inflated(std::string_view compressed);

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
  /// The same, written into row `row` of `column` (not NULL): the common
  /// types without a Value between. Throws DataError if the value is not of
  /// the column's type.
  void read_into(ColumnVector& column, uint32_t row, const BinlogColumnFormat& f,
                 const BinlogDecoding& d);

 private:
  uint64_t little_endian(size_t n);
  uint64_t big_endian(size_t n);
  Value integer(size_t n, const BinlogDecoding& d);
  // An integer of `n` bytes that fits an int64_t (not a BIGINT UNSIGNED).
  int64_t whole(size_t n, bool is_unsigned);
  // The bytes of an integer of binlog type `type`; 0 for another type.
  static size_t integer_width(uint8_t type);
  Decimal decimal(int precision, int scale);
  Timestamp datetime(int fsp);
  Value time(int fsp);
  // MariaDB 5.3's TIME, DATETIME and TIMESTAMP with `fsp` digits.
  Value old_time(int fsp);
  Timestamp old_datetime(int fsp);
  Timestamp old_timestamp(int fsp);
  int64_t fraction(int fsp);
  std::string_view bytes(size_t length_bytes);
  // How many bytes give the length of a value of string format `f`.
  static size_t length_bytes(const BinlogColumnFormat& f);
  // What the bytes of a string, binary or BLOB column are, as `d` says.
  Value string_value(std::string_view bytes, const BinlogDecoding& d) const;

  const uint8_t* p_;
  const uint8_t* end_;
  const std::string& table_;
};

}  // namespace sluice
