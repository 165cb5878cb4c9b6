#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/support.hpp"
#include "sluice/tests/test_sources.hpp"
#include "sluice/transforms/keyed_aggregate.hpp"

using namespace sluice;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

RuntimeOptions checkpointing(const testing::TempDir& dir, std::chrono::milliseconds interval) {
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = 0ms;
  options.checkpoint_interval = interval;
  options.checkpoint_dir = dir.path();
  options.restart_delay = 10ms;
  return options;
}

// Per customer: how many orders it has and what they add up to.
using Totals = std::map<int64_t, std::pair<int64_t, Decimal>>;

// The totals `gen` leaves, as its `parallelism` subtasks generate it,
// computed here from the changelog itself: +I and +U add an order, -U and -D
// take one away, and a customer with no order left is gone.
Totals expected_totals(const DatagenOptions& gen, int parallelism) {
  Totals totals;
  for (int s = 0; s < parallelism; ++s) {
    ChangeGenerator generator(gen, s, parallelism);
    Row out[2];
    for (int n; (n = generator.next(out)) > 0;) {
      for (int i = 0; i < n; ++i) {
        const int64_t customer = out[i].fields[1].as_bigint();
        const Decimal amount = out[i].fields[2].as_decimal();
        const bool adds = out[i].kind == RowKind::kInsert || out[i].kind == RowKind::kUpdateAfter;
        auto& [count, sum] = totals.try_emplace(customer, 0, Decimal(0, 2)).first->second;
        count += adds ? 1 : -1;
        sum = adds ? sum + amount : sum - amount;
        if (count == 0) totals.erase(customer);
      }
    }
  }
  return totals;
}

// The totals the aggregate's output changelog (customer, count, sum) ends with.
Totals last_totals(const std::vector<Row>& changes) {
  Totals totals;
  for (const Row& row : changes) {
    const int64_t customer = row.fields[0].as_bigint();
    if (row.kind == RowKind::kInsert || row.kind == RowKind::kUpdateAfter) {
      totals.insert_or_assign(customer,
                              std::pair(row.fields[1].as_bigint(), row.fields[2].as_decimal()));
    } else if (row.kind == RowKind::kDelete) {
      totals.erase(customer);
    }
  }
  return totals;
}

// Passes rows through; once it has heard that a checkpoint completed, it
// throws at its next row, once for the whole job.
class FailAfterCheckpoint final : public Operator {
 public:
  explicit FailAfterCheckpoint(std::shared_ptr<std::atomic<bool>> fired)
      : fired_(std::move(fired)) {}
  void process(Row&& row, Collector& out) override {
    if (armed_ && !fired_->exchange(true))
      throw std::runtime_error("injected failure after a checkpoint");
    out.emit(std::move(row));
  }
  void notify_checkpoint_complete(int64_t) override { armed_ = true; }

 private:
  std::shared_ptr<std::atomic<bool>> fired_;
  bool armed_ = false;
};

DatagenOptions orders(uint64_t rows) {
  DatagenOptions gen;
  gen.schema = Schema({{"id", DataType::bigint()},
                       {"customer", DataType::bigint()},
                       {"amount", DataType::decimal(10, 2)}},
                      {"id"});
  gen.rows = rows;
  gen.keys = 5000;
  gen.insert_weight = 60;
  gen.update_weight = 30;
  gen.delete_weight = 10;
  return gen;
}

// What a PositionSource saw, shared with the test.
struct PositionLog {
  std::mutex mutex;
  std::vector<int64_t> started_at;                 // the position of every open(), in order
  std::atomic<bool> fail_after_checkpoint{false};  // throw once after the next completion
};

// Emits (k = i % 10, v = 1) for i from its saved position up to `rows`, its
// position saved at every checkpoint. At `hold_at` it waits until a
// checkpoint taken there completed (one triggered before it got there, as on
// a loaded machine, does not count); after the rows it stays idle until it
// heard of `idle_checkpoints`, then ends.
class PositionSource final : public Source {
 public:
  PositionSource(int64_t rows, int64_t hold_at, int idle_checkpoints,
                 std::shared_ptr<PositionLog> log)
      : rows_(rows), hold_at_(hold_at), idle_checkpoints_(idle_checkpoints), log_(std::move(log)) {}

