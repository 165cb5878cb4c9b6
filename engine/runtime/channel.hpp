#pragma once

#include <boost/lockfree/spsc_queue.hpp>
#include <memory>

#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/runtime/notifier.hpp"

namespace sluice {

/// A bounded single-producer/single-consumer queue of batches between two
/// subtasks. It never blocks: try_push() fails when the channel is full and
/// the producer decides how to wait (see RecordWriter). Every push wakes the
/// consumer's notifier, every pop the producer's. Consumed batches travel
/// back through a second queue so their columns are reused.
class Channel {
 public:
  /// `capacity` batches of `schema`'s columns; `consumer` and `producer` are
  /// the two tasks' notifiers. `schema` must outlive the channel.
  Channel(size_t capacity, Notifier& consumer, Notifier& producer, const Schema& schema);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  size_t capacity() const { return capacity_; }

  // Producer side.
  /// An empty batch, recycled when one is available.
  std::unique_ptr<Batch> acquire();
  /// Hands `batch` to the consumer and returns true, or returns false (and
  /// leaves `batch` alone) when the channel holds `capacity` batches.
  bool try_push(std::unique_ptr<Batch>& batch);

  // Consumer side.
  /// The oldest batch, or null when the channel is empty.
  std::unique_ptr<Batch> try_pop();
  bool empty() const { return queue_.read_available() == 0; }
  /// Returns a consumed batch for reuse.
  void recycle(std::unique_ptr<Batch> batch);

 private:
  const size_t capacity_;
  const Schema& schema_;
  Notifier& consumer_;
  Notifier& producer_;
  boost::lockfree::spsc_queue<Batch*> queue_;
  boost::lockfree::spsc_queue<Batch*> free_;
};

}  // namespace sluice
