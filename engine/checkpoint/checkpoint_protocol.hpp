#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sluice/engine/checkpoint/checkpoint_storage.hpp"

namespace sluice {

/// A task's report that it saved checkpoint `id`.
struct CheckpointAck {
  int64_t id = 0;
  size_t task = 0;  ///< the task's index among the coordinator's participants
  std::vector<SubtaskState> states;
  std::chrono::nanoseconds alignment{0};
  std::chrono::nanoseconds pause{0};  ///< the synchronous part of its snapshot
};

/// How a task reaches the checkpoint coordinator; any thread may call.
class CheckpointAcknowledger {
 public:
  virtual ~CheckpointAcknowledger() = default;
  virtual void acknowledge(CheckpointAck ack) = 0;
  /// A source task's source reached its end.
  virtual void source_ended() = 0;
  /// A source waits for a checkpoint to complete before it goes on: the
  /// next one is triggered as soon as `checkpoint.min-pause` allows rather
  /// than at the interval.
  virtual void request_checkpoint() = 0;
  /// The job is ending: no checkpoint completes from now on (one in flight
  /// never will). Returns, once none is completing, the latest that this
  /// run completed, if any.
  virtual std::optional<int64_t> quiesce() = 0;
};

/// How the coordinator reaches a task. Each call only posts to the task,
/// which acts on its own thread, in the order of the calls.
class CheckpointParticipant {
 public:
  virtual ~CheckpointParticipant() = default;
  virtual bool is_source() const = 0;
  /// Sources: take checkpoint `id`.
  virtual void post_trigger(int64_t id) = 0;
  virtual void post_complete(int64_t id) = 0;
  virtual void post_aborted(int64_t id) = 0;
  /// Sources, after the final checkpoint completed: end the stream.
  virtual void post_finish() = 0;
};

}  // namespace sluice