  void open(OperatorContext& context) override {
    position_.emplace(context.value_state<int64_t>("position"));
    if (const auto saved = position_->get()) next_ = *saved;
    std::lock_guard<std::mutex> lock(log_->mutex);
    log_->started_at.push_back(next_);
  }
  PollResult poll_next(Collector& out) override {
    if (next_ == hold_at_ && !released_) return PollResult::kNothingAvailable;
    if (next_ < rows_) {
      out.emit(Row(RowKind::kInsert, {Value(next_ % 10), Value(int64_t{1})}));
      ++next_;
      return PollResult::kMoreAvailable;
    }
    return completed_ >= idle_checkpoints_ ? PollResult::kEndOfInput
                                           : PollResult::kNothingAvailable;
  }
  void snapshot_state(int64_t id) override {
    position_->set(next_);
    if (next_ == hold_at_) held_checkpoint_ = id;
  }
  void notify_checkpoint_complete(int64_t id) override {
    ++completed_;
    if (hold_at_ >= 0 && id != held_checkpoint_) return;
    released_ = true;
    // Right here, before the next checkpoint's trigger is served: so that no
    // later checkpoint completes first.
    if (log_->fail_after_checkpoint.exchange(false)) {
      throw std::runtime_error("injected failure after a completed checkpoint");
    }
  }

 private:
  int64_t rows_;
  int64_t hold_at_;
  int idle_checkpoints_;
  std::shared_ptr<PositionLog> log_;
  std::optional<ValueState<int64_t>> position_;
  int64_t next_ = 0;
  int completed_ = 0;
  std::optional<int64_t> held_checkpoint_;  // the checkpoint taken at hold_at_
  bool released_ = false;
};

const Schema kKeyValue({{"k", DataType::bigint()}, {"v", DataType::bigint()}});

// position source -> count and sum per k -> collect.
JobResult run_positions(const RuntimeOptions& options, int64_t rows, int idle_checkpoints,
                        std::shared_ptr<PositionLog> log, std::shared_ptr<CollectedRows> out,
                        int64_t hold_at = -1) {
  JobGraph graph("positions");
  Stream source = graph.source(
      "numbers",
      {.output = {kKeyValue, ChangelogMode::insert_only()}, .create = [=](const SubtaskInfo&) {
         return std::make_unique<PositionSource>(rows, hold_at, idle_checkpoints, log);
       }});
  source.transform("per-k", keyed_aggregate({"k"}, "v")).sink("collect", collect_sink(out));
  return Executor(options).run(graph);
}

// The count the aggregate last reported per k.
std::map<int64_t, int64_t> last_counts(const std::vector<Row>& rows) {
  std::map<int64_t, int64_t> counts;
  for (const Row& row : rows) {
    if (row.kind == RowKind::kInsert || row.kind == RowKind::kUpdateAfter) {
      counts[row.fields[0].as_bigint()] = row.fields[1].as_bigint();
    }
  }
  return counts;
}

// Keys 0..9, each with `count`.
std::map<int64_t, int64_t> ten_keys_counting(int64_t count) {
  std::map<int64_t, int64_t> counts;
  for (int64_t k = 0; k < 10; ++k) counts[k] = count;
  return counts;
}

}  // namespace

