#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/jobs/job_registry.hpp"

using namespace sluice;

namespace {

// Applies a changelog to a table keyed by the first column.
std::map<int64_t, Row> apply(const std::vector<Row>& changes) {
  std::map<int64_t, Row> table;
  for (const Row& row : changes) {
    const int64_t key = row.fields[0].as_bigint();
    switch (row.kind) {
      case RowKind::kInsert:
        CHECK(table.count(key) == 0);
        table[key] = Row(RowKind::kInsert, row.fields);
        break;
      case RowKind::kUpdateBefore:
        REQUIRE(table.count(key) == 1);
        CHECK(table[key].fields == row.fields);  // the old image is what the table holds
        break;
      case RowKind::kUpdateAfter:
        REQUIRE(table.count(key) == 1);
        table[key] = Row(RowKind::kInsert, row.fields);
        break;
      case RowKind::kDelete:
        CHECK(table.erase(key) == 1);
        break;
    }
  }
  return table;
}

std::vector<Row> generate(ChangeGenerator& generator) {
  std::vector<Row> out;
  Row rows[2];
  while (int n = generator.next(rows)) {
    for (int i = 0; i < n; ++i) out.push_back(rows[i]);
  }
  return out;
}

DatagenOptions mixed() {
  DatagenOptions options;
  options.schema = Schema({{"id", DataType::bigint()},
                           {"amount", DataType::decimal(10, 2)},
                           {"status", DataType::string()},
                           {"at", DataType::timestamp()},
                           {"flag", DataType::boolean()},
                           {"score", DataType::float64()}},
                          {"id"});
  options.rows = 20'000;
  options.keys = 300;
  options.insert_weight = 50;
  options.update_weight = 35;
  options.delete_weight = 15;
  return options;
}

}  // namespace

TEST_CASE("datagen produces a consistent changelog whose end state it knows", "[datagen]") {
  for (auto skew :
       {DatagenOptions::Skew::kUniform, DatagenOptions::Skew::kZipf, DatagenOptions::Skew::kHot}) {
    DatagenOptions options = mixed();
    options.skew = skew;
    ChangeGenerator generator(options, 0, 1);
    const std::vector<Row> changes = generate(generator);
    const auto table = apply(changes);
    std::vector<Row> expected;
    for (const auto& [key, row] : table) expected.push_back(row);
    CHECK(generator.current_rows() == expected);
    size_t updates = 0;
    for (const Row& row : changes) {
      options.schema.check(row);
      updates += row.kind == RowKind::kUpdateAfter;
    }
    CHECK(changes.size() == 20'000 + updates);  // an update is -U and +U
  }
}

TEST_CASE("datagen is deterministic per seed and splits keys between subtasks", "[datagen]") {
  DatagenOptions options = mixed();
  ChangeGenerator a(options, 0, 1), b(options, 0, 1);
  CHECK(generate(a) == generate(b));
  options.seed = 2;
  ChangeGenerator c(options, 0, 1);
  CHECK(generate(c) != generate(b));

  ChangeGenerator first(options, 0, 2), second(options, 1, 2);
  std::set<int64_t> keys_first, keys_second;
  for (const Row& row : generate(first)) keys_first.insert(row.fields[0].as_bigint());
  for (const Row& row : generate(second)) keys_second.insert(row.fields[0].as_bigint());
  for (int64_t key : keys_first) CHECK(keys_second.count(key) == 0);
  CHECK(keys_first.size() + keys_second.size() == 300);
}

TEST_CASE("hot skew sends about half of the updates to one percent of the keys", "[datagen]") {
  DatagenOptions options = mixed();
  options.keys = 1000;
  options.rows = 50'000;
  options.skew = DatagenOptions::Skew::kHot;
  ChangeGenerator generator(options, 0, 1);
  size_t updates = 0, hot = 0;
  for (const Row& row : generate(generator)) {
    if (row.kind != RowKind::kUpdateAfter) continue;
    ++updates;
    hot += row.fields[0].as_bigint() < 10;
  }
  CHECK(hot > updates * 4 / 10);
}

TEST_CASE("datagen options are read from the config and checked", "[datagen]") {
  const OptionTable table = OptionTable(engine_option_specs()).merged(datagen_option_specs());
  Config config(table);
  config.set("source.mix", "I:60,U:30,D:10");
  config.set("source.keys", "50");
  config.set("source.skew", "zipf");
  const DatagenOptions options = DatagenOptions::from(config, mixed().schema);
  CHECK(options.insert_weight == 60);
  CHECK(options.delete_weight == 10);
  CHECK(options.skew == DatagenOptions::Skew::kZipf);
  CHECK(options.changelog_mode() == ChangelogMode::all());

  config.set("source.mix", "I:60,X:3");
  CHECK_THROWS_WITH(DatagenOptions::from(config, mixed().schema),
                    Catch::Contains("'source.mix'") && Catch::Contains("I:60,X:3"));
  config.set("source.mix", "U:100");
  CHECK_THROWS_WITH(DatagenOptions::from(config, mixed().schema), Catch::Contains("inserts"));
  config.set("source.mix", "I:1,D:1");
  config.set("source.keys", "0");
  CHECK_THROWS_WITH(DatagenOptions::from(config, mixed().schema), Catch::Contains("'source.keys'"));
}

TEST_CASE("source.rate holds a source back to the given rate", "[datagen]") {
  DatagenOptions options;
  options.rows = 1000;
  options.rate = 2000;
  JobGraph graph("rated");
  graph.source("gen", datagen_source(options)).sink("out", blackhole_sink());
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = std::chrono::milliseconds(0);
  const JobResult result = Executor(runtime).run(graph);
  REQUIRE(result.finished());
  CHECK(result.metrics.records_in("out") == 1000);
  // Record k is not emitted before k/rate seconds: the last one at 0.4995 s.
  CHECK(result.duration >= std::chrono::milliseconds(450));
}
