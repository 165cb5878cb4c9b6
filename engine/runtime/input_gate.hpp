#pragma once

#include <memory>
#include <vector>

#include "sluice/engine/checkpoint/barrier_aligner.hpp"
#include "sluice/engine/runtime/channel.hpp"

namespace sluice {

/// The input side of a task: its channels, read round robin, one batch at a
/// time, skipping channels that ended and channels blocked for barrier
/// alignment (their batches wait in the channel, which stays bounded).
class InputGate final : public AlignedInputs {
 public:
  void add(Channel* channel);
  size_t size() const { return channels_.size(); }

  /// The next batch of some input, or null if none has one; `index` says which.
  std::unique_ptr<Batch> poll(size_t& index);
  /// Whether some input that has not ended has a batch waiting.
  bool available() const;
  void recycle(size_t index, std::unique_ptr<Batch> batch);

  /// Marks input `index` as done (it delivered EndOfInput).
  void mark_ended(size_t index);
  bool all_ended() const { return ended_count_ == channels_.size(); }
  /// Marks input `index` as out of records (it delivered EndOfData).
  void mark_data_ended(size_t index);
  bool all_data_ended() const { return data_ended_count_ == channels_.size(); }

  // AlignedInputs
  void block(size_t index) override;
  void unblock_all() override;
  bool all_live_blocked() const override;

 private:
  bool readable(size_t i) const { return !ended_[i] && !blocked_[i]; }

  std::vector<Channel*> channels_;
  std::vector<bool> ended_;
  std::vector<bool> data_ended_;
  std::vector<bool> blocked_;
  size_t ended_count_ = 0;
  size_t data_ended_count_ = 0;
  size_t next_ = 0;
};

}  // namespace sluice
