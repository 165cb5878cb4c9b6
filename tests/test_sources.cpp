#include "tests/test_sources.hpp"

namespace sluice::testing {
namespace {

class RowsSource final : public Source {
 public:
  RowsSource(std::vector<Row> rows, std::chrono::milliseconds idle) : rows_(std::move(rows)), idle_(idle) {}
  PollResult poll_next(Collector& out) override {
    if (next_ < rows_.size()) {
      out.emit(Row(rows_[next_++]));
      if (next_ == rows_.size()) idle_until_ = std::chrono::steady_clock::now() + idle_;
      return PollResult::kMoreAvailable;
    }
    return std::chrono::steady_clock::now() < idle_until_ ? PollResult::kNothingAvailable
                                                          : PollResult::kEndOfInput;
  }

 private:
  std::vector<Row> rows_;
  std::chrono::milliseconds idle_;
  size_t next_ = 0;
  std::chrono::steady_clock::time_point idle_until_{};
};

}  // namespace

SourceDef rows_source(const Schema& schema, ChangelogMode mode, std::vector<Row> rows,
                      std::chrono::milliseconds idle) {
  return {.output = {schema, mode}, .create = [rows, idle](const SubtaskInfo&) {
            return std::make_unique<RowsSource>(rows, idle);
          }};
}

}  // namespace sluice::testing
