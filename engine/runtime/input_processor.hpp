#pragma once

#include <chrono>
#include <cstdint>

#include "sluice/engine/checkpoint/barrier_aligner.hpp"
#include "sluice/engine/runtime/input_gate.hpp"
#include "sluice/engine/runtime/record_writer.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"

namespace sluice {

/// What a task does when a control event has passed through its chain.
class InputEventHandler {
 public:
  virtual ~InputEventHandler() = default;
  /// A FlushSignal, once per input that carried it.
  virtual void on_flush(int64_t tick) = 0;
  /// Barrier `id` came on every live input, after waiting `alignment` for
  /// the last: checkpoint `id`. The inputs are read again afterwards.
  virtual void on_checkpoint(int64_t id, std::chrono::nanoseconds alignment) = 0;
  /// Every input delivered EndOfData: no more records.
  virtual void on_end_of_data() = 0;
};

/// The input side of a non-source task (Flink's StreamInputProcessor): takes
/// the next batch from the input gate, hands its records to the head of the
/// operator chain, and then acts on the batch's control event: barriers are
/// aligned across the inputs, the other events are counted and passed to
/// the handler once they are due. Single-threaded and free of waiting, so a
/// test drives it step by step over channels it fills itself.
class InputProcessor {
 public:
  enum class Status {
    kProcessed,         ///< handled one batch; call again
    kNothingAvailable,  ///< no input has a readable batch now
    kEndOfInput,        ///< every input delivered EndOfInput
  };

  InputProcessor(InputGate& inputs, BatchReceiver& chain_head, InputEventHandler& handler,
                 TaskMetrics& metrics)
      : inputs_(inputs), head_(chain_head), handler_(handler), metrics_(metrics) {}

  /// Processes the next batch of some input, if one is readable.
  Status process_next();

 private:
  InputGate& inputs_;
  BatchReceiver& head_;
  InputEventHandler& handler_;
  TaskMetrics& metrics_;
  BarrierAligner aligner_{inputs_};
};

}  // namespace sluice
