#include "sluice/engine/data/data_type.hpp"

#include <cctype>
#include <cstdio>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/decimal.hpp"

namespace sluice {

DataType DataType::decimal(int precision, int scale) {
  if (precision < 1 || precision > Decimal::kMaxPrecision || scale < 0 || scale > precision) {
    throw ConfigError("DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                      ") is not a valid type: precision must be 1 to 65 and scale 0 to precision");
  }
  return {TypeId::kDecimal, static_cast<uint8_t>(precision), static_cast<uint8_t>(scale)};
}

DataType DataType::parse(std::string_view text) {
  std::string upper;
  for (char c : text) {
    if (c != ' ') upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  if (upper == "BIGINT" || upper == "INT" || upper == "INTEGER") return bigint();
  if (upper == "DOUBLE" || upper == "FLOAT") return float64();
  if (upper == "STRING" || upper == "VARCHAR" || upper == "TEXT") return string();
  if (upper == "BOOLEAN" || upper == "BOOL") return boolean();
  if (upper == "TIMESTAMP" || upper == "DATETIME") return timestamp();
  if (upper == "DATE") return date();
  if (upper == "TIME") return time();
  if (upper == "BYTES" || upper == "VARBINARY" || upper == "BLOB") return bytes();
  int precision = 0, scale = 0;
  char close = 0;
  if (std::sscanf(upper.c_str(), "DECIMAL(%d,%d%c", &precision, &scale, &close) == 3 &&
      close == ')' && upper.back() == ')') {
    return decimal(precision, scale);
  }
  throw ConfigError("unknown type '" + std::string(text) +
                    "'; the types are BIGINT, DOUBLE, DECIMAL(p,s), STRING, BOOLEAN, TIMESTAMP");
}

std::string DataType::to_string() const {
  switch (id) {
    case TypeId::kBigint:
      return "BIGINT";
    case TypeId::kDouble:
      return "DOUBLE";
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case TypeId::kString:
      return "STRING";
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kTimestamp:
      return "TIMESTAMP";
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTime:
      return "TIME";
    case TypeId::kBytes:
      return "BYTES";
  }
  return "?";
}

}  // namespace sluice
