// Barrier alignment, input processing, the coordinator's protocol and a subtask's checkpoints,
// driven without tasks.
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "sluice/engine/checkpoint/barrier_aligner.hpp"
#include "sluice/engine/checkpoint/checkpoint_coordinator.hpp"
#include "sluice/engine/checkpoint/subtask_checkpointer.hpp"
#include "sluice/engine/runtime/input_processor.hpp"
#include "sluice/engine/runtime/operator_chain.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

// Three inputs, each with a barrier-only batch waiting.
struct ThreeInputs {
  ThreeInputs() {
    for (auto& channel : channels) {
      gate.add(&channel);
      auto batch = channel.acquire();
      batch->event = {EventKind::kBarrier, 1};
      channel.try_push(batch);
    }
  }
  Notifier consumer, producer;
  Schema schema = Schema::parse("id BIGINT");
  Channel channels[3] = {Channel(4, consumer, producer, schema),
                         Channel(4, consumer, producer, schema),
                         Channel(4, consumer, producer, schema)};
  InputGate gate;
};

}  // namespace

TEST_CASE("a barrier blocks its input until it came on every live input", "[checkpoint]") {
  ThreeInputs inputs;
  BarrierAligner aligner(inputs.gate);
  size_t index = 0;
  CHECK_FALSE(aligner.on_barrier(0, 7).has_value());
  CHECK(aligner.aligning());
  // Input 0 is blocked: the gate reads the others only.
  for (int i = 0; i < 2; ++i) {
    auto batch = inputs.gate.poll(index);
    REQUIRE(batch);
    CHECK(index != 0);
    inputs.gate.recycle(index, std::move(batch));
  }
  CHECK_FALSE(inputs.gate.poll(index));
  CHECK_FALSE(aligner.on_barrier(2, 7).has_value());
  CHECK_THROWS_AS(aligner.on_barrier(1, 8), std::logic_error);  // another checkpoint's
  CHECK(aligner.on_barrier(1, 7).has_value());
  aligner.release();
  CHECK_FALSE(aligner.aligning());
  CHECK(inputs.gate.poll(index));
  CHECK(index == 0);
}

TEST_CASE("an input that ended is not waited for", "[checkpoint]") {
  ThreeInputs inputs;
  BarrierAligner aligner(inputs.gate);
  inputs.gate.mark_ended(1);
  CHECK_FALSE(aligner.on_barrier(0, 3).has_value());
  CHECK(aligner.on_barrier(2, 3).has_value());
}

namespace {

// What reaches the chain and the task, in order: records by id, then events.
class InputLog final : public BatchReceiver, public InputEventHandler {
 public:
  void push(Batch& rows) override {
    rows.for_each(
        [&](uint32_t i) { log.push_back("record " + rows.row(i).fields[0].to_string()); });
    rows.clear();
  }
  void push_schema_change(const std::shared_ptr<const SchemaChange>& change) override {
    log.push_back("schema change " + change->after.name);
  }
  void on_flush(int64_t tick) override { log.push_back("flush " + std::to_string(tick)); }
  void on_checkpoint(int64_t id, std::chrono::nanoseconds) override {
    log.push_back("checkpoint " + std::to_string(id));
  }
  void on_end_of_data() override { log.push_back("end of data"); }

  size_t position(const std::string& entry) const {
    const auto it = std::find(log.begin(), log.end(), entry);
    REQUIRE(it != log.end());
    return static_cast<size_t>(it - log.begin());
  }
  std::vector<std::string> log;
};

// Sends a batch of the records `ids`, followed by `event`.
void send(Channel& channel, std::vector<int64_t> ids, ControlEvent event = {}) {
  auto batch = channel.acquire();
  for (int64_t id : ids) batch->append(Row(RowKind::kInsert, {id}));
  batch->event = event;
  REQUIRE(channel.try_push(batch));
}

}  // namespace

