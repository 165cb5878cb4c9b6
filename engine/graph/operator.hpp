#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/row.hpp"
#include "sluice/engine/graph/metrics.hpp"
#include "sluice/engine/state/state.hpp"

/// The three interfaces a job author implements: Source, Operator and Sink.
/// The engine creates one instance per subtask, calls it on that subtask's
/// thread only, and destroys it there. Anything they throw fails the job with
/// the operator's name; control events (flush signals, barriers, end of
/// input) are handled by the engine and reach user code only through the
/// hooks below.
namespace sluice {

/// Where an operator sends the records it produces: a batch of its output
/// columns, which the engine hands on when the call that filled it returns.
class Collector {
 public:
  explicit Collector(Batch& out) : out_(&out) {}
  /// For an operator whose output is a stream of several tables: `hand_on`
  /// hands on the rows `out` holds and empties it (before rows of another
  /// table go in).
  /// `change` hands on a schema change behind those rows.
  Collector(Batch& out, const std::vector<TableSchema>& tables, std::function<void()> hand_on,
            std::function<void(std::shared_ptr<const SchemaChange>)> change)
      : out_(&out), several_(true), hand_on_(std::move(hand_on)), change_(std::move(change)) {
    for (const TableSchema& table : tables) schemas_.push_back(&table.schema);
  }

  /// Appends `row`; throws DataError if it does not have the operator's
  /// declared columns, naming the first that does not fit.
  void emit(const Row& row) {
    if (std::string problem = out_->try_append(row); !problem.empty()) {
      throw DataError("emitted " + row.to_string() + ", but " + problem);
    }
  }
  /// The same, for a source: with where `row` is in its input (a line of a
  /// file, say), which errors about the row name (SourceDef::describe_position).
  void emit(const Row& row, int64_t position) {
    emit(row);
    out_->set_position(out_->size() - 1, position);
  }
  /// Appends `row` as a row of table `table` (an index into the output's
  /// StreamType::tables), in an operator whose output carries several.
  void emit(uint32_t table, const Row& row) {
    to_table(table);
    emit(row);
  }
  /// Makes what is emitted next go to table `table` of the output's tables,
  /// handing on the rows of another table emitted before.
  void to_table(uint32_t table) {
    if (!several_) throw std::logic_error("the operator's output is of one table");
    const Schema& schema = *schemas_.at(table);
    if (&out_->schema() == &schema && out_->table() == table) return;
    if (out_->size() > 0) hand_on_();
    out_->set_table(schema, table);
  }
  /// In an output of several tables: makes what is emitted next go to the
  /// table of `rows`, with its columns.
  void like(const Batch& rows) {
    if (!several_ || (out_->table() == rows.table() && &out_->schema() == &rows.schema())) return;
    if (out_->size() > 0) hand_on_();
    out_->set_table(rows.schema(), rows.table());
  }
  /// Sends `change` behind the rows emitted so far: table change->table's
  /// rows emitted after it have its new columns.
  void change_schema(std::shared_ptr<const SchemaChange> change) {
    if (!several_) throw std::logic_error("the operator's output is of one table");
    const uint32_t table = change->table;
    if (table >= schemas_.size()) schemas_.resize(table + 1, nullptr);
    schemas_[table] = &change->after.schema;
    if (out_->size() > 0) hand_on_();
    change_(std::move(change));
  }
  /// Appends a row of a batch with the same column types (of the same table).
  void emit(RowRef row) {
    like(row.batch());
    out_->append_from(row.batch(), row.index());
  }
  /// Hands on every selected row of `rows` and empties it; when nothing
  /// else was emitted since the last hand-over, its columns move without a copy.
  void emit_batch(Batch& rows) {
    like(rows);
    out_->take(rows);
  }
  /// The batch being filled, for code that writes columns in place.
  Batch& batch() { return *out_; }

