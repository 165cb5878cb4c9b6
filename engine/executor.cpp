#include "engine/executor.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <utility>  // Boost 1.74's Asio needs it under C++20.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <thread>

#include "engine/channel.hpp"
#include "engine/physical_plan.hpp"
#include "engine/task.hpp"

namespace sluice {

/// The state of one run: its tasks, channels, and the timer thread.
struct Executor::Running {
  JobRunState state;
  std::vector<std::unique_ptr<Channel>> channels;
  std::vector<std::unique_ptr<Task>> tasks;
  std::atomic<uint64_t> ticks_fired{0};

  /// Creates the tasks of every chain and the channels of every edge.
  void build(const JobGraph& graph, const PhysicalPlan& plan, const RuntimeOptions& options);

  JobMetrics metrics() const {
    JobMetrics m;
    for (const auto& task : tasks) m.tasks.push_back(snapshot(task->metrics()));
    m.ticks_fired = ticks_fired.load(std::memory_order_relaxed);
    return m;
  }
};

Executor::Executor(RuntimeOptions options) : options_(options) {}

Executor::~Executor() = default;

void Executor::cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_) running_->state.cancel();
}

JobMetrics Executor::metrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_ ? running_->metrics() : JobMetrics{};
}

namespace {

// Fires the flush ticks: every interval, offers the next tick to every source
// task that is still running. A tick that finds the previous one still
// pending (the source is blocked by backpressure) replaces it and is counted.
class FlushTimer {
 public:
  FlushTimer(boost::asio::io_context& io, std::chrono::milliseconds interval,
             std::vector<Task*> sources, std::atomic<uint64_t>& fired)
      : timer_(io), interval_(interval), sources_(std::move(sources)), fired_(fired) {}

  void start() {
    timer_.expires_after(interval_);
    schedule();
  }

 private:
  void schedule() {
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      const int64_t tick = static_cast<int64_t>(fired_.fetch_add(1) + 1);
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
  std::atomic<uint64_t>& fired_;
};

}  // namespace

void Executor::Running::build(const JobGraph& graph, const PhysicalPlan& plan,
                              const RuntimeOptions& options) {
  std::vector<std::vector<Task*>> chain_tasks(plan.chains.size());
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    for (int s = 0; s < plan.chains[c].parallelism; ++s) {
      tasks.push_back(std::make_unique<Task>(graph, plan.chains[c], s, options, state));
      chain_tasks[c].push_back(tasks.back().get());
    }
  }
  const auto connect = [&](Task* from, Task* to) {
    channels.push_back(
        std::make_unique<Channel>(options.channel_capacity, to->notifier(), from->notifier()));
    to->add_input(channels.back().get());
    return channels.back().get();
  };
  for (const PlanEdge& edge : plan.edges) {
    const auto& producers = chain_tasks[edge.from_chain];
    const auto& consumers = chain_tasks[edge.to_chain];
    for (size_t p = 0; p < producers.size(); ++p) {
      RecordWriter::Output output{edge.partitioning, edge.key_indexes, {}};
      if (edge.partitioning == Partitioning::kForward) {
        output.channels.push_back(connect(producers[p], consumers[p]));
      } else {
        for (Task* consumer : consumers) output.channels.push_back(connect(producers[p], consumer));
      }
      producers[p]->add_output(std::move(output));
    }
  }
}

namespace {

void name_thread(std::thread& thread, const std::string& name) {
  // Linux allows 15 characters.
  pthread_setname_np(thread.native_handle(), name.substr(0, 15).c_str());
}

}  // namespace

JobResult Executor::run(const JobGraph& graph) {
  graph.check();
  const PhysicalPlan plan = build_plan(graph, options_);
  const auto started = std::chrono::steady_clock::now();

  Running run;
  run.build(graph, plan, options_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = &run;
  }

  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::vector<Task*> sources;
  for (const auto& task : run.tasks) {
    if (task->is_source()) sources.push_back(task.get());
  }
  FlushTimer flush_timer(io, options_.flush_interval, sources, run.ticks_fired);
  if (options_.flush_interval.count() > 0) flush_timer.start();
  std::thread timer_thread([&io] { io.run(); });
  name_thread(timer_thread, "sluice-timer");

  std::vector<std::thread> threads;
  for (const auto& task : run.tasks) {
    threads.emplace_back([t = task.get()] { t->run(); });
    name_thread(threads.back(), "sluice-" + task->metrics().operators.front().name);
  }
  for (auto& thread : threads) thread.join();
  io.stop();
  timer_thread.join();

  JobResult result;
  result.duration = std::chrono::steady_clock::now() - started;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = nullptr;
  }
  result.metrics = run.metrics();
  if (auto failure = run.state.failure()) {
    result.status = JobResult::Status::kFailed;
    result.failed_operator = failure->operator_name;
    result.exception = failure->cause;
    result.error = "operator '" + failure->operator_name + "'" +
                   (failure->parallelism > 1 ? " (subtask " + std::to_string(failure->subtask + 1) +
                                                   " of " + std::to_string(failure->parallelism) + ")"
                                             : "") +
                   " failed: " + failure->message;
  } else if (run.state.is_cancelled()) {
    result.status = JobResult::Status::kCancelled;
  }
  return result;
}

}  // namespace sluice
