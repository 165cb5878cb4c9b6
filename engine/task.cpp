#include "engine/task.hpp"

#include <algorithm>
#include <future>
#include <stdexcept>

#include "engine/error.hpp"
#include "engine/lazy_state_store.hpp"
#include "engine/state_store.hpp"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// How long an idle source waits before it is polled again: doubling from the
// first to the last, reset whenever it has records.
constexpr std::chrono::microseconds kFirstIdleWait = 100us;
constexpr std::chrono::microseconds kLastIdleWait = 5ms;

// An exception from user code, tagged with the operator it came from. Not a
// std::exception, so that user code catching those does not catch it on its
// way through an upstream operator of the same chain.
struct OperatorFailure {
  std::string operator_name;
  std::string message;
  std::exception_ptr cause;
};

// Calls `f`, tagging what it throws with the operator `name`.
template <typename F>
decltype(auto) guarded(const std::string& name, F&& f) {
  try {
    return f();
  } catch (const OperatorFailure&) {
    throw;
  } catch (const TaskCancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw OperatorFailure{name, e.what(), std::current_exception()};
  } catch (...) {
    throw OperatorFailure{name, "unknown exception", std::current_exception()};
  }
}

// Checks what an operator emitted against the changelog mode and the
// DECIMAL precisions it declared (RuntimeOptions::check_rows); the batch's
// columns already hold only the declared types.
void check_rows(const NodeDef& node, Batch& rows) {
  const Schema& schema = node.output.schema;
  rows.for_each([&](uint32_t i) {
    std::string problem;
    if (!node.output.mode.contains(rows.kind(i))) {
      problem = "its changelog mode is " + node.output.mode.to_string();
    }
    for (size_t c = 0; c < schema.size() && problem.empty(); ++c) {
      const DataType& type = schema.column(c).type;
      const ColumnVector& column = rows.column(c);
      if (type.id == TypeId::kDecimal && !column.is_null(i) &&
          !column.values<Decimal>()[i].fits(type.precision, type.scale)) {
        problem = "column '" + schema.column(c).name + "' is " + type.to_string();
      }
    }
    // Thrown inside the emitting operator's call: tagged with its name there.
    if (!problem.empty())
      throw DataError("emitted " + rows.ref(i).to_string() + ", but " + problem);
  });
}

// Sets an operator's current key (for its keyed state) from each record.
class KeyTaker {
 public:
  virtual ~KeyTaker() = default;
  virtual void take_key(RowRef row) = 0;
  /// Whether the operator reads the current key; if not, it takes whole batches.
  virtual bool wants_keys() const = 0;
};

// What one member of the chain (the source or a transform) emits: its
// output batch, which it fills during a call and which is handed on, checked
// first if asked, when the call returns.
class MemberOutput {
 public:
  MemberOutput(const NodeDef& node, BatchReceiver& next, bool check)
      : node_(node), next_(next), check_(check) {}

  /// Runs `call`, which emits into the collector it is given, then hands on
  /// what it emitted; also when `call` throws, so that what came before a
  /// failure is delivered. Run it inside the operator's guard, so that a
  /// failed check names the operator.
  template <typename F>
  auto run(F&& call) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Collector&>>) {
      call_delivering(call);
      hand_on();
    } else {
      auto result = call_delivering(call);
      hand_on();
      return result;
    }
  }

 private:
  template <typename F>
  auto call_delivering(F& call) {
    try {
      return call(collector_);
    } catch (...) {
      try {
        hand_on();
      } catch (...) {  // the first failure is the one to report
      }
      batch_.clear();
      throw;
    }
  }
  void hand_on() {
    if (check_) check_rows(node_, batch_);
    if (!batch_.empty()) next_.push(batch_);
    batch_.clear();
  }

  const NodeDef& node_;
  BatchReceiver& next_;
  const bool check_;
  Batch batch_{node_.output.schema};
  Collector collector_{batch_};
};

