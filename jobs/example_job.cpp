// The smallest complete job: generated orders, the paid ones, their amount
// with shipping, printed. Copy this file to start a job of your own.
#include "sluice/jobs/example_job.hpp"

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"

namespace sluice {
namespace {

const Schema kOrders({{"id", DataType::bigint()},
                      {"amount", DataType::decimal(10, 2)},
                      {"status", DataType::string()}},
                     {"id"});

void build(const Config& config, JobGraph& graph) {
  Stream orders = graph.source("orders", datagen_source(DatagenOptions::from(config, kOrders)));
  // Typed handles on the columns: a wrong name or type fails validate().
  const auto amount = orders.column<Decimal>("amount");
  const auto status = orders.column<std::string>("status");
  // A RowRef is a record in place in its batch: nothing is copied.
  orders.filter("paid", [status](RowRef order) { return order[status] == "paid"; })
      .map("with-shipping",
           [amount](RowRef order) {
             // DECIMAL arithmetic is exact: it never goes through a double.
             order[amount] = order[amount] + Decimal(499, 2);  // 4.99
           })
      .sink("print", print_sink());
}

// The filter and the map, in SQL; the tables come from the source and the sink.
std::string as_flink_sql(const Config&) {
  return "INSERT INTO `print`\nSELECT `id`, `amount` + 4.99, `status` FROM `orders` WHERE "
         "`status` = 'paid';\n";
}

}  // namespace

JobDefinition example_job() {
  return {.name = "example",
          .summary = "generated orders, the paid ones with shipping added, printed",
          .options = datagen_option_specs(),
          .defaults = {{"source.rows", "200"}},
          .build = build,
          .flink_sql_query = as_flink_sql};
}

}  // namespace sluice
