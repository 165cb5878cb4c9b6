#include "sluice/engine/runtime/notifier.hpp"

#include <thread>

namespace sluice {
namespace {

// How many times a waiter checks before it sleeps (about 10-20 µs).
constexpr int kSpins = 200;

std::atomic<int> spinning_threads{0};
const int max_spinning_threads =
    static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

void Notifier::notify() {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  // Pairs with the sleepers_ increment in wait(): either the waiter sees the
  // new epoch, or this sees the sleeper and wakes it.
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    cv_.notify_all();
  }
}

bool Notifier::spin(uint64_t seen) const {
  bool moved = false;
  if (spinning_threads.fetch_add(1, std::memory_order_relaxed) < max_spinning_threads) {
    for (int i = 0; i < kSpins && !moved; ++i) {
      moved = epoch_.load(std::memory_order_acquire) != seen;
      cpu_relax();
    }
  }
  spinning_threads.fetch_sub(1, std::memory_order_relaxed);
  return moved;
}

void Notifier::wait(uint64_t seen, std::optional<Clock::time_point> deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (epoch_.load(std::memory_order_seq_cst) == seen) {
    if (!deadline) {
      cv_.wait(lock);
    } else if (cv_.wait_until(lock, *deadline) == std::cv_status::timeout) {
      break;
    }
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace sluice
