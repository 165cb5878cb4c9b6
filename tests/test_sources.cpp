#include "tests/test_sources.hpp"

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

}  // namespace sluice::testing
