// A table's large orders, live, into another table with a fee added:
// the mysql-cdc source (a snapshot, then the binlog), a filter and a map,
// and the MySQL sink. Every source.* and sink.* key is an option:
//   cdc_job --set source.url=mysql://app@db/shop --set source.table=orders \
//           --set sink.url=mysql://app@copy/shop --set sink.table=big_orders
//   cdc_job describe --as flink-sql --set …
// An order whose amount drops below the minimum leaves the target: the
// filter passes its -U and drops its +U, and a -U alone is a delete.
#include <sluice/cli/run_cli.hpp>
#include <sluice/connectors/mysql/cdc/source.hpp>
#include <sluice/connectors/mysql/sink/sink.hpp>

using namespace sluice;

namespace {

void build(const Config& config, JobGraph& graph) {
  Stream orders = graph.source("orders", mysql_cdc_source(MySqlCdcOptions::from(config)));
  const auto amount = orders.column<Decimal>("amount");
  const Decimal minimum = Decimal::parse(config.get_string("min-amount"), 12, 2);
  Stream large = orders.filter("large", [amount, minimum](RowRef order) {
    return !order.is_null(amount) && order[amount] >= minimum;
  });
  Stream with_fee = large.map("with-fee", [amount](RowRef order) {
    order[amount] = order[amount] + Decimal(150, 2);  // 1.50, exact
  });
  with_fee.sink("big-orders", mysql_sink(MySqlSinkOptions::from(config)));
}

// The filter and the map in Flink SQL; the tables come from the source and
// the sink.
std::string as_flink_sql(const Config& config) {
  return "INSERT INTO `" + config.get_string("sink.table") +
         "` SELECT id, customer, amount + 1.50 AS amount FROM orders WHERE amount >= " +
         config.get_string("min-amount") + ";\n";
}

}  // namespace

int main(int argc, char** argv) {
  return run_cli(argc, argv,
                 {.name = "big-orders",
                  .summary = "orders of at least min-amount, with a fee, from a table into another",
                  .options = option_specs({mysql_cdc_option_specs(),
                                           mysql_sink_option_specs(),
                                           {{.key = "min-amount",
                                             .default_value = "100.00",
                                             .doc = "the smallest amount copied"}}}),
                  .build = build,
                  .flink_sql_query = as_flink_sql});
}