// Feeds one transform of the chain. With `keys` (its input is keyed) wanted
// by the operator, the records go one by one, each after setting the
// operator's current key; otherwise a batch at a time.
class OperatorLink final : public BatchReceiver {
 public:
  OperatorLink(Operator& op, MemberOutput& output, OperatorMetrics& metrics, KeyTaker* keys)
      : op_(op), output_(output), metrics_(metrics), keys_(keys) {}
  void push(Batch& rows) override {
    metrics_.records_in.add(rows.selected());
    guarded(metrics_.name, [&] {
      output_.run([&](Collector& out) {
        if (!keys_ || !keys_->wants_keys()) {
          op_.process_batch(rows, out);
          return;
        }
        rows.for_each([&](uint32_t i) {
          keys_->take_key(rows.ref(i));
          op_.process_row(rows.ref(i), out);
        });
        rows.clear();
      });
    });
  }

 private:
  Operator& op_;
  MemberOutput& output_;
  OperatorMetrics& metrics_;
  KeyTaker* keys_;
};

// Feeds the sink at the end of the chain.
class SinkLink final : public BatchReceiver {
 public:
  SinkLink(Sink& sink, OperatorMetrics& metrics) : sink_(sink), metrics_(metrics) {}
  void push(Batch& rows) override {
    metrics_.records_in.add(rows.selected());
    guarded(metrics_.name, [&] { sink_.write_batch(rows); });
  }

 private:
  Sink& sink_;
  OperatorMetrics& metrics_;
};

}  // namespace

class Task::Context final : public SinkContext, public KeyTaker {
 public:
  Context(Task& task, SubtaskInfo info) : task_(task), info_(std::move(info)) {}

  const SubtaskInfo& subtask() const override { return info_; }
  const TaskMetrics& metrics() const override { return task_.metrics_; }
  Counter& counter(const std::string& name) override {
    return task_.metrics_.custom(info_.operator_name + "." + name);
  }
  void register_flush_action(std::function<void()> action) override {
    task_.flush_action_ = std::move(action);
  }
  void register_cancel_action(std::function<void()> action) override {
    std::lock_guard<std::mutex> lock(task_.cancel_mutex_);
    task_.cancel_action_ = std::move(action);
  }

