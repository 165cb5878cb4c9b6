#include <pthread.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"
#include "sluice/tests/support.hpp"
#include "sluice/tests/test_sources.hpp"
#include "sluice/transforms/changelog_normalize.hpp"

using namespace sluice;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

const Schema kIdSchema({{"id", DataType::bigint()}});

// Emits `count` records 0, 1, 2, ... one per poll, pausing `gap` between them,
// and notes, for each record, how many FlushSignals its task had emitted
// before it.
class TrickleSource final : public Source {
 public:
  struct Log {
    std::mutex mutex;
    std::vector<uint64_t> flushes_before;  // per record
    std::atomic<int64_t> emitted{0};
    const Executor* executor = nullptr;  // if set, flushes_before is kept
  };

  TrickleSource(int64_t count, Clock::duration gap, std::shared_ptr<Log> log)
      : count_(count), gap_(gap), log_(std::move(log)) {}

  void open(OperatorContext& context) override { context_ = &context; }

  PollResult poll_next(Collector& out) override {
    if (next_ == count_) return PollResult::kEndOfInput;
    const auto now = Clock::now();
    if (now < due_) return PollResult::kNothingAvailable;
    due_ = now + gap_;
    if (log_->executor) {
      std::lock_guard<std::mutex> lock(log_->mutex);
      const JobMetrics metrics = log_->executor->metrics();
      log_->flushes_before.push_back(
          metrics.task_of(context_->subtask().operator_name)->flush_emitted);
    }
    log_->emitted.fetch_add(1);
    out.emit(Row(RowKind::kInsert, {next_++}));
    return PollResult::kMoreAvailable;
  }

 private:
  const int64_t count_;
  const Clock::duration gap_;
  std::shared_ptr<Log> log_;
  OperatorContext* context_ = nullptr;
  int64_t next_ = 0;
  Clock::time_point due_{};
};

SourceDef trickle(
    int64_t count, Clock::duration gap,
    std::shared_ptr<TrickleSource::Log> log = std::make_shared<TrickleSource::Log>()) {
  return {.output = {kIdSchema}, .create = [=](const SubtaskInfo&) {
            return std::make_unique<TrickleSource>(count, gap, log);
          }};
}

// A sink that notes, for every record, how many times its flush action had
// run before it, and on which threads it wrote and flushed.
struct SinkLog {
  std::mutex mutex;
  std::vector<uint64_t> flushes_before;
  uint64_t flush_actions = 0;
  std::set<std::thread::id> write_threads;
  std::set<std::thread::id> flush_threads;
  std::set<std::string> flush_thread_names;
};

class LoggingSink final : public Sink {
 public:
  explicit LoggingSink(std::shared_ptr<SinkLog> log) : log_(std::move(log)) {}
  void open(SinkContext& context) override {
    context.register_flush_action([this] {
      char name[16] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      std::lock_guard<std::mutex> lock(log_->mutex);
      ++log_->flush_actions;
      log_->flush_threads.insert(std::this_thread::get_id());
      log_->flush_thread_names.insert(name);
    });
  }
  void write(Row&&) override {
    std::lock_guard<std::mutex> lock(log_->mutex);
    log_->flushes_before.push_back(log_->flush_actions);
    log_->write_threads.insert(std::this_thread::get_id());
  }

 private:
  std::shared_ptr<SinkLog> log_;
};

SinkDef logging_sink(std::shared_ptr<SinkLog> log) {
  return {.create = [log](const SubtaskInfo&) { return std::make_unique<LoggingSink>(log); }};
}

// FlushSignals from the timer alone, every `interval`.
RuntimeOptions with_flush(std::chrono::milliseconds interval, bool chaining = true) {
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = interval;
  options.flush_on_idle = false;
  options.chaining = chaining;
  return options;
}

}  // namespace

TEST_CASE("a sink sees records and FlushSignals in the order the source emitted them", "[engine]") {
  const bool chaining = GENERATE(true, false);
  INFO((chaining ? "chained" : "across a thread boundary"));
  auto source_log = std::make_shared<TrickleSource::Log>();
  auto sink_log = std::make_shared<SinkLog>();
  JobGraph graph("order");
  graph.source("trickle", trickle(300, 1ms, source_log))
      .map("pass", [](Row&& row) { return std::move(row); })
      .sink("log", logging_sink(sink_log));
  Executor executor(with_flush(5ms, chaining));
  source_log->executor = &executor;
  const JobResult result = executor.run(graph);
  REQUIRE(result.finished());

  const TaskSnapshot* source_task = result.metrics.task_of("trickle");
  REQUIRE(source_task);
  CHECK(source_task->flush_emitted > 20);  // the test has teeth: signals interleaved
  CHECK(sink_log->flushes_before == source_log->flushes_before);
  CHECK(sink_log->flush_actions == source_task->flush_emitted);
  CHECK(result.metrics.task_of("log")->flush_acted == source_task->flush_emitted);
}

