#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "sluice/engine/common/operator_failure.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/operator.hpp"
#include "sluice/engine/runtime/channel.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"

namespace sluice {

/// What takes the batches a member of a task's chain emits: the next
/// transform, the sink, or the record writer into the channels.
class BatchReceiver {
 public:
  virtual ~BatchReceiver() = default;
  /// Takes the selected rows of `rows`, in order, and leaves it empty.
  virtual void push(Batch& rows) = 0;
  /// Takes a schema change, after the rows pushed before it.
  virtual void push_schema_change(const std::shared_ptr<const SchemaChange>& change) = 0;
};

/// The output side of a task: partitions records over the channels of each
/// outgoing edge, collects them into batches (a whole batch moves without a
/// copy where it can) and hands a batch over when it is full, before any control event, and when
/// the task is about to wait (flush_partial). A full channel blocks the writer until the consumer
/// makes room; while blocked it hands over its other partial batches and, if the job is cancelled,
/// throws TaskCancelled.
class RecordWriter final : public BatchReceiver {
 public:
  struct Output {
    Partitioning partitioning = Partitioning::kForward;
    std::vector<size_t> key_indexes;   ///< kHash only
    std::vector<Channel*> channels;    ///< indexed by downstream subtask (one for forward)
    std::vector<KeyImage> key_images;  ///< kHash: per key column, or empty (SinkDef::key_images)
  };

  RecordWriter(std::vector<Output> outputs, size_t batch_size, Notifier& self,
               const std::atomic<bool>& cancelled, TaskMetrics& metrics);

  void push(Batch& rows) override;
  void push_schema_change(const std::shared_ptr<const SchemaChange>& change) override {
    emit_event({EventKind::kSchemaChange, 0, change});
  }
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
    std::vector<KeyImage> key_images;
    std::vector<Pending> pending;                ///< one per channel
    size_t next = 0;                             ///< kRebalance: the next channel
    std::vector<std::vector<uint32_t>> rows_of;  ///< per channel: the rows of a batch it gets
  };

  /// Into one lane; `copy` leaves `rows` as it is, for the next lane.
  void route(Lane& lane, Batch& rows, bool copy);
  size_t select(Lane& lane, const Batch& rows, uint32_t row);
  /// Channel `channel`'s pending batch, ready for rows of the table `rows` holds.
  Pending& pending(Lane& lane, size_t channel, const Batch& rows);
  /// Pushes `p`'s batch, waiting while its channel is full.
  void hand_over(Pending& p);

  std::vector<Lane> lanes_;
  const size_t batch_size_;
  Notifier& self_;
  const std::atomic<bool>& cancelled_;
  TaskMetrics& metrics_;
};

}  // namespace sluice
