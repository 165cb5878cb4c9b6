#include "sluice/tests/test_sources.hpp"

#include <algorithm>
#include <thread>

namespace sluice::testing {
namespace {

class RowsSource final : public Source {
 public:
  RowsSource(std::vector<Row> rows, IdleUntil idle)
      : rows_(std::move(rows)), idle_(std::move(idle)) {}
  PollResult poll_next(Collector& out) override {
    if (next_ < rows_.size()) {
      out.emit(Row(rows_[next_++]));
      return PollResult::kMoreAvailable;
    }
    const bool released = !idle_.released || idle_.released->load();
    return released && checkpoints_ >= idle_.checkpoints ? PollResult::kEndOfInput
                                                         : PollResult::kNothingAvailable;
  }
  void notify_checkpoint_complete(int64_t) override { checkpoints_ += next_ == rows_.size(); }

 private:
  std::vector<Row> rows_;
  IdleUntil idle_;
  size_t next_ = 0;
  int checkpoints_ = 0;  // completed since the last row
};

}  // namespace

SourceDef rows_source(const Schema& schema, ChangelogMode mode, std::vector<Row> rows,
                      IdleUntil idle) {
  return {.output = {schema, mode}, .create = [rows, idle](const SubtaskInfo&) {
            return std::make_unique<RowsSource>(rows, idle);
          }};
}

namespace {

class SlowSnapshotSink final : public Sink {
 public:
  explicit SlowSnapshotSink(std::chrono::milliseconds pause) : pause_(pause) {}
  void write(Row&&) override {}
  void snapshot_state(int64_t) override { std::this_thread::sleep_for(pause_); }

 private:
  std::chrono::milliseconds pause_;
};

}  // namespace

SinkDef slow_snapshot_sink(std::chrono::milliseconds pause) {
  return {
      .create = [pause](const SubtaskInfo&) { return std::make_unique<SlowSnapshotSink>(pause); }};
}

std::vector<Row> datagen_final_rows(const DatagenOptions& gen, int parallelism) {
  std::vector<Row> rows;
  for (int s = 0; s < parallelism; ++s) {
    ChangeGenerator generator(gen, s, parallelism);
    Row out[2];
    while (generator.next(out) > 0) {
    }
    for (Row& row : generator.current_rows()) rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.fields[0].as_bigint() < b.fields[0].as_bigint();
  });
  return rows;
}

}  // namespace sluice::testing
