#include "sluice/benchmarks/pipeline_bench.hpp"

// clang-format off
#include <utility>  // before Asio: Boost 1.74's Asio needs it under C++20.
// clang-format on

#include <atomic>
#include <boost/asio.hpp>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <thread>

#include "sluice/benchmarks/batch_layout_bench.hpp"
#include "sluice/cli/metrics_export.hpp"
#include "sluice/cli/metrics_server.hpp"
#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

// The per-record work of every scenario (the engine's through typed columns).
Row bump(Row&& row) {
  row.fields[1] = row.fields[1].as_bigint() + 1;
  return std::move(row);
}

bool keep(const Row& row) { return row.fields[0].as_bigint() % 8 != 0; }

DatagenOptions rows_of_two_bigints(uint64_t rows) {
  DatagenOptions options;  // id BIGINT, value BIGINT; inserts only
  options.rows = rows;
  return options;
}

BenchSample single_thread_loop(uint64_t rows) {
  const auto start = Clock::now();
  ChangeGenerator generator(rows_of_two_bigints(rows), 0, 1);
  Row out[2];
  uint64_t kept = 0;
  while (const int n = generator.next(out)) {
    for (int i = 0; i < n; ++i) {
      Row row = bump(std::move(out[i]));
      if (keep(row)) ++kept;
    }
  }
  if (kept == 0) throw std::logic_error("the loop kept nothing");
  return {rows, seconds_since(start)};
}

// A producer thread generating, mapping and filtering into batches of 256
// rows, handed to the consumer through a Boost SPSC queue of 16 batches;
// spent batches come back through a second queue.
BenchSample two_thread_spsc(uint64_t rows) {
  using Batch = std::vector<Row>;
  constexpr size_t kBatch = 256;
  boost::lockfree::spsc_queue<Batch*> full(16), empty(18);
  const auto start = Clock::now();
  std::thread producer([&] {
    ChangeGenerator generator(rows_of_two_bigints(rows), 0, 1);
    Row out[2];
    auto* batch = new Batch();
    const auto hand_over = [&] {
      while (!full.push(batch)) std::this_thread::yield();
      if (!empty.pop(batch)) batch = new Batch();
    };
    while (const int n = generator.next(out)) {
      for (int i = 0; i < n; ++i) {
        Row row = bump(std::move(out[i]));
        if (!keep(row)) continue;
        batch->push_back(std::move(row));
        if (batch->size() == kBatch) hand_over();
      }
    }
    hand_over();
    while (!full.push(nullptr)) std::this_thread::yield();
    delete batch;
  });
  uint64_t received = 0;
  while (true) {
    Batch* batch;
    if (!full.pop(batch)) {
      std::this_thread::yield();
      continue;
    }
    if (batch == nullptr) break;
    received += batch->size();
    batch->clear();
    if (!empty.push(batch)) delete batch;
  }
  producer.join();
  Batch* spare;
  while (empty.pop(spare)) delete spare;
  if (received == 0) throw std::logic_error("the consumer received nothing");
  return {rows, seconds_since(start)};
}

// A browser with the job's page open, ten times as eager: GETs /api/job
// from the job's own server every 100 ms until it goes.
class JobPagePoller {
 public:
  explicit JobPagePoller(unsigned short port) : thread_([this, port] { run(port); }) {}
  ~JobPagePoller() {
    stop_ = true;
    thread_.join();
  }
  uint64_t polls() const { return polls_; }

