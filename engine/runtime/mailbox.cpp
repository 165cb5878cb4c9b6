#include "sluice/engine/runtime/mailbox.hpp"

namespace sluice {

void Mailbox::post(std::function<void()> mail) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mail_.push_back(std::move(mail));
    has_mail_.store(true, std::memory_order_release);
  }
  owner_.notify();
}

void Mailbox::run_mail() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(mail_);
    has_mail_.store(false, std::memory_order_release);
  }
  for (auto& mail : batch) mail();
}

bool Mailbox::offer_tick(int64_t tick) {
  const bool was_free = tick_.exchange(tick, std::memory_order_acq_rel) == 0;
  owner_.notify();
  return was_free;
}

}  // namespace sluice
