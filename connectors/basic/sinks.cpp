#include "sluice/connectors/basic/sinks.hpp"

#include <cstdio>

namespace sluice {
namespace {

class BlackholeSink final : public Sink {
 public:
  void write(Row&& row) override { (void)row; }
  void write_batch(Batch& rows) override { rows.clear(); }
};

class PrintSink final : public Sink {
 public:
  void open(SinkContext& context) override {
    const SubtaskInfo& info = context.subtask();
    if (info.parallelism > 1) prefix_ = std::to_string(info.index + 1) + "> ";
  }
  void write(Row&& row) override {
    const std::string line = prefix_ + row.to_string() + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  void finish() override { std::fflush(stdout); }

 private:
  std::string prefix_;
};

class CollectSink final : public Sink {
 public:
  explicit CollectSink(std::shared_ptr<CollectedRows> into) : into_(std::move(into)) {}
  void write(Row&& row) override { into_->add(std::move(row)); }

 private:
  std::shared_ptr<CollectedRows> into_;
};

}  // namespace

void CollectedRows::add(Row row) {
  std::lock_guard<std::mutex> lock(mutex_);
  rows_.push_back(std::move(row));
}

std::vector<Row> CollectedRows::rows() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

size_t CollectedRows::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_.size();
}

// Flink's connector of the same name, which takes the same rows.
FlinkSqlTableOf flink_connector(const std::string& name) {
  return [name](const TableSchema&, const RuntimeOptions&) {
    return FlinkSqlTable{.options = {{"connector", name}}};
  };
}

SinkDef blackhole_sink() {
  return {.create = [](const SubtaskInfo&) { return std::make_unique<BlackholeSink>(); },
          .flink_sql = flink_connector("blackhole")};
}

SinkDef print_sink() {
  return {.create = [](const SubtaskInfo&) { return std::make_unique<PrintSink>(); },
          .flink_sql = flink_connector("print")};
}

SinkDef collect_sink(std::shared_ptr<CollectedRows> into) {
  return {.create = [into](const SubtaskInfo&) { return std::make_unique<CollectSink>(into); }};
}

}  // namespace sluice
