#include "sluice/engine/runtime/executor.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <thread>
#include <utility>  // Boost 1.74's Asio needs it under C++20.

#include "sluice/engine/checkpoint/checkpoint_coordinator.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/graph/physical_plan.hpp"
#include "sluice/engine/runtime/channel.hpp"
#include "sluice/engine/runtime/task.hpp"

namespace sluice {

/// One attempt at running the graph: its tasks and channels, and the timer
/// thread's io_context (declared first: its timers must go before it).
struct Executor::Attempt {
  boost::asio::io_context io;
  JobRunState state;
  std::vector<std::unique_ptr<Channel>> channels;
  std::vector<std::unique_ptr<Task>> tasks;
  std::atomic<uint64_t> ticks_fired{0};
  std::unique_ptr<CheckpointCoordinator> coordinator;

  /// Creates the tasks of every chain and the channels of every edge.
  void build(const JobGraph& graph, const PhysicalPlan& plan, const RuntimeOptions& options,
             const CheckpointStorage& storage, std::optional<int64_t> restore);

  JobMetrics metrics() const {
    JobMetrics m;
    for (const auto& task : tasks) m.tasks.push_back(snapshot(task->metrics()));
    m.ticks_fired = ticks_fired.load(std::memory_order_relaxed);
    if (coordinator) m.checkpoints = coordinator->stats();
    return m;
  }
};

namespace {

// Fires the flush ticks: every interval, offers the next tick to every source
// task that is still running. A tick that finds the previous one still
// pending (the source is blocked by backpressure) replaces it and is counted.
class FlushTimer {
 public:
  FlushTimer(boost::asio::io_context& io, std::chrono::milliseconds interval,
             std::vector<Task*> sources, JobRunState& job, std::atomic<uint64_t>& fired)
      : timer_(io), interval_(interval), sources_(std::move(sources)), job_(job), fired_(fired) {}

  void start() {
    timer_.expires_after(interval_);
    schedule();
  }

 private:
  void schedule() {
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      fired_.fetch_add(1);
      const int64_t tick = job_.next_flush_tick();
      for (Task* task : sources_) {
        if (!task->running()) continue;
        task->metrics().ticks_offered.add(1);
        if (!task->mailbox().offer_tick(tick)) task->metrics().ticks_coalesced.add(1);
      }
      // Fixed rate: a slow round does not push the later ticks back.
      timer_.expires_at(timer_.expiry() + interval_);
      schedule();
    });
  }

  boost::asio::steady_timer timer_;
  std::chrono::milliseconds interval_;
  std::vector<Task*> sources_;
  JobRunState& job_;
  std::atomic<uint64_t>& fired_;
};

void name_thread(std::thread& thread, const std::string& name) {
  // Linux allows 15 characters.
  pthread_setname_np(thread.native_handle(), name.substr(0, 15).c_str());
}

int parallelism_of(const JobGraph& graph, const PhysicalPlan& plan, int node) {
  for (const auto& chain : plan.chains) {
    for (int n : chain.nodes) {
      if (n == node) return chain.parallelism;
    }
  }
  throw std::logic_error("node not in plan: " + graph.nodes()[node].name);
}

std::map<std::string, int> operator_parallelism(const JobGraph& graph, const PhysicalPlan& plan) {
  std::map<std::string, int> out;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    out[graph.nodes()[n].name] = parallelism_of(graph, plan, static_cast<int>(n));
  }
  return out;
}

// State can come back only to the operator, and subtask, that saved it.
void check_restorable(const CheckpointMetadata& checkpoint, const JobGraph& graph,
                      const PhysicalPlan& plan) {
  const auto now = operator_parallelism(graph, plan);
  for (const auto& state : checkpoint.states) {
    const auto it = now.find(state.operator_name);
    const std::string where =
        "checkpoint " + std::to_string(checkpoint.id) + " of job '" + graph.name() + "'";
    if (it == now.end()) {
      throw ConfigError(where + " holds state of operator '" + state.operator_name +
                        "', which the job no longer has; use restore=none to start fresh");
    }
    const int then = checkpoint.parallelism.at(state.operator_name);
    if (it->second != then) {
      throw ConfigError(where + " ran operator '" + state.operator_name + "' with parallelism " +
                        std::to_string(then) + ", now " + std::to_string(it->second) +
                        "; its state cannot be redistributed: keep the parallelism or use "
                        "restore=none");
    }
  }
}

}  // namespace

