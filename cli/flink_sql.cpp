#include "sluice/cli/flink_sql.hpp"

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"

namespace sluice::flink_sql {
namespace {

// Flink's own type for each of ours, as Flink CDC maps MySQL's: a DECIMAL
// beyond Flink's 38 digits as STRING.
std::string type_of(const DataType& type) {
  switch (type.id) {
    case TypeId::kTimestamp:
      return "TIMESTAMP(6)";
    case TypeId::kTime:
      return "TIME(6)";
    case TypeId::kDecimal:
      return type.precision > 38 ? "STRING" : type.to_string();
    default:
      return type.to_string();
  }
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string settings(const Config& config) {
  const auto interval = config.get_duration("checkpoint.interval");
  std::string out = "SET 'parallelism.default' = '" + config.get_string("parallelism") + "';\n";
  if (interval.count() > 0) {
    out += "SET 'execution.checkpointing.interval' = '" + format_duration(interval) + "';\n";
  }
  return out;
}

std::string create_table(const std::string& name, const Schema& schema,
                         const std::vector<std::pair<std::string, std::string>>& options,
                         const std::string& comment) {
  std::string out = comment.empty() ? "" : comment + "\n";
  out += "CREATE TABLE `" + name + "` (\n";
  for (const auto& column : schema.columns()) {
    out += "  `" + column.name + "` " + type_of(column.type) + ",\n";
  }
  if (schema.has_primary_key()) {
    std::string key;
    for (const auto& k : schema.primary_key_names()) key += (key.empty() ? "`" : ", `") + k + "`";
    out += "  PRIMARY KEY (" + key + ") NOT ENFORCED\n";
  } else {
    out.erase(out.size() - 2, 1);  // the last column's comma
  }
  out += ") WITH (\n";
  for (size_t i = 0; i < options.size(); ++i) {
    out += "  " + quoted(options[i].first) + " = " + quoted(options[i].second) +
           (i + 1 < options.size() ? ",\n" : "\n");
  }
  return out + ");\n";
}

std::string datagen_table(const std::string& name, const DatagenOptions& gen) {
  std::vector<std::pair<std::string, std::string>> options = {{"connector", "datagen"}};
  if (gen.rows > 0) options.emplace_back("number-of-rows", std::to_string(gen.rows));
  if (gen.rate > 0)
    options.emplace_back("rows-per-second", std::to_string(static_cast<uint64_t>(gen.rate)));
  const std::string key =
      gen.schema.has_primary_key() ? gen.schema.primary_key_names()[0] : gen.schema.column(0).name;
  options.emplace_back("fields." + key + ".kind", "sequence");
  options.emplace_back("fields." + key + ".start", "0");
  options.emplace_back("fields." + key + ".end",
                       std::to_string(gen.rows > 0 ? gen.rows - 1 : INT64_MAX));
  const bool changes = gen.update_weight > 0 || gen.delete_weight > 0;
  return create_table(
      name, gen.schema, options,
      changes ? "-- Flink's datagen emits inserts only: Sluice's mix of updates and deletes "
                "has no equivalent here; a CDC source would supply them."
              : "");
}

std::string file_table(const std::string& name, const Schema& schema, const Config& config) {
  const bool debezium = config.get_string("source.format") == "debezium-json";
  return create_table(
      name, schema,
      {{"connector", "filesystem"},
       {"path", config.find("source.path").value_or("<source.path>")},
       {"format", debezium ? "debezium-json" : "csv"}},
      debezium ? ""
               : "-- Sluice's CSV changelog carries an op column, which Flink's csv format "
                 "does not read: convert the file to debezium-json.");
}

// Flink CDC's table-name is a regular expression: several tables as alternatives.
std::string table_pattern(const std::vector<std::string>& tables) {
  std::string out;
  for (const std::string& table : tables) out += (out.empty() ? "" : "|") + table;
  return out;
}

std::string mysql_cdc_table(const std::string& name, const Schema& schema, const Config& config,
                            const std::string& database, const std::string& table) {
  const MySqlCdcOptions source = MySqlCdcOptions::from(config);
  std::vector<std::pair<std::string, std::string>> options = {
      {"connector", "mysql-cdc"},
      {"hostname", source.url.host.empty() ? std::string("localhost") : source.url.host},
      {"port", std::to_string(source.url.port)},
      {"username", source.url.user},
      {"password", "<password>"},
      {"database-name", database.empty() ? source.url.database : database},
      {"table-name", table.empty() ? table_pattern(source.tables) : table}};
  if (source.server_id != 0) options.emplace_back("server-id", std::to_string(source.server_id));
  switch (source.startup) {
    case MySqlCdcOptions::Startup::kInitial:
      options.emplace_back("scan.startup.mode", "initial");
      break;
    case MySqlCdcOptions::Startup::kSnapshot:
      options.emplace_back("scan.startup.mode", "snapshot");
      break;
    case MySqlCdcOptions::Startup::kLatest:
      options.emplace_back("scan.startup.mode", "latest-offset");
      break;
    case MySqlCdcOptions::Startup::kPosition:
      options.emplace_back("scan.startup.mode", "specific-offset");
      options.emplace_back("scan.startup.specific-offset.file", source.position.file);
      options.emplace_back("scan.startup.specific-offset.pos",
                           std::to_string(source.position.offset));
      break;
  }
  return create_table(name, schema, options);
}

std::string jdbc_table(const std::string& name, const Schema& schema, const Config& config,
                       const std::string& table) {
  const MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  const std::string url = "jdbc:mysql://" +
                          (sink.url.host.empty() ? std::string("localhost") : sink.url.host) + ":" +
                          std::to_string(sink.url.port) + "/" + sink.url.database;
  std::vector<std::pair<std::string, std::string>> options = {
      {"connector", "jdbc"},
      {"url", url},
      {"table-name", table.empty() ? sink.table : table},
      {"username", sink.url.user},
      {"password", "<password>"},
      {"sink.buffer-flush.max-rows", std::to_string(sink.max_rows)},
      {"sink.buffer-flush.interval", format_duration(config.get_duration("engine.flush.interval"))},
      {"sink.max-retries", std::to_string(sink.max_retries)}};
  if (sink.parallelism > 1)
    options.emplace_back("sink.parallelism", std::to_string(sink.parallelism));
  const bool exactly_once = sink.delivery == MySqlSinkOptions::Delivery::kExactlyOnce;
  return create_table(
      name, schema, options,
      exactly_once ? "-- sink.delivery=exactly-once: Flink's JDBC table sink is at-least-once; "
                     "XA needs the DataStream JdbcSink.exactlyOnceSink."
                   : "");
}

std::string insert(const std::string& sink, const std::string& source, const Schema& schema,
                   const std::string& constant_column, const std::string& constant) {
  std::string columns;
  for (const auto& c : schema.columns()) columns += (columns.empty() ? "`" : ", `") + c.name + "`";
  if (!constant_column.empty())
    columns += ", " + quoted(constant) + " AS `" + constant_column + "`";
  return "INSERT INTO `" + sink + "`\nSELECT " + columns + " FROM `" + source + "`;\n";
}

std::string statement_set(const std::vector<std::string>& inserts) {
  std::string out = "EXECUTE STATEMENT SET\nBEGIN\n";
  for (const std::string& insert : inserts) out += insert;
  return out + "END;\n";
}

}  // namespace sluice::flink_sql