TEST_CASE("user map and filter functions are called for records only", "[engine]") {
  const bool chaining = GENERATE(true, false);
  std::atomic<int> map_calls{0};
  std::atomic<int> filter_calls{0};
  auto collected = std::make_shared<CollectedRows>();
  JobGraph graph("records-only");
  graph.source("trickle", trickle(200, 1ms))
      .map("count-map",
           [&](Row&& row) {
             ++map_calls;
             return std::move(row);
           })
      .filter("count-filter",
              [&](const Row& row) {
                ++filter_calls;
                return row.fields[0].as_bigint() % 2 == 0;
              })
      .sink("collect", collect_sink(collected));
  const JobResult result = Executor(with_flush(2ms, chaining)).run(graph);
  REQUIRE(result.finished());
  CHECK(result.metrics.task_of("trickle")->flush_emitted > 10);
  CHECK(map_calls == 200);
  CHECK(filter_calls == 200);
  CHECK(collected->size() == 100);
  CHECK(result.metrics.records_in("count-filter") == 200);
  CHECK(result.metrics.records_out("count-filter") == 100);
}

TEST_CASE("the flush action runs on the sink's thread, never on the timer's", "[engine]") {
  const bool chaining = GENERATE(true, false);
  auto sink_log = std::make_shared<SinkLog>();
  JobGraph graph("threads");
  graph.source("trickle", trickle(100, 2ms)).sink("log", logging_sink(sink_log));
  REQUIRE(Executor(with_flush(5ms, chaining)).run(graph).finished());
  REQUIRE(sink_log->flush_actions > 5);
  CHECK(sink_log->write_threads.size() == 1);
  CHECK(sink_log->flush_threads == sink_log->write_threads);
  CHECK(sink_log->flush_threads.count(std::this_thread::get_id()) == 0);
  CHECK(sink_log->flush_thread_names.count("sluice-timer") == 0);
}

namespace {

// Emits its records at once, then nothing for `idle`, then ends.
class BurstThenIdleSource final : public Source {
 public:
  BurstThenIdleSource(int count, Clock::duration idle) : count_(count), idle_(idle) {}
  PollResult poll_next(Collector& out) override {
    if (sent_ < count_) {
      out.emit(Row(RowKind::kInsert, {sent_++}));
      if (sent_ == count_) idle_until_ = Clock::now() + idle_;
      return PollResult::kMoreAvailable;
    }
    return Clock::now() < idle_until_ ? PollResult::kNothingAvailable : PollResult::kEndOfInput;
  }

 private:
  const int count_;
  const Clock::duration idle_;
  int sent_ = 0;
  Clock::time_point idle_until_{};
};

// Buffers records; its flush action makes them "visible"; finish() notes how
// many were visible before the end of input flushed the rest.
struct BufferState {
  std::atomic<int> visible{0};
  std::atomic<int> visible_before_finish{-1};
  std::atomic<int> flush_actions{0};
};

class BufferingSink final : public Sink {
 public:
  explicit BufferingSink(std::shared_ptr<BufferState> state) : state_(std::move(state)) {}
  void open(SinkContext& context) override {
    context.register_flush_action([this] { flush(); });
  }
  void write(Row&&) override { ++buffered_; }
  void finish() override {
    state_->visible_before_finish = state_->visible.load();
    flush();
  }

 private:
  void flush() {
    ++state_->flush_actions;
    state_->visible += buffered_;
    buffered_ = 0;
  }
  std::shared_ptr<BufferState> state_;
  int buffered_ = 0;
};

SinkDef buffering_sink(std::shared_ptr<BufferState> state) {
  return {.create = [state](const SubtaskInfo&) { return std::make_unique<BufferingSink>(state); }};
}

// Runs a source that sends 3 records and then idles for 2 s into a buffering sink.
std::shared_ptr<BufferState> run_idle_source(std::chrono::milliseconds flush_interval,
                                             bool chaining) {
  auto state = std::make_shared<BufferState>();
  JobGraph graph("idle");
  graph
      .source("burst",
              {.output = {kIdSchema},
               .create =
                   [](const SubtaskInfo&) { return std::make_unique<BurstThenIdleSource>(3, 2s); }})
      .sink("buffer", buffering_sink(state));
  REQUIRE(Executor(with_flush(flush_interval, chaining)).run(graph).finished());
  return state;
}

}  // namespace

TEST_CASE("an idle source's buffered records are flushed by the timer, not only at the end",
          "[engine]") {
  const bool chaining = GENERATE(true, false);
  const auto with_ticks = run_idle_source(100ms, chaining);
  CHECK(with_ticks->visible_before_finish == 3);

  const auto without_ticks = run_idle_source(0ms, chaining);
  CHECK(without_ticks->visible_before_finish == 0);
  CHECK(without_ticks->flush_actions == 1);  // the close flush only
  CHECK(without_ticks->visible == 3);
}

