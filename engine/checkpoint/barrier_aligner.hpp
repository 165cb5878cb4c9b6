#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace sluice {

/// The inputs of a task as an aligner sees them: a task's input gate.
class AlignedInputs {
 public:
  virtual ~AlignedInputs() = default;
  /// Stops reading input `index` until unblock_all().
  virtual void block(size_t index) = 0;
  virtual void unblock_all() = 0;
  /// Whether every input that has not ended is blocked.
  virtual bool all_live_blocked() const = 0;
};

/// Aligns a checkpoint's barriers across the inputs of a task (Flink's
/// aligned checkpoints): an input that delivered barrier n is blocked, since
/// what follows it belongs to checkpoint n+1, until barrier n came on every
/// input that has not ended; then the task snapshots and all inputs are
/// read again. Single-threaded: the task's thread drives it.
class BarrierAligner {
 public:
  explicit BarrierAligner(AlignedInputs& inputs) : inputs_(inputs) {}

  /// Barrier `id` came on input `input`. Returns, once it came on every
  /// live input, how long the alignment took; nullopt while it waits.
  /// Throws std::logic_error for another checkpoint's barrier meanwhile.
  std::optional<std::chrono::nanoseconds> on_barrier(size_t input, int64_t id);
  /// After the snapshot of an aligned barrier: read every input again.
  void release();

  bool aligning() const { return aligning_.has_value(); }

 private:
  AlignedInputs& inputs_;
  std::optional<int64_t> aligning_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace sluice
