#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/checkpoint/checkpoint_protocol.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/checkpoint/subtask_checkpointer.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/physical_plan.hpp"
#include "sluice/engine/runtime/input_gate.hpp"
#include "sluice/engine/runtime/input_processor.hpp"
#include "sluice/engine/runtime/job_run_state.hpp"
#include "sluice/engine/runtime/mailbox.hpp"
#include "sluice/engine/runtime/notifier.hpp"
#include "sluice/engine/runtime/operator_chain.hpp"
#include "sluice/engine/runtime/record_writer.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"

namespace sluice {

/// One subtask of a chain of operators, on its own thread. A source task
/// polls its source; any other task reads batches from its input channels.
/// Between records it runs its mailbox; control events pass through the
/// chain's transforms untouched and are acted on at its end: a sink runs its
/// flush action, a record writer forwards the event. A barrier is forwarded
/// once it arrived on every input (alignment, by the input processor), then
/// the chain snapshots (the subtask checkpointer).
class Task final : public CheckpointParticipant, private InputEventHandler {
 public:
  Task(const JobGraph& graph, const PlanChain& chain, int subtask, const RuntimeOptions& options,
       JobRunState& job, TaskCheckpointing checkpointing);
  ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  void add_input(Channel* channel) { inputs_.add(channel); }
  void set_coordinator(CheckpointAcknowledger* coordinator) {
    checkpointing_.coordinator = coordinator;
  }
  void add_output(RecordWriter::Output output) { outputs_.push_back(std::move(output)); }

  /// The thread body: opens the chain, runs it to its end or until the job is
  /// cancelled, and destroys the operators. Never throws.
  void run();

  bool is_source() const override;
  /// False once run() has returned or is about to.
  bool running() const { return !finished_.load(std::memory_order_acquire); }
  Mailbox& mailbox() { return mailbox_; }
  Notifier& notifier() { return notifier_; }
  TaskMetrics& metrics() { return metrics_; }

  // From the checkpoint coordinator: posted, run on the task's thread.
  /// Sources: emit Barrier(id), snapshot, acknowledge.
  void post_trigger(int64_t id) override;
  void post_complete(int64_t id) override;
  void post_aborted(int64_t id) override;
  void post_finish() override;
  /// Any thread, on cancellation: runs the operators' cancel actions.
  void interrupt();

 private:
  void open_chain();
  /// Once the job ended and no checkpoint completes any more: tells the
  /// sink which did last (Sink::close).
  void close_sink();
  void close_chain();
  void run_source();
  void run_inputs();
  void serve_mailbox();
  /// Whether something needs the task now: mail, a tick, input, cancellation.
  bool has_work() const;
  /// Waits until notified or `deadline`; hands over partial batches first.
  void idle(std::optional<Notifier::Clock::time_point> deadline);
  /// What counts the records a source task's source emitted.
  const Counter& source_output() const;

  void emit_flush(int64_t tick);
  /// Forwards Barrier(id), snapshots every operator of the chain, acknowledges.
  void checkpoint(int64_t id, std::chrono::nanoseconds alignment);

  // InputEventHandler; sources call them too.
  void on_flush(int64_t tick) override;
  void on_checkpoint(int64_t id, std::chrono::nanoseconds alignment) override;
  /// No more records: operators finish, the sink writes its tail.
  void on_end_of_data() override;
  /// Nothing more at all: tell the tasks downstream.
  void end_stream();

  const JobGraph& graph_;
  const std::vector<int> nodes_;
  const int subtask_;
  const int parallelism_;
  const RuntimeOptions options_;
  JobRunState& job_;
  TaskCheckpointing checkpointing_;

  Notifier notifier_;
  Mailbox mailbox_{notifier_};
  TaskMetrics metrics_;
  InputGate inputs_;
  std::vector<RecordWriter::Output> outputs_;
  std::atomic<bool> finished_{false};
  bool sink_opened_ = false;  // its open() returned: close() it

  TaskActions actions_;  // what the chain's operators registered
  // The chain, built on the task's own thread by open_chain(), upstream first.
  std::vector<ChainMember> chain_;
  std::unique_ptr<RecordWriter> writer_;      // unless the chain ends in a sink
  std::unique_ptr<OperatorChain> operators_;  // links them
  std::unique_ptr<InputProcessor> input_;     // unless a source task
  Source* source_ = nullptr;
  Sink* sink_ = nullptr;
  int64_t last_tick_ = 0;
  // Sources: what it had emitted at its last FlushSignal (RuntimeOptions::
  // flush_on_idle).
  uint64_t emitted_at_flush_ = 0;

  // Checkpoints and the end of the stream.
  bool data_ended_ = false;       // sources: emitted EndOfData
  bool stream_finished_ = false;  // sources: the final checkpoint completed
  SubtaskCheckpointer checkpointer_{
      checkpointing_, subtask_, [this](const std::string& message, std::exception_ptr cause) {
        job_.fail({metrics_.name, subtask_, parallelism_, message, cause});
      }};
};

}  // namespace sluice
