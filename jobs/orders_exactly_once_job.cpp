// Generated orders into MySQL exactly once: the sink writes each
// checkpoint's changes in one XA transaction, prepares it at the barrier and
// commits it when the checkpoint completes. Kill it at any moment and run it
// again: the table ends as the changelog says, nothing lost or doubled.
#include "jobs/orders_exactly_once_job.hpp"

#include "connectors/mysql_sink.hpp"
#include "jobs/changelog_to_mysql_job.hpp"
#include "jobs/orders.hpp"
#include "jobs/orders_demo_job.hpp"

namespace sluice {
namespace {

void build(const Config& config, JobGraph& graph) {
  MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  sink.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  add_mysql_sink(graph.source("orders", datagen_source(orders::changelog(config))), "mysql", sink);
}

bool report(const Config& config, const JobResult& result) {
  print_mysql_layers(result, "orders", "mysql");
  if (!result.finished()) return false;
  const MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  return orders::check_table(sink.url, sink.table, orders::changelog(config),
                             static_cast<int>(config.get_int("parallelism")));
}

}  // namespace

JobDefinition orders_exactly_once_job() {
  std::vector<OptionSpec> options = datagen_option_specs();
  const auto sink = mysql_sink_option_specs();
  options.insert(options.end(), sink.begin(), sink.end());
  auto defaults = orders::default_options();
  defaults["sink.table"] = "orders_xa";
  defaults["sink.delivery"] = "exactly-once";
  defaults["checkpoint.interval"] = "1s";
  return {.name = "orders-exactly-once",
          .summary = "generated orders into MySQL through XA transactions, checked at the end",
          .options = options,
          .defaults = defaults,
          .build = build,
          .prepare = prepare_orders_table,
          .report = report,
          .flink_sql = orders_flink_sql};
}

}  // namespace sluice
