#include <catch2/catch.hpp>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/physical_plan.hpp"
#include "sluice/transforms/changelog_normalize.hpp"

using namespace sluice;

namespace {

Row identity(Row&& row) { return std::move(row); }

}  // namespace

TEST_CASE("validate reports every problem, each naming its operator", "[engine]") {
  JobGraph graph("broken");
  auto numbers = graph.source("numbers", datagen_source({}));
  numbers.map("twice", identity).parallelism(-1).sink("out", blackhole_sink());
  numbers.key_by({"no_such_column"}).map("twice", identity);  // same name, leads nowhere
  const auto problems = graph.validate();
  const auto has = [&](const std::string& text) {
    for (const auto& p : problems) {
      if (p.find(text) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(has("operator 'twice': parallelism must be at least 1, got -1"));
  CHECK(has("two operators are named 'twice'"));
  CHECK(has("key column 'no_such_column' is not in its input (id, value)"));
  CHECK(has("operator 'twice' leads to no sink"));
  CHECK_THROWS_AS(graph.check(), ConfigError);
  CHECK_THROWS_WITH(graph.check(), Catch::Contains("job 'broken' is not valid"));
}

TEST_CASE("a graph without source or sink is not valid", "[engine]") {
  JobGraph empty("empty");
  CHECK_THROWS_WITH(empty.check(), Catch::Contains("no source") && Catch::Contains("no sink"));
}

TEST_CASE("a sink's own check sees its input type", "[engine]") {
  DatagenOptions changes;
  changes.keys = 10;
  changes.update_weight = 50;
  JobGraph graph("checked");
  SinkDef picky = blackhole_sink();
  picky.check = [](const StreamType& input) {
    std::vector<std::string> problems;
    if (!input.mode.is_insert_only())
      problems.push_back("wants inserts only, got " + input.mode.to_string());
    return problems;
  };
  graph.source("changes", datagen_source(changes)).sink("picky", picky);
  CHECK_THROWS_WITH(graph.check(),
                    Catch::Contains("sink 'picky': wants inserts only, got [+I, -U, +U]"));
}

TEST_CASE("operators on forward edges of equal parallelism chain into one task", "[engine]") {
  JobGraph graph("chains");
  graph.source("gen", datagen_source({}))
      .map("m", identity)
      .filter("f", [](const Row&) { return true; })
      .key_by({"id"})
      .map("keyed", identity)
      .parallelism(2)
      .sink("out", blackhole_sink())
      .parallelism(2);
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  PhysicalPlan plan = build_plan(graph, options);
  REQUIRE(plan.chains.size() == 2);
  CHECK(plan.chain_name(graph, 0) == "gen -> m -> f");
  CHECK(plan.chain_name(graph, 1) == "keyed -> out");
  REQUIRE(plan.edges.size() == 1);
  CHECK(plan.edges[0].partitioning == Partitioning::kHash);
  CHECK(plan.edges[0].key_indexes == std::vector<size_t>{0});
  CHECK_THAT(plan.describe(graph), Catch::Contains("hash(id)"));
  CHECK_THAT(plan.dot(graph), Catch::Contains("t1 -> t2"));

  options.chaining = false;
  plan = build_plan(graph, options);
  CHECK(plan.chains.size() == 5);
  CHECK(plan.edges[0].partitioning == Partitioning::kForward);
}

TEST_CASE("a sink that waits on I/O runs in a task of its own, never chained", "[engine]") {
  JobGraph graph("waits");
  SinkDef waiting = blackhole_sink();
  waiting.waits_on_io = true;
  graph.source("gen", datagen_source({})).map("m", identity).sink("out", waiting);
  const PhysicalPlan plan = build_plan(graph, RuntimeOptions::without_checkpoints());
  REQUIRE(plan.chains.size() == 2);
  CHECK(plan.chain_name(graph, 0) == "gen -> m");
  CHECK(plan.chain_name(graph, 1) == "out");
  REQUIRE(plan.edges.size() == 1);
  CHECK(plan.edges[0].partitioning == Partitioning::kForward);
}

TEST_CASE("forward into another parallelism rebalances; a keyed sink is always hashed",
          "[engine]") {
  JobGraph graph("exchanges");
  SinkDef keyed = blackhole_sink();
  keyed.key_columns = {"id"};
  graph.source("gen", datagen_source({}))
      .map("m", identity)
      .parallelism(3)
      .sink("out", keyed)
      .parallelism(3);
  const PhysicalPlan plan = build_plan(graph, RuntimeOptions{});
  REQUIRE(plan.edges.size() == 2);
  CHECK(plan.edges[0].partitioning == Partitioning::kRebalance);  // 1 -> 3
  CHECK(plan.edges[1].partitioning == Partitioning::kHash);       // 3 -> 3, by the sink key
  CHECK(plan.edges[1].key_columns == std::vector<std::string>{"id"});
}

TEST_CASE("a sink made for its input gets the stream's type and asks for its parallelism",
          "[engine]") {
  JobGraph graph("made-for-input");
  std::vector<std::string> seen;
  SinkDef made;
  made.for_input = [&seen](const StreamType& input) {
    for (const Column& column : input.schema.columns()) seen.push_back(column.name);
    SinkDef def = blackhole_sink();
    def.key_columns = {input.schema.column(0).name};
    def.parallelism = 3;
    return def;
  };
  graph.source("gen", datagen_source({})).sink("out", made);
  CHECK(seen == std::vector<std::string>{"id", "value"});
  PhysicalPlan plan = build_plan(graph, RuntimeOptions::without_checkpoints());
  REQUIRE(plan.chains.size() == 2);
  CHECK(plan.chains[1].parallelism == 3);
  REQUIRE(plan.edges.size() == 1);
  CHECK(plan.edges[0].partitioning == Partitioning::kHash);
  CHECK(plan.edges[0].key_columns == std::vector<std::string>{"id"});

  JobGraph overridden("overridden");  // SinkHandle::parallelism() wins
  overridden.source("gen", datagen_source({})).sink("out", made).parallelism(1);
  plan = build_plan(overridden, RuntimeOptions::without_checkpoints());
  REQUIRE(plan.chains.size() == 1);
  CHECK(plan.chains[0].parallelism == 1);
}

TEST_CASE("a typed column with a wrong name or type fails validate, naming the operator",
          "[engine]") {
  DatagenOptions orders;
  orders.schema = Schema::parse("id BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
  JobGraph graph("typed");
  Stream source = graph.source("orders", datagen_source(orders));
  const auto amount = source.column<Decimal>("amount");
  const auto missing = source.column<Decimal>("amuont");
  const auto mistyped = source.column<int64_t>("status");
  source.map("use", [amount, missing, mistyped](Row row) { return row; })
      .sink("out", blackhole_sink());
  CHECK(amount.index() == 1);
  const auto problems = graph.validate();
  CHECK(problems == std::vector<std::string>{
                        "operator 'orders': its output has no column 'amuont'; its columns are id, "
                        "amount, status",
                        "operator 'orders': column 'status' of its output is STRING, not BIGINT"});
  CHECK_THROWS_WITH(graph.check(), Catch::Contains("no column 'amuont'"));
}

TEST_CASE("rows read and write typed columns; a NULL is refused by name", "[engine]") {
  DatagenOptions orders;
  orders.schema = Schema::parse("id BIGINT, amount DECIMAL(10,2), status STRING, paid BOOLEAN");
  JobGraph graph("typed");
  Stream source = graph.source("orders", datagen_source(orders));
  const auto id = source.column<int64_t>("id");
  const auto amount = source.column<Decimal>("amount");
  const auto status = source.column<std::string>("status");
  const auto paid = source.column<bool>("paid");
  source.sink("out", blackhole_sink());
  REQUIRE(graph.validate().empty());
  Row row(RowKind::kInsert, {7, Decimal(1000, 2), "new", Value()});
  row[amount] = row[amount] + Decimal(99, 2);
  row[status] += "!";
  CHECK(row[id] == 7);
  CHECK(row.fields[1] == Value(Decimal(1099, 2)));
  CHECK(std::as_const(row)[status] == "new!");
  CHECK(row.is_null(paid));
  CHECK_THROWS_WITH(row[paid], Catch::Contains("column 'paid' is NULL"));
  row.set(paid, true);
  CHECK(row[paid]);
  CHECK(row.fields[3] == Value::boolean(true));
  row.set_null(amount);
  CHECK(row.fields[1].is_null());
}

TEST_CASE("a stream with key-only deletes goes into an operator only through changelog_normalize()",
          "[engine]") {
  const Schema accounts = Schema::parse("id BIGINT, balance BIGINT, PRIMARY KEY (id)");
  const auto source = [&](const Schema& schema) {
    return SourceDef{
        .output = {schema, ChangelogMode::all(), true},
        .create = [](const SubtaskInfo&) -> std::unique_ptr<Source> { return nullptr; }};
  };
  {
    JobGraph graph("raw");
    graph.source("changes", source(accounts))
        .filter("rich", [](const Row&) { return true; })
        .sink("out", blackhole_sink());
    const auto problems = graph.validate();
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("operator 'rich'") &&
                                Catch::Contains("deletes with only the key") &&
                                Catch::Contains("normalize()"));
  }
  {
    JobGraph graph("normalized");
    graph.source("changes", source(accounts))
        .transform("normalize", changelog_normalize())
        .filter("rich", [](const Row&) { return true; })
        .sink("out", blackhole_sink());
    CHECK(graph.validate().empty());
  }
  {
    JobGraph graph("straight-to-sink");
    graph.source("changes", source(accounts)).sink("out", blackhole_sink());
    CHECK(graph.validate().empty());
  }
  {
    JobGraph graph("keyless");
    graph.source("changes", source(Schema::parse("id BIGINT, balance BIGINT")))
        .transform("normalize", changelog_normalize())
        .sink("out", blackhole_sink());
    CHECK_THAT(graph.validate(), Catch::VectorContains(std::string(
                                     "operator 'normalize': normalize keys its state by the "
                                     "primary key; its input has none")));
  }
}

TEST_CASE("an operator with keyed state needs key_by, unless it runs with parallelism 1",
          "[engine]") {
  const auto keyed_counter = [](Stream input, int parallelism) {
    input
        .transform("count", {.create = [](const SubtaskInfo&) -> std::unique_ptr<Operator> {
                               return nullptr;
                             },
                             .keyed_state = true})
        .parallelism(parallelism)
        .sink("out", blackhole_sink());
  };
  {
    JobGraph graph("unkeyed");
    keyed_counter(graph.source("numbers", datagen_source({})), 2);
    const auto problems = graph.validate();
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::StartsWith("operator 'count': it keeps keyed state") &&
                                Catch::Contains("put key_by(columns) before it"));
  }
  {
    // The job's default parallelism may be above 1: also rejected.
    JobGraph graph("default-parallelism");
    Stream numbers = graph.source("numbers", datagen_source({}));
    numbers
        .transform("count", {.create = [](const SubtaskInfo&) -> std::unique_ptr<Operator> {
                               return nullptr;
                             },
                             .keyed_state = true})
        .sink("out", blackhole_sink());
    CHECK(graph.validate().size() == 1);
  }
  {
    JobGraph graph("keyed");
    keyed_counter(graph.source("numbers", datagen_source({})).key_by({"id"}), 2);
    CHECK(graph.validate().empty());
  }
  {
    JobGraph graph("one-subtask");
    keyed_counter(graph.source("numbers", datagen_source({})), 1);
    CHECK(graph.validate().empty());
  }
}
