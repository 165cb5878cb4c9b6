#include "engine/data_type.hpp"

#include "engine/decimal.hpp"
#include "engine/error.hpp"

namespace sluice {

DataType DataType::decimal(int precision, int scale) {
  if (precision < 1 || precision > Decimal::kMaxPrecision || scale < 0 || scale > precision) {
    throw ConfigError("DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                      ") is not a valid type: precision must be 1 to 38 and scale 0 to precision");
  }
  return {TypeId::kDecimal, static_cast<uint8_t>(precision), static_cast<uint8_t>(scale)};
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
  }
  return "?";
}

}  // namespace sluice
