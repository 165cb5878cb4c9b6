#include "engine/record_writer.hpp"

#include <chrono>

namespace sluice {
namespace {

// A 64-bit finalizer (from MurmurHash3): BIGINT keys hash to themselves, and
// consecutive ids would otherwise land on consecutive subtasks in lockstep.
uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

RecordWriter::RecordWriter(std::vector<Output> outputs, size_t batch_size, Notifier& self,
                           const std::atomic<bool>& cancelled, TaskMetrics& metrics)
    : batch_size_(batch_size), self_(self), cancelled_(cancelled), metrics_(metrics) {
  for (auto& output : outputs) {
    Lane lane{output.partitioning, std::move(output.key_indexes), {}, 0};
    for (Channel* channel : output.channels) lane.pending.push_back({channel, nullptr});
    lanes_.push_back(std::move(lane));
  }
}

void RecordWriter::emit(Row&& row) {
  metrics_.records_written.add(1);
  route(std::move(row));
}

void RecordWriter::emit_batch(RowBatch& rows) {
  metrics_.records_written.add(rows.size());
  for (Row& row : rows) route(std::move(row));
  rows.clear();
}

void RecordWriter::route(Row&& row) {
  // Every lane but the last gets a copy.
  for (size_t i = 0; i + 1 < lanes_.size(); ++i) append(lanes_[i], Row(row));
  if (!lanes_.empty()) append(lanes_.back(), std::move(row));
}

size_t RecordWriter::select(Lane& lane, const Row& row) {
  const size_t n = lane.pending.size();
  if (n == 1) return 0;
  switch (lane.partitioning) {
    case Partitioning::kForward:
      return 0;
    case Partitioning::kRebalance: {
      const size_t i = lane.next;
      lane.next = i + 1 == n ? 0 : i + 1;
      return i;
    }
    case Partitioning::kHash: {
      uint64_t h = 0;
      for (size_t k : lane.key_indexes) h = mix(h ^ row.fields[k].hash());
      return h % n;
    }
  }
  return 0;
}

void RecordWriter::append(Lane& lane, Row&& row) {
  Pending& p = lane.pending[select(lane, row)];
  if (!p.batch) p.batch = p.channel->acquire();
  p.batch->rows.push_back(std::move(row));
  if (p.batch->rows.size() >= batch_size_) push(p);
}

void RecordWriter::emit_event(ControlEvent event) {
  for (auto& lane : lanes_) {
    for (auto& p : lane.pending) {
      if (!p.batch) p.batch = p.channel->acquire();
      p.batch->event = event;
      push(p);
    }
  }
}

void RecordWriter::flush_partial() {
  for (auto& lane : lanes_) {
    for (auto& p : lane.pending) {
      if (p.batch && !p.batch->rows.empty()) push(p);
    }
  }
}

void RecordWriter::push(Pending& p) {
  metrics_.batches_out.add(1);
  if (p.channel->try_push(p.batch)) return;

  // The channel is full: backpressure. Let the other channels' consumers have
  // what is waiting for them, then wait for room.
  const auto start = std::chrono::steady_clock::now();
  for (auto& lane : lanes_) {
    for (auto& other : lane.pending) {
      if (&other != &p && other.batch && !other.batch->rows.empty() &&
          other.channel->try_push(other.batch)) {
        metrics_.batches_out.add(1);
      }
    }
  }
  while (true) {
    const uint64_t seen = self_.epoch();
    if (p.channel->try_push(p.batch)) break;
    if (cancelled_.load(std::memory_order_acquire)) throw TaskCancelled{};
    if (!self_.spin(seen)) self_.wait(seen);
  }
  metrics_.blocked_ns.add(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count()));
}

}  // namespace sluice