void Executor::Attempt::build(const JobGraph& graph, const PhysicalPlan& plan,
                              const RuntimeOptions& options, const CheckpointStorage& storage,
                              std::optional<int64_t> restore) {
  std::vector<std::vector<Task*>> chain_tasks(plan.chains.size());
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    for (int s = 0; s < plan.chains[c].parallelism; ++s) {
      tasks.push_back(
          std::make_unique<Task>(graph, plan.chains[c], s, options, state,
                                 TaskCheckpointing{&storage, restore, nullptr, tasks.size()}));
      chain_tasks[c].push_back(tasks.back().get());
    }
  }
  const auto connect = [&](Task* from, Task* to, const Schema& schema) {
    channels.push_back(std::make_unique<Channel>(options.channel_capacity, to->notifier(),
                                                 from->notifier(), schema));
    to->add_input(channels.back().get());
    return channels.back().get();
  };
  for (const PlanEdge& edge : plan.edges) {
    const auto& producers = chain_tasks[edge.from_chain];
    const auto& consumers = chain_tasks[edge.to_chain];
    const Schema& schema = graph.nodes()[plan.chains[edge.from_chain].nodes.back()].output.schema;
    for (size_t p = 0; p < producers.size(); ++p) {
      RecordWriter::Output output{edge.partitioning, edge.key_indexes, {}, edge.key_images};
      if (edge.partitioning == Partitioning::kForward) {
        output.channels.push_back(connect(producers[p], consumers[p], schema));
      } else {
        for (Task* consumer : consumers)
          output.channels.push_back(connect(producers[p], consumer, schema));
      }
      producers[p]->add_output(std::move(output));
    }
  }
}

Executor::Executor(RuntimeOptions options) : options_(std::move(options)) {}

Executor::~Executor() = default;

void Executor::cancel() {
  cancel_requested_ = true;
  std::lock_guard<std::mutex> lock(mutex_);
  if (attempt_) attempt_->state.cancel();
}

JobMetrics Executor::metrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!attempt_) return {};
  JobMetrics m = attempt_->metrics();
  m.checkpoints.insert(m.checkpoints.begin(), earlier_checkpoints_.begin(),
                       earlier_checkpoints_.end());
  m.restarts = restarts_;
  m.restored_from = started_from_;
  return m;
}

std::optional<int64_t> Executor::restore_point(const RuntimeOptions& options,
                                               const std::string& job) {
  const CheckpointStorage storage(options.checkpoint_dir, job);
  switch (options.restore) {
    case RuntimeOptions::Restore::kNone:
      return std::nullopt;
    case RuntimeOptions::Restore::kLatest:
      return storage.resumable();
    case RuntimeOptions::Restore::kCheckpoint: {
      const auto ids = storage.completed();
      if (std::find(ids.begin(), ids.end(), options.restore_checkpoint) == ids.end()) {
        throw ConfigError("restore=" + std::to_string(options.restore_checkpoint) + ": job '" +
                          job + "' has no such completed checkpoint under " +
                          storage.job_dir().string());
      }
      return options.restore_checkpoint;
    }
  }
  return std::nullopt;
}

JobResult Executor::run(const JobGraph& graph) {
  try {
    return run_attempts(graph);
  } catch (const std::exception& e) {
    JobResult result;
    result.status = JobResult::Status::kFailed;
    result.error = e.what();
    result.exception = std::current_exception();
    return result;
  }
}

