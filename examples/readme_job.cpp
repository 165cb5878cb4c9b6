// Revenue per customer from a stream of orders: the README's example.
#include <cstdio>

#include "connectors/basic_sinks.hpp"
#include "connectors/datagen.hpp"
#include "engine/runtime/executor.hpp"
#include "transforms/keyed_aggregate.hpp"

using namespace sluice;

int main() {
  // A changelog of orders: inserts, updates (-U old, +U new) and deletes.
  DatagenOptions orders;
  orders.schema = Schema::parse(
      "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
  orders.rows = 2'000;
  orders.keys = 500;
  orders.insert_weight = 60;
  orders.update_weight = 30;
  orders.delete_weight = 10;

  JobGraph graph("revenue-per-customer");
  Stream source = graph.source("orders", datagen_source(orders));
  // A typed handle on a column: a wrong name or type fails validate().
  const auto amount = source.column<Decimal>("amount");
  // A RowRef is the record in place in its batch; the lambda is inlined.
  Stream with_fee = source.map("add-fee", [amount](RowRef order) {
    // DECIMAL arithmetic is exact: 0.10 + 0.20 is 0.30.
    order[amount] = order[amount] + Decimal(99, 2);
  });
  // Count and sum per customer in RocksDB state; the result is a changelog too.
  keyed_aggregate(with_fee, "revenue", {"customer"}, "amount")
      .parallelism(2)
      .sink("print", print_sink());

  RuntimeOptions options;
  options.checkpoint_interval = std::chrono::milliseconds(500);
  options.checkpoint_dir = "/tmp/sluice-readme-example";
  const JobResult result = Executor(options).run(graph);
  std::printf("%s\n", result.finished() ? "finished" : result.error.c_str());
  return result.finished() ? 0 : 1;
}