namespace {

// Emits records until `stop` is set, one every millisecond.
class UntilStoppedSource final : public Source {
 public:
  explicit UntilStoppedSource(std::shared_ptr<std::atomic<bool>> stop) : stop_(std::move(stop)) {}
  PollResult poll_next(Collector& out) override {
    if (*stop_) return PollResult::kEndOfInput;
    const auto now = Clock::now();
    if (now < due_) return PollResult::kNothingAvailable;
    due_ = now + 1ms;
    out.emit(Row(RowKind::kInsert, {n_++}));
    return PollResult::kMoreAvailable;
  }

 private:
  std::shared_ptr<std::atomic<bool>> stop_;
  Clock::time_point due_{};
  int64_t n_ = 0;
};

}  // namespace

TEST_CASE("a sink fed by two upstream subtasks runs its flush action once per tick", "[engine]") {
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto sink_log = std::make_shared<SinkLog>();
  JobGraph graph("fan-in");
  graph
      .source("two", {.output = {kIdSchema},
                      .create =
                          [stop](const SubtaskInfo&) {
                            return std::make_unique<UntilStoppedSource>(stop);
                          }})
      .parallelism(2)
      .sink("log", logging_sink(sink_log))
      .parallelism(1);
  Executor executor(with_flush(20ms));
  // The sources run until the sink has acted on ten ticks.
  std::thread stopper([&] {
    testing::wait_until([&] {
      const JobMetrics m = executor.metrics();
      const TaskSnapshot* sink = m.task_of("log");
      return sink && sink->flush_acted >= 10;
    });
    *stop = true;
  });
  const JobResult result = executor.run(graph);
  stopper.join();
  REQUIRE(result.finished());

  const uint64_t e1 = result.metrics.task_of("two", 0)->flush_emitted;
  const uint64_t e2 = result.metrics.task_of("two", 1)->flush_emitted;
  const TaskSnapshot* sink = result.metrics.task_of("log");
  REQUIRE(e1 > 5);
  REQUIRE(e2 > 5);
  CHECK(sink->flush_seen == e1 + e2);  // every signal arrived...
  CHECK(sink->flush_acted == sink_log->flush_actions);
  // ...and each tick was acted on once: at most one tick (at the very end)
  // can have reached the sink from one source only.
  CHECK(sink_log->flush_actions >= std::max(e1, e2));
  CHECK(sink_log->flush_actions <= std::max(e1, e2) + 1);
}

TEST_CASE("a sink that registered no flush action gets no calls and no errors", "[engine]") {
  std::atomic<int> writes{0};
  struct CountingSink final : Sink {
    std::atomic<int>& writes;
    explicit CountingSink(std::atomic<int>& w) : writes(w) {}
    void write(Row&&) override { ++writes; }
  };
  JobGraph graph("no-action");
  graph.source("trickle", trickle(100, 1ms)).sink("count", {.create = [&](const SubtaskInfo&) {
                                                    return std::make_unique<CountingSink>(writes);
                                                  }});
  const JobResult result = Executor(with_flush(2ms, false)).run(graph);
  REQUIRE(result.finished());
  CHECK(writes == 100);
  CHECK(result.metrics.task_of("count")->flush_seen > 10);
  CHECK(result.metrics.task_of("count")->flush_acted == 0);
}

TEST_CASE("backpressure: records in flight stay within the channel capacity", "[engine]") {
  constexpr size_t kBatch = 8;
  constexpr size_t kCapacity = 4;
  auto source_log = std::make_shared<TrickleSource::Log>();
  std::atomic<int64_t> received{0};
  std::atomic<int64_t> max_in_flight{0};
  struct SlowSink final : Sink {
    std::shared_ptr<TrickleSource::Log> log;
    std::atomic<int64_t>& received;
    std::atomic<int64_t>& max_in_flight;
    SlowSink(std::shared_ptr<TrickleSource::Log> l, std::atomic<int64_t>& r,
             std::atomic<int64_t>& m)
        : log(std::move(l)), received(r), max_in_flight(m) {}
    void write(Row&&) override {
      const int64_t in_flight = log->emitted.load() - ++received;
      if (in_flight > max_in_flight) max_in_flight = in_flight;
      std::this_thread::sleep_for(200us);
    }
  };
  JobGraph graph("backpressure");
  graph.source("fast", trickle(3000, 0ns, source_log))
      .sink("slow", {.create = [&](const SubtaskInfo&) {
              return std::make_unique<SlowSink>(source_log, received, max_in_flight);
            }});
  RuntimeOptions options = with_flush(0ms, false);
  options.batch_size = kBatch;
  options.channel_capacity = kCapacity;
  const JobResult result = Executor(options).run(graph);
  REQUIRE(result.finished());
  CHECK(received == 3000);
  // Full batches in the channel, one partial batch in the source's hands, the
  // batch the sink is working through, and the record being emitted.
  const int64_t bound = kCapacity * kBatch + kBatch + kBatch + 1;
  CHECK(max_in_flight <= bound);
  CHECK(max_in_flight >= static_cast<int64_t>(kCapacity * kBatch));  // the channel did fill up
  CHECK(result.metrics.task_of("fast")->blocked_ns > 0);
}

