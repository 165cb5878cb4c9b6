#include "sluice/engine/runtime/job_run_state.hpp"

#include <spdlog/spdlog.h>

namespace sluice {

void JobRunState::fail(TaskFailure failure) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_ && !is_cancelled()) {
      failure_ = std::move(failure);
    } else if (!failure_) {
      spdlog::debug("operator '{}' (subtask {}) stopped by the cancellation: {}",
                    failure.operator_name, failure.subtask + 1, failure.message);
    } else {
      spdlog::warn("operator '{}' (subtask {}) also failed: {}", failure.operator_name,
                   failure.subtask + 1, failure.message);
    }
  }
  cancel();
}

void JobRunState::cancel() {
  cancelled_.store(true, std::memory_order_release);
  for (Notifier* notifier : notifiers_) notifier->notify();
  for (const auto& interrupt : interrupts_) interrupt();
}

std::optional<TaskFailure> JobRunState::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

}  // namespace sluice
