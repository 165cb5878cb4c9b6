#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/engine/data/changelog_mode.hpp"
#include "sluice/engine/data/schema.hpp"
#include "sluice/engine/graph/operator.hpp"
#include "sluice/engine/graph/options.hpp"
#include "sluice/engine/graph/runtime_options.hpp"

namespace sluice {

/// What flows on an edge: the columns and the row kinds.
struct StreamType {
  Schema schema;
  ChangelogMode mode = ChangelogMode::insert_only();
  /// Whether a -D may carry only its key, the other columns NULL (as a
  /// changelog file's may). Such a stream goes only into sinks and into
  /// changelog_normalize(), which validate() checks.
  bool key_only_deletes = false;
  /// A stream of several tables (a database's): each batch holds the rows
  /// of one, Batch::table() indexing this list, and `schema` is empty. Only
  /// operators and sinks that say they take such a stream get it; table()
  /// selects one table's rows as a stream of its schema. Empty: a stream of
  /// `schema`.
  std::vector<TableSchema> tables;
};

/// A source or sink as a Flink SQL table, for `describe --as flink-sql`:
/// what a user moving the job to a Flink cluster would declare for it.
struct FlinkSqlTable {
  /// Its name in Flink SQL. Empty: the operator's name.
  std::string name;
  /// Its columns. Empty: the stream's (a sink's: those it takes).
  Schema schema;
  /// The connector's WITH options, 'connector' first; never a password.
  std::vector<std::pair<std::string, std::string>> options;
  /// What Flink's table does not do that the connector does, if anything.
  std::string note;
  /// A sink's: a column the INSERT fills with `constant` (the source table
  /// of rows merged into one target). Empty: none.
  std::string constant_column, constant;
};

/// The Flink SQL table of one table of a stream (StreamType::tables; a
/// stream of one schema is one table with an empty name), under the
/// engine's `runtime` options.
using FlinkSqlTableOf =
    std::function<FlinkSqlTable(const TableSchema& table, const RuntimeOptions& runtime)>;

using SourceFactory = std::function<std::unique_ptr<Source>(const SubtaskInfo&)>;
using OperatorFactory = std::function<std::unique_ptr<Operator>(const SubtaskInfo&)>;
using SinkFactory = std::function<std::unique_ptr<Sink>(const SubtaskInfo&)>;

/// A source as the graph sees it before anything runs.
struct SourceDef {
  StreamType output;
  SourceFactory create;
  /// Records per second over all subtasks; 0 = as fast as possible.
  double rate = 0;
  /// The most subtasks it can run with (a single file: 1); 0 = any. The
  /// job's default parallelism is capped at it.
  int max_parallelism = 0;
  /// Names a position it gave a row (Collector::emit(row, position)) in an
  /// error message, e.g. "line 12 of orders.csv".
  std::function<std::string(int64_t position)> describe_position;
  /// The source as Flink SQL tables, one per table it reads; null: it has
  /// no Flink equivalent.
  FlinkSqlTableOf flink_sql;
};

/// `source.rate`, which every source reads into SourceDef::rate.
OptionSpec source_rate_spec();

/// An operator as the graph sees it before anything runs.
struct OperatorDef {
  OperatorFactory create;
  /// What it emits; by default what it takes.
  std::optional<StreamType> output;
  /// Checks the operator against its input at validate(); returns the problems.
  std::function<std::vector<std::string>(const StreamType& input)> check;
  /// Whether it takes a stream of several tables (StreamType::tables).
  bool takes_tables = false;
  /// Whether it keeps keyed state (keyed_value_state(), keyed_map_state()).
  /// Then all records of a key must reach the subtask holding its state:
  /// validate() requires its input to come through key_by, unless it runs
  /// with parallelism 1.
  bool keyed_state = false;
  /// Its input comes hash-partitioned by these columns, as after
  /// Stream::key_by(). Empty: as the stream before it says.
  std::vector<std::string> key_by;
  /// Whether it takes a stream whose deletes may carry only the key
  /// (StreamType::key_only_deletes), as changelog_normalize() does.
  bool takes_key_only_deletes = false;
  /// Of an operator made for its input (its columns, its key):
  /// Stream::transform() calls it with the input's type and adds the
  /// operator it returns. Null: this def is the operator.
  std::function<OperatorDef(const StreamType& input)> for_input;
};

/// What a STRING key column's values are equal by, where not by their
/// bytes: their image under this function (a collation's weights, say).
using KeyImage = std::function<std::string(std::string_view value)>;

/// A sink as the graph sees it before anything runs.
struct SinkDef {
  SinkFactory create;
  /// Columns keying the sink's writes. With parallelism > 1 the engine
  /// hash-partitions the sink's input by them, so each key has one writer.
  std::vector<std::string> key_columns;
  /// Per key column, or empty: what the sink takes a STRING key's values to
  /// be equal by ('abc' and 'ABC' under a case-insensitive collation). The
  /// engine hashes that image instead of the bytes when it partitions, so
  /// that values the sink takes for one key reach one subtask. Null: the
  /// bytes.
  std::vector<KeyImage> key_images;
  /// Checks the sink against its input at validate(); returns the problems.
  std::function<std::vector<std::string>(const StreamType& input)> check;
  /// Whether it takes a stream of several tables (StreamType::tables),
  /// instead of one. It then runs with the parallelism of its input.
  bool takes_tables = false;
  /// Whether the sink spends its time waiting on something outside the
  /// process (a server's answer): it then runs in a task of its own, never
  /// chained to its input, so that the input's work goes on meanwhile
  /// instead of waiting with it.
  bool waits_on_io = false;
  /// The subtasks it asks for; 0: the job's parallelism.
  /// SinkHandle::parallelism() overrides it.
  int parallelism = 0;
  /// The sink as the Flink SQL table each table it takes goes into; null:
  /// it has no Flink equivalent.
  FlinkSqlTableOf flink_sql;
  /// Of a sink made for the stream it writes (its columns, its key):
  /// Stream::sink() calls it with that stream's type and attaches the sink
  /// it returns. Null: this def is the sink.
  std::function<SinkDef(const StreamType& input)> for_input;
};

enum class Partitioning {
  kForward,    ///< subtask i to subtask i (chained when possible)
  kRebalance,  ///< round robin over the downstream subtasks
  kHash,       ///< by the hash of key columns
};

struct NodeDef;
class JobGraph;
class SinkHandle;

namespace detail {

// Whether a user's function takes a RowRef (works on the batch in place)
// rather than a Row (gets a copy of each record).
template <typename F, typename... Rest>
constexpr bool kTakesRowRef = std::is_invocable_v<F&, RowRef, Rest...>;

template <typename F>
class MapOperator final : public Operator {
 public:
  explicit MapOperator(F fn) : fn_(std::move(fn)) {}
  void process_row(RowRef row, Collector& out) override {
    if constexpr (kTakesRowRef<F>) {
      fn_(row);
      out.emit(row);
    } else {
      out.emit(fn_(row.to_row()));
    }
  }
  void process_batch(Batch& rows, Collector& out) override {
    if constexpr (kTakesRowRef<F>) {
      uint32_t done = 0;
      try {
        rows.for_each([&](uint32_t i) {
          fn_(RowRef(rows, i));
          ++done;
        });
      } catch (...) {
        // The records before the one that failed go on.
        rows.keep_first(done);
        out.emit_batch(rows);
        throw;
      }
      out.emit_batch(rows);
    } else {
      rows.for_each([&](uint32_t i) { out.emit(fn_(rows.row(i))); });
      rows.clear();
    }
  }

