#include "sluice/engine/checkpoint/barrier_aligner.hpp"

#include <stdexcept>
#include <string>

namespace sluice {

std::optional<std::chrono::nanoseconds> BarrierAligner::on_barrier(size_t input, int64_t id) {
  if (!aligning_) {
    aligning_ = id;
    started_ = std::chrono::steady_clock::now();
  } else if (*aligning_ != id) {
    throw std::logic_error("barrier " + std::to_string(id) + " arrived while aligning barrier " +
                           std::to_string(*aligning_));
  }
  inputs_.block(input);
  if (!inputs_.all_live_blocked()) return std::nullopt;
  return std::chrono::steady_clock::now() - started_;
}

void BarrierAligner::release() {
  inputs_.unblock_all();
  aligning_.reset();
}

}  // namespace sluice