// Emits the records `released` allows, then finds nothing until it allows
// more; ends when `ended`.
class BurstSource final : public Source {
 public:
  BurstSource(std::shared_ptr<std::atomic<int64_t>> released,
              std::shared_ptr<std::atomic<bool>> ended)
      : released_(std::move(released)), ended_(std::move(ended)) {}
  PollResult poll_next(Collector& out) override {
    if (next_ < released_->load()) {
      out.emit(Row(RowKind::kInsert, {next_++}));
      return PollResult::kMoreAvailable;
    }
    return ended_->load() ? PollResult::kEndOfInput : PollResult::kNothingAvailable;
  }

 private:
  std::shared_ptr<std::atomic<int64_t>> released_;
  std::shared_ptr<std::atomic<bool>> ended_;
  int64_t next_ = 0;
};

TEST_CASE("a source that runs dry flushes what it emitted at once, not at the next tick",
          "[engine]") {
  const bool chaining = GENERATE(true, false);
  const bool on_idle = GENERATE(true, false);
  INFO((chaining ? "chained" : "across a thread boundary") << (on_idle ? "" : ", on-idle off"));
  auto released = std::make_shared<std::atomic<int64_t>>(0);
  auto ended = std::make_shared<std::atomic<bool>>(false);
  auto sink_log = std::make_shared<SinkLog>();
  JobGraph graph("idle-flush");
  graph
      .source("burst", {.output = {kIdSchema},
                        .create =
                            [=](const SubtaskInfo&) {
                              return std::make_unique<BurstSource>(released, ended);
                            }})
      .sink("log", logging_sink(sink_log));
  // The timer would take an hour: only running dry flushes here.
  RuntimeOptions options = with_flush(std::chrono::hours(1), chaining);
  options.flush_on_idle = on_idle;
  Executor executor(options);
  JobResult result;
  std::thread job([&] { result = executor.run(graph); });
  const auto flushes = [&] {
    std::lock_guard<std::mutex> lock(sink_log->mutex);
    return sink_log->flush_actions;
  };
  const auto written = [&] {
    std::lock_guard<std::mutex> lock(sink_log->mutex);
    return sink_log->flushes_before.size();
  };
  // Two bursts: each flushed once after its last record, however often the
  // source then polls in vain.
  released->store(5);
  REQUIRE(testing::wait_until([&] { return written() == 5; }));
  if (on_idle) CHECK(testing::wait_until([&] { return flushes() == 1; }));
  std::this_thread::sleep_for(20ms);  // many polls that find nothing
  CHECK(flushes() == (on_idle ? 1 : 0));
  released->store(12);
  REQUIRE(testing::wait_until([&] { return written() == 12; }));
  if (on_idle) CHECK(testing::wait_until([&] { return flushes() == 2; }));
  std::this_thread::sleep_for(20ms);
  CHECK(flushes() == (on_idle ? 2 : 0));
  ended->store(true);
  job.join();
  REQUIRE(result.finished());
  std::lock_guard<std::mutex> lock(sink_log->mutex);
  // Each flush came after its burst's records: the second burst's records
  // each saw the first flush.
  std::vector<uint64_t> want(12, on_idle ? 1 : 0);
  std::fill(want.begin(), want.begin() + 5, 0);
  CHECK(sink_log->flushes_before == want);
  const TaskSnapshot* source = result.metrics.task_of("burst");
  CHECK(source->flush_on_idle == (on_idle ? 2u : 0u));
  CHECK(source->flush_emitted == source->flush_on_idle);
}

TEST_CASE("a source with a rate keeps to it after a while with nothing to emit", "[engine]") {
  auto released = std::make_shared<std::atomic<int64_t>>(0);
  auto ended = std::make_shared<std::atomic<bool>>(false);
  auto sink_log = std::make_shared<SinkLog>();
  JobGraph graph("rated-after-idle");
  graph
      .source("burst", {.output = {kIdSchema},
                        .create =
                            [=](const SubtaskInfo&) {
                              return std::make_unique<BurstSource>(released, ended);
                            },
                        .rate = 2000})
      .sink("log", logging_sink(sink_log));
  Executor executor(RuntimeOptions::without_checkpoints());
  JobResult result;
  std::thread job([&] { result = executor.run(graph); });
  const auto written = [&] {
    std::lock_guard<std::mutex> lock(sink_log->mutex);
    return sink_log->flushes_before.size();
  };
  std::this_thread::sleep_for(300ms);  // 600 records' worth of the rate unused
  const auto released_at = Clock::now();
  released->store(1000);
  REQUIRE(testing::wait_until([&] { return written() == 1000; }));
  const auto took = Clock::now() - released_at;
  ended->store(true);
  job.join();
  REQUIRE(result.finished());
  // At most 100 ms of the rate (200 records) at once, the other 800 at
  // 2,000 a second: 0.4 s at least. Had the idle time counted, 0.2 s.
  CHECK(took >= 350ms);
}

