#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/table_patterns.hpp"

namespace sluice {

/// A rule of option `route`, as Flink CDC's `route`: the tables `source`
/// matches (one db.table pattern, TablePatterns) are written into table
/// `target` of the sink's database, where "<>" (Flink CDC's usual
/// replace-symbol) stands for the source table's name. Several tables into
/// one target (shards merged) keep their rows apart by `table_column`, a
/// column of the target that holds each row's source table ("db.table")
/// and ends its primary key.
struct TableRoute {
  std::string pattern;       ///< as written: "shop.orders_[0-9]+"
  TablePatterns source;      ///< `pattern`, compiled
  std::string target;        ///< "orders_all", "copy_<>"
  std::string table_column;  ///< empty: none
};

/// Reads option `route`: rules separated by ';', each
/// "PATTERN -> TARGET" or "PATTERN -> TARGET (COLUMN)". Throws ConfigError
/// naming the rule at fault.
std::vector<TableRoute> parse_routes(std::string_view text);

/// Where table `table` goes under `routes`: the first rule whose pattern
/// matches it names the target and its table column; no rule, the table of
/// its name and none.
struct RoutedTable {
  std::string target;
  std::string table_column;
  /// The source table's foreign keys: the changes their ON DELETE and ON
  /// UPDATE actions make to its rows, which the binlog does not log, the
  /// sink makes to the target.
  std::vector<ForeignKey> foreign_keys;
};
RoutedTable route_table(const std::vector<TableRoute>& routes, const TableName& table);

/// `like`, the columns and key of a table merged into another, with
/// `table_column` after its columns and its key: a VARCHAR long enough for
/// "db.table", compared byte for byte.
TableInfo with_table_column(TableInfo like, const std::string& table_column);

/// Where the MySQL sink of several tables writes one of them.
struct MySqlTableTarget {
  /// The target table, in the database of the sink's URL.
  std::string table;
  /// The source table's columns and key (with `table_column`): what a
  /// missing target is created with (create_table_sql()).
  TableInfo like;
  /// Of tables merged into one target: the target's column that takes the
  /// source table's name ("db.table"), the last of its key
  /// (with_table_column()). Empty: the table is the target's only one.
  std::string table_column;
  /// The source table's foreign keys: the changes their ON DELETE and ON
  /// UPDATE actions make to its rows, which the binlog does not log, the
  /// sink makes to the target.
  std::vector<ForeignKey> foreign_keys;
};

/// Table `table`'s target under `routes`, `like` its columns and key.
/// Throws ConfigError when the table has a column of the route's table
/// column's name.
MySqlTableTarget route_target(const std::vector<TableRoute>& routes, const TableName& table,
                              TableInfo like);

}  // namespace sluice
