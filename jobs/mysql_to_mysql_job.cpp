// A table replicated into another through the binlog: the mysql-cdc source
// (a snapshot, then every committed change), an optional projection, and
// the MySQL sink. The source table's columns are the job's schema.
#include "sluice/jobs/mysql_to_mysql_job.hpp"

#include <spdlog/spdlog.h>

#include <set>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/ddl.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/table_routes.hpp"
#include "sluice/connectors/mysql/sink/tables_sink.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/jobs/changelog_to_mysql_job.hpp"
#include "sluice/transforms/project.hpp"

namespace sluice {
namespace {

// Every table `source.tables` matches, each into the table of its name in
// the sink's database, or the one `route` names.
void build_tables(const Config& config, JobGraph& graph, const MySqlCdcOptions& source) {
  for (const char* key : {"sink.table", "sink.primary-key", "transform.columns"}) {
    if (config.find(key)) {
      throw ConfigError("option '" + std::string(key) +
                        "' is for one table; with 'source.tables' each table is written whole "
                        "into the table of its name in sink.url's database");
    }
  }
  MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  sink.input_is_table_rows = true;
  if (sink.parallelism > 1) {
    spdlog::warn(
        "mysql sink: the tables of source.tables are written by one subtask, in order "
        "(not {})",
        sink.parallelism);
  }
  const std::vector<CapturedTable> tables = capture_tables(source);
  const std::optional<std::string> route = config.find("route");
  const std::vector<TableRoute> routes = route ? parse_routes(*route) : std::vector<TableRoute>{};
  std::vector<MySqlTableTarget> targets;
  for (const CapturedTable& table : tables) {
    // Like the table as the source read it (its defaults too: a column that
    // a later ALTER TABLE leaves unfilled takes the same value in both), not
    // as it may be by now.
    TableInfo like{.columns = table.columns,
                   .primary_key = table.schema.primary_key_names(),
                   .collation = table_option(table.definition, "COLLATE")};
    MySqlTableTarget& target =
        targets.emplace_back(route_target(routes, {table.database, table.table}, std::move(like)));
    target.foreign_keys = foreign_keys(table.definition, table.database);
  }
  Stream changes = graph.source("mysql-cdc", mysql_cdc_source(source, tables));
  changes.sink(
      "mysql",
      mysql_tables_sink(
          sink, changes.type().tables, std::move(targets), config.get_bool("sink.create-tables"),
          schema_change_behavior(config.get_string("schema.change.behavior")), routes));
}

void build(const Config& config, JobGraph& graph) {
  const MySqlCdcOptions source = MySqlCdcOptions::from(config);
  if (!source.patterns.empty()) {
    build_tables(config, graph, source);
    return;
  }
  // The projection first: a column it drops may be of a type the source
  // does not take.
  const std::optional<std::string> columns = config.find("transform.columns");
  const std::vector<std::string> keep = columns ? split_list(*columns) : std::vector<std::string>{};
  Stream changes =
      graph.source("mysql-cdc", mysql_cdc_source(source, capture_tables(source, keep)));
  if (columns) changes = project(changes, "project", keep);
  MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  sink.input_is_table_rows = true;
  changes.sink("mysql", mysql_sink(sink));
}

bool report(const Config&, const JobResult& result) {
  print_mysql_layers(result, "mysql-cdc", "mysql");
  return true;
}

}  // namespace

JobDefinition mysql_to_mysql_job() {
  const std::vector<OptionSpec> options =
      option_specs({mysql_cdc_option_specs(),
                    mysql_sink_option_specs(),
                    {{.key = "transform.columns",
                      .doc = "mysql-to-mysql: the columns to keep, comma-separated (the key "
                             "among them); all when unset"},
                     {.key = "route",
                      .doc = "mysql-to-mysql with source.tables: where tables go, as Flink "
                             "CDC's route: rules PATTERN -> TARGET separated by ';', the first "
                             "whose db.table pattern matches a table names its target in "
                             "sink.url's database, <> standing for the table's name "
                             "(shop.orders_[0-9]+ -> orders_all (source_table); shop.* -> "
                             "copy_<>); tables merged into one target need the (COLUMN) that "
                             "takes each row's source table and joins the key; unset: each "
                             "table into the table of its name"},
                     {.key = "sink.create-tables",
                      .type = OptionType::kBoolean,
                      .default_value = "true",
                      .doc = "mysql-to-mysql with source.tables: create a missing target table "
                             "like its source (columns, types, charsets, collations, primary "
                             "key)"},
                     {.key = "schema.change.behavior",
                      .type = OptionType::kEnum,
                      .default_value = "lenient",
                      .doc = "mysql-to-mysql with source.tables: what DDL of a captured table "
                             "does to its target: lenient (a dropped column stays, nullable, and "
                             "columns keep their order; added, renamed and changed columns as in "
                             "the source; a dropped or truncated table keeps its rows), evolve "
                             "(every change as it is), try_evolve (as evolve, leaving out a "
                             "change the target refuses; rows go into the columns that fit), "
                             "ignore (no target changes its shape; rows go into the columns "
                             "that fit) or exception (the job fails)",
                      .choices = {"lenient", "evolve", "try_evolve", "ignore", "exception"}}}});
  return {.name = "mysql-to-mysql",
          .summary = "a MySQL table's changes, snapshot then binlog, replicated into another table",
          .options = options,
          .defaults = {{"sink.buffer-flush.max-rows",
                        std::to_string(MySqlSinkOptions::kReplicationMaxRows)}},
          .build = build,
          .report = report};
}

}  // namespace sluice