TEST_CASE("a keyed aggregate restarted right after a checkpoint restores it and ends exact",
          "[checkpoint]") {
  testing::TempDir dir;
  const DatagenOptions gen = orders(300'000);
  auto collected = std::make_shared<CollectedRows>();
  auto fired = std::make_shared<std::atomic<bool>>(false);
  JobGraph graph("aggregate");
  Stream source = graph.source("orders", datagen_source(gen)).parallelism(2);
  Stream checked = source
                       .transform("fail-once",
                                  [fired](const SubtaskInfo&) {
                                    return std::make_unique<FailAfterCheckpoint>(fired);
                                  })
                       .parallelism(2);
  checked.transform("per-customer", keyed_aggregate({"customer"}, "amount"))
      .parallelism(2)
      .sink("collect", collect_sink(collected));
  RuntimeOptions options = checkpointing(dir, 50ms);
  options.restart_attempts = 1;
  const JobResult result = Executor(options).run(graph);
  REQUIRE(result.finished());
  REQUIRE(*fired);
  REQUIRE(result.restarts == 1);
  // The failure came right after the first completion: the second attempt
  // restored that checkpoint, or one that completed in the meantime.
  REQUIRE(result.attempts_restored.size() == 2);
  CHECK_FALSE(result.attempts_restored[0]);
  REQUIRE(result.attempts_restored[1]);
  const auto first_completed =
      std::find_if(result.metrics.checkpoints.begin(), result.metrics.checkpoints.end(),
                   [](const CheckpointStats& c) { return c.completed; });
  REQUIRE(first_completed != result.metrics.checkpoints.end());
  CHECK(*result.attempts_restored[1] >= first_completed->id);
  // Counts and sums as the changelog itself implies: a restart that started
  // over without state, or lost or doubled records, would miss them.
  const Totals expected = expected_totals(gen, 2);
  REQUIRE(expected.size() > 500);
  CHECK(last_totals(collected->rows()) == expected);
}

namespace {

// Emits (subtask, seq) rows, subtask 1 much slower than subtask 0, and notes
// at each checkpoint how many rows it had emitted.
struct AlignmentLog {
  std::mutex mutex;
  std::map<int64_t, std::array<int64_t, 2>> source_positions;       // by checkpoint
  std::map<int64_t, std::array<int64_t, 2>> processed_at_snapshot;  // by checkpoint
};

class TaggedSource final : public Source {
 public:
  TaggedSource(int subtask, std::shared_ptr<AlignmentLog> log)
      : subtask_(subtask), log_(std::move(log)) {}
  PollResult poll_next(Collector& out) override {
    if (seq_ == 3000) return PollResult::kEndOfInput;
    if (subtask_ == 1) std::this_thread::sleep_for(200us);
    out.emit(Row(RowKind::kInsert, {subtask_, seq_++}));
    return PollResult::kMoreAvailable;
  }
  void snapshot_state(int64_t id) override {
    std::lock_guard<std::mutex> lock(log_->mutex);
    log_->source_positions[id][subtask_] = seq_;
  }

 private:
  const int subtask_;
  std::shared_ptr<AlignmentLog> log_;
  int64_t seq_ = 0;
};

// Counts the rows it processed from each source subtask and notes the counts
// at each snapshot.
class CountingOperator final : public Operator {
 public:
  explicit CountingOperator(std::shared_ptr<AlignmentLog> log) : log_(std::move(log)) {}
  void process(Row&& row, Collector& out) override {
    ++processed_[row.fields[0].as_bigint()];
    out.emit(std::move(row));
  }
  void snapshot_state(int64_t id) override {
    std::lock_guard<std::mutex> lock(log_->mutex);
    log_->processed_at_snapshot[id] = processed_;
  }

 private:
  std::shared_ptr<AlignmentLog> log_;
  std::array<int64_t, 2> processed_{0, 0};
};

}  // namespace

TEST_CASE("alignment: nothing after an input's barrier is processed before the snapshot",
          "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<AlignmentLog>();
  const Schema tagged({{"subtask", DataType::bigint()}, {"seq", DataType::bigint()}});
  JobGraph graph("alignment");
  graph
      .source("tagged", {.output = {tagged},
                         .create =
                             [log](const SubtaskInfo& info) {
                               return std::make_unique<TaggedSource>(info.index, log);
                             }})
      .parallelism(2)
      .rebalance()
      .transform("count",
                 [log](const SubtaskInfo&) { return std::make_unique<CountingOperator>(log); })
      .parallelism(1)
      .sink("out", blackhole_sink())
      .parallelism(1);
  const JobResult result = Executor(checkpointing(dir, 20ms)).run(graph);
  REQUIRE(result.finished());
  REQUIRE(log->processed_at_snapshot.size() >= 5);
  for (const auto& [id, processed] : log->processed_at_snapshot) {
    INFO("checkpoint " << id);
    // Exactly the rows each source emitted before its barrier: none after
    // (no alignment) and none missing (a barrier overtaking records).
    CHECK(processed == log->source_positions.at(id));
  }
  // The sources ran at different speeds, so alignment really held one back.
  bool skewed = false;
  for (const auto& [id, positions] : log->source_positions) skewed |= positions[0] != positions[1];
  CHECK(skewed);
}

namespace {

struct HookLog {
  std::mutex mutex;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(std::move(e));
  }
};

// A sink whose first snapshot takes `slow`; it notes the checkpoint hooks.
class HookSink final : public Sink {
 public:
  HookSink(std::shared_ptr<HookLog> log, Clock::duration slow)
      : log_(std::move(log)), slow_(slow) {}
  void write(Row&&) override {}
  void snapshot_state(int64_t id) override {
    if (first_) std::this_thread::sleep_for(slow_);
    first_ = false;
    log_->add("snapshot " + std::to_string(id));
  }
  void notify_checkpoint_complete(int64_t id) override {
    log_->add("complete " + std::to_string(id));
  }
  void notify_checkpoint_aborted(int64_t id) override {
    log_->add("aborted " + std::to_string(id));
  }

 private:
  std::shared_ptr<HookLog> log_;
  Clock::duration slow_;
  bool first_ = true;
};

SinkDef hook_sink(std::shared_ptr<HookLog> log, Clock::duration slow = 0ms) {
  return {
      .create = [log, slow](const SubtaskInfo&) { return std::make_unique<HookSink>(log, slow); }};
}

DatagenOptions slow_rows(uint64_t rows, double rate) {
  DatagenOptions gen;
  gen.rows = rows;
  gen.rate = rate;
  return gen;
}

}  // namespace