  RawValueState raw_value_state(const std::string& name) override {
    return RawValueState(store_, name);
  }
  RawListState raw_list_state(const std::string& name) override {
    return RawListState(store_, name);
  }
  RawKeyedValueState raw_keyed_value_state(const std::string& name) override {
    return RawKeyedValueState(store_, name);
  }
  RawKeyedMapState raw_keyed_map_state(const std::string& name) override {
    return RawKeyedMapState(store_, name);
  }
  std::optional<int64_t> restored_checkpoint() const override {
    return task_.checkpointing_.restored;
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
  void take_key(RowRef row) override { current_key_ = encode_key(row, *key_); }
  bool keyed() const { return key_.has_value(); }
  bool wants_keys() const override { return key_wanted_; }

  /// The store a checkpoint saves: the one the operator used, or the restored
  /// state it never touched (opened now, so that it is carried forward rather
  /// than lost once the checkpoint it came from is pruned); null if neither.
  StateStore* store_to_snapshot() { return store_.for_read(); }

 private:
  std::optional<std::filesystem::path> saved_state() const {
    if (!task_.checkpointing_.restored) return std::nullopt;
    auto dir = task_.checkpointing_.storage->subtask_dir(*task_.checkpointing_.restored,
                                                         info_.operator_name, info_.index);
    if (!std::filesystem::exists(dir)) return std::nullopt;
    return dir;
  }

  Task& task_;
  SubtaskInfo info_;
  std::optional<std::vector<size_t>> key_;  // the input's key_by columns
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
  std::unique_ptr<MemberOutput> output;  // sources and transforms: what they emit

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
  mailbox_.post([this, id] { notify_checkpoint_complete(id); });
}

void Task::post_aborted(int64_t id) {
  mailbox_.post([this, id] { notify_checkpoint_aborted(id); });
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
  close_chain();
  finished_.store(true, std::memory_order_release);
}

void Task::open_chain() {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeDef& node = graph_.nodes()[nodes_[i]];
    Member m{&node, &metrics_.operators[i],
             std::make_unique<Context>(
                 *this, SubtaskInfo{graph_.name(), node.name, subtask_, parallelism_})};
    const SubtaskInfo& info = m.context->subtask();
    // An input partitioned with key_by keys the operator's keyed state.
    if (node.kind == NodeKind::kOperator && node.inputs.size() == 1 &&
        node.inputs[0].partitioning == Partitioning::kHash) {
      const Schema& input = graph_.nodes()[node.inputs[0].from].output.schema;
      std::vector<size_t> key;
      for (const auto& column : node.inputs[0].key_columns) key.push_back(input.require(column));
      m.context->key_by(std::move(key));
    }
    guarded(node.name, [&] {
      switch (node.kind) {
        case NodeKind::kSource:
          m.source = node.source.create(info);
          break;
        case NodeKind::kOperator:
          m.op = node.op(info);
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

  // Link the chain from its end: the sink, or the writer into the output channels.
  BatchReceiver* next;
  if (sink_) {
    links_.push_back(std::make_unique<SinkLink>(*sink_, *chain_.back().metrics));
    next = links_.back().get();
  } else {
    writer_ = std::make_unique<RecordWriter>(std::move(outputs_), options_.batch_size, notifier_,
                                             job_.cancelled(), metrics_);
    next = writer_.get();
  }
  for (auto m = chain_.rbegin(); m != chain_.rend(); ++m) {
    if (m->sink) continue;
    m->output = std::make_unique<MemberOutput>(*m->node, *next, options_.check_rows);
    if (!m->op) continue;
    links_.push_back(std::make_unique<OperatorLink>(
        *m->op, *m->output, *m->metrics, m->context->keyed() ? m->context.get() : nullptr));
    next = links_.back().get();
  }
  head_ = next;

  for (Member& m : chain_) {
    guarded(m.name(), [&] {
      if (m.source) m.source->open(*m.context);
      if (m.op) m.op->open(*m.context);
      if (m.sink) m.sink->open(*m.context);
    });
  }
}

void Task::interrupt() {
  std::lock_guard<std::mutex> lock(cancel_mutex_);
  if (cancel_action_) cancel_action_();
}

void Task::close_chain() {
  {
    // Cancellation must not reach a sink that is going away.
    std::lock_guard<std::mutex> lock(cancel_mutex_);
    cancel_action_ = nullptr;
  }
  // Snapshots still being written need their stores.
  snapshots_in_progress_.clear();
  // Operators are destroyed here, on the thread that used them, sink first.
  head_ = nullptr;
  links_.clear();
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
  const std::string& name = chain_.front().name();
  const double rate = chain_.front().node->source.rate / parallelism_;
  const Counter& emitted = source_output();
  const Clock::time_point start = Clock::now();
  std::chrono::microseconds idle_wait = kFirstIdleWait;
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
      const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(emitted.get() / rate));
      if (Clock::now() < due) {
        idle(due);
        continue;
      }
    }
    const PollResult polled = guarded(name, [&] {
      return chain_.front().output->run([&](Collector& out) { return source_->poll_next(out); });
    });
    switch (polled) {
      case PollResult::kMoreAvailable:
        idle_wait = kFirstIdleWait;
        break;
      case PollResult::kNothingAvailable:
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
    size_t index;
    std::unique_ptr<Batch> batch = inputs_.poll(index);
    if (!batch) {
      idle(std::nullopt);
      continue;
    }
    metrics_.batches_in.add(1);
    const ControlEvent event = batch->event;
    head_->push(*batch);
    inputs_.recycle(index, std::move(batch));
    switch (event.kind) {
      case EventKind::kNone:
        break;
      case EventKind::kFlush:
        metrics_.flush_seen.add(1);
        on_flush(event.id);
        break;
      case EventKind::kBarrier:
        on_barrier(index, event.id);
        break;
      case EventKind::kEndOfData:
        inputs_.mark_data_ended(index);
        if (inputs_.all_data_ended()) on_end_of_data();
        break;
      case EventKind::kEndOfInput:
        inputs_.mark_ended(index);
        if (inputs_.all_ended()) {
          // The news that the final checkpoint completed was posted before
          // the sources ended their streams: run it before ending too.
          serve_mailbox();
          end_stream();
          return;
        }
        break;
    }
  }
}

void Task::emit_flush(int64_t tick) {
  metrics_.flush_emitted.add(1);
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

void Task::on_barrier(size_t input, int64_t id) {
  const std::optional<std::chrono::nanoseconds> alignment = aligner_.on_barrier(input, id);
  if (!alignment) return;
  // The coordinator posts the news of checkpoint n before it triggers n+1,
  // but that mail may have come in after this task last looked: run it
  // first, so that an operator always learns how n ended before it
  // snapshots n+1 (a sink commits n's transaction before preparing n+1's).
  if (mailbox_.has_mail()) mailbox_.run_mail();
  checkpoint(id, *alignment);
  aligner_.release();
}

void Task::checkpoint(int64_t id, std::chrono::nanoseconds alignment) {
  // Downstream can start aligning while this task snapshots.
  if (writer_) writer_->emit_event({EventKind::kBarrier, id});
  const auto started = std::chrono::steady_clock::now();
  CheckpointAck ack{id, checkpointing_.index, {}, alignment};
  std::vector<std::shared_future<uint64_t>> snapshots;  // one per ack.states entry
  for (Member& m : chain_) {
    guarded(m.name(), [&] {
      m.hooks().snapshot_state(id);
      if (StateStore* store = m.context->store_to_snapshot()) {
        const auto dir = checkpointing_.storage->subtask_dir(id, m.name(), subtask_);
        snapshots.push_back(store->snapshot(dir));
        ack.states.push_back({m.name(), subtask_, 0});
      }
    });
  }
  ack.pause = std::chrono::steady_clock::now() - started;
  if (snapshots.empty()) {
    checkpointing_.coordinator->acknowledge(std::move(ack));
    return;
  }
  // The stores finish their snapshots in the background; acknowledge then.
  std::erase_if(snapshots_in_progress_, [](const std::future<void>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  snapshots_in_progress_.push_back(std::async(
      std::launch::async, [this, ack = std::move(ack), snapshots = std::move(snapshots)]() mutable {
        try {
          for (size_t i = 0; i < snapshots.size(); ++i) ack.states[i].bytes = snapshots[i].get();
          checkpointing_.coordinator->acknowledge(std::move(ack));
        } catch (const std::exception& e) {
          job_.fail({metrics_.name, subtask_, parallelism_,
                     "checkpoint " + std::to_string(ack.id) + ": " + e.what(),
                     std::current_exception()});
        }
      }));
}

void Task::notify_checkpoint_complete(int64_t id) {
  for (Member& m : chain_) guarded(m.name(), [&] { m.hooks().notify_checkpoint_complete(id); });
}

void Task::notify_checkpoint_aborted(int64_t id) {
  for (Member& m : chain_) guarded(m.name(), [&] { m.hooks().notify_checkpoint_aborted(id); });
}

void Task::on_end_of_data() {
  for (Member& m : chain_) {
    if (m.op) {
      guarded(m.name(), [&] { m.output->run([&](Collector& out) { m.op->finish(out); }); });
    }
  }
  if (sink_) {
    guarded(chain_.back().name(), [&] { sink_->finish(); });
  } else {
    writer_->emit_event({EventKind::kEndOfData, 0});
  }
}

void Task::end_stream() {
  if (writer_) writer_->emit_event({EventKind::kEndOfInput, 0});
}

}  // namespace sluice
