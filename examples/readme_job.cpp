// Revenue per customer from a stream of orders: the README's example.
#include <sluice/cli/run_cli.hpp>
#include <sluice/connectors/basic/sinks.hpp>
#include <sluice/connectors/datagen/datagen.hpp>
#include <sluice/transforms/keyed_aggregate.hpp>

using namespace sluice;

void build(const Config& config, JobGraph& graph) {
  // A changelog of orders: inserts, updates (-U old, +U new) and deletes.
  DatagenOptions orders;
  orders.schema = Schema::parse(
      "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
  orders.rows = static_cast<uint64_t>(config.get_int("orders"));
  orders.keys = 500;
  orders.insert_weight = 60;
  orders.update_weight = 30;
  orders.delete_weight = 10;

  Stream source = graph.source("orders", datagen_source(orders));
  // A typed handle on a column: a wrong name or type fails validate().
  const auto amount = source.column<Decimal>("amount");
  // A RowRef is the record in place in its batch; the lambda is inlined.
  Stream with_fee = source.map("add-fee", [amount](RowRef order) {
    // DECIMAL arithmetic is exact: 0.10 + 0.20 is 0.30.
    order[amount] = order[amount] + Decimal(99, 2);
  });
  // Count and sum per customer in RocksDB state; the result is a changelog too.
  with_fee.transform("revenue", keyed_aggregate({"customer"}, "amount"))
      .parallelism(2)
      .sink("print", print_sink());
}

// The command line of `sluice run` for this one job: --set and --config,
// describe (--dot, --as), a progress line, metrics, signals, exit codes.
int main(int argc, char** argv) {
  return run_cli(argc, argv,
                 {.name = "revenue-per-customer",
                  .summary = "revenue per customer from generated orders",
                  .options = {{.key = "orders",
                               .type = OptionType::kInteger,
                               .default_value = "2000",
                               .doc = "changes to generate"}},
                  .defaults = {{"checkpoint.interval", "500ms"}},
                  .build = build});
}
