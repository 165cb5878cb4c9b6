#include "sluice/cli/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "sluice/cli/metrics_export.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/engine/graph/node_def.hpp"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
  ProgressCounts records;
  uint64_t flushes = 0;  // flush actions run, plus sink counters named flushes.*
  uint64_t blocked_ns = 0;
  size_t tasks = 0;
  size_t checkpoints = 0;
};

Totals totals(const JobGraph& graph, const JobMetrics& m) {
  Totals t;
  t.records = progress_counts(graph, m);
  for (const auto& task : m.tasks) {
    t.flushes += task.flush_acted;
    t.blocked_ns += task.blocked_ns;
    for (const auto& [name, value] : task.counters) {
      if (name.find(".flushes.") != std::string::npos) t.flushes += value;
    }
  }
  t.tasks = m.tasks.size();
  t.checkpoints = m.checkpoints_completed();
  return t;
}

// A change-data-capture source's lag (Flink CDC's metrics, in ms): the
// largest over its subtasks, if the job has one.
struct Lag {
  uint64_t fetch = 0, emit = 0, idle = 0;
};
std::optional<Lag> source_lag(const JobMetrics& m) {
  std::optional<Lag> lag;
  for (const auto& task : m.tasks) {
    for (const auto& [name, value] : task.counters) {
      uint64_t Lag::*field = name.ends_with(".currentFetchEventTimeLag")  ? &Lag::fetch
                             : name.ends_with(".currentEmitEventTimeLag") ? &Lag::emit
                             : name.ends_with(".sourceIdleTime")          ? &Lag::idle
                                                                          : nullptr;
      if (field == nullptr) continue;
      if (!lag) lag.emplace();
      (*lag).*field = std::max((*lag).*field, value);
    }
  }
  return lag;
}

std::string rate(double per_second) {
  char buf[32];
  if (per_second >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.2fM", per_second / 1e6);
  } else if (per_second >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.1fk", per_second / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f", per_second);
  }
  return buf;
}

}  // namespace

std::optional<SnapshotProgress> snapshot_progress(const JobMetrics& m) {
  bool reading = false;
  SnapshotProgress progress;
  uint64_t estimated = 0;
  for (const auto& task : m.tasks) {
    for (const auto& [name, value] : task.counters) {
      if (name.ends_with(".phase") && value == 1) reading = true;
      if (name.find(".snapshot-rows-read.") != std::string::npos) progress.read += value;
      if (name.find(".snapshot-rows-estimated.") != std::string::npos) estimated += value;
    }
  }
  if (!reading) return std::nullopt;
  progress.estimated = std::max(estimated, progress.read);
  return progress;
}

std::string snapshot_bar(const SnapshotProgress& progress, double rows_per_second) {
  constexpr int kWidth = 20;
  const double share = progress.estimated ? static_cast<double>(progress.read) /
                                                static_cast<double>(progress.estimated)
                                          : 0;
  const int full = static_cast<int>(share * kWidth);
  char text[64];
  std::snprintf(text, sizeof(text), "] %3d%%", static_cast<int>(share * 100));
  std::string out = "snapshot [" + std::string(full, '#') + std::string(kWidth - full, '-') + text;
  if (rows_per_second > 0) {
    std::snprintf(text, sizeof(text), " ETA %.0f s",
                  static_cast<double>(progress.estimated - progress.read) / rows_per_second);
    out += text;
  }
  return out;
}

ProgressCounts progress_counts(const JobGraph& graph, const JobMetrics& m) {
  ProgressCounts counts;
  uint64_t received = 0;
  bool sends = false;
  for (const auto& node : graph.nodes()) {
    if (node.kind == NodeKind::kSource) counts.in += m.records_out(node.name);
    if (node.kind == NodeKind::kSink) received += m.records_in(node.name);
  }
  for (const auto& task : m.tasks) {
    for (const auto& [name, value] : task.counters) {
      if (name.ends_with(".numRecordsSend")) {
        counts.out += value;
        sends = true;
      }
    }
  }
  if (!sends) counts.out = received;
  return counts;
}

ProgressLine::ProgressLine(const Executor& executor, const JobGraph& graph, FILE* out)
    : executor_(executor), graph_(graph), out_(out) {
  if (isatty(fileno(out_))) thread_ = std::thread([this] { run(); });
}

ProgressLine::~ProgressLine() {
  done_ = true;
  if (thread_.joinable()) {
    thread_.join();
    std::fputs("\r\033[K", out_);  // clear the line for what follows
  }
}

