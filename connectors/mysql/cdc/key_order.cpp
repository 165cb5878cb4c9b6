#include "sluice/connectors/mysql/cdc/key_order.hpp"

#include "sluice/engine/common/error.hpp"

namespace sluice {

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