TEST_CASE("under backpressure flush ticks coalesce and are all accounted for", "[engine]") {
  struct SlowSink final : Sink {
    void open(SinkContext& context) override {
      context.register_flush_action([] {});
    }
    void write(Row&&) override { std::this_thread::sleep_for(100us); }
  };
  JobGraph graph("coalesce");
  graph.source("fast", trickle(4000, 0ns)).sink("slow", {.create = [](const SubtaskInfo&) {
                                                  return std::make_unique<SlowSink>();
                                                }});
  RuntimeOptions options = with_flush(1ms, false);
  options.batch_size = 16;
  options.channel_capacity = 2;
  const JobResult result = Executor(options).run(graph);
  REQUIRE(result.finished());
  const TaskSnapshot* source = result.metrics.task_of("fast");
  CHECK(source->ticks_coalesced > 0);
  // Every tick offered was emitted, replaced by a later one, or still pending
  // when the source ended.
  CHECK(source->flush_emitted + source->ticks_coalesced <= source->ticks_offered);
  CHECK(source->flush_emitted + source->ticks_coalesced + 1 >= source->ticks_offered);
  CHECK(result.metrics.task_of("slow")->flush_acted == source->flush_emitted);
}

TEST_CASE("an exception in a map fails the run with its message and operator", "[engine]") {
  const bool chaining = GENERATE(true, false);
  const int parallelism = GENERATE(1, 2);
  // Without end: the run can only end because the failure cancelled every task.
  DatagenOptions gen;
  gen.rows = 0;
  gen.keys = 0;
  auto collected = std::make_shared<CollectedRows>();
  JobGraph graph("explodes");
  std::atomic<int> seen{0};
  const auto explode = [&] {
    if (++seen == 5000) throw std::runtime_error("boom at record 5000");
  };
  Stream generated = graph.source("gen", datagen_source(gen));
  // A function that changes records in place, and one that returns copies.
  const bool in_place = GENERATE(true, false);
  Stream mapped = in_place ? generated.map("explode", [&](RowRef) { explode(); })
                           : generated.map("explode", [&](Row&& row) {
                               explode();
                               return std::move(row);
                             });
  mapped.sink("collect", collect_sink(collected));
  RuntimeOptions options = with_flush(1ms, chaining);
  options.parallelism = parallelism;
  const JobResult result = Executor(options).run(graph);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK(result.failed_operator == "explode");
  CHECK_THAT(result.error,
             Catch::Contains("operator 'explode'") && Catch::Contains("boom at record 5000"));
  // In one thread, the records before the failing one reached the sink.
  if (chaining && parallelism == 1) CHECK(collected->size() == 4999);
}

TEST_CASE("an exception in a source or a sink fails the run naming it", "[engine]") {
  struct FailingSource final : Source {
    PollResult poll_next(Collector&) override { throw std::runtime_error("source broke"); }
  };
  struct FailingSink final : Sink {
    void write(Row&&) override { throw std::runtime_error("sink broke"); }
  };
  JobGraph bad_source("bad-source");
  bad_source
      .source("src",
              {.output = {kIdSchema},
               .create = [](const SubtaskInfo&) { return std::make_unique<FailingSource>(); }})
      .sink("out", blackhole_sink());
  JobResult result = Executor(with_flush(0ms)).run(bad_source);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK(result.error == "operator 'src' failed: source broke");

  JobGraph bad_sink("bad-sink");
  bad_sink.source("gen", datagen_source({}))
      .sink("dst", {.create = [](const SubtaskInfo&) { return std::make_unique<FailingSink>(); }})
      .disable_chaining();
  result = Executor(with_flush(0ms)).run(bad_sink);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK(result.error == "operator 'dst' failed: sink broke");
}

TEST_CASE("a failure that would repeat is not restarted; a transient one is", "[engine]") {
  // Each kind of error, thrown at the 100th record of every attempt.
  const auto run = [](std::function<void()> fail) {
    JobGraph graph("fails");
    DatagenOptions gen;
    gen.rows = 1000;
    std::atomic<int> seen{0};
    graph.source("gen", datagen_source(gen))
        .map("check",
             [&](Row&& row) {
               if (++seen % 1000 == 100) fail();
               return std::move(row);
             })
        .sink("out", blackhole_sink());
    RuntimeOptions options = with_flush(0ms);
    options.restart_attempts = 2;
    options.restart_delay = 1ms;
    return Executor(options).run(graph);
  };
  SECTION("bad input") {
    const JobResult result = run([] { throw DataError("file.csv:7: not a number"); });
    CHECK(result.status == JobResult::Status::kFailed);
    CHECK(result.restarts == 0);
    CHECK(result.attempts_restored.size() == 1);
    CHECK_THAT(result.error, Catch::Contains("file.csv:7: not a number"));
  }
  SECTION("bad configuration") {
    const JobResult result = run([] { throw ConfigError("no such table"); });
    CHECK(result.status == JobResult::Status::kFailed);
    CHECK(result.restarts == 0);
  }
  SECTION("anything else, e.g. a lost connection") {
    const JobResult result = run([] { throw std::runtime_error("connection lost"); });
    CHECK(result.status == JobResult::Status::kFailed);
    CHECK(result.restarts == 2);
    CHECK(result.attempts_restored.size() == 3);
  }
}

