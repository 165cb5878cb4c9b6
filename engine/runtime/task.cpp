#include "sluice/engine/runtime/task.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/operator_failure.hpp"
#include "sluice/engine/graph/node_def.hpp"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// How long an idle source waits before it is polled again: doubling from the
// first to the last, reset whenever it has records.
constexpr std::chrono::microseconds kFirstIdleWait = 100us;
constexpr std::chrono::microseconds kLastIdleWait = 5ms;

// How far a source with a rate may run ahead of it after it had nothing to
// emit for a while (or was held up): the time it did not use is not made up
// for beyond this, so that an idle source's next records come at the rate too.
constexpr std::chrono::milliseconds kRateBurst = 100ms;

}  // namespace

Task::Task(const JobGraph& graph, const PlanChain& chain, int subtask,
           const RuntimeOptions& options, JobRunState& job, TaskCheckpointing checkpointing)
    : graph_(graph),
      nodes_(chain.nodes),
      subtask_(subtask),
      parallelism_(chain.parallelism),
      options_(options),
      job_(job),
      checkpointing_(std::move(checkpointing)) {
  metrics_.subtask = subtask;
  metrics_.parallelism = parallelism_;
  metrics_.operators = std::vector<OperatorMetrics>(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    metrics_.operators[i].name = graph_.nodes()[nodes_[i]].name;
    metrics_.name += (i == 0 ? "" : " -> ") + metrics_.operators[i].name;
  }
  job_.watch(&notifier_, [this] { interrupt(); });
}

Task::~Task() = default;

bool Task::is_source() const { return graph_.nodes()[nodes_.front()].kind == NodeKind::kSource; }

void Task::post_trigger(int64_t id) {
  mailbox_.post([this, id] { checkpoint(id, std::chrono::nanoseconds(0)); });
}

void Task::post_complete(int64_t id) {
  mailbox_.post([this, id] { checkpointer_.notify_complete(id); });
}

void Task::post_aborted(int64_t id) {
  mailbox_.post([this, id] { checkpointer_.notify_aborted(id); });
}

void Task::post_finish() {
  mailbox_.post([this] { stream_finished_ = true; });
}

void Task::run() {
  try {
    open_chain();
    if (source_) {
      run_source();
    } else {
      run_inputs();
    }
  } catch (const TaskCancelled&) {
  } catch (const OperatorFailure& f) {
    job_.fail({f.operator_name, subtask_, parallelism_, f.message, f.cause});
  } catch (const std::exception& e) {
    job_.fail({metrics_.name, subtask_, parallelism_, e.what(), std::current_exception()});
  }
  close_sink();
  close_chain();
  finished_.store(true, std::memory_order_release);
}

void Task::close_sink() {
  if (!sink_ || !sink_opened_) return;
  std::optional<int64_t> completed;
  if (checkpointing_.coordinator) completed = checkpointing_.coordinator->quiesce();
  if (!completed) completed = checkpointing_.restored;
  try {
    sink_->close(completed);
  } catch (const std::exception& e) {
    // The job has ended already, as it ended: this only reports.
    spdlog::warn("operator '{}' could not close: {}", chain_.back().name(), e.what());
  }
}

void Task::open_chain() {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeDef& node = graph_.nodes()[nodes_[i]];
    ChainMember m;
    m.node = &node;
    m.metrics = &metrics_.operators[i];
    m.context = std::make_unique<TaskOperatorContext>(
        graph_, node, SubtaskInfo{graph_.name(), node.name, subtask_, parallelism_}, checkpointing_,
        metrics_, actions_);
    const SubtaskInfo& info = m.context->subtask();
    guarded(node.name, [&] {
      switch (node.kind) {
        case NodeKind::kSource:
          m.source = node.source.create(info);
          break;
        case NodeKind::kOperator:
          m.op = node.op.create(info);
          break;
        case NodeKind::kSink:
          m.sink = node.sink.create(info);
          break;
      }
      if (!m.source && !m.op && !m.sink) throw std::logic_error("its factory returned nothing");
    });
    chain_.push_back(std::move(m));
  }
  source_ = chain_.front().source.get();
  sink_ = chain_.back().sink.get();

  // The chain ends in the sink, or in the writer into the output channels.
  if (!sink_) {
    writer_ = std::make_unique<RecordWriter>(std::move(outputs_), options_.batch_size, notifier_,
                                             job_.cancelled(), metrics_);
  }
  operators_ = std::make_unique<OperatorChain>(chain_, writer_.get(), options_.check_rows);
  if (!source_) {
    InputEventHandler& handler = *this;
    input_ = std::make_unique<InputProcessor>(inputs_, operators_->head(), handler, metrics_);
  }
  std::vector<const SubtaskCheckpointer::Member*> participants;
  for (const ChainMember& m : chain_) participants.push_back(&m);
  checkpointer_.set_members(std::move(participants));

  for (ChainMember& m : chain_) {
    guarded(m.name(), [&] {
      if (m.source) m.source->open(*m.context);
      if (m.op) m.op->open(*m.context);
      if (m.sink) m.sink->open(*m.context);
    });
    if (m.sink) sink_opened_ = true;
  }
}

void Task::interrupt() { actions_.cancel(); }

