#include "sluice/engine/runtime/record_writer.hpp"

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
    Lane lane{output.partitioning,
              std::move(output.key_indexes),
              std::move(output.key_images),
              {},
              0,
              {}};
    for (Channel* channel : output.channels) lane.pending.push_back({channel, nullptr});
    lane.rows_of.resize(lane.pending.size());
    lanes_.push_back(std::move(lane));
  }
}

void RecordWriter::push(Batch& rows) {
  metrics_.records_written.add(rows.selected());
  // Every lane but the last gets a copy.
  for (size_t i = 0; i < lanes_.size(); ++i) route(lanes_[i], rows, i + 1 < lanes_.size());
  rows.clear();
}

void RecordWriter::route(Lane& lane, Batch& rows, bool copy) {
  if (lane.pending.size() == 1) {
    Pending& p = pending(lane, 0, rows);
    if (copy) {
      p.batch->append(rows);
    } else {
      p.batch->take(rows);
    }
    if (p.batch->selected() >= batch_size_) hand_over(p);
    return;
  }
  // Which rows go to which channel, then each channel's rows copied column
  // by column.
  for (auto& rows_of : lane.rows_of) rows_of.clear();
  rows.for_each([&](uint32_t i) { lane.rows_of[select(lane, rows, i)].push_back(i); });
  for (size_t c = 0; c < lane.pending.size(); ++c) {
    if (lane.rows_of[c].empty()) continue;
    Pending& p = pending(lane, c, rows);
    p.batch->append(rows, lane.rows_of[c]);
    if (p.batch->selected() >= batch_size_) hand_over(p);
  }
}

RecordWriter::Pending& RecordWriter::pending(Lane& lane, size_t channel, const Batch& rows) {
  Pending& p = lane.pending[channel];
  // A batch holds one table's rows: another table's start a new one.
  const auto other_table = [&] {
    return p.batch->table() != rows.table() || &p.batch->schema() != &rows.schema();
  };
  if (p.batch && !p.batch->empty() && other_table()) hand_over(p);
  if (!p.batch) p.batch = p.channel->acquire();
  if (other_table()) p.batch->set_table(rows.schema(), rows.table());
  return p;
}

size_t RecordWriter::select(Lane& lane, const Batch& rows, uint32_t row) {
  const size_t n = lane.pending.size();
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
      for (size_t i = 0; i < lane.key_indexes.size(); ++i) {
        const ColumnVector& column = rows.column(lane.key_indexes[i]);
        const bool imaged = i < lane.key_images.size() && lane.key_images[i] &&
                            column.type() == TypeId::kString && !column.is_null(row);
        h = mix(h ^ (imaged ? hash_field(lane.key_images[i](column.string_at(row)))
                            : column.hash(row)));
      }
      return h % n;
    }
  }
  return 0;
}

void RecordWriter::emit_event(ControlEvent event) {
  for (auto& lane : lanes_) {
    for (auto& p : lane.pending) {
      if (!p.batch) p.batch = p.channel->acquire();
      p.batch->event = event;
      hand_over(p);
    }
  }
}

void RecordWriter::flush_partial() {
  for (auto& lane : lanes_) {
    for (auto& p : lane.pending) {
      if (p.batch && !p.batch->empty()) hand_over(p);
    }
  }
}

void RecordWriter::hand_over(Pending& p) {
  metrics_.batches_out.add(1);
  if (p.channel->try_push(p.batch)) return;

  // The channel is full: backpressure. Let the other channels' consumers have
  // what is waiting for them, then wait for room.
  const auto start = std::chrono::steady_clock::now();
  for (auto& lane : lanes_) {
    for (auto& other : lane.pending) {
      if (&other != &p && other.batch && !other.batch->empty() &&
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