TEST_CASE("the input processor holds records after a barrier until it is aligned", "[checkpoint]") {
  Notifier consumer, producer;
  const Schema schema = Schema::parse("id BIGINT");
  Channel a(8, consumer, producer, schema), b(8, consumer, producer, schema);
  InputGate gate;
  gate.add(&a);
  gate.add(&b);
  InputLog chain;
  TaskMetrics metrics;
  InputProcessor input(gate, chain, chain, metrics);
  using Status = InputProcessor::Status;

  send(a, {1, 2}, {EventKind::kBarrier, 5});
  send(a, {3});
  send(a, {}, {EventKind::kEndOfData, 0});
  send(a, {}, {EventKind::kEndOfInput, 0});
  send(b, {10});
  send(b, {11}, {EventKind::kFlush, 4});
  // Input a is blocked after its barrier: only b's batches are read now.
  while (input.process_next() == Status::kProcessed) {
  }
  CHECK(chain.log ==
        std::vector<std::string>{"record 1", "record 2", "record 10", "record 11", "flush 4"});
  send(b, {12}, {EventKind::kBarrier, 5});
  send(b, {}, {EventKind::kEndOfData, 0});
  CHECK(input.process_next() == Status::kProcessed);
  CHECK(chain.log.back() == "checkpoint 5");
  while (input.process_next() == Status::kProcessed) {
  }
  // Record 3 came after the barrier; end of data once, after both inputs.
  CHECK(chain.position("record 3") > chain.position("checkpoint 5"));
  CHECK(chain.log.back() == "end of data");
  CHECK(std::count(chain.log.begin(), chain.log.end(), "end of data") == 1);
  CHECK(input.process_next() == Status::kNothingAvailable);
  send(b, {}, {EventKind::kEndOfInput, 0});
  CHECK(input.process_next() == Status::kEndOfInput);
  CHECK(metrics.batches_in.get() == 9);
  CHECK(metrics.flush_seen.get() == 1);
}

namespace {

// Records what the coordinator tells it; acknowledges triggers at once.
class FakeTask final : public CheckpointParticipant {
 public:
  FakeTask(bool source, std::vector<std::string>& log, std::mutex& mutex)
      : source_(source), log_(log), mutex_(mutex) {}
  bool is_source() const override { return source_; }
  void post_trigger(int64_t id) override { note("trigger " + std::to_string(id)); }
  void post_complete(int64_t id) override { note("complete " + std::to_string(id)); }
  void post_aborted(int64_t id) override { note("aborted " + std::to_string(id)); }
  void post_finish() override { note("finish"); }

 private:
  void note(std::string event) {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back((source_ ? "source " : "sink ") + event);
  }
  bool source_;
  std::vector<std::string>& log_;
  std::mutex& mutex_;
};

// Runs the coordinator's timer thread; stops and joins it however the test
// ends.
struct TimerThread {
  boost::asio::io_context& io;
  std::thread thread{[this] { io.run(); }};
  ~TimerThread() {
    io.stop();
    thread.join();
  }
};

}  // namespace

TEST_CASE("the coordinator tells every task how n ended before it triggers n+1", "[checkpoint]") {
  testing::TempDir dir;
  const CheckpointStorage storage(dir.path(), "protocol");
  std::vector<std::string> log;
  std::mutex mutex;
  FakeTask source(true, log, mutex), sink(false, log, mutex);
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.checkpoint_interval = 1ms;
  boost::asio::io_context io;
  CheckpointCoordinator coordinator(io, options, storage, "protocol", {{"source", 1}, {"sink", 1}},
                                    {&source, &sink}, 1);
  coordinator.start();
  TimerThread timer{io};
  // Acknowledge checkpoints 1 and 2 from both tasks, as they are triggered.
  for (int64_t id = 1; id <= 2; ++id) {
    REQUIRE(testing::wait_until([&] {
      std::lock_guard<std::mutex> lock(mutex);
      return std::find(log.begin(), log.end(), "source trigger " + std::to_string(id)) != log.end();
    }));
    for (size_t task = 0; task < 2; ++task) coordinator.acknowledge({.id = id, .task = task});
  }
  REQUIRE(testing::wait_until([&] {
    std::lock_guard<std::mutex> lock(mutex);
    return std::find(log.begin(), log.end(), "source trigger 3") != log.end();
  }));
  std::lock_guard<std::mutex> lock(mutex);
  const std::vector<std::string> expected{
      "source trigger 1", "sink complete 1",   "source complete 1", "source trigger 2",
      "sink complete 2",  "source complete 2", "source trigger 3"};
  CHECK(std::vector<std::string>(log.begin(), log.begin() + 7) == expected);
}