TEST_CASE("a milliseconds-since gauge reads as the time since its moment, whenever it is read",
          "[engine]") {
  TaskMetrics metrics;
  Counter& idle = metrics.custom("src.sourceIdleTime", MetricKind::kMillisecondsSince);
  CHECK(metrics.custom_values().at("src.sourceIdleTime") == 0);  // not set: never
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  idle.set(static_cast<uint64_t>(now - 5000));
  // Read later, with nothing written since: the time has gone on.
  CHECK(metrics.custom_values().at("src.sourceIdleTime") >= 5000);
  std::this_thread::sleep_for(20ms);
  CHECK(metrics.custom_values().at("src.sourceIdleTime") >= 5020);
  CHECK(metrics.gauge_names().contains("src.sourceIdleTime"));
}

TEST_CASE("a running job's metrics count the restarts so far", "[engine]") {
  JobGraph graph("restarts");
  DatagenOptions gen;
  gen.rows = 1000;
  RuntimeOptions options = with_flush(0ms);
  options.restart_attempts = 1;
  options.restart_delay = 1ms;
  Executor executor(options);
  std::atomic<int> seen{0};
  std::optional<int> restarts_seen;
  graph.source("gen", datagen_source(gen))
      .map("check",
           [&](Row&& row) {
             const int n = ++seen;
             if (n == 100) throw std::runtime_error("connection lost");  // the first attempt
             if (n == 150) restarts_seen = executor.metrics().restarts;  // the second
             return std::move(row);
           })
      .sink("out", blackhole_sink());
  const JobResult result = executor.run(graph);
  REQUIRE(result.finished());
  CHECK(restarts_seen == 1);
  CHECK(result.metrics.restarts == 1);
  CHECK(executor.metrics().restarts == 0);  // between runs: nothing runs
}

TEST_CASE("cancel runs the sink's cancel action, which unblocks a write waiting outside the engine",
          "[engine]") {
  // A sink whose write blocks until its cancel action releases it, as a
  // database call waits on a silent server.
  struct Gate {
    std::mutex mutex;
    std::condition_variable opened;
    bool open = false;
    std::atomic<bool> waiting{false};
  };
  struct BlockingSink final : Sink {
    explicit BlockingSink(std::shared_ptr<Gate> g) : gate(std::move(g)) {}
    void open(SinkContext& context) override {
      context.register_cancel_action([g = gate] {
        std::lock_guard<std::mutex> lock(g->mutex);
        g->open = true;
        g->opened.notify_all();
      });
    }
    void write(Row&&) override {
      std::unique_lock<std::mutex> lock(gate->mutex);
      gate->waiting = true;
      gate->opened.wait(lock, [&] { return gate->open; });
      throw std::runtime_error("interrupted");  // what an interrupted call does
    }
    std::shared_ptr<Gate> gate;
  };
  auto gate = std::make_shared<Gate>();
  DatagenOptions endless;
  endless.rows = 0;
  JobGraph graph("blocked");
  graph.source("gen", datagen_source(endless)).sink("stuck", {.create = [gate](const SubtaskInfo&) {
                                                      return std::make_unique<BlockingSink>(gate);
                                                    }});
  Executor executor(with_flush(0ms));
  std::thread canceller([&] {
    testing::wait_until([&] { return gate->waiting.load(); });
    executor.cancel();
  });
  const JobResult result = executor.run(graph);
  canceller.join();
  CHECK(gate->waiting);
  // The error the interrupted write threw is the cancellation's doing.
  CHECK(result.status == JobResult::Status::kCancelled);
  CHECK(result.error.empty());
}