void Task::close_chain() {
  // Cancellation must not reach operators that are going away.
  actions_.clear();
  // Snapshots still being written need their stores.
  checkpointer_.wait();
  checkpointer_.set_members({});
  // Operators are destroyed here, on the thread that used them, sink first.
  input_.reset();
  operators_.reset();
  writer_.reset();
  source_ = nullptr;
  sink_ = nullptr;
  while (!chain_.empty()) chain_.pop_back();
}

const Counter& Task::source_output() const {
  return chain_.size() > 1 ? chain_[1].metrics->records_in : metrics_.records_written;
}

void Task::serve_mailbox() {
  if (mailbox_.has_mail()) mailbox_.run_mail();
  if (source_) {
    // Once the data ended, sinks have written their tail: no more flushes.
    const int64_t tick = mailbox_.take_tick();
    if (tick != 0 && !data_ended_) emit_flush(tick);
  }
}

bool Task::has_work() const {
  return job_.is_cancelled() || mailbox_.has_mail() || mailbox_.has_tick() || inputs_.available();
}

void Task::idle(std::optional<Notifier::Clock::time_point> deadline) {
  uint64_t seen = notifier_.epoch();
  if (has_work() || notifier_.spin(seen)) return;
  // About to sleep: what is batched so far must not wait for more.
  if (writer_) writer_->flush_partial();
  seen = notifier_.epoch();
  if (has_work()) return;
  notifier_.wait(seen, deadline);
}

void Task::run_source() {
  using Clock = Notifier::Clock;
  const double rate = chain_.front().node->source.rate / parallelism_;
  const Counter& emitted = source_output();
  // The rate counts the records emitted since `start`.
  Clock::time_point start = Clock::now();
  uint64_t emitted_at_start = 0;
  std::chrono::microseconds idle_wait = kFirstIdleWait;
  const bool flush_on_idle = options_.flush_on_idle && options_.flush_interval.count() > 0;
  while (!job_.is_cancelled()) {
    serve_mailbox();
    if (stream_finished_) {
      end_stream();
      return;
    }
    if (data_ended_) {
      // Waiting for the final checkpoint; its trigger arrives as mail.
      idle(std::nullopt);
      continue;
    }
    if (rate > 0) {
      // The instant at which the next record is due.
      const auto due =
          start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                      static_cast<double>(emitted.get() - emitted_at_start) / rate));
      const auto now = Clock::now();
      if (now < due) {
        idle(due);
        continue;
      }
      if (now - due > kRateBurst) {
        start = now - kRateBurst;
        emitted_at_start = emitted.get();
      }
    }
    switch (operators_->poll_source()) {
      case PollResult::kMoreAvailable:
        idle_wait = kFirstIdleWait;
        break;
      case PollResult::kNothingAvailable:
        // Ran dry: what it emitted need not wait for the next tick.
        if (flush_on_idle && emitted.get() != emitted_at_flush_) {
          metrics_.flush_on_idle.add(1);
          emit_flush(job_.next_flush_tick());
        }
        idle(Clock::now() + idle_wait);
        idle_wait = std::min(idle_wait * 2, kLastIdleWait);
        break;
      case PollResult::kEndOfInput:
        on_end_of_data();
        data_ended_ = true;
        if (!checkpointing_.coordinator) {
          end_stream();
          return;
        }
        checkpointing_.coordinator->source_ended();
        break;
    }
  }
}

void Task::run_inputs() {
  while (!job_.is_cancelled()) {
    serve_mailbox();
    switch (input_->process_next()) {
      case InputProcessor::Status::kProcessed:
        break;
      case InputProcessor::Status::kNothingAvailable:
        idle(std::nullopt);
        break;
      case InputProcessor::Status::kEndOfInput:
        // The news that the final checkpoint completed was posted before
        // the sources ended their streams: run it before ending too.
        serve_mailbox();
        end_stream();
        return;
    }
  }
}

void Task::emit_flush(int64_t tick) {
  metrics_.flush_emitted.add(1);
  emitted_at_flush_ = source_output().get();
  on_flush(tick);
}

void Task::on_flush(int64_t tick) {
  // With several inputs the same tick arrives once per input: act on the first.
  if (tick <= last_tick_) return;
  last_tick_ = tick;
  if (sink_) {
    if (!actions_.flush()) return;
    guarded(chain_.back().name(), actions_.flush());
  } else {
    writer_->emit_event({EventKind::kFlush, tick});
  }
  metrics_.flush_acted.add(1);
}

void Task::on_checkpoint(int64_t id, std::chrono::nanoseconds alignment) {
  // The coordinator posts the news of checkpoint n before it triggers n+1,
  // but that mail may have come in after this task last looked: run it
  // first, so that an operator always learns how n ended before it
  // snapshots n+1 (a sink commits n's transaction before preparing n+1's).
  if (mailbox_.has_mail()) mailbox_.run_mail();
  checkpoint(id, alignment);
}

void Task::checkpoint(int64_t id, std::chrono::nanoseconds alignment) {
  // Downstream can start aligning while this task snapshots.
  if (writer_) writer_->emit_event({EventKind::kBarrier, id});
  checkpointer_.checkpoint(id, alignment);
}

void Task::on_end_of_data() {
  operators_->finish();
  if (writer_) writer_->emit_event({EventKind::kEndOfData, 0});
}

void Task::end_stream() {
  if (writer_) writer_->emit_event({EventKind::kEndOfInput, 0});
}

}  // namespace sluice
