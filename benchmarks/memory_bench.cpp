#include "sluice/benchmarks/memory_bench.hpp"

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "sluice/benchmarks/bench.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

// A sink that takes one record, then stalls until told to go on.
class StalledSink final : public Sink {
 public:
  explicit StalledSink(std::atomic<bool>& release) : release_(release) {}
  void write(Row&&) override {
    while (!release_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

 private:
  std::atomic<bool>& release_;
};

BenchSample stalled(uint64_t offered, std::chrono::milliseconds stall) {
  reset_peak_rss();
  const Rss before = read_rss();
  DatagenOptions gen;
  gen.rows = offered;
  std::atomic<bool> release{false};
  JobGraph graph("memory");
  graph.source("datagen", datagen_source(gen))
      .map("pass", [](Row&& row) { return std::move(row); })
      .sink("stalled",
            {.create = [&](const SubtaskInfo&) { return std::make_unique<StalledSink>(release); }})
      .disable_chaining();
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = std::chrono::milliseconds(0);
  Executor executor(options);
  uint64_t after_first_second = 0;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    after_first_second = read_rss().now;
    std::this_thread::sleep_for(stall - std::chrono::seconds(1));
    executor.cancel();
    release = true;
  });
  const JobResult result = executor.run(graph);
  stopper.join();
  const Rss after = read_rss();
  // Records are the source's; it could not emit more than the channels hold.
  return {result.metrics.records_out("datagen"),
          std::chrono::duration<double>(result.duration).count(),
          {{"peak RSS, MB", static_cast<double>(after.peak) / 1e6},
           {"RSS growth during the stall after its first second, MB",
            (static_cast<double>(after.now) - static_cast<double>(after_first_second)) / 1e6},
           {"RSS before, MB", static_cast<double>(before.now) / 1e6}}};
}

}  // namespace

Benchmark memory_benchmark() {
  return {
      .name = "memory",
      .description =
          "a source offering 10M records to a stalled sink (records: what it could emit)",
      .scenarios =
          [](const BenchSettings& settings) {
            const auto stall = std::chrono::milliseconds(settings.quick ? 1500 : 5000);
            return std::vector<BenchScenario>{
                {"stalled sink", false, [=] { return stalled(10'000'000, stall); }},
            };
          },
  };
}

}  // namespace sluice
