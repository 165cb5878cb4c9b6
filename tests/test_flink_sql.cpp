#include <catch2/catch.hpp>
#include <map>

#include "sluice/cli/flink_sql.hpp"
#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"

using namespace sluice;

namespace {

Config config_of(const std::map<std::string, std::string>& values) {
  Config config{OptionTable(engine_option_specs())};
  for (const auto& [key, value] : values) config.set(key, value);
  return config;
}

DatagenOptions datagen_orders() {
  DatagenOptions gen;
  gen.schema = Schema::parse("id BIGINT, amount DECIMAL(10,2), PRIMARY KEY (id)");
  gen.rows = 100;
  return gen;
}

}  // namespace

TEST_CASE("a job exports as Flink SQL the tables its source and sink describe, and an INSERT",
          "[cli]") {
  JobGraph graph("export");
  Stream source = graph.source("orders", datagen_source(datagen_orders()));
  const auto amount = source.column<Decimal>("amount");
  source.filter("large", [amount](RowRef row) { return row[amount] > Decimal(100, 0); })
      .sink("print", print_sink());
  const Config config = config_of({{"parallelism", "2"}});
  const std::string sql = flink_sql::job(graph, config, "");
  INFO(sql);
  CHECK_THAT(sql, Catch::StartsWith("SET 'parallelism.default' = '2';"));
  CHECK_THAT(sql, Catch::Contains("CREATE TABLE `orders` (\n  `id` BIGINT,\n  `amount` "
                                  "DECIMAL(10,2),\n  PRIMARY KEY (`id`) NOT ENFORCED\n) WITH (\n"
                                  "  'connector' = 'datagen',\n  'number-of-rows' = '100',"));
  CHECK_THAT(sql,
             Catch::Contains("CREATE TABLE `print` (") && Catch::Contains("'connector' = 'print'"));
  CHECK_THAT(sql,
             Catch::Contains("-- Not translated: the operators `large` between `orders` and "
                             "`print`") &&
                 Catch::EndsWith("INSERT INTO `print`\nSELECT `id`, `amount` FROM `orders`;\n"));

  // The job's own statement takes the INSERT's place; the note goes with it.
  const std::string query = "INSERT INTO `print` SELECT * FROM `orders` WHERE amount > 100;\n";
  const std::string own = flink_sql::job(graph, config, query);
  CHECK_THAT(own, Catch::EndsWith("\n" + query) && !Catch::Contains("Not translated"));
}

TEST_CASE("a job whose sink has no Flink SQL table is refused, naming the sink", "[cli]") {
  JobGraph graph("export");
  graph.source("orders", datagen_source(datagen_orders()))
      .sink("collect", collect_sink(std::make_shared<CollectedRows>()));
  CHECK_THROWS_WITH(flink_sql::job(graph, config_of({}), ""),
                    Catch::Contains("sink 'collect' has no Flink SQL table"));
}

TEST_CASE("two sinks' INSERTs run as one statement set", "[cli]") {
  JobGraph graph("export");
  Stream source = graph.source("orders", datagen_source(datagen_orders()));
  source.sink("print", print_sink());
  source.sink("blackhole", blackhole_sink());
  const std::string sql = flink_sql::job(graph, config_of({}), "");
  CHECK_THAT(sql, Catch::Contains("'connector' = 'blackhole'") &&
                      Catch::EndsWith("EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO `print`\nSELECT "
                                      "`id`, `amount` FROM `orders`;\nINSERT INTO `blackhole`\n"
                                      "SELECT `id`, `amount` FROM `orders`;\nEND;\n"));
}
