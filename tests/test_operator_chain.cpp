#include <catch2/catch.hpp>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/runtime/operator_chain.hpp"

using namespace sluice;

namespace {

const Schema kNumbers = Schema::parse("n BIGINT");

NodeDef node(std::string name) {
  NodeDef def;
  def.name = std::move(name);
  def.output = {kNumbers};
  return def;
}

// Emits 0, 1, 2, … in polls of three, then ends.
struct Counting final : Source {
  int64_t next = 0;
  int64_t end = 9;
  PollResult poll_next(Collector& out) override {
    for (int i = 0; i < 3 && next < end; ++i) out.emit(Row(RowKind::kInsert, {next++}));
    return next < end ? PollResult::kMoreAvailable : PollResult::kEndOfInput;
  }
};

// Doubles each number; throws at `fail_at`; emits -1 when it finishes.
struct Doubling final : Operator {
  int64_t fail_at = -1;
  void process(Row&& row, Collector& out) override {
    if (row.fields[0].as_bigint() == fail_at) throw std::runtime_error("boom");
    row.fields[0] = row.fields[0].as_bigint() * 2;
    out.emit(row);
  }
  void finish(Collector& out) override { out.emit(Row(RowKind::kInsert, {int64_t{-1}})); }
};

struct Collecting final : Sink {
  std::vector<int64_t> seen;
  bool finished = false;
  void write(Row&& row) override { seen.push_back(row.fields[0].as_bigint()); }
  void finish() override { finished = true; }
};

ChainMember member(const NodeDef& node, OperatorMetrics& metrics) {
  ChainMember m;
  m.node = &node;
  m.metrics = &metrics;
  return m;
}

struct Chain {
  NodeDef source_node = node("source"), map_node = node("double"), sink_node = node("sink");
  OperatorMetrics source_metrics, map_metrics, sink_metrics;
  std::vector<ChainMember> members = [this] {
    std::vector<ChainMember> out;
    out.push_back(member(source_node, source_metrics));
    out.back().source = std::make_unique<Counting>();
    out.push_back(member(map_node, map_metrics));
    out.back().op = std::make_unique<Doubling>();
    out.push_back(member(sink_node, sink_metrics));
    out.back().sink = std::make_unique<Collecting>();
    return out;
  }();
  Doubling& doubling = static_cast<Doubling&>(*members[1].op);
  Collecting& sink = static_cast<Collecting&>(*members[2].sink);
  OperatorChain chain{members, nullptr, true};
};

}  // namespace

TEST_CASE("an operator chain moves each poll's records through, and finishes in order",
          "[engine]") {
  Chain c;
  while (c.chain.poll_source() == PollResult::kMoreAvailable) {
    CHECK(c.sink.seen.size() % 3 == 0);  // a poll's records arrive with it
  }
  c.chain.finish();
  CHECK(c.sink.seen == std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, -1});
  CHECK(c.sink.finished);
  CHECK(c.map_metrics.records_in.get() == 9);
  CHECK(c.sink_metrics.records_in.get() == 10);
}

TEST_CASE("an operator that throws is named, and what it emitted before goes on", "[engine]") {
  Chain c;
  c.doubling.fail_at = 4;
  CHECK(c.chain.poll_source() == PollResult::kMoreAvailable);
  try {
    c.chain.poll_source();
    FAIL("the map did not throw");
  } catch (const OperatorFailure& failure) {
    CHECK(failure.operator_name == "double");
    CHECK(failure.message == "boom");
  }
  CHECK(c.sink.seen == std::vector<int64_t>{0, 2, 4, 6});  // 3 went through before 4 failed
}
