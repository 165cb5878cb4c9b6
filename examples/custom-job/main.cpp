// A job with its own source and sink, outside Sluice's tree.
//
// The source counts 1, 2, 3, … and remembers in checkpointed state how far
// it got; the sink buffers squares and adds them up when the engine says so
// (its registered flush action), keeping the total in checkpointed state.
// Killed and run again, it resumes from its last checkpoint.
//
// run_cli() gives it the command line of `sluice run`: --set and --config
// for its options, `describe`, a progress line, metrics, and signals:
//   custom_job --set count.last=100000 --set metrics.port=9249
//   custom_job describe --dot
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <sluice/cli/run_cli.hpp>

using namespace sluice;

namespace {

const Schema kNumbers({{"n", DataType::bigint()}, {"square", DataType::bigint()}}, {"n"});

class CountingSource final : public Source {
 public:
  explicit CountingSource(int64_t last) : last_(last) {}

  void open(OperatorContext& context) override {
    position_.emplace(context.value_state<int64_t>("next"));
    if (const auto saved = position_->get()) next_ = *saved;
  }

  PollResult poll_next(Collector& out) override {
    if (next_ > last_) return PollResult::kEndOfInput;
    out.emit(Row(RowKind::kInsert, {next_, next_ * next_}));
    ++next_;
    return PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t) override { position_->set(next_); }

 private:
  const int64_t last_;
  int64_t next_ = 1;
  std::optional<ValueState<int64_t>> position_;
};

class SummingSink final : public Sink {
 public:
  explicit SummingSink(TypedColumn<int64_t> square) : square_(std::move(square)) {}

  void open(SinkContext& context) override {
    total_state_.emplace(context.value_state<int64_t>("total"));
    if (const auto saved = total_state_->get()) total_ = *saved;
    flushes_ = &context.counter("flushes");
    context.register_flush_action([this] { flush(); });
  }

  void write(Row&& row) override { buffered_.push_back(row[square_]); }

  // At a barrier the buffer is added in, so the saved total is exact.
  void snapshot_state(int64_t) override {
    flush();
    total_state_->set(total_);
  }

  void finish() override {
    flush();
    std::printf("custom-job: sum of squares %lld\n", static_cast<long long>(total_));
  }

 private:
  void flush() {
    if (buffered_.empty()) return;
    for (int64_t square : buffered_) total_ += square;
    buffered_.clear();
    flushes_->add(1);
  }

  const TypedColumn<int64_t> square_;
  std::vector<int64_t> buffered_;
  int64_t total_ = 0;
  std::optional<ValueState<int64_t>> total_state_;
  Counter* flushes_ = nullptr;
};

void build(const Config& config, JobGraph& graph) {
  const int64_t last = config.get_int("count.last");
  Stream numbers = graph.source(
      "count",
      {.output = {kNumbers},
       .create = [last](const SubtaskInfo&) { return std::make_unique<CountingSource>(last); },
       .rate = static_cast<double>(config.get_int("count.rate"))});
  // A typed handle on a column: a wrong name or type fails validate().
  const auto square = numbers.column<int64_t>("square");
  numbers.sink("sum", {.create = [square](const SubtaskInfo&) {
                 return std::make_unique<SummingSink>(square);
               }});
}

// After the summary, on stderr like it: stdout is the job's output.
bool report(const Config&, const JobResult& result) {
  std::fprintf(stderr, "custom-job: %llu rows, %llu flushes, %zu checkpoints\n",
               static_cast<unsigned long long>(result.metrics.records_in("sum")),
               static_cast<unsigned long long>(result.metrics.counter("sum.flushes")),
               result.metrics.checkpoints_completed());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli(argc, argv,
                 {.name = "custom-job",
                  .summary = "the squares of 1, 2, 3, …, summed in checkpointed state",
                  .options = {{.key = "count.last",
                               .type = OptionType::kInteger,
                               .default_value = "1000",
                               .doc = "the last number counted",
                               .min = 1},
                              {.key = "count.rate",
                               .type = OptionType::kInteger,
                               .default_value = "5000",
                               .doc = "numbers per second; 0 = as fast as it goes"}},
                  // Flush and checkpoint often: the job is short.
                  .defaults = {{"engine.flush.interval", "20ms"}, {"checkpoint.interval", "50ms"}},
                  .build = build,
                  .report = report});
}
