#include "sluice/engine/data/schema.hpp"

#include <cctype>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

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

std::vector<std::string> Schema::column_names() const {
  std::vector<std::string> names;
  for (const Column& column : columns_) names.push_back(column.name);
  return names;
}

std::vector<std::string> Schema::primary_key_names() const {
  std::vector<std::string> names;
  for (size_t i : primary_key_) names.push_back(columns_[i].name);
  return names;
}

void Schema::check(const Row& row) const {
  if (row.fields.size() != columns_.size()) {
    throw DataError("row " + row.to_string() + " has " + count_of(row.fields.size(), "field") +
                    "; the schema has " + count_of(columns_.size(), "column"));
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (!row.fields[i].matches(columns_[i].type)) {
      throw DataError("column '" + columns_[i].name + "' expects " + columns_[i].type.to_string() +
                      ", got " + row.fields[i].to_string());
    }
  }
}

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// Splits at the commas that are not inside parentheses.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (text[i] == ',' && depth == 0) {
      parts.push_back(trimmed(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trimmed(text.substr(start)));
  return parts;
}

}  // namespace

Schema Schema::parse(std::string_view text) {
  std::vector<Column> columns;
  std::vector<std::string> key;
  for (std::string_view part : split_top_level(text)) {
    std::string upper;
    for (char c : part.substr(0, 11))
      upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    if (upper == "PRIMARY KEY") {
      const size_t open = part.find('(');
      const size_t close = part.rfind(')');
      if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        throw ConfigError("expected PRIMARY KEY (col, ...), got '" + std::string(part) + "'");
      }
      for (std::string_view k : split_top_level(part.substr(open + 1, close - open - 1))) {
        key.emplace_back(k);
      }
      continue;
    }
    const size_t space = part.find_first_of(" \t");
    if (part.empty() || space == std::string_view::npos) {
      throw ConfigError("expected a column as 'name TYPE', got '" + std::string(part) + "'");
    }
    try {
      columns.push_back(
          {std::string(part.substr(0, space)), DataType::parse(trimmed(part.substr(space)))});
    } catch (const ConfigError& e) {
      throw ConfigError("column '" + std::string(part.substr(0, space)) + "': " + e.what());
    }
  }
  return Schema(std::move(columns), std::move(key));
}

std::string Schema::to_string() const {
  std::string out;
  for (const auto& c : columns_)
    out += (out.empty() ? "" : ", ") + c.name + " " + c.type.to_string();
  if (has_primary_key()) {
    std::string key;
    for (const auto& name : primary_key_names()) key += (key.empty() ? "" : ", ") + name;
    out += ", PRIMARY KEY (" + key + ")";
  }
  return out;
}

}  // namespace sluice
