#include "sluice/engine/runtime/task.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/state/lazy_state_store.hpp"
#include "sluice/engine/state/state_store.hpp"

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

class Task::Context final : public SinkContext, public KeyTaker {
 public:
  Context(Task& task, const NodeDef& node, SubtaskInfo info)
      : task_(task), node_(node), info_(std::move(info)) {}

  const SubtaskInfo& subtask() const override { return info_; }
  Counter& counter(const std::string& name) override {
    return task_.metrics_.custom(info_.operator_name + "." + name);
  }
  void register_flush_action(std::function<void()> action) override {
    task_.flush_action_ = std::move(action);
  }
  void register_cancel_action(std::function<void()> action) override {
    std::lock_guard<std::mutex> lock(task_.cancel_mutex_);
    task_.cancel_actions_.push_back(std::move(action));
  }

  RawValueState raw_value_state(const std::string& name) override {
    return RawValueState(store_, name);
  }
  RawListState raw_list_state(const std::string& name) override {
    return RawListState(store_, name);
  }
  RawKeyedValueState raw_keyed_value_state(const std::string& name) override {
    require_keyed_input();
    return RawKeyedValueState(store_, name);
  }
  RawKeyedMapState raw_keyed_map_state(const std::string& name) override {
    require_keyed_input();
    return RawKeyedMapState(store_, name);
  }
  std::string describe_position(int64_t position) const override {
    // The input comes from one source, through operators with one input each.
    const NodeDef* node = &node_;
    while (node->kind != NodeKind::kSource && !node->inputs.empty()) {
      node = &task_.graph_.nodes()[node->inputs[0].from];
    }
    if (node->kind != NodeKind::kSource || !node->source.describe_position) return "";
    return node->source.describe_position(position);
  }
  std::optional<int64_t> restored_checkpoint() const override {
    return task_.checkpointing_.restored;
  }
  bool resumed_from_older_checkpoint() const override {
    const auto& restored = task_.checkpointing_.restored;
    if (!restored) return false;
    const std::optional<int64_t> latest = task_.checkpointing_.storage->latest();
    return latest && *latest > *restored;
  }
  bool checkpoints_enabled() const override { return task_.checkpointing_.coordinator != nullptr; }
  const std::string* current_key() const override {
    if (!key_) return nullptr;
    key_wanted_ = true;
    return &current_key_;
  }

  /// Makes the operator's keyed state follow the key columns `key` of each
  /// record, taken by take_key() before the operator sees it.
  void key_by(std::vector<size_t> key) { key_ = std::move(key); }
  /// Marks a parallel operator whose input is not keyed: keyed state there
  /// would split a key's records over subtasks (validate() catches the
  /// operators that declare OperatorDef::keyed_state; this, the others).
  void forbid_keyed_state() { keyed_state_forbidden_ = true; }
  void take_key(RowRef row) override { current_key_ = encode_key(row, *key_); }
  bool keyed() const { return key_.has_value(); }
  bool wants_keys() const override { return key_wanted_; }

  /// The store a checkpoint saves: the one the operator used, or the restored
  /// state it never touched (opened now, so that it is carried forward rather
  /// than lost once the checkpoint it came from is pruned); null if neither.
  StateStore* store_to_snapshot() { return store_.for_read(); }

 private:
  void require_keyed_input() const {
    if (!keyed_state_forbidden_) return;
    throw ConfigError("it keeps keyed state in " + count_of(info_.parallelism, "subtask") +
                      ", but its input is not partitioned by key: put key_by(columns) before it, "
                      "so that all records of a key reach the subtask that holds its state");
  }

  std::optional<std::filesystem::path> saved_state() const {
    if (!task_.checkpointing_.restored) return std::nullopt;
    auto dir = task_.checkpointing_.storage->subtask_dir(*task_.checkpointing_.restored,
                                                         info_.operator_name, info_.index);
    if (!std::filesystem::exists(dir)) return std::nullopt;
    return dir;
  }

  Task& task_;
  const NodeDef& node_;
  SubtaskInfo info_;
  std::optional<std::vector<size_t>> key_;  // the input's key_by columns
  bool keyed_state_forbidden_ = false;
  std::string current_key_;
  // Whether the operator asked for the current key (its keyed state does,
  // when it is created): only then is it set per record.
  mutable bool key_wanted_ = false;
  LazyStateStore store_{saved_state().has_value(), [this] {
                          return StateStore::open(task_.checkpointing_.storage->work_dir(
                                                      info_.operator_name, info_.index),
                                                  saved_state());
                        }};
};

struct Task::Member {
  const NodeDef* node;
  OperatorMetrics* metrics;
  std::unique_ptr<Context> context;
  std::unique_ptr<Source> source;  // exactly one of these three is set
  std::unique_ptr<Operator> op;
  std::unique_ptr<Sink> sink;

  const std::string& name() const { return node->name; }
  CheckpointHooks& hooks() const {
    if (source) return *source;
    if (op) return *op;
    return *sink;
  }
};

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
    Member m{&node, &metrics_.operators[i],
             std::make_unique<Context>(
                 *this, node, SubtaskInfo{graph_.name(), node.name, subtask_, parallelism_})};
    const SubtaskInfo& info = m.context->subtask();
    // An input partitioned with key_by keys the operator's keyed state.
    if (node.kind == NodeKind::kOperator && node.inputs.size() == 1 &&
        node.inputs[0].partitioning == Partitioning::kHash) {
      const Schema& input = graph_.nodes()[node.inputs[0].from].output.schema;
      std::vector<size_t> key;
      for (const auto& column : node.inputs[0].key_columns) key.push_back(input.require(column));
      m.context->key_by(std::move(key));
    } else if (node.kind == NodeKind::kOperator && parallelism_ > 1) {
      m.context->forbid_keyed_state();
    }
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
  std::vector<OperatorChain::Member> links;
  for (Member& m : chain_) {
    links.push_back({m.node, m.metrics, m.source.get(), m.op.get(), m.sink.get(),
                     m.context->keyed() ? m.context.get() : nullptr});
  }
  operators_ =
      std::make_unique<OperatorChain>(std::move(links), writer_.get(), options_.check_rows);
  if (!source_) {
    InputEventHandler& handler = *this;
    input_ = std::make_unique<InputProcessor>(inputs_, operators_->head(), handler, metrics_);
  }
  std::vector<SubtaskCheckpointer::Member> participants;
  for (Member& m : chain_) {
    participants.push_back({&m.node->name, &m.hooks(),
                            [context = m.context.get()] { return context->store_to_snapshot(); }});
  }
  checkpointer_.set_members(std::move(participants));

  for (Member& m : chain_) {
    guarded(m.name(), [&] {
      if (m.source) m.source->open(*m.context);
      if (m.op) m.op->open(*m.context);
      if (m.sink) m.sink->open(*m.context);
    });
    if (m.sink) sink_opened_ = true;
  }
}

void Task::interrupt() {
  std::lock_guard<std::mutex> lock(cancel_mutex_);
  for (const auto& action : cancel_actions_) action();
}

void Task::close_chain() {
  {
    // Cancellation must not reach operators that are going away.
    std::lock_guard<std::mutex> lock(cancel_mutex_);
    cancel_actions_.clear();
  }
  // Snapshots still being written need their stores.
  checkpointer_.wait();
  checkpointer_.set_members({});
  // Operators are destroyed here, on the thread that used them, sink first.
  input_.reset();
  operators_.reset();
  writer_.reset();
  source_ = nullptr;
  sink_ = nullptr;
  flush_action_ = nullptr;
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
    if (!flush_action_) return;
    guarded(chain_.back().name(), flush_action_);
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