 private:
  void run(unsigned short port) {
    boost::asio::io_context io;
    const std::string request =
        "GET /api/job HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    while (!stop_) {
      boost::asio::ip::tcp::socket socket(io);
      socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
      boost::asio::write(socket, boost::asio::buffer(request));
      boost::system::error_code ec;
      char buffer[16384];
      while (socket.read_some(boost::asio::buffer(buffer), ec) > 0) {
      }
      ++polls_;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> polls_{0};
  std::thread thread_;
};

enum class Shape { kChained, kOneBoundary, kKeyedParallel };

// `polled`: with the job's server (metrics.port) up and a JobPagePoller.
BenchSample engine_pipeline(uint64_t rows, Shape shape,
                            std::chrono::milliseconds flush_interval = std::chrono::milliseconds(0),
                            bool polled = false) {
  JobGraph graph("pipeline");
  const int parallelism = shape == Shape::kKeyedParallel ? 2 : 1;
  Stream generated =
      graph.source("datagen", datagen_source(rows_of_two_bigints(rows))).parallelism(parallelism);
  if (shape == Shape::kKeyedParallel) generated = generated.key_by({"id"});
  const auto id = generated.column<int64_t>("id");
  const auto value = generated.column<int64_t>("value");
  SinkHandle sink = generated.map("bump", [value](RowRef row) { row[value] += 1; })
                        .parallelism(parallelism)
                        .filter("keep", [id](RowRef row) { return row[id] % 8 != 0; })
                        .parallelism(parallelism)
                        .sink("blackhole", blackhole_sink())
                        .parallelism(parallelism);
  if (shape == Shape::kOneBoundary) sink.disable_chaining();
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = flush_interval;
  Executor executor(options);
  std::unique_ptr<MetricsServer> server;
  std::unique_ptr<JobPagePoller> poller;
  const PhysicalPlan plan = build_plan(graph, options);
  if (polled) {
    server = std::make_unique<MetricsServer>("127.0.0.1", 0, job_routes(graph, &plan, executor));
    poller = std::make_unique<JobPagePoller>(server->port());
  }
  const JobResult result = executor.run(graph);
  if (!result.finished()) throw std::runtime_error("pipeline run failed: " + result.error);
  BenchSample sample{rows, std::chrono::duration<double>(result.duration).count(), {}};
  if (poller) sample.extras["/api/job polls"] = static_cast<double>(poller->polls());
  if (flush_interval.count() > 0) {
    uint64_t emitted = 0;
    for (const auto& task : result.metrics.tasks) emitted += task.flush_emitted;
    sample.extras["flush signals per run"] = static_cast<double>(emitted);
  }
  return sample;
}

}  // namespace

Benchmark flush_signal_benchmark() {
  return {
      .name = "flush-signal",
      .description = "the unchained pipeline with FlushSignals every 10 ms against none",
      .scenarios =
          [](const BenchSettings& settings) {
            // Enough rows for a run of a few hundred milliseconds: dozens of signals.
            const uint64_t rows = settings.quick ? 5'000'000 : 50'000'000;
            return std::vector<BenchScenario>{
                {"baseline: engine.flush.interval=0", true,
                 [=] { return engine_pipeline(rows, Shape::kOneBoundary); }},
                {"engine.flush.interval=10ms", false,
                 [=] {
                   return engine_pipeline(rows, Shape::kOneBoundary, std::chrono::milliseconds(10));
                 }},
            };
          },
  };
}

Benchmark pipeline_benchmark() {
  return {
      .name = "pipeline",
      .description =
          "datagen -> map -> filter -> blackhole, rows of two BIGINTs; the baselines do "
          "the same with Rows, and typed over struct {int64_t id, value;}",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 500'000 : 5'000'000;
            return std::vector<BenchScenario>{
                {"baseline: single-thread loop", true, [=] { return single_thread_loop(rows); }},
                {"baseline: two-thread SPSC", true, [=] { return two_thread_spsc(rows); }},
                // Ten times the rows where a run is fast: a few milliseconds
                // would measure noise.
                {"baseline: typed single-thread loop", true,
                 [=] { return typed_single_thread_loop(10 * rows); }},
                {"baseline: typed two-thread SPSC", true,
                 [=] { return typed_two_thread_spsc(10 * rows); }},
                {"chained (1 thread)", false,
                 [=] { return engine_pipeline(10 * rows, Shape::kChained); }},
                // What serving the job's page costs it.
                {"chained, /api/job polled every 100 ms", false,
                 [=] {
                   return engine_pipeline(10 * rows, Shape::kChained, std::chrono::milliseconds(0),
                                          true);
                 }},
                {"unchained (one thread boundary)", false,
                 [=] { return engine_pipeline(10 * rows, Shape::kOneBoundary); }},
                {"keyed exchange, parallelism 2", false,
                 [=] { return engine_pipeline(10 * rows, Shape::kKeyedParallel); }},
            };
          },
  };
}

}  // namespace sluice