TEST_CASE("cancel stops an endless job and joins its threads", "[engine]") {
  DatagenOptions endless;
  endless.rows = 0;
  JobGraph graph("endless");
  graph.source("gen", datagen_source(endless))
      .parallelism(2)
      .rebalance()
      .sink("out", blackhole_sink());
  Executor executor(with_flush(10ms));
  std::thread canceller([&] {
    testing::wait_until([&] { return executor.metrics().records_in("out") >= 10'000; });
    executor.cancel();
  });
  const JobResult result = executor.run(graph);
  canceller.join();
  CHECK(result.status == JobResult::Status::kCancelled);
  CHECK(result.metrics.records_in("out") >= 10'000);
}

TEST_CASE("key_by sends every key to exactly one downstream subtask", "[engine]") {
  DatagenOptions gen;
  gen.rows = 20'000;
  gen.keys = 500;
  gen.update_weight = 50;
  struct KeyLog {
    std::mutex mutex;
    std::map<int64_t, std::set<int>> subtasks_of_key;
  };
  auto log = std::make_shared<KeyLog>();
  struct KeySink final : Sink {
    std::shared_ptr<KeyLog> log;
    int subtask = 0;
    explicit KeySink(std::shared_ptr<KeyLog> l) : log(std::move(l)) {}
    void open(SinkContext& context) override { subtask = context.subtask().index; }
    void write(Row&& row) override {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->subtasks_of_key[row.fields[0].as_bigint()].insert(subtask);
    }
  };
  JobGraph graph("keyed");
  graph.source("gen", datagen_source(gen))
      .parallelism(2)
      .key_by({"id"})
      .sink("keys",
            {.create = [log](const SubtaskInfo&) { return std::make_unique<KeySink>(log); }})
      .parallelism(3);
  const JobResult result = Executor(with_flush(0ms)).run(graph);
  REQUIRE(result.finished());
  REQUIRE(log->subtasks_of_key.size() == 500);
  std::set<int> used;
  for (const auto& [key, subtasks] : log->subtasks_of_key) {
    CHECK(subtasks.size() == 1);
    used.insert(*subtasks.begin());
  }
  CHECK(used.size() == 3);
}

TEST_CASE("with check-rows, a record that breaks its operator's declared type fails naming it",
          "[engine]") {
  const Schema numbers = Schema::parse("id BIGINT, value BIGINT");
  const auto run = [&](bool check, auto fn) {
    JobGraph graph("checked");
    DatagenOptions gen;
    gen.rows = 100;
    graph.source("numbers", datagen_source(gen)).map("wrong", fn).sink("out", blackhole_sink());
    RuntimeOptions options = RuntimeOptions::without_checkpoints();
    options.flush_interval = 0ms;
    options.check_rows = check;
    options.restart_attempts = 2;
    options.restart_delay = 1ms;
    return Executor(options).run(graph);
  };
  SECTION("a value of another type") {
    const auto to_text = [](Row row) {
      row.fields[1] = Value("ten");
      return row;
    };
    const JobResult checked = run(true, to_text);
    CHECK(checked.status == JobResult::Status::kFailed);
    CHECK_THAT(checked.error,
               Catch::Contains("operator 'wrong'") &&
                   Catch::Contains("emitted +I[0, ten], but column 'value' is BIGINT"));
    CHECK(checked.attempts_restored.size() == 1);  // a DataError: not restarted
    // Unchecked too: a batch's columns hold only the types they declare.
    CHECK_THAT(run(false, to_text).error,
               Catch::Contains("emitted +I[0, ten], but column 'value' is BIGINT"));
  }
  SECTION("a row kind its changelog mode does not declare") {
    const JobResult checked = run(true, [](Row row) {
      row.kind = RowKind::kDelete;
      return row;
    });
    CHECK_THAT(checked.error, Catch::Contains("but its changelog mode is [+I]"));
    CHECK(run(false, [](Row row) {
            row.kind = RowKind::kDelete;
            return row;
          }).finished());  // unchecked, the blackhole takes any kind
  }
  SECTION("a missing column") {
    const JobResult checked = run(true, [](Row row) {
      row.fields.pop_back();
      return row;
    });
    CHECK_THAT(checked.error, Catch::Contains("but it declares 2 columns"));
  }
}

TEST_CASE("normalize gives every delete its whole row and drops repeated changes", "[engine]") {
  const Schema accounts =
      Schema::parse("id BIGINT, owner STRING, balance BIGINT, PRIMARY KEY (id)");
  const auto row = [](RowKind kind, int64_t id, Value owner, Value balance) {
    return Row(kind, {id, std::move(owner), std::move(balance)});
  };
  using K = RowKind;
  SourceDef changes = testing::rows_source(
      accounts, ChangelogMode::all(),
      {row(K::kInsert, 1, "ann", 10), row(K::kInsert, 1, "ann", 10),  // the same again
       row(K::kUpdateBefore, 1, "ann", 10), row(K::kUpdateAfter, 1, "ann", 11),
       row(K::kDelete, 1, Value(), Value()),  // the key alone
       row(K::kDelete, 2, Value(), Value()),  // a key never seen
       row(K::kUpdateAfter, 3, "cy", 30), row(K::kInsert, 1, "bo", 5)});
  changes.output.key_only_deletes = true;
  auto out = std::make_shared<CollectedRows>();
  JobGraph graph("normalize");
  graph.source("changes", std::move(changes))
      .transform("normalize", changelog_normalize())
      .parallelism(2)
      .sink("out", collect_sink(out))
      .parallelism(1);
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  REQUIRE(result.finished());
  // Per key in input order (two subtasks interleave keys 1 and 3).
  std::map<int64_t, std::vector<std::string>> by_key;
  for (const Row& r : out->rows()) by_key[r.fields[0].as<int64_t>()].push_back(r.to_string());
  CHECK(by_key[1] == std::vector<std::string>{"+I[1, ann, 10]", "-U[1, ann, 10]", "+U[1, ann, 11]",
                                              "-D[1, ann, 11]", "+I[1, bo, 5]"});
  CHECK(by_key[3] == std::vector<std::string>{"+I[3, cy, 30]"});
  CHECK(by_key.count(2) == 0);
}

TEST_CASE("a graph that cannot run is a failed result, not an exception", "[engine]") {
  JobGraph graph("broken");
  Stream numbers = graph.source("numbers", datagen_source(DatagenOptions{}));
  numbers.column<double>("id");  // a BIGINT column
  numbers.sink("out", blackhole_sink());
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK(result.failed_operator.empty());
  CHECK_THAT(result.error, Catch::Contains("operator 'numbers'") && Catch::Contains("'id'"));
  CHECK(is_permanent(result.exception));
}

TEST_CASE("a DECIMAL written in place beyond its column's precision or scale fails naming it",
          "[engine]") {
  const Schema orders = Schema::parse("id BIGINT, amount DECIMAL(10,2)");
  const auto run = [&](Decimal factor, int scale) {
    JobGraph graph("decimals");
    DatagenOptions gen;
    gen.schema = orders;
    gen.rows = 100;
    Stream source = graph.source("orders", datagen_source(gen));
    const auto amount = source.column<Decimal>("amount");
    source
        .map("scale-up",
             [=](RowRef row) {
               row[amount] = scale < 0 ? row[amount] * factor : row[amount].multiply(factor, scale);
             })
        .sink("out", blackhole_sink());
    RuntimeOptions options = RuntimeOptions::without_checkpoints();
    options.check_rows = false;  // the check does not depend on it
    return Executor(options).run(graph);
  };
  const Decimal rate = Decimal::of("1.075");
  // The exact product has scale 5: it does not fit DECIMAL(10,2).
  CHECK_THAT(run(rate, -1).error, Catch::Contains("operator 'scale-up'") &&
                                      Catch::Contains("column 'amount' is DECIMAL(10,2)") &&
                                      Catch::Contains("rescaled(2, Rounding::kHalfEven)"));
  // Rounded to the column's scale it fits.
  CHECK(run(rate, 2).finished());
  // Ten digits before the point do not fit, whatever the scale.
  const JobResult wide = run(Decimal::of("100000000"), 2);
  CHECK_THAT(wide.error, Catch::Contains("column 'amount' is DECIMAL(10,2)") &&
                             Catch::Contains("does not fit it"));
}

namespace {

// Counts the records of each key in keyed state, without naming the key:
// the engine scopes the state to the key of the record it processes.
class CountPerKey final : public Operator {
 public:
  void open(OperatorContext& context) override {
    counts_.emplace(context.keyed_value_state<int64_t>("count"));
  }
  void process(Row&& row, Collector& out) override {
    const int64_t count = counts_->get().value_or(0) + 1;
    counts_->put(count);
    out.emit(Row(RowKind::kInsert, {row.fields[0], count}));
  }

 private:
  std::optional<KeyedValueState<int64_t>> counts_;
};

}  // namespace

TEST_CASE("keyed state follows the key of each record after key_by", "[engine]") {
  DatagenOptions gen;
  gen.rows = 3000;
  const Schema counted = Schema::parse("key BIGINT, count BIGINT");
  const auto run = [&](bool keyed, bool declared) {
    JobGraph graph("per-key");
    Stream numbers = graph.source("numbers", datagen_source(gen)).map("bucket", [](Row row) {
      row.fields[0] = row.fields[0].as_bigint() % 3;
      return row;
    });
    if (keyed) numbers = numbers.key_by({"id"});
    auto collected = std::make_shared<CollectedRows>();
    numbers
        .transform("count",
                   {.create = [](const SubtaskInfo&) { return std::make_unique<CountPerKey>(); },
                    .output = StreamType{counted, ChangelogMode::insert_only()},
                    .keyed_state = declared})
        .parallelism(2)
        .sink("collect", collect_sink(collected));
    RuntimeOptions options = RuntimeOptions::without_checkpoints();
    options.flush_interval = 0ms;
    JobResult result = Executor(options).run(graph);
    return std::make_pair(std::move(result), collected->rows());
  };
  const auto [result, rows] = run(true, true);
  REQUIRE(result.finished());
  std::map<int64_t, int64_t> last;  // per key, the highest count seen
  for (const Row& row : rows) {
    last[row.fields[0].as_bigint()] =
        std::max(last[row.fields[0].as_bigint()], row.fields[1].as_bigint());
  }
  CHECK(last == std::map<int64_t, int64_t>{{0, 1000}, {1, 1000}, {2, 1000}});

  // Declared, without key_by: validate() says what to add, before anything runs.
  const auto [invalid, none] = run(false, true);
  CHECK(invalid.status == JobResult::Status::kFailed);
  CHECK(invalid.failed_operator.empty());
  CHECK(none.empty());
  CHECK_THAT(invalid.error, Catch::Contains("operator 'count': it keeps keyed state") &&
                                Catch::Contains("put key_by(columns) before it"));
  // Not declared: the operator fails as it opens its keyed state, before any record.
  const auto [unkeyed, nothing] = run(false, false);
  CHECK(unkeyed.status == JobResult::Status::kFailed);
  CHECK(unkeyed.failed_operator == "count");
  CHECK(nothing.empty());
  CHECK_THAT(unkeyed.error, Catch::Contains("keeps keyed state in 2 subtasks") &&
                                Catch::Contains("put key_by(columns) before it"));
  CHECK(holds<ConfigError>(unkeyed.exception));
}
