#include "sluice/engine/checkpoint/subtask_checkpointer.hpp"

#include "sluice/engine/common/operator_failure.hpp"

namespace sluice {

SubtaskCheckpointer::SubtaskCheckpointer(const TaskCheckpointing& checkpointing, int subtask,
                                         Fail fail)
    : checkpointing_(checkpointing), subtask_(subtask), fail_(std::move(fail)) {}

SubtaskCheckpointer::~SubtaskCheckpointer() { wait(); }

void SubtaskCheckpointer::checkpoint(int64_t id, std::chrono::nanoseconds alignment) {
  const auto started = std::chrono::steady_clock::now();
  CheckpointAck ack{id, checkpointing_.index, {}, alignment};
  std::vector<std::shared_future<uint64_t>> snapshots;  // one per ack.states entry
  for (const Member* m : members_) {
    guarded(m->name(), [&] {
      m->hooks().snapshot_state(id);
      if (StateStore* store = m->store_to_snapshot()) {
        const auto dir = checkpointing_.storage->subtask_dir(id, m->name(), subtask_);
        snapshots.push_back(store->snapshot(dir));
        ack.states.push_back({m->name(), subtask_, 0});
      }
    });
  }
  ack.pause = std::chrono::steady_clock::now() - started;
  if (snapshots.empty()) {
    checkpointing_.coordinator->acknowledge(std::move(ack));
    return;
  }
  // The stores finish their snapshots in the background; acknowledge then.
  std::erase_if(in_progress_, [](const std::future<void>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  in_progress_.push_back(std::async(
      std::launch::async, [this, ack = std::move(ack), snapshots = std::move(snapshots)]() mutable {
        try {
          for (size_t i = 0; i < snapshots.size(); ++i) ack.states[i].bytes = snapshots[i].get();
          checkpointing_.coordinator->acknowledge(std::move(ack));
        } catch (const std::exception& e) {
          fail_("checkpoint " + std::to_string(ack.id) + ": " + e.what(), std::current_exception());
        }
      }));
}

void SubtaskCheckpointer::notify_complete(int64_t id) {
  for (const Member* m : members_) {
    guarded(m->name(), [&] { m->hooks().notify_checkpoint_complete(id); });
  }
}

void SubtaskCheckpointer::notify_aborted(int64_t id) {
  for (const Member* m : members_) {
    guarded(m->name(), [&] { m->hooks().notify_checkpoint_aborted(id); });
  }
}

void SubtaskCheckpointer::wait() { in_progress_.clear(); }

}  // namespace sluice