 private:
  F fn_;
};

template <typename F>
class FilterOperator final : public Operator {
 public:
  explicit FilterOperator(F fn) : fn_(std::move(fn)) {}
  void process_row(RowRef row, Collector& out) override {
    if (keep(row)) out.emit(row);
  }
  // The rows dropped leave the selection; none is copied.
  void process_batch(Batch& rows, Collector& out) override {
    try {
      rows.keep_if([&](uint32_t i) { return keep(RowRef(rows, i)); });
    } catch (...) {
      out.emit_batch(rows);  // the records kept before the failure go on
      throw;
    }
    out.emit_batch(rows);
  }

 private:
  bool keep(RowRef row) {
    if constexpr (kTakesRowRef<F>) {
      return fn_(row);
    } else {
      const Row copy = row.to_row();
      return fn_(copy);
    }
  }
  F fn_;
};

template <typename F>
class FlatMapOperator final : public Operator {
 public:
  explicit FlatMapOperator(F fn) : fn_(std::move(fn)) {}
  void process_row(RowRef row, Collector& out) override {
    if constexpr (kTakesRowRef<F, Collector&>) {
      fn_(row, out);
    } else {
      fn_(row.to_row(), out);
    }
  }

 private:
  F fn_;
};

}  // namespace detail

/// A non-owning handle on an operator's output, to add operators after it.
/// Handles stay valid as long as their JobGraph.
class Stream {
 public:
  /// `fn(RowRef)` changes every record in place; or `fn(Row) -> Row`
  /// returns a new one. The functions of map, filter and flat_map are
  /// inlined into the operator's loop over a batch; those taking a RowRef
  /// work on the batch's columns without copying a record.
  template <typename F>
  Stream map(std::string name, F fn) {
    return transform(std::move(name), factory_of<detail::MapOperator<F>>(std::move(fn)));
  }
  /// A map that changes the columns, `fn(Row) -> Row`: `output` describes its records.
  template <typename F>
  Stream map(std::string name, F fn, Schema output) {
    return transform(std::move(name),
                     OperatorDef{.create = factory_of<detail::MapOperator<F>>(std::move(fn)),
                                 .output = StreamType{std::move(output), type().mode}});
  }
  /// Keeps the records for which `predicate(RowRef)` (or `predicate(const Row&)`) holds.
  template <typename F>
  Stream filter(std::string name, F predicate) {
    return transform(std::move(name), factory_of<detail::FilterOperator<F>>(std::move(predicate)));
  }
  /// `fn(RowRef, Collector&)` (or `fn(Row&&, Collector&)`) emits any number
  /// of records for each one.
  template <typename F>
  Stream flat_map(std::string name, F fn) {
    return transform(std::move(name), factory_of<detail::FlatMapOperator<F>>(std::move(fn)));
  }
  /// A custom operator.
  Stream transform(std::string name, OperatorDef def);
  /// A custom operator that emits what it takes and keeps no keyed state.
  Stream transform(std::string name, OperatorFactory factory) {
    OperatorDef def;
    def.create = std::move(factory);
    return transform(std::move(name), std::move(def));
  }
  SinkHandle sink(std::string name, SinkDef def);

