#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "sluice/engine/data/data_type.hpp"
#include "sluice/engine/data/decimal.hpp"
#include "sluice/engine/data/timestamp.hpp"

namespace sluice {

/// A BYTES value: bytes that are not text (a BLOB, a BINARY(n) with its
/// padding). Its text form is base64, as Flink's formats write BYTES.
struct Bytes {
  std::string data;
  friend auto operator<=>(const Bytes&, const Bytes&) = default;
};

/// The column type whose values a `T` holds: int64_t BIGINT, double DOUBLE,
/// Decimal DECIMAL, std::string STRING, bool BOOLEAN, Timestamp TIMESTAMP,
/// Date DATE, Time TIME, Bytes BYTES.
template <typename T>
constexpr TypeId column_type_of() {
  if constexpr (std::is_same_v<T, int64_t>) return TypeId::kBigint;
  if constexpr (std::is_same_v<T, double>) return TypeId::kDouble;
  if constexpr (std::is_same_v<T, Decimal>) return TypeId::kDecimal;
  if constexpr (std::is_same_v<T, std::string>) return TypeId::kString;
  if constexpr (std::is_same_v<T, bool>) return TypeId::kBoolean;
  if constexpr (std::is_same_v<T, Timestamp>) return TypeId::kTimestamp;
  if constexpr (std::is_same_v<T, Date>) return TypeId::kDate;
  if constexpr (std::is_same_v<T, Time>) return TypeId::kTime;
  if constexpr (std::is_same_v<T, Bytes>) return TypeId::kBytes;
}

/// One field of a row: NULL or a value of one of the column types.
class Value {
 public:
  /// NULL.
  Value() = default;
  Value(int64_t v) : v_(v) {}
  Value(int v) : v_(int64_t{v}) {}
  Value(double v) : v_(v) {}
  Value(Decimal v) : v_(v) {}
  Value(std::string v) : v_(std::move(v)) {}
  Value(std::string_view v) : v_(std::string(v)) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(Timestamp v) : v_(v) {}
  Value(Date v) : v_(v) {}
  Value(Time v) : v_(v) {}
  Value(Bytes v) : v_(std::move(v)) {}
  /// Explicit, so that a pointer or an integer never silently becomes a BOOLEAN.
  static Value boolean(bool v) {
    Value out;
    out.v_ = v;
    return out;
  }
  /// BYTES holding `data`.
  static Value bytes(std::string data) { return Value(Bytes{std::move(data)}); }
  /// A value of `T` (see column_type_of), BOOLEAN for bool.
  template <typename T>
  static Value of(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      return boolean(v);
    } else {
      return Value(std::move(v));
    }
  }

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  /// The type of a non-NULL value.
  TypeId type_id() const;
  /// Whether this value may stand in a column of `type` (NULL may stand anywhere).
  bool matches(const DataType& type) const;

  /// Accessors; each throws DataError naming both types when the value holds another.
  int64_t as_bigint() const { return get<int64_t>("BIGINT"); }
  double as_double() const { return get<double>("DOUBLE"); }
  const Decimal& as_decimal() const { return get<Decimal>("DECIMAL"); }
  const std::string& as_string() const { return get<std::string>("STRING"); }
  bool as_boolean() const { return get<bool>("BOOLEAN"); }
  Timestamp as_timestamp() const { return get<Timestamp>("TIMESTAMP"); }
  Date as_date() const { return get<Date>("DATE"); }
  Time as_time() const { return get<Time>("TIME"); }
  /// The bytes of a BYTES value.
  const std::string& as_bytes() const { return get<Bytes>("BYTES").data; }

  /// The value as a `T` (see column_type_of); throws DataError when it
  /// holds another type or is NULL.
  template <typename T>
  const T& as() const {
    return get<T>(kTypeNames[static_cast<int>(column_type_of<T>())]);
  }
  template <typename T>
  T& as() {
    return const_cast<T&>(std::as_const(*this).as<T>());
  }

  /// Appends the text form that parse_value() reads back (BYTES as base64);
  /// NULL appends "NULL".
  void append_to(std::string& out) const;
  std::string to_string() const;

  size_t hash() const;
  friend bool operator==(const Value& a, const Value& b) = default;

 private:
  template <typename T>
  const T& get(const char* expected) const {
    if (const auto* p = std::get_if<T>(&v_)) return *p;
    throw_type_mismatch(expected);
  }
  // By TypeId.
  static constexpr const char* kTypeNames[] = {
      "BIGINT", "DOUBLE", "DECIMAL", "STRING", "BOOLEAN", "TIMESTAMP", "DATE", "TIME", "BYTES"};
  [[noreturn]] void throw_type_mismatch(const char* expected) const;
  const char* type_name() const;

  // After monostate, in TypeId's order.
  std::variant<std::monostate, int64_t, double, Decimal, std::string, bool, Timestamp, Date, Time,
               Bytes>
      v_;
};

/// Hashes of field values, as Value::hash() and batch columns use them:
/// equal values hash equally (DECIMALs whatever their scale).
size_t hash_field(int64_t v);
size_t hash_field(double v);
size_t hash_field(const Decimal& v);
size_t hash_field(std::string_view v);
size_t hash_field(bool v);
size_t hash_field(Timestamp v);
size_t hash_field(Date v);
size_t hash_field(Time v);

/// `bytes` in base64 (RFC 4648, padded), and back; base64_decode throws
/// DataError for text that is not base64.
std::string base64_encode(std::string_view bytes);
/// Appends base64_encode(bytes) to `out`.
void base64_append(std::string_view bytes, std::string& out);
std::string base64_decode(std::string_view text);

/// Parses the text form of a non-NULL value of `type` (how a file or the
/// command line spells it). Throws DataError saying what `type` accepts.
/// BOOLEAN reads true/false or 1/0; DOUBLE reads what strtod does; BYTES
/// reads base64.
Value parse_value(std::string_view text, const DataType& type);

}  // namespace sluice

template <>
struct std::hash<sluice::Value> {
  size_t operator()(const sluice::Value& v) const { return v.hash(); }
};
