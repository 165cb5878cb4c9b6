// The orders demos. orders-demo: a stream of orders (inserts, updates,
// deletes; a few hot orders updated many times) upserted into MySQL table
// orders_rt, with checkpoints and FlushSignals on. At the end it shows, layer
// by layer, how many records became how many writes, and checks the table
// against the changelog's final state.
//
// idle-flush: a few orders, then silence, then a few more. The sink buffers
// them; nothing but a FlushSignal writes them while the source is silent. The
// source watches the table and reports when each burst became visible.
#include "sluice/jobs/orders_demo_job.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/jobs/changelog_to_mysql_job.hpp"
#include "sluice/jobs/orders.hpp"

namespace sluice {
namespace {

void build_demo(const Config& config, JobGraph& graph) {
  const MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  graph.source("orders", datagen_source(orders::changelog(config))).sink("mysql", mysql_sink(sink));
}

// Emits bursts of orders with a gap of silence after each, and during the
// gap watches the table until the burst's rows show up in it.
class TrickleSource final : public Source {
 public:
  TrickleSource(DatagenOptions gen, int bursts, int per_burst, std::chrono::milliseconds gap,
                std::chrono::milliseconds flush_interval, MySqlUrl url, std::string table)
      : generator_(gen, 0, 1),
        bursts_(bursts),
        per_burst_(per_burst),
        gap_(gap),
        flush_interval_(flush_interval),
        url_(std::move(url)),
        table_(std::move(table)) {}

  void open(OperatorContext&) override { watcher_ = std::make_unique<MySqlConnection>(url_); }

  PollResult poll_next(Collector& out) override {
    const auto now = std::chrono::steady_clock::now();
    if (sent_in_burst_ == per_burst_) {
      if (!visible_at_ && now - last_check_ >= std::chrono::milliseconds(20)) check_visible(now);
      if (now - burst_started_ < gap_) return PollResult::kNothingAvailable;
      report(now);
      if (++burst_ == bursts_) return PollResult::kEndOfInput;
      sent_in_burst_ = 0;
    }
    if (sent_in_burst_ == 0) {
      burst_started_ = now;
      visible_at_.reset();
    }
    Row rows[2];
    generator_.next(rows);
    out.emit(std::move(rows[0]));
    ++sent_in_burst_;
    return PollResult::kMoreAvailable;
  }

 private:
  void check_visible(std::chrono::steady_clock::time_point now) {
    last_check_ = now;
    const auto count = watcher_->query("SELECT COUNT(*) FROM " + quote_identifier(table_));
    if (std::stoll(*count.at(0).at(0)) >= static_cast<int64_t>((burst_ + 1) * per_burst_))
      visible_at_ = now;
  }

  void report(std::chrono::steady_clock::time_point now) {
    const auto ms = [](auto d) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    if (visible_at_) {
      std::fprintf(
          stderr,
          "burst %d: %s, visible in %s after %lld ms of silence (engine.flush.interval=%lld ms)\n",
          burst_ + 1, count_of(per_burst_, "order").c_str(), table_.c_str(),
          static_cast<long long>(ms(*visible_at_ - burst_started_)),
          static_cast<long long>(flush_interval_.count()));
    } else {
      std::fprintf(
          stderr,
          "burst %d: %s, still not in %s after %lld ms of silence: with "
          "engine.flush.interval=0 nothing flushes an idle sink until max-rows, a checkpoint or "
          "the end\n",
          burst_ + 1, count_of(per_burst_, "order").c_str(), table_.c_str(),
          static_cast<long long>(ms(now - burst_started_)));
    }
  }

  ChangeGenerator generator_;
  const int bursts_;
  const int per_burst_;
  const std::chrono::milliseconds gap_;
  const std::chrono::milliseconds flush_interval_;
  const MySqlUrl url_;
  const std::string table_;
  std::unique_ptr<MySqlConnection> watcher_;
  int burst_ = 0;
  int sent_in_burst_ = 0;
  std::chrono::steady_clock::time_point burst_started_{};
  std::chrono::steady_clock::time_point last_check_{};
  std::optional<std::chrono::steady_clock::time_point> visible_at_;
};

void build_idle(const Config& config, JobGraph& graph) {
  const MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  DatagenOptions gen = orders::changelog(config);
  gen.keys = 0;  // every order new: the watcher counts rows
  gen.insert_weight = 100;
  gen.update_weight = gen.delete_weight = 0;
  const int bursts = static_cast<int>(config.get_int("idle.bursts"));
  const int per_burst = static_cast<int>(config.get_int("idle.burst-rows"));
  const auto gap = config.get_duration("idle.gap");
  const auto interval = config.get_duration("engine.flush.interval");
  SourceDef source{.output = {orders::schema(), ChangelogMode::insert_only()},
                   .create = [=](const SubtaskInfo&) -> std::unique_ptr<Source> {
                     return std::make_unique<TrickleSource>(gen, bursts, per_burst, gap, interval,
                                                            sink.url, sink.table);
                   },
                   .max_parallelism = 1};
  graph.source("trickle", source).sink("mysql", mysql_sink(sink));
}

}  // namespace

std::vector<OptionSpec> orders_options() {
  std::vector<OptionSpec> options = datagen_option_specs();
  const auto sink = mysql_sink_option_specs();
  options.insert(options.end(), sink.begin(), sink.end());
  return options;
}

void prepare_orders_table(const Config& config, const std::string& job, bool resuming) {
  const MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  orders::prepare_table(sink.url, sink.table, job, resuming);
}

bool report_orders_table(const Config& config, const JobResult& result) {
  print_mysql_layers(result, "orders", "mysql");
  if (!result.finished()) return false;
  const MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  return orders::check_table(sink.url, sink.table, orders::changelog(config),
                             static_cast<int>(config.get_int("parallelism")));
}

JobDefinition orders_demo_job() {
  auto defaults = orders::default_options();
  defaults["sink.table"] = "orders_rt";
  defaults["sink.buffer-flush.max-rows"] = "5000";
  return {.name = "orders-demo",
          .summary =
              "generated orders upserted into MySQL orders_rt, batch by batch, checked at the end",
          .options = orders_options(),
          .defaults = defaults,
          .build = build_demo,
          .prepare = prepare_orders_table,
          .report = report_orders_table};
}

JobDefinition idle_flush_job() {
  std::vector<OptionSpec> options = orders_options();
  options.push_back({.key = "idle.bursts",
                     .type = OptionType::kInteger,
                     .default_value = "3",
                     .doc = "idle-flush: bursts of orders",
                     .min = 1});
  options.push_back({.key = "idle.burst-rows",
                     .type = OptionType::kInteger,
                     .default_value = "5",
                     .doc = "idle-flush: orders per burst",
                     .min = 1});
  options.push_back({.key = "idle.gap",
                     .type = OptionType::kDuration,
                     .default_value = "3s",
                     .doc = "idle-flush: silence after each burst"});
  return {
      .name = "idle-flush",
      .summary = "bursts of orders with silences: buffered rows reach MySQL on FlushSignal alone",
      .options = options,
      .defaults = {{"sink.table", "orders_idle"},
                   {"sink.buffer-flush.max-rows", "0"},
                   {"checkpoint.interval", "0"},
                   {"source.rows", "0"}},
      .build = build_idle,
      // The watcher counts rows: always start empty.
      .prepare = [](const Config& config, const std::string& job, bool) {
        prepare_orders_table(config, job, false);
      }};
}

}  // namespace sluice
