#pragma once

#include <string>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/schema_change.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/table_routes.hpp"

namespace sluice {

/// What the sink of several tables makes of a table's schema change, as
/// Flink CDC's `schema.change.behavior` says.
enum class SchemaChangeBehavior {
  kLenient,  ///< a dropped column stays, nullable; columns keep their order; others as they are
  kEvolve,   ///< every change as it is
  /// Every change as it is, as far as the target takes it: a change it
  /// refuses is left out, and the rows go on into the columns that fit.
  kTryEvolve,
  /// No change of a target's shape (a table made in the source gets its
  /// target still): the rows go into the columns it has that fit.
  kIgnore,
  kException,  ///< none: the job fails, naming the statement
};

/// The behavior named `name` ("lenient", "evolve", "try_evolve", "ignore",
/// "exception"); throws ConfigError for another name.
SchemaChangeBehavior schema_change_behavior(const std::string& name);

/// The ALTER TABLE clauses that make the change `change` made to a source
/// table to its target, whose columns are `target`'s now, as `behavior`
/// says: renames first, then the columns dropped, then the columns of the
/// new order, added or modified. A clause the target has already (a change
/// replayed after a crash) is left out; so are columns the target has that
/// the source never had.
std::vector<std::string> target_alterations(const TableInfo& target,
                                            const MySqlSchemaChange& change,
                                            SchemaChangeBehavior behavior);

/// The MySQL sink of a stream of several tables (StreamType::tables): table
/// i's changes go into `targets[i]` (tables share a target only with a
/// table column, which keeps their keys apart), each written as mysql_sink() writes
/// one table's (upsert by the table's primary key, at-least-once or
/// exactly-once as `options` say; `options.table`, `key` and `mode` are
/// the targets'). At-least-once the tables share one connection, and their
/// flushes at a FlushSignal or a barrier commit as one transaction;
/// exactly-once each table has its own XA transactions. With
/// `create_tables`, a missing target is created like
/// its source when the sink opens; an existing one must fit, as for
/// mysql_sink(). It runs with one subtask, so that each key's changes are
/// written in order. Its state and transactions are kept per table, under
/// the source table's name: a restore finds each table's again. A schema
/// change of a table (a MySqlSchemaChange from the mysql-cdc source) is
/// made to its target as `behavior` says, after the rows before it are
/// written and before those after it. Exactly-once, the change comes once
/// the transactions before it can commit (SchemaChange::completed_checkpoint):
/// they commit, then the target is altered, and the rows after it go into
/// the next checkpoint's transaction. A table new to the stream (created
/// in the source) goes where `routes` send it, created like its source;
/// a table dropped or truncated in the source is dropped or emptied in the
/// target under kEvolve (and kTryEvolve) only; a table renamed takes its
/// target along (renamed, or its rows moved between routed targets).
SinkDef mysql_tables_sink(const MySqlSinkOptions& options, const std::vector<TableSchema>& tables,
                          std::vector<MySqlTableTarget> targets, bool create_tables,
                          SchemaChangeBehavior behavior = SchemaChangeBehavior::kLenient,
                          std::vector<TableRoute> routes = {});

}  // namespace sluice
