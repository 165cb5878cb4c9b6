#pragma once

#include <memory>
#include <vector>

#include "engine/channel.hpp"

namespace sluice {

/// The input side of a task: its channels, read round robin, one batch at a
/// time, skipping channels that ended.
class InputGate {
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

 private:
  std::vector<Channel*> channels_;
  std::vector<bool> ended_;
  size_t ended_count_ = 0;
  size_t next_ = 0;
};

}  // namespace sluice