  /// The rows of table `name` of a stream of several tables
  /// (StreamType::tables), as a stream of that table's columns.
  Stream table(const std::string& name);

  /// The next operator receives this stream hash-partitioned by `columns`.
  Stream key_by(std::vector<std::string> columns) const;
  /// The next operator receives this stream round robin.
  Stream rebalance() const;

  /// Sets the parallelism of the operator that produces this stream.
  Stream& parallelism(int n);
  /// Keeps the producing operator out of any chain: it gets its own thread.
  Stream& disable_chaining();

  const StreamType& type() const;

  /// This stream's column `name` as a typed handle, for `row[column]` in
  /// the operators after it. A column it lacks, or whose type `T` does not
  /// hold (see column_type_of), is a problem that validate() reports naming
  /// the operator that produces this stream.
  template <typename T>
  TypedColumn<T> column(const std::string& name) const {
    return TypedColumn<T>(name, column_index(name, column_type_of<T>()));
  }

 private:
  friend class JobGraph;
  Stream(JobGraph* graph, int node) : graph_(graph), node_(node) {}
  Stream add(NodeDef node) const;
  size_t column_index(const std::string& name, TypeId type) const;
  // Each subtask gets its own copy of the user's function.
  template <typename Op, typename Fn>
  static OperatorFactory factory_of(Fn fn) {
    return [fn = std::move(fn)](const SubtaskInfo&) { return std::make_unique<Op>(fn); };
  }

  JobGraph* graph_;
  int node_;
  Partitioning next_ = Partitioning::kForward;
  std::vector<std::string> next_keys_;
};

/// A non-owning handle on a sink.
class SinkHandle {
 public:
  SinkHandle& parallelism(int n);
  SinkHandle& disable_chaining();

 private:
  friend class Stream;
  SinkHandle(JobGraph* graph, int node) : graph_(graph), node_(node) {}
  JobGraph* graph_;
  int node_;
};

/// A job: sources, transforms and sinks joined by edges. Build it with the
/// fluent API, then hand it to an Executor. Builder calls never throw;
/// validate() reports every problem at once, naming the operator.
///
/// @code
///   JobGraph graph("doubler");
///   Stream numbers = graph.source("numbers", datagen_source(options));
///   const auto id = numbers.column<int64_t>("id");
///   const auto value = numbers.column<int64_t>("value");
///   numbers.map("double", [value](RowRef row) { row[value] *= 2; })
///       .filter("even-ids", [id](RowRef row) { return row[id] % 2 == 0; })
///       .sink("print", print_sink());
///   JobResult result = Executor(options).run(graph);
/// @endcode
class JobGraph {
 public:
  explicit JobGraph(std::string name = "job");
  ~JobGraph();
  JobGraph(const JobGraph&) = delete;
  JobGraph& operator=(const JobGraph&) = delete;

  Stream source(std::string name, SourceDef def);

  /// Every problem of the graph, each naming its operator; empty when valid.
  std::vector<std::string> validate() const;
  /// Throws ConfigError listing validate()'s problems, if any.
  void check() const;

  const std::string& name() const { return name_; }
  /// What operator `name` emits (a sink: what it takes); throws ConfigError
  /// for a name the graph does not have.
  const StreamType& type_of(const std::string& name) const;
  /// The operators in the order they were added, which is a topological
  /// order (NodeDef: engine/graph/node_def.hpp). For the engine and the CLI.
  const std::vector<NodeDef>& nodes() const { return nodes_; }

 private:
  friend class Stream;
  friend class SinkHandle;

  std::string name_;
  std::vector<NodeDef> nodes_;
};

}  // namespace sluice
