// The smallest complete job: generated orders, the paid ones, their amount
// with shipping, printed. Copy this file to start a job of your own.
#include "jobs/example_job.hpp"

#include "connectors/basic_sinks.hpp"
#include "connectors/datagen.hpp"
#include "jobs/flink_sql.hpp"

namespace sluice {
namespace {

const Schema kOrders({{"id", DataType::bigint()},
                      {"amount", DataType::decimal(10, 2)},
                      {"status", DataType::string()}},
                     {"id"});

// DECIMAL arithmetic is exact: it never goes through a double.
Row add_shipping(Row&& order) {
  order.fields[1] = order.fields[1].as_decimal() + Decimal(499, 2);  // 4.99
  return std::move(order);
}

void build(const Config& config, JobGraph& graph) {
  graph.source("orders", datagen_source(DatagenOptions::from(config, kOrders)))
      .filter("paid", [](const Row& order) { return order.fields[2].as_string() == "paid"; })
      .map("with-shipping", add_shipping)
      .sink("print", print_sink());
}

std::string as_flink_sql(const Config& config, const JobGraph&) {
  return flink_sql::datagen_table("orders", DatagenOptions::from(config, kOrders)) + "\n" +
         flink_sql::create_table("print", kOrders, {{"connector", "print"}}) +
         "\nINSERT INTO `print`\nSELECT `id`, `amount` + 4.99, `status` FROM `orders` WHERE `status` = 'paid';\n";
}

}  // namespace

JobDefinition example_job() {
  return {.name = "example",
          .summary = "generated orders, the paid ones with shipping added, printed",
          .options = datagen_option_specs(),
          .defaults = {{"source.rows", "200"}},
          .build = build,
          .flink_sql = as_flink_sql};
}

}  // namespace sluice
