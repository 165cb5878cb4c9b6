#include "sluice/benchmarks/latency_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

const Schema kStamped({{"id", DataType::bigint()}, {"emitted_ns", DataType::bigint()}}, {"id"});

// Emits `count` rows stamped with the time they left the source; the engine
// paces it at the source's rate.
class StampedSource final : public Source {
 public:
  explicit StampedSource(int64_t count) : count_(count) {}
  PollResult poll_next(Collector& out) override {
    if (next_ == count_) return PollResult::kEndOfInput;
    out.emit(Row(RowKind::kInsert, {next_++, now_ns()}));
    return PollResult::kMoreAvailable;
  }

 private:
  const int64_t count_;
  int64_t next_ = 0;
};

// Notes how long each row took from the source to here.
struct Latencies {
  std::mutex mutex;
  std::vector<int64_t> ns;
};

class LatencySink final : public Sink {
 public:
  explicit LatencySink(std::shared_ptr<Latencies> into) : into_(std::move(into)) {}
  void write(Row&& row) override { mine_.push_back(now_ns() - row.fields[1].as_bigint()); }
  void finish() override {
    std::lock_guard<std::mutex> lock(into_->mutex);
    into_->ns.insert(into_->ns.end(), mine_.begin(), mine_.end());
  }

 private:
  std::shared_ptr<Latencies> into_;
  std::vector<int64_t> mine_;
};

// source -> map -> sink across a thread boundary, at `rate` rows/s.
BenchSample fixed_rate(int64_t rows, double rate) {
  auto latencies = std::make_shared<Latencies>();
  JobGraph graph("latency");
  graph
      .source(
          "stamped",
          {.output = {kStamped},
           .create = [rows](const SubtaskInfo&) { return std::make_unique<StampedSource>(rows); },
           .rate = rate})
      .map("pass", [](Row&& row) { return std::move(row); })
      .sink("measure", {.create =
                            [latencies](const SubtaskInfo&) {
                              return std::make_unique<LatencySink>(latencies);
                            }})
      .disable_chaining();
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  if (!result.finished()) throw std::runtime_error("latency run failed: " + result.error);
  return {static_cast<uint64_t>(rows),
          std::chrono::duration<double>(result.duration).count(),
          {{"p50 latency, us", percentile(latencies->ns, 0.50) / 1e3},
           {"p99 latency, us", percentile(latencies->ns, 0.99) / 1e3}}};
}

// One row at a time into MySQL from an otherwise idle source: how long until
// each is visible in the table, with FlushSignals every `interval`, and from
// the source when it runs dry if `on_idle`.
BenchSample idle_visibility(std::chrono::milliseconds interval, bool on_idle, int rows) {
  const MySqlUrl url = MySqlUrl::parse(std::getenv("SLUICE_MYSQL_URL"));
  MySqlConnection watcher(url);
  watcher.execute(
      "CREATE TABLE IF NOT EXISTS bench_idle (id BIGINT PRIMARY KEY, emitted_ns BIGINT)");
  watcher.execute("TRUNCATE TABLE bench_idle");
  std::vector<Row> pending;
  std::atomic<int64_t> released{0};
  // Releases one row, then waits for it to show up before the next.
  class OnDemand final : public Source {
   public:
    OnDemand(std::atomic<int64_t>& released, int rows) : released_(released), rows_(rows) {}
    PollResult poll_next(Collector& out) override {
      if (sent_ == rows_) return PollResult::kEndOfInput;
      if (sent_ >= released_.load()) return PollResult::kNothingAvailable;
      out.emit(Row(RowKind::kInsert, {sent_++, now_ns()}));
      return PollResult::kMoreAvailable;
    }

   private:
    std::atomic<int64_t>& released_;
    const int rows_;
    int64_t sent_ = 0;
  };
  MySqlSinkOptions options;
  options.url = url;
  options.table = "bench_idle";
  options.max_rows = 0;
  JobGraph graph("idle-latency");
  graph
      .source("on-demand",
              {.output = {kStamped},
               .create =
                   [&](const SubtaskInfo&) { return std::make_unique<OnDemand>(released, rows); }})
      .sink("mysql", mysql_sink(options));
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = interval;
  runtime.flush_on_idle = on_idle;
  Executor executor(runtime);
  std::vector<int64_t> visible_after;
  std::thread driver([&] {
    for (int i = 0; i < rows; ++i) {
      const int64_t released_at = now_ns();
      released = i + 1;
      const std::string sql = "SELECT COUNT(*) FROM bench_idle WHERE id = " + std::to_string(i);
      while (watcher.query(sql).at(0).at(0) != "1")
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      visible_after.push_back(now_ns() - released_at);
    }
  });
  const JobResult result = executor.run(graph);
  driver.join();
  if (!result.finished()) throw std::runtime_error("idle latency run failed: " + result.error);
  const double seconds = std::chrono::duration<double>(result.duration).count();
  return {static_cast<uint64_t>(rows),
          seconds,
          {{"p50 visible after, ms", percentile(visible_after, 0.5) / 1e6},
           {"max visible after, ms", percentile(visible_after, 1.0) / 1e6}}};
}

}  // namespace

Benchmark latency_benchmark() {
  return {
      .name = "latency",
      .description = "source-to-sink latency at a fixed rate; with MySQL, idle rows until visible",
      .scenarios =
          [](const BenchSettings& settings) {
            const int64_t rows = settings.quick ? 50'000 : 300'000;
            std::vector<BenchScenario> scenarios = {
                {"100k rows/s, across a thread boundary", false,
                 [=] { return fixed_rate(rows, 100'000); }},
            };
            if (std::getenv("SLUICE_MYSQL_URL")) {
              const int idle_rows = settings.quick ? 5 : 20;
              for (int ms : {50, 200}) {
                scenarios.push_back(
                    {"idle source into MySQL, the ticks alone, engine.flush.interval=" +
                         std::to_string(ms) + "ms",
                     false, [=] {
                       return idle_visibility(std::chrono::milliseconds(ms), false, idle_rows);
                     }});
              }
              scenarios.push_back(
                  {"idle source into MySQL, engine.flush.on-idle, engine.flush.interval=1s", false,
                   [=] { return idle_visibility(std::chrono::seconds(1), true, idle_rows); }});
            }
            return scenarios;
          },
  };
}

}  // namespace sluice