 private:
  Batch* out_;
  bool several_ = false;                // an output of several tables
  std::vector<const Schema*> schemas_;  // per table, its columns now
  std::function<void()> hand_on_;
  std::function<void(std::shared_ptr<const SchemaChange>)> change_;
};

/// Which subtask an instance is.
struct SubtaskInfo {
  std::string job_name;
  std::string operator_name;
  int index = 0;        ///< 0-based
  int parallelism = 1;  ///< subtasks of this operator
};

/// What the engine offers every operator when it opens.
class OperatorContext {
 public:
  virtual ~OperatorContext() = default;
  virtual const SubtaskInfo& subtask() const = 0;
  /// A counter of this operator's own, reported as "<operator>.<name>".
  Counter& counter(const std::string& name) { return metric(name, MetricKind::kCounter); }
  /// The same for a gauge, a value that goes down as well as up (a lag, a
  /// position, a phase): Prometheus is told so.
  Counter& gauge(const std::string& name) { return metric(name, MetricKind::kGauge); }
  /// A gauge of the milliseconds since a moment: set() it to the moment, in
  /// milliseconds since the epoch (system clock); it reads as the time
  /// since, whenever it is read, and as 0 until set (Flink's sourceIdleTime).
  Counter& milliseconds_since(const std::string& name) {
    return metric(name, MetricKind::kMillisecondsSince);
  }
  /// Creates (on first use) and returns the metric `name`.
  virtual Counter& metric(const std::string& name, MetricKind kind) = 0;