JobResult Executor::run_attempts(const JobGraph& graph) {
  graph.check();
  cancel_requested_ = false;
  const PhysicalPlan plan = build_plan(graph, options_);
  const CheckpointStorage storage(options_.checkpoint_dir, graph.name());
  const JobLock lock(storage, graph.name());
  const auto started = std::chrono::steady_clock::now();

  // The checkpoint this run started from; a restart may restore only it or
  // one this run completed, never one of an earlier run.
  const std::optional<int64_t> started_from = restore_point(options_, graph.name());
  if (started_from) {
    spdlog::info("job {}: resuming from checkpoint {}", graph.name(), *started_from);
  }
  std::optional<int64_t> restore = started_from;
  std::vector<CheckpointStats> checkpoints;
  const auto show = [&](int restarts) {
    std::lock_guard<std::mutex> guard(mutex_);
    earlier_checkpoints_ = checkpoints;
    restarts_ = restarts;
    started_from_ = started_from;
  };
  show(0);
  std::vector<std::optional<int64_t>> restored;
  JobResult result;
  for (int attempt = 0;; ++attempt) {
    if (restore) check_restorable(storage.read(*restore), graph, plan);
    restored.push_back(restore);
    JobResult last = run_attempt(graph, plan, storage, restore);
    checkpoints.insert(checkpoints.end(), last.metrics.checkpoints.begin(),
                       last.metrics.checkpoints.end());
    last.restarts = attempt;
    result = std::move(last);
    show(attempt + 1);
    if (result.status != JobResult::Status::kFailed || attempt >= options_.restart_attempts ||
        cancel_requested_) {
      break;
    }
    if (is_permanent(result.exception)) {
      // The error last: it may end in a statement to run, or span lines.
      spdlog::error("job {}: not restarting, the same input and configuration would fail again: {}",
                    graph.name(), result.error);
      break;
    }
    for (const CheckpointStats& checkpoint : checkpoints) {
      if (checkpoint.completed) restore = checkpoint.id;
    }
    spdlog::warn("job {}: {}; restarting ({} of {}) from {} in {} ms", graph.name(), result.error,
                 attempt + 1, options_.restart_attempts,
                 restore ? "checkpoint " + std::to_string(*restore) : std::string("the start"),
                 options_.restart_delay.count());
    const auto until = std::chrono::steady_clock::now() + options_.restart_delay;
    while (!cancel_requested_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (cancel_requested_) {
      result.status = JobResult::Status::kCancelled;
      break;
    }
  }
  if (result.finished() && !checkpoints.empty() && checkpoints.back().final &&
      checkpoints.back().completed) {
    storage.mark_finished(checkpoints.back().id);
  }
  result.restored_from = started_from;
  result.attempts_restored = std::move(restored);
  result.metrics.checkpoints = std::move(checkpoints);
  result.metrics.restarts = result.restarts;
  result.metrics.restored_from = started_from;
  result.duration = std::chrono::steady_clock::now() - started;
  storage.clear_work();
  return result;
}

JobResult Executor::run_attempt(const JobGraph& graph, const PhysicalPlan& plan,
                                const CheckpointStorage& storage, std::optional<int64_t> restore) {
  storage.clear_work();
  Attempt attempt;
  attempt.build(graph, plan, options_, storage, restore);

  boost::asio::io_context& io = attempt.io;
  auto work = boost::asio::make_work_guard(io);
  std::vector<Task*> sources;
  std::vector<CheckpointParticipant*> all;
  for (const auto& task : attempt.tasks) {
    all.push_back(task.get());
    if (task->is_source()) sources.push_back(task.get());
  }
  FlushTimer flush_timer(io, options_.flush_interval, sources, attempt.state, attempt.ticks_fired);
  if (options_.flush_interval.count() > 0) flush_timer.start();
  if (options_.checkpoint_interval.count() > 0) {
    attempt.coordinator = std::make_unique<CheckpointCoordinator>(
        io, options_, storage, graph.name(), operator_parallelism(graph, plan), all,
        storage.highest_id() + 1);
    for (const auto& task : attempt.tasks) task->set_coordinator(attempt.coordinator.get());
    attempt.coordinator->start();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    attempt_ = &attempt;
    if (cancel_requested_) attempt.state.cancel();
  }
  std::thread timer_thread([&io] { io.run(); });
  name_thread(timer_thread, "sluice-timer");

  std::vector<std::thread> threads;
  for (const auto& task : attempt.tasks) {
    threads.emplace_back([t = task.get()] { t->run(); });
    name_thread(threads.back(), "sluice-" + task->metrics().operators.front().name);
  }
  for (auto& thread : threads) thread.join();
  io.stop();
  timer_thread.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    attempt_ = nullptr;
  }

  JobResult result;
  result.metrics = attempt.metrics();
  if (auto failure = attempt.state.failure()) {
    result.status = JobResult::Status::kFailed;
    result.failed_operator = failure->operator_name;
    result.exception = failure->cause;
    result.error =
        "operator '" + failure->operator_name + "'" +
        (failure->parallelism > 1 ? " (subtask " + std::to_string(failure->subtask + 1) + " of " +
                                        std::to_string(failure->parallelism) + ")"
                                  : "") +
        " failed: " + failure->message;
  } else if (attempt.state.is_cancelled()) {
    result.status = JobResult::Status::kCancelled;
  }
  return result;
}

}  // namespace sluice
