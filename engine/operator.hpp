#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/metrics.hpp"
#include "engine/row.hpp"
#include "engine/state.hpp"

/// The three interfaces a job author implements: Source, Operator and Sink.
/// The engine creates one instance per subtask, calls it on that subtask's
/// thread only, and destroys it there. Anything they throw fails the job with
/// the operator's name; control events (flush signals, barriers, end of
/// input) are handled by the engine and reach user code only through the
/// hooks below.
namespace sluice {

/// Rows handed along a chain together.
using RowBatch = std::vector<Row>;

/// Where an operator sends the records it produces.
class Collector {
 public:
  virtual ~Collector() = default;
  virtual void emit(Row&& row) = 0;
  void emit(const Row& row) { emit(Row(row)); }
  /// Takes every row of `rows`, in order, and leaves it empty, its capacity
  /// kept for the caller: one virtual call for many rows.
  virtual void emit_batch(RowBatch& rows) {
    for (Row& row : rows) emit(std::move(row));
    rows.clear();
  }
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
  /// The live counters of the task running this operator.
  virtual const TaskMetrics& metrics() const = 0;
  /// A counter of this operator's own, reported as "<operator>.<name>".
  virtual Counter& counter(const std::string& name) = 0;

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
  /// null otherwise.
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
  /// The checkpoint this run resumed from, if it resumed.
  virtual std::optional<int64_t> restored_checkpoint() const = 0;
  /// Whether the job takes checkpoints (checkpoint.interval > 0).
  virtual bool checkpoints_enabled() const = 0;
};

/// What the engine offers a sink when it opens.
class SinkContext : public OperatorContext {
 public:
  /// Registers what the sink does on a FlushSignal. The engine runs it on the
  /// sink's own thread, between two write() calls, once per flush tick. A sink
  /// that registers nothing is not told about flush signals at all.
  virtual void register_flush_action(std::function<void()> action) = 0;
  /// Registers what unblocks the sink when the job is cancelled (by the user
  /// or by another task's failure) while it waits on something outside the
  /// engine, such as a database call. The engine runs it from another
  /// thread, possibly while the sink is inside write() or a hook, and never
  /// after the sink is destroyed: it must be thread-safe and return at once.
  /// What the interrupted call then throws does not fail the job.
  virtual void register_cancel_action(std::function<void()> action) = 0;
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
class Operator : public CheckpointHooks {
 public:
  virtual void open(OperatorContext& context) { (void)context; }
  virtual void process(Row&& row, Collector& out) = 0;
  /// Processes `rows` in order, as process() on each would, and leaves it
  /// empty. The engine calls this: override it to work on the whole batch.
  virtual void process_batch(RowBatch& rows, Collector& out) {
    for (Row& row : rows) process(std::move(row), out);
    rows.clear();
  }
  /// Called once at end of input, to emit anything the operator held back.
  virtual void finish(Collector& out) { (void)out; }
};

/// The end of a graph: writes records somewhere.
class Sink : public CheckpointHooks {
 public:
  virtual void open(SinkContext& context) { (void)context; }
  virtual void write(Row&& row) = 0;
  /// Writes `rows` in order, as write() on each would, and leaves it empty.
  /// The engine calls this: override it to take the whole batch at once.
  virtual void write_batch(RowBatch& rows) {
    for (Row& row : rows) write(std::move(row));
    rows.clear();
  }
  /// Called once at end of input: write whatever is still buffered.
  virtual void finish() {}
};

}  // namespace sluice
