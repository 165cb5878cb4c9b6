// A changelog (generated, read from a file, or a table's changes through
// the binlog) counted and summed per key, printed or upserted into a table
// (sink.table).
// The sums live in RocksDB state and are checkpointed: killed and rerun, the
// job resumes where its last checkpoint was and prints the same results.
#include "sluice/jobs/aggregate_job.hpp"

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/file/changelog_file.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/transforms/changelog_normalize.hpp"
#include "sluice/transforms/keyed_aggregate.hpp"

namespace sluice {
namespace {

const Schema kOrders({{"id", DataType::bigint()},
                      {"customer", DataType::bigint()},
                      {"amount", DataType::decimal(10, 2)}},
                     {"id"});

// The source's operator name for `source.kind`.
std::string source_name(const std::string& kind) {
  if (kind == "datagen") return "orders";
  if (kind == "mysql-cdc") return "mysql-cdc";
  return "changelog";
}

Stream changelog(const Config& config, JobGraph& graph) {
  const std::string kind = config.get_string("source.kind");
  if (kind == "datagen") {
    return graph.source(source_name(kind), datagen_source(DatagenOptions::from(config, kOrders)));
  }
  if (kind == "mysql-cdc") {
    const MySqlCdcOptions cdc = MySqlCdcOptions::from(config);
    return graph.source(source_name(kind), mysql_cdc_source(cdc, capture_tables(cdc)));
  }
  const auto schema_text = config.find("source.schema");
  if (!schema_text) throw ConfigError("option 'source.schema' is required for a changelog file");
  Schema schema;
  try {
    schema = Schema::parse(*schema_text);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("option 'source.schema': ") + e.what());
  }
  // Its deletes may give the key alone: the aggregate needs whole rows.
  return graph
      .source(source_name(kind), changelog_file_source(ChangelogFileOptions::from(config, schema)))
      .transform("normalize", changelog_normalize());
}

void build(const Config& config, JobGraph& graph) {
  Stream sums = changelog(config, graph)
                    .transform("aggregate", keyed_aggregate({config.get_string("aggregate.key")},
                                                            config.get_string("aggregate.value")));
  if (config.find("sink.table")) {
    sums.sink("mysql", mysql_sink(MySqlSinkOptions::from(config)));
  } else {
    sums.sink("print", print_sink());
  }
}

// The aggregate as a GROUP BY; the tables come from the source and the sink.
std::string as_flink_sql(const Config& config) {
  const std::string source = source_name(config.get_string("source.kind"));
  const std::string key = config.get_string("aggregate.key");
  const std::string value = config.get_string("aggregate.value");
  return "INSERT INTO `" + config.find("sink.table").value_or("print") + "`\nSELECT `" + key +
         "`, COUNT(*) AS `count`, SUM(`" + value + "`) AS `sum`\nFROM `" + source + "` GROUP BY `" +
         key + "`;\n";
}

}  // namespace

JobDefinition aggregate_job() {
  std::vector<OptionSpec> options = {
      {.key = "source.kind",
       .type = OptionType::kEnum,
       .default_value = "datagen",
       .doc = "where the changelog comes from",
       .choices = {"datagen", "changelog-file", "mysql-cdc"}},
      {.key = "aggregate.key",
       .default_value = "customer",
       .doc = "aggregate: the column to group by"},
      {.key = "aggregate.value", .default_value = "amount", .doc = "aggregate: the column to sum"},
  };
  const OptionTable sources = OptionTable(datagen_option_specs())
                                  .merged(changelog_file_option_specs())
                                  .merged(mysql_cdc_option_specs())
                                  .merged(mysql_sink_option_specs());
  options.insert(options.end(), sources.specs().begin(), sources.specs().end());
  return {.name = "aggregate",
          .summary =
              "a changelog counted and summed per key in checkpointed state, printed or "
              "upserted into sink.table",
          .options = options,
          .defaults = {{"source.rows", "100000"},
                       {"source.keys", "10000"},
                       {"source.mix", "I:60,U:30,D:10"}},
          .build = build,
          .flink_sql_query = as_flink_sql};
}

}  // namespace sluice
