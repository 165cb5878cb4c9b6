#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

namespace sluice {

/// Wakes one task thread when something it waits for happens: a batch in one
/// of its input channels, room in a full output channel, a mailbox message,
/// cancellation. A waiter reads epoch(), checks its condition, then calls
/// spin(seen) and, if that saw nothing, wait(seen); a notify() after the read
/// is never missed.
///
/// notify() costs one atomic increment unless the task sleeps. spin() polls
/// for a few microseconds, but only while fewer threads spin than there are
/// cores, so waiting threads never crowd out working ones.
class Notifier {
 public:
  using Clock = std::chrono::steady_clock;

  uint64_t epoch() const { return epoch_.load(std::memory_order_seq_cst); }

  void notify();

  /// Polls briefly; true if epoch() moved on from `seen` meanwhile.
  bool spin(uint64_t seen) const;
  /// Sleeps until epoch() differs from `seen`, or until `deadline` if given.
  void wait(uint64_t seen, std::optional<Clock::time_point> deadline = std::nullopt);

 private:
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
};

}  // namespace sluice