TEST_CASE("a checkpoint that outlives its timeout is aborted and a later one completes",
          "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<HookLog>();
  JobGraph graph("timeout");
  // The source runs until two checkpoints completed: the first one, slow,
  // times out; a later one completes while the source still runs.
  graph
      .source("gen", testing::rows_source(Schema({{"id", DataType::bigint()}}),
                                          ChangelogMode::insert_only(),
                                          {Row(RowKind::kInsert, {1})}, {.checkpoints = 2}))
      .sink("slow", hook_sink(log, 400ms))
      .disable_chaining();
  RuntimeOptions options = checkpointing(dir, 50ms);
  options.checkpoint_timeout = 150ms;
  const JobResult result = Executor(options).run(graph);
  REQUIRE(result.finished());
  const auto& checkpoints = result.metrics.checkpoints;
  REQUIRE(checkpoints.size() >= 2);
  CHECK_FALSE(checkpoints.front().completed);
  CHECK(checkpoints.front().duration >= 150ms);
  CHECK(result.metrics.checkpoints_completed() >= 1);
  const int64_t aborted = checkpoints.front().id;
  const auto first_completed = std::find_if(checkpoints.begin(), checkpoints.end(),
                                            [](const CheckpointStats& c) { return c.completed; });
  REQUIRE(first_completed != checkpoints.end());
  CHECK_FALSE(first_completed->final);  // completed while the source still ran
  const int64_t completed = first_completed->id;
  CHECK(completed > aborted);
  const auto has = [&](const std::string& e) {
    return std::find(log->events.begin(), log->events.end(), e) != log->events.end();
  };
  CHECK(has("aborted " + std::to_string(aborted)));
  CHECK(has("complete " + std::to_string(completed)));
}

TEST_CASE("a job ends with a final checkpoint that its sinks hear of before it returns",
          "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<HookLog>();
  JobGraph graph("final");
  graph.source("gen", datagen_source(slow_rows(500, 5000)))
      .sink("hooks", hook_sink(log))
      .parallelism(2);
  // A long interval: only the final checkpoint is taken.
  const JobResult result = Executor(checkpointing(dir, 1h)).run(graph);
  REQUIRE(result.finished());
  REQUIRE(result.metrics.checkpoints.size() == 1);
  const CheckpointStats& last = result.metrics.checkpoints.back();
  CHECK(last.final);
  CHECK(last.completed);
  const std::string id = std::to_string(last.id);
  CHECK(std::count(log->events.begin(), log->events.end(), "snapshot " + id) == 2);
  CHECK(std::count(log->events.begin(), log->events.end(), "complete " + id) == 2);
  CHECK(log->events.back() == "complete " + id);
}

TEST_CASE("an operator hears how checkpoint n ended before it snapshots n+1", "[checkpoint]") {
  testing::TempDir dir;
  constexpr int kSubtasks = 2;
  std::vector<std::shared_ptr<HookLog>> logs;  // one per sink subtask
  for (int s = 0; s < kSubtasks; ++s) logs.push_back(std::make_shared<HookLog>());
  JobGraph graph("notices");
  graph.source("gen", datagen_source(slow_rows(20'000, 20'000)))
      .sink("hooks", {.create =
                          [logs](const SubtaskInfo& info) {
                            return std::make_unique<HookSink>(logs.at(info.index), 0ms);
                          }})
      .parallelism(kSubtasks);
  const JobResult result = Executor(checkpointing(dir, 1ms)).run(graph);
  REQUIRE(result.finished());
  REQUIRE(result.metrics.checkpoints.size() >= 10);
  for (int s = 0; s < kSubtasks; ++s) {
    // Each snapshot after the first follows the notice of the one before.
    std::optional<int64_t> open;  // snapshotted, not yet heard of
    for (const std::string& event : logs[s]->events) {
      INFO("subtask " << s << ": " << event);
      const int64_t id = std::stoll(event.substr(event.find(' ') + 1));
      if (event.starts_with("snapshot")) {
        CHECK_FALSE(open.has_value());
        open = id;
      } else {
        CHECK(open == id);
        open.reset();
      }
    }
  }
}

