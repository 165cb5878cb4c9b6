#include "sluice/engine/runtime/input_gate.hpp"

#include <algorithm>

namespace sluice {

void InputGate::add(Channel* channel) {
  channels_.push_back(channel);
  ended_.push_back(false);
  data_ended_.push_back(false);
  blocked_.push_back(false);
}

std::unique_ptr<Batch> InputGate::poll(size_t& index) {
  const size_t n = channels_.size();
  for (size_t tried = 0; tried < n; ++tried) {
    const size_t i = next_;
    next_ = next_ + 1 == n ? 0 : next_ + 1;
    if (!readable(i)) continue;
    if (auto batch = channels_[i]->try_pop()) {
      index = i;
      return batch;
    }
  }
  return nullptr;
}

bool InputGate::available() const {
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (readable(i) && !channels_[i]->empty()) return true;
  }
  return false;
}

void InputGate::recycle(size_t index, std::unique_ptr<Batch> batch) {
  channels_[index]->recycle(std::move(batch));
}

void InputGate::mark_ended(size_t index) {
  if (!ended_[index]) {
    ended_[index] = true;
    ++ended_count_;
  }
}

void InputGate::mark_data_ended(size_t index) {
  if (!data_ended_[index]) {
    data_ended_[index] = true;
    ++data_ended_count_;
  }
}

void InputGate::block(size_t index) { blocked_[index] = true; }

void InputGate::unblock_all() { std::fill(blocked_.begin(), blocked_.end(), false); }

bool InputGate::all_live_blocked() const {
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (!ended_[i] && !blocked_[i]) return false;
  }
  return true;
}

}  // namespace sluice
