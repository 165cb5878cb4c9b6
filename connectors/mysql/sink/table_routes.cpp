#include "sluice/connectors/mysql/sink/table_routes.hpp"

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {

std::vector<TableRoute> parse_routes(std::string_view text) {
  std::vector<TableRoute> routes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string rule(trim(text.substr(start, end - start)));
    start = end + 1;
    if (rule.empty()) continue;
    const auto fail = [&](const std::string& why) {
      throw ConfigError("option 'route': '" + rule + "' " + why +
                        "; a rule is PATTERN -> TARGET or PATTERN -> TARGET (COLUMN), rules "
                        "separated by ';' (shop.orders_[0-9]+ -> orders_all (source_table))");
    };
    const size_t arrow = rule.find("->");
    if (arrow == std::string::npos) fail("has no '->'");
    const std::string pattern(trim(std::string_view(rule).substr(0, arrow)));
    std::string_view target = trim(std::string_view(rule).substr(arrow + 2));
    std::string column;
    if (const size_t open = target.find('('); open != std::string_view::npos) {
      if (target.back() != ')') fail("does not end its column's name with ')'");
      column = trim(target.substr(open + 1, target.size() - open - 2));
      target = trim(target.substr(0, open));
      if (column.empty()) fail("names no column between the parentheses");
    }
    if (pattern.empty()) fail("has no pattern");
    if (target.empty()) fail("has no target table");
    if (target.find_first_of(". ") != std::string_view::npos) {
      fail("names a target that is not a table name (it goes into sink.url's database)");
    }
    routes.push_back({.pattern = pattern,
                      .source = TablePatterns({pattern}, "route"),
                      .target = std::string(target),
                      .table_column = std::move(column)});
  }
  return routes;
}

RoutedTable route_table(const std::vector<TableRoute>& routes, const TableName& table) {
  for (const TableRoute& route : routes) {
    if (!route.source.matches(table.database, table.table)) continue;
    std::string target = route.target;
    for (size_t at = target.find("<>"); at != std::string::npos; at = target.find("<>", at)) {
      target.replace(at, 2, table.table);
      at += table.table.size();
    }
    return {std::move(target), route.table_column};
  }
  return {table.table, ""};
}

MySqlTableTarget route_target(const std::vector<TableRoute>& routes, const TableName& table,
                              TableInfo like) {
  RoutedTable routed = route_table(routes, table);
  if (!routed.table_column.empty()) {
    if (like.column(routed.table_column) != nullptr) {
      throw ConfigError("option 'route': table '" + table.to_string() + "' has a column '" +
                        routed.table_column +
                        "' already; name another for the source table's name");
    }
    like = with_table_column(std::move(like), routed.table_column);
  }
  return {std::move(routed.target), std::move(like), std::move(routed.table_column)};
}

TableInfo with_table_column(TableInfo like, const std::string& table_column) {
  like.columns.push_back(TableColumn{.name = table_column,
                                     .column_type = "varchar(129)",
                                     .nullable = false,
                                     .charset = "utf8mb4",
                                     .collation = "utf8mb4_bin",
                                     .octet_length = 129 * 4,
                                     .filled_by_server = false});
  // A table without a key goes without one: its rows may repeat.
  if (!like.primary_key.empty()) like.primary_key.push_back(table_column);
  return like;
}

}  // namespace sluice
