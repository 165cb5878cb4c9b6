#include "sluice/cli/flink_sql.hpp"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/graph/node_def.hpp"

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
                         const std::string& note) {
  std::string out = note.empty() ? "" : "-- " + note + "\n";
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

// The tables of a stream: its own, or its one schema as a table without a name.
std::vector<TableSchema> tables_of(const StreamType& stream) {
  if (!stream.tables.empty()) return stream.tables;
  return {{"", stream.schema}};
}

void require_table(const NodeDef& node, bool described) {
  if (described) return;
  throw ConfigError(std::string(node.kind == NodeKind::kSource ? "source" : "sink") + " '" +
                    node.name + "' has no Flink SQL table (SourceDef/SinkDef::flink_sql)");
}

}  // namespace

std::string job(const JobGraph& graph, const Config& config, const std::string& query) {
  const RuntimeOptions runtime = RuntimeOptions::from(config);
  const std::vector<NodeDef>& nodes = graph.nodes();
  std::string tables;
  std::set<std::string> declared;
  // Declares, once, the table `flink` that operator `node` describes for
  // `table` of its stream; returns its name.
  const auto declare = [&](const NodeDef& node, const TableSchema& table,
                           const FlinkSqlTable& flink) {
    const std::string name = flink.name.empty() ? node.name : flink.name;
    if (declared.insert(name).second) {
      tables += create_table(name, flink.schema.size() > 0 ? flink.schema : table.schema,
                             flink.options, flink.note) +
                "\n";
    }
    return name;
  };
  // Each source's tables, by the name they have in its stream.
  std::map<int, std::map<std::string, std::string>> source_tables;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeDef& node = nodes[n];
    if (node.kind != NodeKind::kSource) continue;
    require_table(node, node.source.flink_sql != nullptr);
    for (const TableSchema& table : tables_of(node.output)) {
      source_tables[static_cast<int>(n)][table.name] =
          declare(node, table, node.source.flink_sql(table, runtime));
    }
  }
  std::vector<std::string> inserts;
  std::string untranslated;
  for (const NodeDef& node : nodes) {
    if (node.kind != NodeKind::kSink || node.inputs.empty()) continue;
    require_table(node, node.sink.flink_sql != nullptr);
    // Back to the source, through the operators in between.
    int from = node.inputs[0].from;
    std::string between;
    while (nodes[from].kind != NodeKind::kSource && !nodes[from].inputs.empty()) {
      between = "`" + nodes[from].name + "`" + (between.empty() ? "" : ", " + between);
      from = nodes[from].inputs[0].from;
    }
    const std::map<std::string, std::string>& sources = source_tables.at(from);
    for (const TableSchema& table : tables_of(nodes[node.inputs[0].from].output)) {
      const FlinkSqlTable flink = node.sink.flink_sql(table, runtime);
      const std::string name = declare(node, table, flink);
      const auto source = sources.find(table.name);
      inserts.push_back(insert(name,
                               source != sources.end() ? source->second : sources.begin()->second,
                               table.schema, flink.constant_column, flink.constant));
    }
    if (!between.empty()) {
      untranslated += "-- Not translated: the operators " + between + " between `" +
                      nodes[from].name + "` and `" + node.name +
                      "`; write what they do into the SELECT.\n";
    }
  }
  if (!query.empty()) return settings(config) + "\n" + tables + query;
  return settings(config) + "\n" + tables + untranslated +
         (inserts.size() == 1 ? inserts.front() : statement_set(inserts));
}

}  // namespace sluice::flink_sql