TEST_CASE("checkpoint.retained=2 leaves exactly two checkpoints on disk", "[checkpoint]") {
  testing::TempDir dir;
  RuntimeOptions options = checkpointing(dir, 20ms);
  options.checkpoints_retained = 2;
  // The source ends once it heard of six completed checkpoints.
  const JobResult result = run_positions(options, 1000, 6, std::make_shared<PositionLog>(),
                                         std::make_shared<CollectedRows>());
  REQUIRE(result.finished());
  REQUIRE(result.metrics.checkpoints_completed() > 5);
  const CheckpointStorage storage(dir.path(), "positions");
  CHECK(storage.completed().size() == 2);
  size_t checkpoint_dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(storage.job_dir())) {
    checkpoint_dirs += entry.path().filename().string().rfind("chk-", 0) == 0;
  }
  CHECK(checkpoint_dirs == 2);
  for (int64_t id : storage.completed()) CHECK_NOTHROW(storage.verify(id));
}

TEST_CASE("restore refuses a missing checkpoint and a changed parallelism", "[checkpoint]") {
  testing::TempDir dir;
  const auto build = [](JobGraph& graph, int parallelism) {
    graph.source("orders", datagen_source(orders(2000)))
        .transform("sum", keyed_aggregate({"customer"}, "amount"))
        .parallelism(parallelism)
        .sink("out", blackhole_sink());
  };
  JobGraph first("restore");
  build(first, 2);
  // Keep the final checkpoint resumable: restore it by id.
  REQUIRE(Executor(checkpointing(dir, 1h)).run(first).finished());
  const int64_t id = *CheckpointStorage(dir.path(), "restore").latest();

  RuntimeOptions options = checkpointing(dir, 1h);
  options.restore = RuntimeOptions::Restore::kCheckpoint;
  options.restore_checkpoint = id + 10;
  JobGraph again("restore");
  build(again, 2);
  const JobResult missing = Executor(options).run(again);
  CHECK(missing.status == JobResult::Status::kFailed);
  CHECK_THAT(missing.error, Catch::Contains("no such completed checkpoint"));
  CHECK(is_permanent(missing.exception));

  options.restore_checkpoint = id;
  JobGraph rescaled("restore");
  build(rescaled, 3);
  CHECK_THAT(Executor(options).run(rescaled).error,
             Catch::Contains("operator 'sum' with parallelism 2, now 3"));
}

TEST_CASE("a restart resumes only from a checkpoint of its own run", "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<PositionLog>();
  // A finished run leaves its final checkpoint, with position 200, behind.
  REQUIRE(run_positions(checkpointing(dir, 1h), 200, 0, log, std::make_shared<CollectedRows>())
              .finished());

  RuntimeOptions options = checkpointing(dir, 1h);
  options.restart_attempts = 1;
  SECTION("restore=auto after a finished run") {
    options.restore = RuntimeOptions::Restore::kLatest;
  }
  SECTION("restore=none") { options.restore = RuntimeOptions::Restore::kNone; }
  // Fails before any checkpoint of its own: the restart must start over, not
  // take the earlier run's position 200 and skip every row.
  log->started_at.clear();
  log->fail_after_checkpoint = false;
  auto out = std::make_shared<CollectedRows>();
  JobGraph graph("positions");
  std::atomic<bool> failed{false};
  Stream source = graph.source(
      "numbers",
      {.output = {kKeyValue, ChangelogMode::insert_only()}, .create = [log](const SubtaskInfo&) {
         return std::make_unique<PositionSource>(200, -1, 0, log);
       }});
  source
      .map("fail-once",
           [&failed](Row&& row) {
             if (row.fields[0].as_bigint() == 5 && !failed.exchange(true)) {
               throw std::runtime_error("injected failure");
             }
             return std::move(row);
           })
      .sink("collect", collect_sink(out));
  const JobResult result = Executor(options).run(graph);
  REQUIRE(result.finished());
  CHECK(result.restarts == 1);
  CHECK(result.attempts_restored ==
        std::vector<std::optional<int64_t>>{std::nullopt, std::nullopt});
  CHECK(log->started_at == std::vector<int64_t>{0, 0});
  CHECK(out->size() >= 200);
}

