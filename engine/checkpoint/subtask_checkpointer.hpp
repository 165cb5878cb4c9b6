#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/checkpoint/checkpoint_protocol.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/graph/operator.hpp"
#include "sluice/engine/state/state_store.hpp"

/// What one subtask does for checkpoints. Internal to the engine.
namespace sluice {

/// Where a task keeps state and whom it tells about checkpoints.
struct TaskCheckpointing {
  const CheckpointStorage* storage = nullptr;     ///< always set: state lives there
  std::optional<int64_t> restored;                ///< the checkpoint this run resumes from
  CheckpointAcknowledger* coordinator = nullptr;  ///< null when checkpoints are off
  size_t index = 0;                               ///< this task's index for the coordinator
};

/// A subtask's side of checkpoints, on the subtask's thread: at checkpoint n
/// every member of its chain snapshots, in order, and the state stores they
/// used are saved in the background; the coordinator is acknowledged once
/// all are written. How a checkpoint ended goes to every member. Whatever a
/// member throws comes out as an OperatorFailure naming it.
class SubtaskCheckpointer {
 public:
  /// A member of the chain as checkpoints see it (the task's members are
  /// ChainMembers).
  class Member {
   public:
    virtual ~Member() = default;
    virtual const std::string& name() const = 0;
    virtual CheckpointHooks& hooks() const = 0;
    /// The store to save at a checkpoint, or null.
    virtual StateStore* store_to_snapshot() const = 0;
  };
  /// Reports a snapshot that could not be written, from another thread.
  using Fail = std::function<void(const std::string& message, std::exception_ptr cause)>;

  /// `checkpointing` (its coordinator may be set later) must outlive this.
  SubtaskCheckpointer(const TaskCheckpointing& checkpointing, int subtask, Fail fail);
  ~SubtaskCheckpointer();
  SubtaskCheckpointer(const SubtaskCheckpointer&) = delete;
  SubtaskCheckpointer& operator=(const SubtaskCheckpointer&) = delete;

  /// The members to snapshot, upstream first; they must outlive their turn.
  void set_members(std::vector<const Member*> members) { members_ = std::move(members); }

  /// Snapshots every member for checkpoint `id`; `alignment`: how long its
  /// barrier waited for the others.
  void checkpoint(int64_t id, std::chrono::nanoseconds alignment);
  void notify_complete(int64_t id);
  void notify_aborted(int64_t id);
  /// Waits for the snapshots still being written; before the stores go.
  void wait();

 private:
  const TaskCheckpointing& checkpointing_;
  const int subtask_;
  const Fail fail_;
  std::vector<const Member*> members_;
  // Background snapshot writes, each acknowledging its checkpoint when done.
  std::vector<std::future<void>> in_progress_;
};

}  // namespace sluice
