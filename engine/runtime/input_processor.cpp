#include "sluice/engine/runtime/input_processor.hpp"

#include <memory>

namespace sluice {

InputProcessor::Status InputProcessor::process_next() {
  size_t index = 0;
  std::unique_ptr<Batch> batch = inputs_.poll(index);
  if (!batch) return Status::kNothingAvailable;
  metrics_.batches_in.add(1);
  const ControlEvent event = batch->event;
  // A batch that only carries an event may be a recycled one of another
  // table's columns: the chain gets rows only.
  if (!batch->empty()) head_.push(*batch);
  inputs_.recycle(index, std::move(batch));
  switch (event.kind) {
    case EventKind::kNone:
      break;
    case EventKind::kFlush:
      metrics_.flush_seen.add(1);
      handler_.on_flush(event.id);
      break;
    case EventKind::kBarrier:
      if (const auto alignment = aligner_.on_barrier(index, event.id)) {
        handler_.on_checkpoint(event.id, *alignment);
        aligner_.release();
      }
      break;
    case EventKind::kEndOfData:
      inputs_.mark_data_ended(index);
      if (inputs_.all_data_ended()) handler_.on_end_of_data();
      break;
    case EventKind::kSchemaChange:
      head_.push_schema_change(event.schema_change);
      break;
    case EventKind::kEndOfInput:
      inputs_.mark_ended(index);
      if (inputs_.all_ended()) return Status::kEndOfInput;
      break;
  }
  return Status::kProcessed;
}

}  // namespace sluice
