// A table replicated into another through the binlog: the mysql-cdc source
// (a snapshot, then every committed change), an optional projection, and
// the MySQL sink. The source table's columns are the job's schema.
#include "sluice/jobs/mysql_to_mysql_job.hpp"

#include "sluice/cli/flink_sql.hpp"
#include "sluice/connectors/mysql_binlog.hpp"
#include "sluice/connectors/mysql_cdc_source.hpp"
#include "sluice/connectors/mysql_sink.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/jobs/changelog_to_mysql_job.hpp"
#include "sluice/transforms/project.hpp"

namespace sluice {
namespace {

void build(const Config& config, JobGraph& graph) {
  const MySqlCdcOptions source = MySqlCdcOptions::from(config);
  // The projection first: a column it drops may be of a type the source
  // does not take.
  const std::optional<std::string> columns = config.find("transform.columns");
  const std::vector<std::string> keep = columns ? split_list(*columns) : std::vector<std::string>{};
  Stream changes =
      graph.source("mysql-cdc", mysql_cdc_source(source, capture_tables(source, keep)));
  if (columns) changes = project(changes, "project", keep);
  add_mysql_sink(changes, "mysql", MySqlSinkOptions::from(config));
}

std::string as_flink_sql(const Config& config, const JobGraph& graph) {
  const Schema& source = graph.nodes().front().output.schema;
  const Schema& written = graph.nodes().at(graph.nodes().size() - 2).output.schema;
  const std::string table = config.get_string("sink.table");
  return flink_sql::mysql_cdc_table("source", source, config) + "\n" +
         flink_sql::jdbc_table(table, written, config) + "\n" +
         flink_sql::insert(table, "source", written);
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
                             "among them); all when unset"}}});
  return {.name = "mysql-to-mysql",
          .summary = "a MySQL table's changes, snapshot then binlog, replicated into another table",
          .options = options,
          .build = build,
          .report = report,
          .flink_sql = as_flink_sql};
}

}  // namespace sluice
