#include "sluice/connectors/mysql/cdc/key_order.hpp"

#include <charconv>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "X'";
  for (const char c : bytes) {
    out.push_back(kDigits[static_cast<unsigned char>(c) >> 4]);
    out.push_back(kDigits[static_cast<unsigned char>(c) & 15]);
  }
  return out + "'";
}

}  // namespace

std::string sql_literal(MySqlConnection& connection, const Value& value,
                        const TableColumn& column) {
  if (value.is_null()) return "NULL";
  const std::string& type = column.column_type;
  switch (value.type_id()) {
    case TypeId::kBigint:
      return value.to_string();
    case TypeId::kBoolean:
      return value.as_boolean() ? "1" : "0";
    case TypeId::kDouble: {
      // The shortest text that reads back as the same double, as a DOUBLE
      // literal (an exponent makes it one).
      char text[32];
      const auto end = std::to_chars(text, text + sizeof text, value.as_double()).ptr;
      std::string out(text, end);
      if (out.find_first_of("eE") == std::string::npos) out += "E0";
      return out;
    }
    case TypeId::kDecimal:
      if (type.starts_with("bigint")) return value.to_string();  // BIGINT UNSIGNED
      return "CAST('" + value.to_string() + "' AS DECIMAL(65," +
             std::to_string(value.as_decimal().scale()) + "))";
    case TypeId::kTimestamp:
      return "CAST('" + value.to_string() + "' AS DATETIME(6))";
    case TypeId::kDate:
      return "CAST('" + value.to_string() + "' AS DATE)";
    case TypeId::kTime:
      return "CAST('" + value.to_string() + "' AS TIME(6))";
    case TypeId::kBytes: {
      // A BIT compares as the number its bytes make, big-endian.
      if (!type.starts_with("bit")) return hex(value.as_bytes());
      uint64_t number = 0;
      for (const char b : value.as_bytes()) number = number << 8 | static_cast<unsigned char>(b);
      return std::to_string(number);
    }
    case TypeId::kString: {
      // An ENUM or a SET sorts by its number, and compares with one so.
      if (type.starts_with("enum(") || type.starts_with("set(")) {
        const std::vector<std::string> members = column.members();
        uint64_t number = 0;
        for (size_t m = 0; m < members.size(); ++m) {
          const bool in_set =
              type.starts_with("set(") &&
              ("," + value.as_string() + ",").find("," + members[m] + ",") != std::string::npos;
          if (in_set) number |= uint64_t{1} << m;
          if (type.starts_with("enum(") && members[m] == value.as_string()) number = m + 1;
        }
        return std::to_string(number);
      }
      for (const char* own : {"uuid", "inet6", "inet4"}) {
        if (type == own) return "CAST(" + connection.quote(value.as_string()) + " AS " + own + ")";
      }
      return "CONVERT(_utf8mb4" + connection.quote(value.as_string()) + " USING " + column.charset +
             ") COLLATE " + column.collation;
    }
  }
  throw DataError("no SQL literal for " + value.to_string());
}

KeyOrder::KeyOrder(const CapturedTable& table) {
  for (const size_t k : table.schema.primary_key()) {
    key_.push_back(table.columns.at(k));
    names_.push_back(quote_identifier(table.columns.at(k).name));
    columns_ += (columns_.empty() ? "" : ", ") + names_.back();
  }
}

std::vector<std::string> KeyOrder::literals(MySqlConnection& connection,
                                            const std::vector<Value>& key) const {
  if (key.size() != key_.size()) {
    throw std::logic_error("a key of " + std::to_string(key.size()) + " values for " +
                           std::to_string(key_.size()) + " key columns");
  }
  std::vector<std::string> out;
  for (size_t k = 0; k < key.size(); ++k) out.push_back(sql_literal(connection, key[k], key_[k]));
  return out;
}

std::string KeyOrder::comparison(const std::vector<std::string>& left,
                                 const std::vector<std::string>& right) const {
  // Spelled out rather than as (a, b) > (x, y), which the server may not
  // read as a range of the key's index.
  std::string out, equal;
  for (size_t k = 0; k < left.size(); ++k) {
    out += (k == 0 ? "(" : " OR (") + equal + left[k] + " > " + right[k] + ")";
    equal += left[k] + " = " + right[k] + " AND ";
  }
  return out;
}

std::string KeyOrder::after(MySqlConnection& connection, const std::vector<Value>& key) const {
  return comparison(names_, literals(connection, key));
}

std::vector<bool> KeyOrder::after(MySqlConnection& connection,
                                  const std::vector<std::vector<Value>>& keys,
                                  const std::vector<Value>& bound) const {
  constexpr size_t kPerQuery = 200;
  const std::vector<std::string> right = literals(connection, bound);
  std::vector<bool> out;
  for (size_t first = 0; first < keys.size(); first += kPerQuery) {
    std::string sql = "SELECT ";
    const size_t last = std::min(keys.size(), first + kPerQuery);
    for (size_t i = first; i < last; ++i) {
      sql += (i == first ? "" : ", ") + comparison(literals(connection, keys[i]), right);
    }
    const auto rows = connection.query(sql);
    for (const auto& field : rows.at(0)) out.push_back(field.value_or("0") == "1");
  }
  return out;
}

}  // namespace sluice
