#include "sluice/engine/graph/job_graph.hpp"

#include <set>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/graph/node_def.hpp"

namespace sluice {
namespace {

std::string column_list(const Schema& schema) {
  std::string out;
  for (const auto& c : schema.columns()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

std::string table_list(const std::vector<TableSchema>& tables) {
  std::string out;
  for (const TableSchema& table : tables) out += (out.empty() ? "" : ", ") + table.name;
  return out;
}

// The rows of one table of a stream of several.
class TableSelect final : public Operator {
 public:
  explicit TableSelect(uint32_t table) : table_(table) {}
  void process_batch(Batch& rows, Collector& out) override {
    if (rows.table() == table_) {
      out.emit_batch(rows);
    } else {
      rows.clear();
    }
  }
  void on_schema_change(const std::shared_ptr<const SchemaChange>& change,
                        Collector& out) override {
    if (change->table != table_) return;
    if (change->after.schema.to_string() == out.batch().schema().to_string()) return;
    throw Error("table '" + change->after.name + "' changed its columns (" + change->statement +
                "); the operators after table() take the columns it had");
  }

 private:
  const uint32_t table_;
};

}  // namespace

JobGraph::JobGraph(std::string name) : name_(std::move(name)) {}
JobGraph::~JobGraph() = default;

Stream Stream::add(NodeDef node) const {
  node.inputs.push_back({node_, next_, next_keys_});
  graph_->nodes_.push_back(std::move(node));
  return Stream(graph_, static_cast<int>(graph_->nodes_.size()) - 1);
}

Stream Stream::transform(std::string name, OperatorDef def) {
  if (def.for_input) def = def.for_input(type());
  const Stream input = def.key_by.empty() ? *this : key_by(def.key_by);
  StreamType output = def.output ? std::move(*def.output) : type();
  NodeDef node{.kind = NodeKind::kOperator,
               .name = std::move(name),
               .output = std::move(output),
               .op = std::move(def)};
  return input.add(std::move(node));
}

SinkHandle Stream::sink(std::string name, SinkDef def) {
  if (def.for_input) def = def.for_input(type());
  // A sink of several tables keeps each key's changes on one subtask by
  // running as one.
  const int parallelism = def.takes_tables ? 1 : def.parallelism;
  NodeDef node{.kind = NodeKind::kSink,
               .name = std::move(name),
               .parallelism = parallelism,
               .chainable = !def.waits_on_io,
               .sink = std::move(def)};
  const Stream added = add(std::move(node));
  return SinkHandle(graph_, added.node_);
}

Stream Stream::table(const std::string& name) {
  const std::vector<TableSchema>& tables = type().tables;
  uint32_t index = 0;
  while (index < tables.size() && tables[index].name != name) ++index;
  StreamType output{.mode = type().mode, .key_only_deletes = type().key_only_deletes};
  std::string problem;
  if (index < tables.size()) {
    output.schema = tables[index].schema;
  } else {
    problem = "its input carries no table '" + name + "'" +
              (tables.empty() ? "" : "; its tables are " + table_list(tables));
  }
  Stream selected = transform(
      name, OperatorDef{.create = [index](const SubtaskInfo&) -> std::unique_ptr<Operator> {
                          return std::make_unique<TableSelect>(index);
                        },
                        .output = std::move(output),
                        .takes_tables = true});
  if (!problem.empty()) graph_->nodes_[selected.node_].problems.push_back(problem);
  return selected;
}

Stream Stream::key_by(std::vector<std::string> columns) const {
  Stream keyed = *this;
  keyed.next_ = Partitioning::kHash;
  keyed.next_keys_ = std::move(columns);
  return keyed;
}

Stream Stream::rebalance() const {
  Stream balanced = *this;
  balanced.next_ = Partitioning::kRebalance;
  balanced.next_keys_.clear();
  return balanced;
}

Stream& Stream::parallelism(int n) {
  graph_->nodes_[node_].parallelism = n;
  return *this;
}

Stream& Stream::disable_chaining() {
  graph_->nodes_[node_].chainable = false;
  return *this;
}

const StreamType& Stream::type() const { return graph_->nodes_[node_].output; }

SinkHandle& SinkHandle::parallelism(int n) {
  graph_->nodes_[node_].parallelism = n;
  return *this;
}

SinkHandle& SinkHandle::disable_chaining() {
  graph_->nodes_[node_].chainable = false;
  return *this;
}

Stream JobGraph::source(std::string name, SourceDef def) {
  NodeDef node{.kind = NodeKind::kSource, .name = std::move(name), .output = def.output};
  node.source = std::move(def);
  nodes_.push_back(std::move(node));
  return Stream(this, static_cast<int>(nodes_.size()) - 1);
}

size_t Stream::column_index(const std::string& name, TypeId type) const {
  NodeDef& node = graph_->nodes_.at(node_);
  const Schema& schema = node.output.schema;
  const std::optional<size_t> index = schema.index_of(name);
  if (!index) {
    node.problems.push_back("its output has no column '" + name + "'; its columns are " +
                            column_list(schema));
    return SIZE_MAX;
  }
  const DataType& actual = schema.column(*index).type;
  if (actual.id != type) {
    DataType wanted;
    wanted.id = type;
    node.problems.push_back("column '" + name + "' of its output is " + actual.to_string() +
                            ", not " + (type == TypeId::kDecimal ? "DECIMAL" : wanted.to_string()));
  }
  return *index;
}

std::vector<std::string> JobGraph::validate() const {
  std::vector<std::string> problems;
  std::set<std::string> names;
  std::vector<bool> has_downstream(nodes_.size(), false);
  bool has_source = false;
  bool has_sink = false;
  for (const auto& node : nodes_) {
    for (const auto& edge : node.inputs) has_downstream[edge.from] = true;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeDef& node = nodes_[i];
    const std::string who = "operator '" + node.name + "'";
    if (node.name.empty()) problems.push_back("an operator has an empty name");
    for (const std::string& problem : node.problems) problems.push_back(who + ": " + problem);
    if (!names.insert(node.name).second) {
      problems.push_back("two operators are named '" + node.name + "'; names must be unique");
    }
    if (node.parallelism < 0) {
      problems.push_back(who + ": parallelism must be at least 1, got " +
                         std::to_string(node.parallelism));
    }
    for (const auto& edge : node.inputs) {
      const std::vector<TableSchema>& tables = nodes_[edge.from].output.tables;
      const bool takes_tables =
          node.kind == NodeKind::kSink ? node.sink.takes_tables : node.op.takes_tables;
      if (!tables.empty() && !takes_tables) {
        problems.push_back(who + ": its input carries several tables (" + table_list(tables) +
                           "): select one with table(name) before it");
      } else if (tables.empty() && takes_tables) {
        problems.push_back(who + ": it takes a stream of several tables; its input is of one");
      }
      if (!tables.empty() && edge.partitioning == Partitioning::kHash) {
        problems.push_back(who + ": key_by of a stream of several tables: select one table first");
      }
      const Schema& input = nodes_[edge.from].output.schema;
      for (const auto& column : edge.key_columns) {
        if (!input.index_of(column)) {
          problems.push_back(who + ": key column '" + column + "' is not in its input (" +
                             column_list(input) + ")");
        }
      }
      if (edge.partitioning == Partitioning::kHash && edge.key_columns.empty()) {
        problems.push_back(who + ": key_by needs at least one column");
      }
    }
    switch (node.kind) {
      case NodeKind::kSource:
        has_source = true;
        if (!node.source.create) problems.push_back(who + ": the source has no factory");
        if (node.source.rate < 0) problems.push_back(who + ": rate must not be negative");
        if (node.source.max_parallelism > 0 && node.parallelism > node.source.max_parallelism) {
          problems.push_back(who + ": runs with parallelism " + std::to_string(node.parallelism) +
                             ", but this source supports at most " +
                             std::to_string(node.source.max_parallelism));
        }
        break;
      case NodeKind::kOperator:
        if (!node.op.create) problems.push_back(who + ": the operator has no factory");
        if (node.op.keyed_state && node.inputs.at(0).partitioning != Partitioning::kHash &&
            node.parallelism != 1) {
          problems.push_back(who +
                             ": it keeps keyed state, so all records of a key must reach one "
                             "subtask: put key_by(columns) before it (or give it parallelism 1)");
        }
        if (nodes_[node.inputs.at(0).from].output.key_only_deletes &&
            !node.op.takes_key_only_deletes) {
          problems.push_back(who +
                             ": its input may carry deletes with only the key, the other "
                             "columns NULL; put changelog_normalize() before it, which gives "
                             "every delete its whole row");
        }
        if (node.op.check) {
          for (const auto& problem : node.op.check(nodes_[node.inputs.at(0).from].output)) {
            problems.push_back(who + ": " + problem);
          }
        }
        break;
      case NodeKind::kSink: {
        has_sink = true;
        if (!node.sink.create) problems.push_back(who + ": the sink has no factory");
        if (node.sink.takes_tables && node.parallelism != 1) {
          problems.push_back(who +
                             ": a sink of several tables runs with parallelism 1, so that each "
                             "key's changes reach one subtask; got " +
                             std::to_string(node.parallelism));
        }
        const StreamType& input = nodes_[node.inputs.at(0).from].output;
        for (const auto& column : node.sink.key_columns) {
          if (!input.schema.index_of(column)) {
            problems.push_back("sink '" + node.name + "': key column '" + column +
                               "' is not in its input (" + column_list(input.schema) + ")");
          }
        }
        if (node.sink.check) {
          for (const auto& problem : node.sink.check(input)) {
            problems.push_back("sink '" + node.name + "': " + problem);
          }
        }
        break;
      }
    }
    if (node.kind != NodeKind::kSink && !has_downstream[i]) {
      problems.push_back(who + " leads to no sink");
    }
  }
  if (!has_source) problems.push_back("the graph has no source");
  if (!has_sink) problems.push_back("the graph has no sink");
  return problems;
}

const StreamType& JobGraph::type_of(const std::string& name) const {
  for (const NodeDef& node : nodes_) {
    if (node.name != name) continue;
    if (node.kind == NodeKind::kSink)
      return nodes_.at(static_cast<size_t>(node.inputs.at(0).from)).output;
    return node.output;
  }
  throw ConfigError("job '" + name_ + "' has no operator '" + name + "'");
}

void JobGraph::check() const {
  const auto problems = validate();
  if (problems.empty()) return;
  std::string message = "job '" + name_ + "' is not valid:";
  for (const auto& problem : problems) message += "\n  - " + problem;
  throw ConfigError(message);
}

OptionSpec source_rate_spec() {
  return {
      .key = "source.rate",
      .type = OptionType::kInteger,
      .default_value = "0",
      .doc =
          "records per second over all source subtasks; 0 = as fast as possible. A source "
          "that had nothing to emit for a while runs ahead of the rate by at most 100 ms of it"};
}

}  // namespace sluice
