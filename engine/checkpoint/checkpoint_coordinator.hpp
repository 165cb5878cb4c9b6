#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>  // Boost 1.74's Asio needs it under C++20.
#include <vector>

#include "sluice/engine/checkpoint/checkpoint_protocol.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/graph/metrics.hpp"
#include "sluice/engine/graph/runtime_options.hpp"

namespace sluice {

/// Triggers checkpoints and completes them, on the engine's timer thread.
///
/// Every `checkpoint.interval` (and no sooner than `checkpoint.min-pause`
/// after the previous one ended, one at a time) it posts "trigger n" to every
/// source task's mailbox. Each task acknowledges once it has snapshotted n;
/// when all have, the metadata is written, older checkpoints are pruned and
/// every task is told, on its own thread, that n is complete. A checkpoint
/// still open after `checkpoint.timeout` is aborted and every task told so.
/// Once every source reached its end, a final checkpoint is taken; when it
/// completes the sources end their streams. A source that waits for a
/// checkpoint asks for one (request_checkpoint()): the next is triggered as
/// soon as the min-pause allows.
class CheckpointCoordinator final : public CheckpointAcknowledger {
 public:
  using Clock = std::chrono::steady_clock;
  using Ack = CheckpointAck;

  /// `tasks`: every task of the job; an Ack's `task` indexes them.
  CheckpointCoordinator(boost::asio::io_context& io, const RuntimeOptions& options,
                        const CheckpointStorage& storage, std::string job,
                        std::map<std::string, int> parallelism,
                        std::vector<CheckpointParticipant*> tasks, int64_t first_id);

  /// Schedules the first checkpoint. Call before the io_context runs.
  void start();

  // Called from task threads.
  void acknowledge(Ack ack) override;
  void source_ended() override;
  void request_checkpoint() override;
  std::optional<int64_t> quiesce() override;

  /// How the checkpoints so far went; any thread.
  std::vector<CheckpointStats> stats() const;

 private:
  // Everything below runs on the timer thread.
  struct InFlight {
    int64_t id = 0;
    bool final = false;
    Clock::time_point started;
    std::chrono::system_clock::time_point triggered;  // the same instant, as a date
    std::vector<bool> acked;
    size_t pending = 0;
    std::vector<SubtaskState> states;
    std::chrono::nanoseconds alignment{0};
    std::chrono::nanoseconds pause{0};
  };

  void schedule_next();
  void trigger();
  void on_ack(Ack ack);
  void complete();
  void abort(const std::string& reason);
  void record(const InFlight& checkpoint, bool completed, uint64_t state_bytes);
  /// Calls `tell` on every task, downstream tasks before sources.
  template <typename F>
  void tell_tasks(F tell);

  boost::asio::io_context& io_;
  const RuntimeOptions options_;
  const CheckpointStorage& storage_;
  const std::string job_;
  const std::map<std::string, int> parallelism_;
  const std::vector<CheckpointParticipant*> tasks_;
  size_t sources_ = 0;
  size_t sources_ended_ = 0;
  int64_t next_id_;
  bool finished_ = false;
  bool quiesced_ = false;         // the job is ending: nothing completes any more
  bool requested_ = false;        // a source waits for the next checkpoint
  Clock::time_point last_end_{};  // when the last checkpoint completed or aborted
  std::optional<int64_t> last_completed_;
  std::optional<InFlight> in_flight_;
  Clock::time_point last_trigger_{};
  boost::asio::steady_timer trigger_timer_;
  boost::asio::steady_timer timeout_timer_;

  mutable std::mutex stats_mutex_;
  std::vector<CheckpointStats> stats_;
};

}  // namespace sluice
