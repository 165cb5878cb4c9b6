// Barrier alignment and the coordinator's protocol, driven without tasks.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "engine/barrier_aligner.hpp"
#include "engine/checkpoint_coordinator.hpp"
#include "tests/support.hpp"

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

}  // namespace

TEST_CASE("the coordinator tells every task how n ended before it triggers n+1", "[checkpoint]") {
  testing::TempDir dir;
  const CheckpointStorage storage(dir.path(), "protocol");
  std::vector<std::string> log;
  std::mutex mutex;
  FakeTask source(true, log, mutex), sink(false, log, mutex);
  RuntimeOptions options;
  options.checkpoint_interval = 1ms;
  boost::asio::io_context io;
  CheckpointCoordinator coordinator(io, options, storage, "protocol", {{"source", 1}, {"sink", 1}},
                                    {&source, &sink}, 1);
  coordinator.start();
  // Stops and joins the timer thread however the test ends.
  struct Timer {
    boost::asio::io_context& io;
    std::thread thread{[this] { io.run(); }};
    ~Timer() {
      io.stop();
      thread.join();
    }
  } timer{io};
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
