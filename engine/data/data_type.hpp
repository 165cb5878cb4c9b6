#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

/// The column types. STRING is UTF-8 text, BYTES any bytes.
enum class TypeId : uint8_t {
  kBigint,
  kDouble,
  kDecimal,
  kString,
  kBoolean,
  kTimestamp,
  kDate,
  kTime,
  kBytes,
};

/// The type of a column. DECIMAL carries its precision and scale.
struct DataType {
  TypeId id = TypeId::kBigint;
  uint8_t precision = 0;  ///< DECIMAL only: total digits, 1 to 65.
  uint8_t scale = 0;      ///< DECIMAL only: digits after the point, 0 to precision.

  static DataType bigint() { return {TypeId::kBigint}; }
  static DataType float64() { return {TypeId::kDouble}; }
  /// Throws ConfigError unless 1 <= precision <= 65 and 0 <= scale <= precision.
  static DataType decimal(int precision, int scale);
  static DataType string() { return {TypeId::kString}; }
  static DataType boolean() { return {TypeId::kBoolean}; }
  static DataType timestamp() { return {TypeId::kTimestamp}; }
  static DataType date() { return {TypeId::kDate}; }
  static DataType time() { return {TypeId::kTime}; }
  static DataType bytes() { return {TypeId::kBytes}; }

  /// The SQL name: "BIGINT", "DECIMAL(10,2)", "TIMESTAMP".
  std::string to_string() const;
  /// Reads a SQL type name, case-insensitive: BIGINT (or INT, INTEGER),
  /// DOUBLE (FLOAT), DECIMAL(p,s), STRING (VARCHAR, TEXT), BOOLEAN (BOOL),
  /// TIMESTAMP (DATETIME), DATE, TIME, BYTES (VARBINARY, BLOB). Throws
  /// ConfigError listing them.
  static DataType parse(std::string_view text);

  friend bool operator==(const DataType&, const DataType&) = default;
};

}  // namespace sluice
