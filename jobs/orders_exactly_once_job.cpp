// Generated orders into MySQL exactly once: the sink writes each
// checkpoint's changes in one XA transaction, prepares it at the barrier and
// commits it when the checkpoint completes. Kill it at any moment and run it
// again: the table ends as the changelog says, nothing lost or doubled.
#include "sluice/jobs/orders_exactly_once_job.hpp"

#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/jobs/orders.hpp"
#include "sluice/jobs/orders_demo_job.hpp"

namespace sluice {
namespace {

void build(const Config& config, JobGraph& graph) {
  MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  sink.delivery = MySqlSinkOptions::Delivery::kExactlyOnce;
  graph.source("orders", datagen_source(orders::changelog(config))).sink("mysql", mysql_sink(sink));
}

}  // namespace

JobDefinition orders_exactly_once_job() {
  auto defaults = orders::default_options();
  defaults["sink.table"] = "orders_xa";
  defaults["sink.delivery"] = "exactly-once";
  defaults["checkpoint.interval"] = "1s";
  return {.name = "orders-exactly-once",
          .summary = "generated orders into MySQL through XA transactions, checked at the end",
          .options = orders_options(),
          .defaults = defaults,
          .build = build,
          .prepare = prepare_orders_table,
          .report = report_orders_table};
}

}  // namespace sluice
