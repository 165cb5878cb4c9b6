#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "sluice/engine/runtime/notifier.hpp"

namespace sluice {

/// Control messages for one task, run on the task's own thread between two
/// records. Any thread may post; only the task runs them. Flush ticks have a
/// slot of their own that holds at most one tick, so ticks that arrive while
/// a source is blocked coalesce instead of piling up.
class Mailbox {
 public:
  explicit Mailbox(Notifier& owner) : owner_(owner) {}

  /// Queues `mail` to run on the task's thread and wakes the task.
  void post(std::function<void()> mail);
  /// Whether mail is waiting (cheap; for the task loop).
  bool has_mail() const { return has_mail_.load(std::memory_order_acquire); }
  /// Runs the mail posted so far, in order, on the calling thread.
  void run_mail();

  /// Offers flush tick `tick` (> 0) and wakes the task. Returns false when a
  /// tick was still pending: the two coalesce into the newer one.
  bool offer_tick(int64_t tick);
  /// Takes the pending tick; 0 when there is none.
  int64_t take_tick() { return tick_.exchange(0, std::memory_order_acq_rel); }
  bool has_tick() const { return tick_.load(std::memory_order_acquire) != 0; }

 private:
  Notifier& owner_;
  std::mutex mutex_;
  std::deque<std::function<void()>> mail_;
  std::atomic<bool> has_mail_{false};
  std::atomic<int64_t> tick_{0};
};

}  // namespace sluice
