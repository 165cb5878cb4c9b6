#include "sluice/engine/checkpoint/checkpoint_coordinator.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <future>

#include "sluice/engine/common/fault_point.hpp"

namespace sluice {

CheckpointCoordinator::CheckpointCoordinator(boost::asio::io_context& io,
                                             const RuntimeOptions& options,
                                             const CheckpointStorage& storage, std::string job,
                                             std::map<std::string, int> parallelism,
                                             std::vector<CheckpointParticipant*> tasks,
                                             int64_t first_id)
    : io_(io),
      options_(options),
      storage_(storage),
      job_(std::move(job)),
      parallelism_(std::move(parallelism)),
      tasks_(std::move(tasks)),
      next_id_(first_id),
      trigger_timer_(io),
      timeout_timer_(io) {
  for (CheckpointParticipant* task : tasks_) sources_ += task->is_source();
}

void CheckpointCoordinator::start() {
  last_trigger_ = last_end_ = Clock::now();
  schedule_next();
}

void CheckpointCoordinator::acknowledge(Ack ack) {
  boost::asio::post(io_, [this, ack = std::move(ack)]() mutable { on_ack(std::move(ack)); });
}

void CheckpointCoordinator::source_ended() {
  boost::asio::post(io_, [this] {
    ++sources_ended_;
    if (sources_ended_ == sources_ && !in_flight_) {
      trigger_timer_.cancel();
      trigger();
    }
  });
}

void CheckpointCoordinator::request_checkpoint() {
  boost::asio::post(io_, [this] {
    if (requested_) return;
    requested_ = true;
    if (!in_flight_) schedule_next();  // sooner; else once the one in flight ends
  });
}

std::optional<int64_t> CheckpointCoordinator::quiesce() {
  std::promise<std::optional<int64_t>> done;
  std::future<std::optional<int64_t>> completed = done.get_future();
  boost::asio::post(io_, [this, &done] {
    if (!quiesced_) {
      quiesced_ = true;
      trigger_timer_.cancel();
      timeout_timer_.cancel();
      if (in_flight_) {
        spdlog::debug("job {}: checkpoint {} ends unfinished with the job", job_, in_flight_->id);
        record(*in_flight_, false, 0);
        in_flight_.reset();
      }
    }
    done.set_value(last_completed_);
  });
  return completed.get();
}

std::vector<CheckpointStats> CheckpointCoordinator::stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return stats_;
}

void CheckpointCoordinator::schedule_next() {
  if (finished_ || quiesced_) return;
  const auto pause_over = last_end_ + options_.checkpoint_min_pause;
  auto at = std::max(last_trigger_ + options_.checkpoint_interval, pause_over);
  // All input is in, or a source waits for a checkpoint: without waiting
  // for the interval.
  if (sources_ended_ == sources_ || requested_) at = pause_over;
  trigger_timer_.expires_at(at);
  trigger_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !in_flight_) trigger();
  });
}

void CheckpointCoordinator::trigger() {
  if (quiesced_) return;
  InFlight checkpoint;
  checkpoint.id = next_id_++;
  requested_ = false;
  checkpoint.final = sources_ended_ == sources_;
  checkpoint.started = Clock::now();
  checkpoint.triggered = std::chrono::system_clock::now();
  checkpoint.acked.assign(tasks_.size(), false);
  checkpoint.pending = tasks_.size();
  in_flight_ = std::move(checkpoint);
  last_trigger_ = in_flight_->started;
  const int64_t id = in_flight_->id;
  spdlog::debug("job {}: checkpoint {} triggered{}", job_, id, in_flight_->final ? " (final)" : "");
  for (CheckpointParticipant* task : tasks_) {
    if (task->is_source()) task->post_trigger(id);
  }
  timeout_timer_.expires_after(options_.checkpoint_timeout);
  timeout_timer_.async_wait([this, id](const boost::system::error_code& ec) {
    if (!ec && in_flight_ && in_flight_->id == id) {
      abort("not complete after checkpoint.timeout");
    }
  });
}

void CheckpointCoordinator::on_ack(Ack ack) {
  // Acknowledgements of an aborted checkpoint arrive late: ignore them.
  if (!in_flight_ || in_flight_->id != ack.id || in_flight_->acked.at(ack.task)) return;
  InFlight& checkpoint = *in_flight_;
  checkpoint.acked[ack.task] = true;
  checkpoint.alignment = std::max(checkpoint.alignment, ack.alignment);
  checkpoint.pause = std::max(checkpoint.pause, ack.pause);
  for (auto& state : ack.states) checkpoint.states.push_back(std::move(state));
  if (--checkpoint.pending == 0) complete();
}

void CheckpointCoordinator::complete() {
  timeout_timer_.cancel();
  InFlight checkpoint = std::move(*in_flight_);
  in_flight_.reset();
  CheckpointMetadata metadata;
  metadata.id = checkpoint.id;
  metadata.job = job_;
  metadata.final = checkpoint.final;
  metadata.completed_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  metadata.parallelism = parallelism_;
  metadata.states = checkpoint.states;
  fault_point("checkpoint-before-commit");
  try {
    storage_.commit(metadata);
  } catch (const std::exception& e) {
    spdlog::error("job {}: checkpoint {} could not be written: {}", job_, checkpoint.id, e.what());
    in_flight_ = std::move(checkpoint);
    abort(e.what());
    return;
  }
  fault_point(checkpoint.final ? "final-checkpoint-after-commit" : "checkpoint-after-commit");
  // Committed: it is complete even if the old ones cannot go yet.
  try {
    storage_.prune(options_.checkpoints_retained);
  } catch (const std::exception& e) {
    spdlog::warn("job {}: removing old checkpoints failed: {}", job_, e.what());
  }
  record(checkpoint, true, metadata.state_bytes());
  last_end_ = Clock::now();
  const int64_t id = checkpoint.id;
  last_completed_ = id;
  tell_tasks([id](CheckpointParticipant* task) { task->post_complete(id); });
  if (checkpoint.final) {
    finished_ = true;
    for (CheckpointParticipant* task : tasks_) {
      if (task->is_source()) task->post_finish();
    }
    return;
  }
  schedule_next();
}

void CheckpointCoordinator::abort(const std::string& reason) {
  InFlight checkpoint = std::move(*in_flight_);
  in_flight_.reset();
  spdlog::warn("job {}: checkpoint {} aborted: {}", job_, checkpoint.id, reason);
  record(checkpoint, false, 0);
  last_end_ = Clock::now();
  const int64_t id = checkpoint.id;
  tell_tasks([id](CheckpointParticipant* task) { task->post_aborted(id); });
  schedule_next();
}

void CheckpointCoordinator::record(const InFlight& checkpoint, bool completed,
                                   uint64_t state_bytes) {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  stats_.push_back({checkpoint.id, completed, checkpoint.final, Clock::now() - checkpoint.started,
                    checkpoint.alignment, checkpoint.pause, state_bytes, checkpoint.triggered});
}

template <typename F>
void CheckpointCoordinator::tell_tasks(F tell) {
  // Downstream tasks first: a source that learns of completion may end its
  // stream, and the end must not overtake the news.
  for (bool sources : {false, true}) {
    for (CheckpointParticipant* task : tasks_) {
      if (task->is_source() == sources) tell(task);
    }
  }
}

}  // namespace sluice
