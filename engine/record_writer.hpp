#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "engine/batch.hpp"
#include "engine/channel.hpp"
#include "engine/job_graph.hpp"
#include "engine/metrics.hpp"
#include "engine/operator.hpp"

namespace sluice {

/// Thrown inside a task to unwind it when the job is cancelled.
struct TaskCancelled {};

/// The output side of a task: partitions records over the channels of each
/// outgoing edge, collects them into batches and hands a batch over when it
/// is full, before any control event, and when the task is about to wait
/// (flush_partial). A full channel blocks the writer until the consumer makes
/// room; while blocked it hands over its other partial batches and, if the
/// job is cancelled, throws TaskCancelled.
class RecordWriter : public Collector {
 public:
  struct Output {
    Partitioning partitioning = Partitioning::kForward;
    std::vector<size_t> key_indexes;  ///< kHash only
    std::vector<Channel*> channels;   ///< indexed by downstream subtask (one for forward)
  };

  RecordWriter(std::vector<Output> outputs, size_t batch_size, Notifier& self,
               const std::atomic<bool>& cancelled, TaskMetrics& metrics);

  void emit(Row&& row) override;
  void emit_batch(RowBatch& rows) override;
  /// Hands every channel its partial batch with `event` attached.
  void emit_event(ControlEvent event);
  /// Hands over every non-empty partial batch.
  void flush_partial();

 private:
  struct Pending {
    Channel* channel;
    std::unique_ptr<Batch> batch;
  };
  struct Lane {
    Partitioning partitioning;
    std::vector<size_t> key_indexes;
    std::vector<Pending> pending;  ///< one per channel
    size_t next = 0;               ///< kRebalance: the next channel
  };

  /// Into every lane: a copy for each but the last.
  void route(Row&& row);
  void append(Lane& lane, Row&& row);
  size_t select(Lane& lane, const Row& row);
  /// Pushes `p`'s batch, waiting while its channel is full.
  void push(Pending& p);

  std::vector<Lane> lanes_;
  const size_t batch_size_;
  Notifier& self_;
  const std::atomic<bool>& cancelled_;
  TaskMetrics& metrics_;
};

}  // namespace sluice
