#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "sluice/engine/checkpoint/subtask_checkpointer.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/graph/operator.hpp"
#include "sluice/engine/runtime/operator_context.hpp"
#include "sluice/engine/runtime/record_writer.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"

/// The operators of one task and how batches move between them. Internal to
/// the engine.
namespace sluice {

/// One operator subtask of a task's chain: its definition, counters,
/// context and the operator itself. The task owns its members; the operator
/// chain links them and the subtask checkpointer snapshots them.
struct ChainMember final : SubtaskCheckpointer::Member {
  const NodeDef* node = nullptr;
  OperatorMetrics* metrics = nullptr;
  std::unique_ptr<Source> source;  ///< exactly one of these three is set
  std::unique_ptr<Operator> op;
  std::unique_ptr<Sink> sink;
  /// What the operator was opened with; null where it keeps no state and
  /// reads no key (operators a test links by hand).
  std::unique_ptr<TaskOperatorContext> context;

  const std::string& name() const override { return node->name; }
  CheckpointHooks& hooks() const override;
  StateStore* store_to_snapshot() const override;
  /// The context, where the operator reads each record's key from it.
  TaskOperatorContext* keys() const;
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
  /// Links `members` (upstream first; they must outlive it). `writer` takes
  /// what the last member emits, unless that is a sink. `check_rows`: see
  /// RuntimeOptions::check_rows.
  OperatorChain(const std::vector<ChainMember>& members, BatchReceiver* writer, bool check_rows);
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
  const std::vector<ChainMember>& members_;
  std::vector<std::unique_ptr<MemberOutput>> outputs_;  // by member; none for a sink
  std::vector<std::unique_ptr<BatchReceiver>> links_;   // the transforms' and the sink's
  BatchReceiver* head_ = nullptr;
};

}  // namespace sluice
