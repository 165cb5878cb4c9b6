#include "engine/schema.hpp"

#include "engine/error.hpp"

namespace sluice {
namespace {

std::string join_names(const std::vector<Column>& columns) {
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

}  // namespace

Schema::Schema(std::vector<Column> columns, std::vector<std::string> primary_key)
    : columns_(std::move(columns)) {
  for (size_t i = 0; i < columns_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (columns_[i].name == columns_[j].name) {
        throw ConfigError("column '" + columns_[i].name + "' appears twice in the schema");
      }
    }
  }
  for (const auto& name : primary_key) {
    const auto index = index_of(name);
    if (!index) {
      throw ConfigError("primary key column '" + name + "' is not a column; the columns are " +
                        join_names(columns_));
    }
    primary_key_.push_back(*index);
  }
}

std::optional<size_t> Schema::index_of(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name == name) return i;
  }
  return std::nullopt;
}

size_t Schema::require(std::string_view name) const {
  if (const auto index = index_of(name)) return *index;
  throw ConfigError("no column '" + std::string(name) + "'; the columns are " +
                    join_names(columns_));
}

std::vector<std::string> Schema::primary_key_names() const {
  std::vector<std::string> names;
  for (size_t i : primary_key_) names.push_back(columns_[i].name);
  return names;
}

void Schema::check(const Row& row) const {
  if (row.fields.size() != columns_.size()) {
    throw DataError("row " + row.to_string() + " has " + std::to_string(row.fields.size()) +
                    " fields; the schema has " + std::to_string(columns_.size()) + " columns");
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (!row.fields[i].matches(columns_[i].type)) {
      throw DataError("column '" + columns_[i].name + "' expects " +
                      columns_[i].type.to_string() + ", got " + row.fields[i].to_string());
    }
  }
}

std::string Schema::to_string() const {
  std::string out;
  for (const auto& c : columns_) out += (out.empty() ? "" : ", ") + c.name + " " + c.type.to_string();
  if (has_primary_key()) {
    std::string key;
    for (const auto& name : primary_key_names()) key += (key.empty() ? "" : ", ") + name;
    out += ", PRIMARY KEY (" + key + ")";
  }
  return out;
}

}  // namespace sluice
