#pragma once

#include <functional>
#include <string>

#include "engine/metrics.hpp"
#include "engine/row.hpp"

/// The three interfaces a job author implements: Source, Operator and Sink.
/// The engine creates one instance per subtask, calls it on that subtask's
/// thread only, and destroys it there. Anything they throw fails the job with
/// the operator's name; control events (flush signals, barriers, end of
/// input) are handled by the engine and reach user code only through the
/// hooks below.
namespace sluice {

/// Where an operator sends the records it produces.
class Collector {
 public:
  virtual ~Collector() = default;
  virtual void emit(Row&& row) = 0;
  void emit(const Row& row) { emit(Row(row)); }
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
};

/// What the engine offers a sink when it opens.
class SinkContext : public OperatorContext {
 public:
  /// Registers what the sink does on a FlushSignal. The engine runs it on the
  /// sink's own thread, between two write() calls, once per flush tick. A sink
  /// that registers nothing is not told about flush signals at all.
  virtual void register_flush_action(std::function<void()> action) = 0;
};

/// What poll_next() says about the source.
enum class PollResult {
  kMoreAvailable,     ///< call again at once
  kNothingAvailable,  ///< nothing now; the engine polls again a little later
  kEndOfInput,        ///< the source is done
};

/// A source of records. The engine polls it, so it never blocks waiting for
/// input and the task can serve its mailbox between polls.
class Source {
 public:
  virtual ~Source() = default;
  virtual void open(OperatorContext& context) { (void)context; }
  /// Emits the next few records (keep it to a handful: the task checks its
  /// mailbox between polls) and says whether more are available.
  virtual PollResult poll_next(Collector& out) = 0;
};

/// A transform: turns each input record into zero or more output records.
class Operator {
 public:
  virtual ~Operator() = default;
  virtual void open(OperatorContext& context) { (void)context; }
  virtual void process(Row&& row, Collector& out) = 0;
  /// Called once at end of input, to emit anything the operator held back.
  virtual void finish(Collector& out) { (void)out; }
};

/// The end of a graph: writes records somewhere.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void open(SinkContext& context) { (void)context; }
  virtual void write(Row&& row) = 0;
  /// Called once at end of input: write whatever is still buffered.
  virtual void finish() {}
};

}  // namespace sluice
