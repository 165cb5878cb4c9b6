#include <catch2/catch.hpp>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/transforms/project.hpp"

using namespace sluice;

namespace {

DatagenOptions orders() {
  DatagenOptions gen;
  gen.rows = 10;
  gen.schema = Schema({{"id", DataType::bigint()},
                       {"status", DataType::string()},
                       {"amount", DataType::decimal(8, 2)}},
                      {"id"});
  return gen;
}

}  // namespace

TEST_CASE("project's output type keeps the named columns and a surviving key", "[transforms]") {
  JobGraph graph("types");
  const Stream picked =
      project(graph.source("gen", datagen_source(orders())), "pick", {"amount", "id"});
  CHECK(picked.type().schema.to_string() == "amount DECIMAL(8,2), id BIGINT, PRIMARY KEY (id)");
  CHECK_FALSE(project(picked, "no-key", {"amount"}).type().schema.has_primary_key());
}

TEST_CASE("project keeps the named columns of every record, in order", "[transforms]") {
  auto collected = std::make_shared<CollectedRows>();
  JobGraph graph("project");
  project(graph.source("gen", datagen_source(orders())), "pick", {"amount", "id"})
      .sink("collect", collect_sink(collected));
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = std::chrono::milliseconds(0);
  REQUIRE(Executor(options).run(graph).finished());
  REQUIRE(collected->size() == 10);
  ChangeGenerator expected(orders(), 0, 1);
  Row rows[2];
  for (const Row& row : collected->rows()) {
    REQUIRE(expected.next(rows) == 1);
    CHECK(row.fields == std::vector<Value>{rows[0].fields[2], rows[0].fields[0]});
  }
}

TEST_CASE("project reports a column its input lacks", "[transforms]") {
  JobGraph graph("bad-project");
  project(graph.source("gen", datagen_source({})), "pick", {"id", "price"})
      .sink("out", blackhole_sink());
  CHECK_THROWS_WITH(graph.check(),
                    Catch::Contains("operator 'pick': column 'price' is not in its input"));
}
