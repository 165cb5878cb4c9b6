#pragma once

#include <string>
#include <vector>

#include "sluice/connectors/mysql_connection.hpp"
#include "sluice/connectors/mysql_sink.hpp"

namespace sluice {

/// Where the MySQL sink of several tables writes one of them.
struct MySqlTableTarget {
  /// The target table, in the database of the sink's URL.
  std::string table;
  /// The source table's columns and key: what a missing target is created
  /// with (create_table_sql()).
  TableInfo like;
};

/// The MySQL sink of a stream of several tables (StreamType::tables): table
/// i's changes go into `targets[i]`, each written as mysql_sink() writes
/// one table's (upsert by the table's primary key, at-least-once or
/// exactly-once as `options` say; `options.table`, `key` and `mode` are
/// the targets'). With `create_tables`, a missing target is created like
/// its source when the sink opens; an existing one must fit, as for
/// mysql_sink(). It runs with one subtask, so that each key's changes are
/// written in order. Its state and transactions are kept per table, under
/// the source table's name: a restore finds each table's again.
SinkDef mysql_tables_sink(const MySqlSinkOptions& options, const std::vector<TableSchema>& tables,
                          std::vector<MySqlTableTarget> targets, bool create_tables);

}  // namespace sluice
