#include "sluice/engine/runtime/channel.hpp"

namespace sluice {

// Besides the `capacity` queued batches, one may be in the producer's hands
// and one in the consumer's: that many can come back for reuse.
Channel::Channel(size_t capacity, Notifier& consumer, Notifier& producer, const Schema& schema)
    : capacity_(capacity),
      schema_(schema),
      consumer_(consumer),
      producer_(producer),
      queue_(capacity),
      free_(capacity + 2) {}

Channel::~Channel() {
  Batch* batch;
  while (queue_.pop(batch)) delete batch;
  while (free_.pop(batch)) delete batch;
}

std::unique_ptr<Batch> Channel::acquire() {
  Batch* batch;
  if (free_.pop(batch)) return std::unique_ptr<Batch>(batch);
  return std::make_unique<Batch>(schema_);
}

bool Channel::try_push(std::unique_ptr<Batch>& batch) {
  if (!queue_.push(batch.get())) return false;
  batch.release();
  consumer_.notify();
  return true;
}

std::unique_ptr<Batch> Channel::try_pop() {
  Batch* batch;
  if (!queue_.pop(batch)) return nullptr;
  producer_.notify();
  return std::unique_ptr<Batch>(batch);
}

void Channel::recycle(std::unique_ptr<Batch> batch) {
  batch->clear();
  if (free_.push(batch.get())) batch.release();
}

}  // namespace sluice