TEST_CASE("a restart after a completed checkpoint restores that checkpoint", "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<PositionLog>();
  auto out = std::make_shared<CollectedRows>();
  log->fail_after_checkpoint = true;
  RuntimeOptions options = checkpointing(dir, 20ms);
  options.restart_attempts = 1;
  // The source holds at row 500 until the first checkpoint completes, and
  // fails right after it.
  const JobResult result = run_positions(options, 1000, 0, log, out, 500);
  REQUIRE(result.finished());
  REQUIRE(result.restarts == 1);
  const auto first_completed =
      std::find_if(result.metrics.checkpoints.begin(), result.metrics.checkpoints.end(),
                   [](const CheckpointStats& c) { return c.completed; });
  REQUIRE(first_completed != result.metrics.checkpoints.end());
  CHECK(result.attempts_restored ==
        std::vector<std::optional<int64_t>>{std::nullopt, first_completed->id});
  // The second attempt started where that checkpoint had the source.
  CHECK(log->started_at == std::vector<int64_t>{0, 500});
  // The aggregate's 50 per key came back with it: the second 500 rows make
  // 100 (without its state it would end at 50).
  CHECK(last_counts(out->rows()) == ten_keys_counting(100));
}

TEST_CASE("restored state that no record touches is carried into later checkpoints",
          "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<PositionLog>();
  const CheckpointStorage storage(dir.path(), "positions");
  RuntimeOptions options = checkpointing(dir, 1h);
  options.checkpoints_retained = 1;
  REQUIRE(run_positions(options, 100, 0, log, std::make_shared<CollectedRows>()).finished());

  // Restored at position 100 with nothing more to read, it idles through
  // three checkpoints: the one it restored is pruned, and the aggregate saw
  // no record since.
  options.checkpoint_interval = 20ms;
  options.restore = RuntimeOptions::Restore::kCheckpoint;
  options.restore_checkpoint = *storage.latest();
  const JobResult idle = run_positions(options, 100, 3, log, std::make_shared<CollectedRows>());
  REQUIRE(idle.finished());
  REQUIRE(idle.metrics.checkpoints_completed() >= 3);
  REQUIRE(storage.completed().size() == 1);
  CHECK(*storage.latest() != options.restore_checkpoint);

  // Ten more rows, one per key: each count goes on from 10 to 11.
  options.checkpoint_interval = 1h;
  options.restore_checkpoint = *storage.latest();
  auto out = std::make_shared<CollectedRows>();
  REQUIRE(run_positions(options, 110, 0, log, out).finished());
  CHECK(last_counts(out->rows()) == ten_keys_counting(11));
}

TEST_CASE("restore=latest resumes an unfinished run, and a finished one starts afresh",
          "[checkpoint]") {
  testing::TempDir dir;
  auto log = std::make_shared<PositionLog>();
  RuntimeOptions options = checkpointing(dir, 20ms);
  options.restore = RuntimeOptions::Restore::kLatest;
  options.restart_attempts = 0;
  // Unfinished: it fails right after its first checkpoint, at row 500.
  log->fail_after_checkpoint = true;
  const JobResult failed =
      run_positions(options, 1000, 0, log, std::make_shared<CollectedRows>(), 500);
  REQUIRE(failed.status == JobResult::Status::kFailed);
  std::optional<int64_t> completed;
  for (const CheckpointStats& c : failed.metrics.checkpoints) {
    if (c.completed) completed = c.id;
  }
  REQUIRE(completed);

  const JobResult resumed =
      run_positions(options, 1000, 0, log, std::make_shared<CollectedRows>(), 500);
  REQUIRE(resumed.finished());
  CHECK(resumed.restored_from == completed);
  auto out = std::make_shared<CollectedRows>();
  const JobResult again = run_positions(options, 1000, 0, log, out);
  REQUIRE(again.finished());
  CHECK_FALSE(again.restored_from);
  // Where each run's source started: 0, then 500, then 0 again.
  CHECK(log->started_at == std::vector<int64_t>{0, 500, 0});
  CHECK(last_counts(out->rows()) == ten_keys_counting(100));  // a new run, with no old state
}
