#include "sluice/connectors/mysql/table_patterns.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/common/error.hpp"

namespace sluice {

struct TablePatterns::Compiled {
  std::vector<std::pair<std::regex, std::regex>> patterns;  // database, table
};

TablePatterns::TablePatterns(const std::vector<std::string>& patterns, const std::string& option) {
  // Each part's expression: '\.' is the expression's '.', '*' alone any name.
  const auto expression = [](std::string part) {
    if (part == "*") return std::string(".*");
    std::string out;
    for (size_t i = 0; i < part.size(); ++i) {
      if (part[i] == '\\' && i + 1 < part.size() && part[i + 1] == '.') {
        out += '.';
        ++i;
      } else {
        out += part[i];
      }
    }
    return out;
  };
  auto compiled = std::make_shared<Compiled>();
  for (const std::string& pattern : patterns) {
    size_t dot = 0;
    while (dot < pattern.size() && (pattern[dot] != '.' || (dot > 0 && pattern[dot - 1] == '\\')))
      ++dot;
    if (dot == 0 || dot + 1 >= pattern.size()) {
      throw ConfigError("option '" + option + "': '" + pattern +
                        "' is not of the form database.table (regular expressions, as "
                        "shop.orders_[0-9]+ or shop.*)");
    }
    try {
      compiled->patterns.emplace_back(std::regex(expression(pattern.substr(0, dot))),
                                      std::regex(expression(pattern.substr(dot + 1))));
    } catch (const std::regex_error& e) {
      throw ConfigError("option '" + option + "': '" + pattern +
                        "' is not a regular expression: " + e.what());
    }
  }
  compiled_ = std::move(compiled);
}

bool TablePatterns::matches(const std::string& database, const std::string& table) const {
  static const std::set<std::string> kServers = {"mysql", "information_schema",
                                                 "performance_schema", "sys"};
  if (kServers.contains(database)) return false;
  return std::any_of(compiled_->patterns.begin(), compiled_->patterns.end(), [&](const auto& p) {
    return std::regex_match(database, p.first) && std::regex_match(table, p.second);
  });
}

std::vector<TableName> match_tables(MySqlConnection& connection,
                                    const std::vector<std::string>& patterns) {
  const TablePatterns compiled(patterns);
  std::vector<TableName> out;
  for (const auto& row : connection.query(
           "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE IN "
           "('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA NOT IN ('mysql', "
           "'information_schema', "
           "'performance_schema', 'sys')")) {
    TableName name{row.at(0).value_or(""), row.at(1).value_or("")};
    if (compiled.matches(name.database, name.table)) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());  // by their bytes, whatever the server's collation
  return out;
}

}  // namespace sluice