  /// This subtask's state, saved at every checkpoint and restored with it.
  /// Names are the operator's own: two operators never see each other's.
  /// `T` is kept through StateCodec<T>; std::string keeps bytes as they are.
  template <typename T = std::string>
  ValueState<T> value_state(const std::string& name) {
    return ValueState<T>(raw_value_state(name));
  }
  template <typename T = std::string>
  ListState<T> list_state(const std::string& name) {
    return ListState<T>(raw_list_state(name));
  }
  virtual RawValueState raw_value_state(const std::string& name) = 0;
  virtual RawListState raw_list_state(const std::string& name) = 0;
  virtual RawKeyedValueState raw_keyed_value_state(const std::string& name) = 0;
  virtual RawKeyedMapState raw_keyed_map_state(const std::string& name) = 0;
  /// The encoded key of the record being processed (see encode_key()), which
  /// the engine sets when the operator's input is partitioned with key_by;
  /// null otherwise. An operator that calls it (keyed_value_state() does)
  /// gets its records one by one through process_row(), each with its key
  /// set: call it in open().
  virtual const std::string* current_key() const = 0;
  /// Keyed by the key of each record when the input comes through key_by.
  template <typename T = std::string>
  KeyedValueState<T> keyed_value_state(const std::string& name) {
    return KeyedValueState<T>(raw_keyed_value_state(name), current_key());
  }
  template <typename T = std::string>
  KeyedMapState<T> keyed_map_state(const std::string& name) {
    return KeyedMapState<T>(raw_keyed_map_state(name));
  }
  /// How the source this operator's input comes from names a row's input
  /// position (Batch::position()): "line 12 of orders.csv". Empty when it
  /// does not say.
  virtual std::string describe_position(int64_t position) const = 0;
  /// The checkpoint this run resumed from, if it resumed.
  virtual std::optional<int64_t> restored_checkpoint() const = 0;
  /// Whether checkpoints of the job completed after the one this run
  /// resumed from (restore=<id> of an older one): what that one held was
  /// committed long since.
  virtual bool resumed_from_older_checkpoint() const = 0;
  /// Whether the job takes checkpoints (checkpoint.interval > 0).
  virtual bool checkpoints_enabled() const = 0;
  /// Asks for the next checkpoint soon rather than at checkpoint.interval
  /// (as soon as checkpoint.min-pause allows): for an operator that holds
  /// its output back until a checkpoint completes. Any thread; nothing
  /// when checkpoints are off.
  virtual void request_checkpoint() = 0;
  /// Registers what unblocks the operator when the job is cancelled (by the
  /// user or by another task's failure) while it waits on something outside
  /// the engine, such as a database call. The engine runs it from another
  /// thread, possibly while the operator is inside a call, and never after
  /// the operator is destroyed: it must be thread-safe and return at once.
  /// What the interrupted call then throws does not fail the job.
  virtual void register_cancel_action(std::function<void()> action) = 0;
};

/// What the engine offers a sink when it opens.
class SinkContext : public OperatorContext {
 public:
  /// Registers what the sink does on a FlushSignal. The engine runs it on the
  /// sink's own thread, between two write() calls, once per flush tick. A sink
  /// that registers nothing is not told about flush signals at all.
  virtual void register_flush_action(std::function<void()> action) = 0;
};

/// The checkpoint hooks every operator may implement. The engine calls them
/// on the operator's own thread:
/// - snapshot_state(n) when checkpoint n's barrier passes the operator, after
///   every record before the barrier and before any after it; write what must
///   survive a crash to state here (sinks: flush or prepare what they hold);
/// - notify_checkpoint_complete(n) once every task saved checkpoint n:
///   commit everything up to n;
/// - notify_checkpoint_aborted(n) when n timed out or failed; the next
///   completed checkpoint covers its span.
/// One of the two notices of checkpoint n always comes before
/// snapshot_state(n + 1): checkpoints run one at a time.
class CheckpointHooks {
 public:
  virtual ~CheckpointHooks() = default;
  virtual void snapshot_state(int64_t checkpoint_id) { (void)checkpoint_id; }
  virtual void notify_checkpoint_complete(int64_t checkpoint_id) { (void)checkpoint_id; }
  virtual void notify_checkpoint_aborted(int64_t checkpoint_id) { (void)checkpoint_id; }
};

/// What poll_next() says about the source.
enum class PollResult {
  kMoreAvailable,     ///< call again at once
  kNothingAvailable,  ///< nothing now; the engine polls again a little later
  kEndOfInput,        ///< the source is done
};

/// A source of records. The engine polls it, so it never blocks waiting for
/// input and the task can serve its mailbox between polls.
class Source : public CheckpointHooks {
 public:
  /// Reads its state from the context; after a restore, seeks to the position saved there.
  virtual void open(OperatorContext& context) { (void)context; }
  /// Emits the next few records (keep it to a handful: the task checks its
  /// mailbox between polls) and says whether more are available.
  virtual PollResult poll_next(Collector& out) = 0;
};

/// A transform: turns each input record into zero or more output records.
/// Implement process(), which gets each record as a Row, or, to work on the
/// columns in place, process_row() or process_batch().
class Operator : public CheckpointHooks {
 public:
  virtual void open(OperatorContext& context) { (void)context; }
  virtual void process(Row&& row, Collector& out) {
    (void)row;
    (void)out;
    throw std::logic_error(
        "the operator implements none of process(), process_row() and process_batch()");
  }
  /// One record as a view into its batch. The engine calls it for each
  /// record, after setting the current key, when the operator reads its
  /// current key (see OperatorContext::current_key()).
  virtual void process_row(RowRef row, Collector& out) { process(row.to_row(), out); }
  /// Processes the selected rows of `rows` in order, as process_row() on
  /// each would, and leaves `rows` empty. The engine calls it otherwise:
  /// one virtual call per batch.
  virtual void process_batch(Batch& rows, Collector& out) {
    rows.for_each([&](uint32_t i) { process_row(rows.ref(i), out); });
    rows.clear();
  }
  /// Called once at end of input, to emit anything the operator held back.
  virtual void finish(Collector& out) { (void)out; }
  /// A table of its input (a stream of several) changed its columns; the
  /// rows after it have the new ones. By default it goes on downstream.
  virtual void on_schema_change(const std::shared_ptr<const SchemaChange>& change, Collector& out) {
    out.change_schema(change);
  }
};

/// The end of a graph: writes records somewhere.
class Sink : public CheckpointHooks {
 public:
  virtual void open(SinkContext& context) { (void)context; }
  virtual void write(Row&& row) = 0;
  /// Writes the selected rows of `rows` in order, as write() on each would,
  /// and leaves `rows` empty. The engine calls this: override it to take the
  /// columns without making a Row of each record.
  virtual void write_batch(Batch& rows) {
    rows.for_each([&](uint32_t i) { write(rows.row(i)); });
    rows.clear();
  }
  /// Called once at end of input: write whatever is still buffered.
  virtual void finish() {}
  /// A table of its input (a stream of several) changed its columns, after
  /// the rows written so far and before those that follow. By default the
  /// job fails: a sink that follows schema changes overrides it.
  virtual void on_schema_change(const SchemaChange& change) {
    throw Error("table '" + change.after.name + "' changed its columns (" + change.statement +
                "), and this sink does not follow schema changes");
  }
  /// Called once the job ended (finished, failed or cancelled) and no
  /// checkpoint of this run can complete any more, before the sink goes:
  /// `last_completed` is the latest checkpoint that completed (in this run,
  /// or the one it resumed from). What the sink holds for a later one will
  /// never be committed: an exactly-once sink releases it here rather than
  /// leave it to the next run.
  virtual void close(std::optional<int64_t> last_completed) { (void)last_completed; }
};

}  // namespace sluice