void ProgressLine::run() {
  const auto started = Clock::now();
  Totals last;
  auto last_time = started;
  auto last_flush = started;
  // Where the snapshot's rate is measured from: when it had read its first rows.
  std::optional<std::pair<Clock::time_point, uint64_t>> snapshot_from;
  while (!done_) {
    for (int i = 0; i < 10 && !done_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done_) return;
    const auto now = Clock::now();
    const JobMetrics metrics = executor_.metrics();
    const Totals t = totals(graph_, metrics);
    const double dt = std::chrono::duration<double>(now - last_time).count();
    if (t.flushes != last.flushes) last_flush = now;
    const double busy = dt * static_cast<double>(std::max<size_t>(t.tasks, 1));
    const double blocked =
        t.blocked_ns >= last.blocked_ns ? (t.blocked_ns - last.blocked_ns) / 1e9 : 0;
    std::fprintf(out_,
                 "\r\033[K%6.1f s | in %s/s | out %s/s | checkpoints %zu | last flush %.1f s ago | "
                 "backpressure %.0f%%",
                 std::chrono::duration<double>(now - started).count(),
                 rate((t.records.in - std::min(t.records.in, last.records.in)) / dt).c_str(),
                 rate((t.records.out - std::min(t.records.out, last.records.out)) / dt).c_str(),
                 t.checkpoints, std::chrono::duration<double>(now - last_flush).count(),
                 100 * blocked / busy);
    if (const auto snapshot = snapshot_progress(metrics)) {
      if (!snapshot_from && snapshot->read > 0) snapshot_from.emplace(now, snapshot->read);
      const double seconds =
          snapshot_from ? std::chrono::duration<double>(now - snapshot_from->first).count() : 0;
      const double per_second =
          seconds > 0 ? static_cast<double>(snapshot->read - snapshot_from->second) / seconds : 0;
      std::fprintf(out_, " | %s", snapshot_bar(*snapshot, per_second).c_str());
    } else if (const auto lag = source_lag(metrics)) {
      std::fprintf(out_, " | lag %.1f s", static_cast<double>(lag->emit) / 1000);
    }
    std::fflush(out_);
    last = t;
    last_time = now;
  }
}

void print_summary(const JobGraph& graph, const JobResult& result, FILE* out) {
  const JobMetrics& m = result.metrics;
  const double seconds = std::chrono::duration<double>(result.duration).count();
  std::fprintf(out, "\n%-24s %8s %14s %14s %12s\n", "operator", "subtasks", "records in",
               "records out", "out/s");
  for (const auto& t : operator_totals(graph, m)) {
    std::fprintf(out, "%-24s %8d %14llu %14llu %12s\n", t.name.c_str(), t.subtasks,
                 static_cast<unsigned long long>(t.records_in),
                 static_cast<unsigned long long>(t.records_out),
                 seconds > 0 ? rate(t.records_out / seconds).c_str() : "-");
  }
  if (!m.checkpoints.empty()) {
    double total = 0, longest = 0, alignment = 0;
    for (const auto& c : m.checkpoints) {
      const double d = std::chrono::duration<double>(c.duration).count();
      total += d;
      longest = std::max(longest, d);
      alignment = std::max(alignment, std::chrono::duration<double>(c.alignment).count());
    }
    std::fprintf(out,
                 "\ncheckpoints: %zu completed, %zu aborted; %.0f ms mean, %.0f ms longest, "
                 "%.0f ms longest alignment; last state %s\n",
                 m.checkpoints_completed(), m.checkpoints_aborted(),
                 1000 * total / static_cast<double>(m.checkpoints.size()), 1000 * longest,
                 1000 * alignment, count_of(m.checkpoints.back().state_bytes, "byte").c_str());
  }
  uint64_t coalesced = 0;
  for (const auto& task : m.tasks) coalesced += task.ticks_coalesced;
  if (m.ticks_fired > 0) {
    std::fprintf(out, "flush ticks: %llu fired, %llu coalesced under backpressure\n",
                 static_cast<unsigned long long>(m.ticks_fired),
                 static_cast<unsigned long long>(coalesced));
  }
  if (const auto lag = source_lag(m)) {
    std::fprintf(out,
                 "binlog lag: the last change went out %llu ms after the server wrote it; the "
                 "binlog read %llu ms behind; no change for %.1f s\n",
                 static_cast<unsigned long long>(lag->emit),
                 static_cast<unsigned long long>(lag->fetch),
                 static_cast<double>(lag->idle) / 1000);
  }
  if (result.restored_from)
    std::fprintf(out, "resumed from checkpoint %lld\n",
                 static_cast<long long>(*result.restored_from));
  if (result.restarts > 0) {
    std::fprintf(out, "restarted %s after failures\n",
                 count_of(static_cast<uint64_t>(result.restarts), "time").c_str());
  }
  std::fprintf(out, "\n%s in %.2f s\n",
               result.finished()                                ? "finished"
               : result.status == JobResult::Status::kCancelled ? "cancelled"
                                                                : "failed",
               seconds);
}

}  // namespace sluice
