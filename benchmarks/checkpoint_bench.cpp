#include "sluice/benchmarks/checkpoint_bench.hpp"

#include <filesystem>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/transforms/keyed_aggregate.hpp"

namespace sluice {
namespace {

constexpr int64_t kKeys = 100'000;

BenchSample aggregate_run(uint64_t rows, std::chrono::milliseconds interval) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sluice-bench-" + std::to_string(::getpid()));
  DatagenOptions gen;  // id BIGINT, value BIGINT; inserts only
  gen.rows = rows;
  JobGraph graph("checkpoint-bench");
  Stream generated = graph.source("datagen", datagen_source(gen));
  const auto id = generated.column<int64_t>("id");
  const auto value = generated.column<int64_t>("value");
  Stream bucketed = generated.map("bucket", [id](RowRef row) { row[id] %= kKeys; })
                        .filter("keep", [value](RowRef row) { return row[value] % 8 != 0; });
  bucketed.transform("sum", keyed_aggregate({"id"}, "value")).sink("blackhole", blackhole_sink());
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = std::chrono::milliseconds(0);
  options.checkpoint_interval = interval;
  options.checkpoint_dir = dir;
  const JobResult result = Executor(options).run(graph);
  std::filesystem::remove_all(dir);
  if (!result.finished()) throw std::runtime_error("checkpoint run failed: " + result.error);

  BenchSample sample{rows, std::chrono::duration<double>(result.duration).count(), {}};
  if (interval.count() > 0) {
    const auto ms = [](std::chrono::nanoseconds d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    double total_ms = 0, max_ms = 0, total_pause_ms = 0, max_pause_ms = 0, total_bytes = 0;
    size_t periodic = 0;
    for (const auto& c : result.metrics.checkpoints) {
      if (!c.completed || c.final) continue;
      total_ms += ms(c.duration);
      max_ms = std::max(max_ms, ms(c.duration));
      total_pause_ms += ms(c.pause);
      max_pause_ms = std::max(max_pause_ms, ms(c.pause));
      total_bytes += static_cast<double>(c.state_bytes);
      ++periodic;
    }
    const double n = static_cast<double>(std::max<size_t>(periodic, 1));
    sample.extras["checkpoints per run"] = static_cast<double>(periodic);
    // From trigger to completion: the pause, then writing the snapshot in
    // the background and acknowledging it.
    sample.extras["checkpoint ms, mean"] = total_ms / n;
    sample.extras["checkpoint ms, max"] = max_ms;
    // What stops the records: snapshot_state and copying the changed
    // entries out of the state cache, on the task's thread.
    sample.extras["processing paused ms, mean"] = total_pause_ms / n;
    sample.extras["processing paused ms, max"] = max_pause_ms;
    sample.extras["state MB per checkpoint, mean"] = total_bytes / n / 1e6;
  }
  return sample;
}

}  // namespace

Benchmark checkpoint_benchmark() {
  return {
      .name = "checkpoint",
      .description = "datagen -> map -> filter -> keyed RocksDB aggregate over 100k keys",
      .scenarios =
          [](const BenchSettings& settings) {
            // Long enough for at least 10 checkpoints a run at 1 s (~12 s).
            const uint64_t rows = settings.quick ? 300'000 : 30'000'000;
            const std::chrono::milliseconds every(settings.quick ? 200 : 1000);
            return std::vector<BenchScenario>{
                {"baseline: checkpoints off", true,
                 [=] { return aggregate_run(rows, std::chrono::milliseconds(0)); }},
                {"checkpoints every " + std::to_string(every.count()) + " ms", false,
                 [=] { return aggregate_run(rows, every); }},
            };
          },
  };
}

}  // namespace sluice
