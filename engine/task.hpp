#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/input_gate.hpp"
#include "engine/job_graph.hpp"
#include "engine/mailbox.hpp"
#include "engine/metrics.hpp"
#include "engine/notifier.hpp"
#include "engine/physical_plan.hpp"
#include "engine/record_writer.hpp"

namespace sluice {

/// The first error of a job and the operator it came from.
struct TaskFailure {
  std::string operator_name;
  int subtask = 0;
  int parallelism = 1;
  std::string message;
  std::exception_ptr cause;
};

/// What the tasks of one running job share: cancellation and the first error.
class JobRunState {
 public:
  const std::atomic<bool>& cancelled() const { return cancelled_; }
  bool is_cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  /// Records `failure` if it is the first, logs it otherwise; cancels the job.
  void fail(TaskFailure failure);
  /// Stops every task: blocked ones wake up and unwind.
  void cancel();
  /// The task notifiers that cancel() wakes; set before any task starts.
  void watch(Notifier* notifier) { notifiers_.push_back(notifier); }

  std::optional<TaskFailure> failure() const;

 private:
  std::atomic<bool> cancelled_{false};
  std::vector<Notifier*> notifiers_;
  mutable std::mutex mutex_;
  std::optional<TaskFailure> failure_;
};

/// One subtask of a chain of operators, on its own thread. A source task
/// polls its source; any other task reads batches from its input channels.
/// Between records it runs its mailbox; control events pass through the
/// chain's transforms untouched and are acted on at its end: a sink runs its
/// flush action, a record writer forwards the event.
class Task {
 public:
  Task(const JobGraph& graph, const PlanChain& chain, int subtask, const RuntimeOptions& options,
       JobRunState& job);
  ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  void add_input(Channel* channel) { inputs_.add(channel); }
  void add_output(RecordWriter::Output output) { outputs_.push_back(std::move(output)); }

  /// The thread body: opens the chain, runs it to its end or until the job is
  /// cancelled, and destroys the operators. Never throws.
  void run();

  bool is_source() const;
  /// False once run() has returned or is about to.
  bool running() const { return !finished_.load(std::memory_order_acquire); }
  Mailbox& mailbox() { return mailbox_; }
  Notifier& notifier() { return notifier_; }
  TaskMetrics& metrics() { return metrics_; }

 private:
  class Context;

  void open_chain();
  void close_chain();
  void run_source();
  void run_inputs();
  /// Emits FlushSignal(tick) from the source into the chain.
  void emit_flush(int64_t tick);
  void on_flush(int64_t tick);
  void on_end_of_input();
  void serve_mailbox();
  /// Whether something needs the task now: mail, a tick, input, cancellation.
  bool has_work() const;
  /// Waits until notified or `deadline`; hands over partial batches first.
  void idle(std::optional<Notifier::Clock::time_point> deadline);
  /// What counts the records a source task's source emitted.
  const Counter& source_output() const;

  const JobGraph& graph_;
  const std::vector<int> nodes_;
  const int subtask_;
  const int parallelism_;
  const RuntimeOptions options_;
  JobRunState& job_;

  Notifier notifier_;
  Mailbox mailbox_{notifier_};
  TaskMetrics metrics_;
  InputGate inputs_;
  std::vector<RecordWriter::Output> outputs_;
  std::atomic<bool> finished_{false};

  // The chain, built on the task's own thread by open_chain(), upstream first.
  struct Member {
    const NodeDef* node;
    OperatorMetrics* metrics;
    std::unique_ptr<Context> context;
    std::unique_ptr<Source> source;  // exactly one of these three is set
    std::unique_ptr<Operator> op;
    std::unique_ptr<Sink> sink;
    Collector* next = nullptr;  // transforms: where their output goes
  };
  std::vector<Member> chain_;
  std::unique_ptr<RecordWriter> writer_;  // unless the chain ends in a sink
  std::vector<std::unique_ptr<Collector>> links_;
  Collector* head_ = nullptr;  // where records entering the chain go
  Source* source_ = nullptr;
  Sink* sink_ = nullptr;
  std::function<void()> flush_action_;
  int64_t last_tick_ = 0;
};

}  // namespace sluice
