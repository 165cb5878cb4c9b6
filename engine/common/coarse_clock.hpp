#pragma once

#include <time.h>

#include <chrono>

namespace sluice {

/// A steady clock read from the kernel's last tick (CLOCK_MONOTONIC_COARSE):
/// a few nanoseconds a read where std::chrono::steady_clock takes about 30
/// on a virtual machine, at the price of a tick's resolution (1–4 ms). For
/// deadlines of tens of milliseconds checked in a hot loop: once a binlog
/// event, say.
struct CoarseClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<CoarseClock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return time_point(std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec));
  }
};

}  // namespace sluice
