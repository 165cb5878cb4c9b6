#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/graph/operator.hpp"
#include "sluice/engine/runtime/record_writer.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"

/// The operators of one task and how batches move between them. Internal to
/// the engine.
namespace sluice {

/// Sets an operator's current key (for its keyed state) from each record.
class KeyTaker {
 public:
  virtual ~KeyTaker() = default;
  virtual void take_key(RowRef row) = 0;
  /// Whether the operator reads the current key; if not, it takes whole batches.
  virtual bool wants_keys() const = 0;
};

class MemberOutput;

/// The operators of one task, linked on its thread: what the source or a
/// transform emits goes batch by batch to the next member; the last member
/// is a sink, or the record writer takes what it emits. A member's output
/// is handed on when the call that filled it returns, also when that call
/// throws, so that the records before a failure are delivered. Whatever a
/// member throws comes out as an OperatorFailure naming it.
class OperatorChain {
 public:
  /// One member, upstream first: exactly one of source, op and sink is set.
  struct Member {
    const NodeDef* node = nullptr;
    OperatorMetrics* metrics = nullptr;
    Source* source = nullptr;
    Operator* op = nullptr;
    Sink* sink = nullptr;
    KeyTaker* keys = nullptr;  ///< a transform whose input is keyed
  };

  /// `writer` takes what the last member emits, unless that is a sink.
  /// `check_rows`: see RuntimeOptions::check_rows.
  OperatorChain(std::vector<Member> members, BatchReceiver* writer, bool check_rows);
  ~OperatorChain();
  OperatorChain(const OperatorChain&) = delete;
  OperatorChain& operator=(const OperatorChain&) = delete;

  /// Where the batches of the task's input channels go.
  BatchReceiver& head() { return *head_; }
  /// Polls the source, the first member, once.
  PollResult poll_source();
  /// No more records: every transform finishes, in order, then the sink.
  void finish();

 private:
  std::vector<Member> members_;
  std::vector<std::unique_ptr<MemberOutput>> outputs_;  // by member; none for a sink
  std::vector<std::unique_ptr<BatchReceiver>> links_;   // the transforms' and the sink's
  BatchReceiver* head_ = nullptr;
};

}  // namespace sluice
