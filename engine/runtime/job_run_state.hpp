#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/runtime/notifier.hpp"

namespace sluice {

/// The first error of a job and the operator it came from.
struct TaskFailure {
  std::string operator_name;
  int subtask = 0;
  int parallelism = 1;
  std::string message;
  std::exception_ptr cause;
};

/// What the executor and the tasks of one running job share: cancellation
/// and the first error. The executor owns it; each task holds a reference.
class JobRunState {
 public:
  const std::atomic<bool>& cancelled() const { return cancelled_; }
  bool is_cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  /// Records `failure` if it is the first and the job was not cancelled
  /// before (then it is what the cancellation caused), logs it otherwise;
  /// cancels the job.
  void fail(TaskFailure failure);
  /// Stops every task: blocked ones wake up and unwind, and each runs what
  /// interrupts its calls outside the engine.
  void cancel();
  /// A task's notifier, which cancel() wakes, and what interrupts its calls;
  /// every task's is added before any task starts.
  void watch(Notifier* notifier, std::function<void()> interrupt) {
    notifiers_.push_back(notifier);
    interrupts_.push_back(std::move(interrupt));
  }

  std::optional<TaskFailure> failure() const;

  /// The next flush tick, for the timer or a source that ran dry: ticks
  /// rise across the job, so that a task with several inputs acts on each
  /// once.
  int64_t next_flush_tick() { return last_flush_tick_.fetch_add(1) + 1; }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> last_flush_tick_{0};
  std::vector<Notifier*> notifiers_;
  std::vector<std::function<void()>> interrupts_;
  mutable std::mutex mutex_;
  std::optional<TaskFailure> failure_;
};

}  // namespace sluice