TEST_CASE("a requested checkpoint does not wait for the interval, but for the min-pause",
          "[checkpoint]") {
  testing::TempDir dir;
  const CheckpointStorage storage(dir.path(), "requested");
  std::vector<std::string> log;
  std::mutex mutex;
  FakeTask source(true, log, mutex), sink(false, log, mutex);
  const auto logged = [&](const std::string& event) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::find(log.begin(), log.end(), event) != log.end();
  };
  const bool paused = GENERATE(false, true);
  INFO("checkpoint.min-pause: " << (paused ? "1h" : "0"));
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.checkpoint_interval = std::chrono::hours(1);
  if (paused) options.checkpoint_min_pause = std::chrono::hours(1);
  boost::asio::io_context io;
  CheckpointCoordinator coordinator(io, options, storage, "requested", {{"source", 1}, {"sink", 1}},
                                    {&source, &sink}, 1);
  coordinator.start();
  TimerThread timer{io};
  coordinator.request_checkpoint();
  if (paused) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(logged("source trigger 1"));
    return;
  }
  REQUIRE(testing::wait_until([&] { return logged("source trigger 1"); }));
  // Asked for again while 1 is in flight: 2 follows it.
  coordinator.request_checkpoint();
  for (size_t task = 0; task < 2; ++task) coordinator.acknowledge({.id = 1, .task = task});
  REQUIRE(testing::wait_until([&] { return logged("source trigger 2"); }));
  // Not asked for: the next waits for the interval.
  for (size_t task = 0; task < 2; ++task) coordinator.acknowledge({.id = 2, .task = task});
  REQUIRE(testing::wait_until([&] { return logged("source complete 2"); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(logged("source trigger 3"));
}

namespace {

struct Acks final : CheckpointAcknowledger {
  std::mutex mutex;
  std::vector<CheckpointAck> acks;
  void acknowledge(CheckpointAck ack) override {
    std::lock_guard<std::mutex> lock(mutex);
    acks.push_back(std::move(ack));
  }
  void source_ended() override {}
  void request_checkpoint() override {}
  std::optional<int64_t> quiesce() override { return std::nullopt; }
};

struct Recording final : CheckpointHooks {
  std::vector<std::string>* log;
  std::string name;
  Recording(std::vector<std::string>* l, std::string n) : log(l), name(std::move(n)) {}
  void snapshot_state(int64_t id) override {
    if (name == "broken") throw std::runtime_error("cannot snapshot");
    log->push_back(name + " snapshot " + std::to_string(id));
  }
  void notify_checkpoint_complete(int64_t id) override {
    log->push_back(name + " complete " + std::to_string(id));
  }
  void notify_checkpoint_aborted(int64_t id) override {
    log->push_back(name + " aborted " + std::to_string(id));
  }
};

// A chain member with a name, its hooks and the store it used, if any.
struct Participant final : SubtaskCheckpointer::Member {
  Participant(std::string n, CheckpointHooks& h, StateStore* s = nullptr)
      : name_(std::move(n)), hooks_(h), store_(s) {}
  const std::string& name() const override { return name_; }
  CheckpointHooks& hooks() const override { return hooks_; }
  StateStore* store_to_snapshot() const override { return store_; }
  std::string name_;
  CheckpointHooks& hooks_;
  StateStore* store_;
};

}  // namespace

TEST_CASE("a subtask checkpointer snapshots its members in order and saves the stores they used",
          "[checkpoint]") {
  testing::TempDir dir;
  const CheckpointStorage storage(dir.path(), "job");
  Acks acks;
  const TaskCheckpointing checkpointing{&storage, std::nullopt, &acks, 7};
  std::vector<std::string> failures;
  SubtaskCheckpointer checkpointer(
      checkpointing, 0, [&](const std::string& message, auto) { failures.push_back(message); });
  std::vector<std::string> log;
  Recording source(&log, "source"), sum(&log, "sum");
  auto store = StateStore::open(storage.work_dir("sum", 0), std::nullopt);
  store->put("k", "v");
  const Participant source_member("source", source), sum_member("sum", sum, store.get());
  checkpointer.set_members({&source_member, &sum_member});

  checkpointer.checkpoint(1, std::chrono::milliseconds(3));
  checkpointer.notify_complete(1);
  checkpointer.notify_aborted(2);
  checkpointer.wait();
  CHECK(log == std::vector<std::string>{"source snapshot 1", "sum snapshot 1", "source complete 1",
                                        "sum complete 1", "source aborted 2", "sum aborted 2"});
  REQUIRE(acks.acks.size() == 1);
  const CheckpointAck& ack = acks.acks[0];
  CHECK(ack.id == 1);
  CHECK(ack.task == 7);
  CHECK(ack.alignment == std::chrono::milliseconds(3));
  REQUIRE(ack.states.size() == 1);  // only the member with a store
  CHECK(ack.states[0].operator_name == "sum");
  CHECK(ack.states[0].bytes > 0);
  CHECK(StateStore::open_read_only(storage.subtask_dir(1, "sum", 0))->get("k") == "v");
  CHECK(failures.empty());

  Recording broken(&log, "broken");
  const Participant broken_member("broken", broken);
  checkpointer.set_members({&broken_member});
  try {
    checkpointer.checkpoint(2, {});
    FAIL("the snapshot did not fail");
  } catch (const OperatorFailure& failure) {
    CHECK(failure.operator_name == "broken");
    CHECK(failure.message == "cannot snapshot");
  }
  CHECK(acks.acks.size() == 1);  // nothing acknowledged for it
}
