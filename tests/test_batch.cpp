#include <catch2/catch.hpp>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/value_codec.hpp"
#include "sluice/engine/runtime/executor.hpp"

using namespace sluice;

namespace {

const Schema kEvery = Schema::parse(
    "id BIGINT, ratio DOUBLE, amount DECIMAL(10,2), note STRING, flag BOOLEAN, at TIMESTAMP");

std::vector<Row> every_type() {
  return {
      Row(RowKind::kInsert, {1, 0.5, Decimal(1234, 2), "one", Value::boolean(true),
                             Timestamp::parse("2026-01-01 00:00:00.25")}),
      Row(RowKind::kUpdateBefore, {2, Value(), Value(), Value(), Value(), Value()}),
      Row(RowKind::kDelete, {3, -1.0, Decimal(-5, 2), "", Value::boolean(false),
                             Timestamp::parse("1969-12-31 23:59:59")}),
  };
}

Batch batch_of(const std::vector<Row>& rows) {
  Batch batch(kEvery);
  for (const Row& row : rows) batch.append(row);
  return batch;
}

}  // namespace

TEST_CASE("a batch gives back every row appended to it, NULLs and kinds included", "[batch]") {
  const Batch batch = batch_of(every_type());
  CHECK(batch.size() == 3);
  CHECK(batch.rows() == every_type());
  CHECK(batch.column(3).string_at(0) == "one");
  CHECK(batch.column(1).is_null(1));
}

TEST_CASE("a row that does not fit a batch is refused whole, naming the column", "[batch]") {
  Batch batch = batch_of(every_type());
  Row wrong = every_type()[0];
  wrong.fields[2] = Value("12.34");
  CHECK(batch.misfit(wrong) == "column 'amount' is DECIMAL(10,2)");
  CHECK_THROWS_WITH(batch.append(wrong), Catch::Contains("column 'amount' is DECIMAL(10,2)"));
  Row short_row = every_type()[0];
  short_row.fields.pop_back();
  CHECK_THROWS_AS(batch.append(short_row), DataError);
  CHECK(batch.rows() == every_type());  // nothing of either was appended
}

TEST_CASE("a filter narrows the selection; the rows stay where they are", "[batch]") {
  Batch batch = batch_of(every_type());
  const int64_t* ids = batch.column(0).values<int64_t>().data();
  batch.keep_if([&](uint32_t i) { return ids[i] != 2; });
  CHECK(batch.size() == 3);
  CHECK(batch.selected() == 2);
  std::vector<int64_t> seen;
  batch.for_each([&](uint32_t i) { seen.push_back(ids[i]); });
  CHECK(seen == std::vector<int64_t>{1, 3});
  CHECK(batch.rows() == std::vector<Row>{every_type()[0], every_type()[2]});

  // A second filter sees only what the first kept.
  batch.keep_if([&](uint32_t i) {
    CHECK(ids[i] != 2);
    return ids[i] == 3;
  });
  CHECK(batch.rows() == std::vector<Row>{every_type()[2]});
}

TEST_CASE("a filter that throws keeps its decisions so far and drops the rest", "[batch]") {
  Batch batch = batch_of(every_type());
  const int64_t* ids = batch.column(0).values<int64_t>().data();
  CHECK_THROWS(batch.keep_if([&](uint32_t i) {
    if (ids[i] == 3) throw std::runtime_error("boom");
    return true;
  }));
  CHECK(batch.rows() == std::vector<Row>{every_type()[0], every_type()[1]});
}

TEST_CASE("take() moves a batch's columns into an empty one and copies into a filled one",
          "[batch]") {
  Batch source = batch_of(every_type());
  source.keep_if([](uint32_t i) { return i != 0; });
  const int64_t* storage = source.column(0).values<int64_t>().data();
  Batch empty(kEvery);
  empty.take(source);
  CHECK(empty.column(0).values<int64_t>().data() == storage);  // moved, not copied
  CHECK(empty.rows() == std::vector<Row>{every_type()[1], every_type()[2]});
  CHECK(source.size() == 0);

  Batch filled = batch_of({every_type()[0]});
  filled.take(empty);
  CHECK(filled.rows() == every_type());
  CHECK(empty.size() == 0);

  const Schema ids = Schema::parse("id BIGINT");
  Batch other_columns(ids);
  Batch again = batch_of(every_type());
  CHECK_THROWS_AS(other_columns.take(again), std::logic_error);
}

TEST_CASE("a RowRef reads and writes fields in place, strings included", "[batch]") {
  JobGraph graph("refs");
  Stream stream = graph.source("rows", SourceDef{.output = {kEvery}});
  const auto id = stream.column<int64_t>("id");
  const auto amount = stream.column<Decimal>("amount");
  const auto note = stream.column<std::string>("note");
  const auto flag = stream.column<bool>("flag");
  const auto ratio = stream.column<double>("ratio");

  Batch batch = batch_of(every_type());
  RowRef first = batch.ref(0);
  first[id] += 10;
  first[amount] = first[amount] + Decimal(1, 2);
  first[flag] = false;
  first.set(note, std::string("a longer note than before"));
  first.set(note, first[note].substr(2, 6));  // from the batch's own bytes
  first.set_null(ratio);
  CHECK(first.to_row() ==
        Row(RowKind::kInsert, {11, Value(), Decimal(1235, 2), "longer", Value::boolean(false),
                               Timestamp::parse("2026-01-01 00:00:00.25")}));
  RowRef second = batch.ref(1);
  CHECK(second.is_null(note));
  CHECK_THROWS_WITH(second[note], Catch::Contains("column 'note' is NULL"));
  second.set(ratio, 2.5);
  CHECK_FALSE(second.is_null(ratio));
  CHECK(second[ratio] == 2.5);
  // The other rows' strings are untouched by the rewrites.
  CHECK(batch.ref(2)[note].empty());
  CHECK(batch.row(2) == every_type()[2]);
}

TEST_CASE("a batch column hashes a value as Value::hash() does, so keys keep their subtask",
          "[batch]") {
  const Batch batch = batch_of(every_type());
  for (uint32_t row = 0; row < batch.size(); ++row) {
    for (size_t c = 0; c < kEvery.size(); ++c) {
      INFO(kEvery.column(c).name << " of row " << row);
      CHECK(batch.column(c).hash(row) == batch.column(c).value(row).hash());
    }
  }
}

TEST_CASE("a column parses text into a row as parse_value() does, and refuses what it refuses",
          "[batch]") {
  const Schema schema = Schema::parse(
      "id BIGINT, ratio DOUBLE, amount DECIMAL(10,2), note STRING, flag BOOLEAN, at TIMESTAMP, "
      "day DATE");
  const std::vector<std::string> texts = {
      "-9223372036854775808",  "2.5e3",     "-12.3", "caf\xc3\xa9", "true",
      "2026-01-02 03:04:05.5", "2026-02-28"};
  Batch batch(schema);
  batch.add_rows(1);
  for (size_t c = 0; c < schema.size(); ++c) {
    batch.column(c).set_null(0, true);
    batch.column(c).parse(0, texts[c], schema.column(c).type);
    INFO(schema.column(c).name);
    CHECK(batch.column(c).value(0) == parse_value(texts[c], schema.column(c).type));
  }
  for (const std::string bad : {"", "12x", "9223372036854775808"}) {
    INFO(bad);
    CHECK_THROWS_WITH(batch.column(0).parse(0, bad, schema.column(0).type),
                      Catch::Contains("expected a BIGINT"));
  }
  CHECK_THROWS_AS(batch.column(2).parse(0, "1.2.3", schema.column(2).type), DataError);
}

TEST_CASE("a batch truncated drops the rows added last, their kinds, positions and selection",
          "[batch]") {
  const Schema schema = Schema::parse("id BIGINT, note STRING");
  Batch batch(schema);
  batch.append(Row(RowKind::kInsert, {int64_t{1}, std::string("one")}));
  batch.append(Row(RowKind::kInsert, {int64_t{2}, std::string("two")}));
  batch.set_position(1, 7);
  batch.keep_if([&](uint32_t row) { return batch.column(0).values<int64_t>()[row] == 2; });
  const uint32_t first = batch.add_rows(2, RowKind::kDelete);
  batch.column(1).set_string(first, "three");
  batch.set_position(first, 9);
  batch.truncate(first);
  CHECK(batch.size() == 2);
  CHECK(batch.rows() == std::vector<Row>{Row(RowKind::kInsert, {int64_t{2}, std::string("two")})});
  CHECK(batch.position(1) == 7);
  // What comes after is as if the dropped rows had never been.
  batch.append(Row(RowKind::kUpdateAfter, {int64_t{4}, std::string("four")}));
  CHECK(batch.size() == 3);
  CHECK(batch.kind(2) == RowKind::kUpdateAfter);
  CHECK(batch.column(1).string_at(2) == "four");
  CHECK_FALSE(batch.position(2).has_value());
  CHECK(batch.selected() == 2);
}

TEST_CASE("equal values hash equally in a batch column, DECIMALs of any scale too", "[batch]") {
  const Schema schema = Schema::parse("d DECIMAL(10,3), s STRING");
  Batch batch(schema);
  batch.append(Row(RowKind::kInsert, {Decimal(10, 1), "abc"}));
  batch.append(Row(RowKind::kInsert, {Decimal(1000, 3), std::string("abc")}));
  batch.append(Row(RowKind::kInsert, {Decimal(1001, 3), "abd"}));
  CHECK(batch.column(0).hash(0) == batch.column(0).hash(1));
  CHECK(batch.column(0).hash(1) != batch.column(0).hash(2));
  CHECK(batch.column(1).hash(0) == batch.column(1).hash(1));
  CHECK(batch.column(1).hash(1) != batch.column(1).hash(2));
}

TEST_CASE("RowRef functions of map, filter and flat_map change records in place", "[batch]") {
  DatagenOptions gen;
  gen.rows = 10'000;
  gen.schema = Schema::parse("id BIGINT, value BIGINT, note STRING");
  JobGraph graph("in-place");
  Stream source = graph.source("gen", datagen_source(gen));
  const auto id = source.column<int64_t>("id");
  const auto note = source.column<std::string>("note");
  auto collected = std::make_shared<CollectedRows>();
  source
      .map("rename",
           [note, id](RowRef row) {
             std::string text = "n";
             text += std::to_string(row[id]);
             row.set(note, text);
           })
      .filter("odd", [id](RowRef row) { return row[id] % 2 == 1; })
      .flat_map("twice",
                [id](RowRef row, Collector& out) {
                  out.emit(row);
                  row[id] = -row[id];
                  out.emit(row);
                })
      .sink("collect", collect_sink(collected));
  RuntimeOptions options = RuntimeOptions::without_checkpoints();
  options.flush_interval = std::chrono::milliseconds(0);
  REQUIRE(Executor(options).run(graph).finished());
  const std::vector<Row> rows = collected->rows();
  REQUIRE(rows.size() == 10'000);
  for (size_t i = 0; i < rows.size(); i += 2) {
    const int64_t key = rows[i].fields[0].as_bigint();
    CHECK(key % 2 == 1);
    CHECK(rows[i].fields[2].as_string() == std::string("n").append(std::to_string(key)));
    CHECK(rows[i + 1].fields[0] == Value(-key));
    CHECK(rows[i + 1].fields[2] == rows[i].fields[2]);
  }
}

TEST_CASE("append_columns projects the selected rows, column by column", "[batch]") {
  Batch batch = batch_of(every_type());
  batch.keep_if([](uint32_t i) { return i != 1; });
  const Schema projected = Schema::parse("note STRING, id BIGINT");
  Batch out(projected);
  const std::vector<size_t> columns{3, 0};
  out.append_columns(batch, columns);
  CHECK(out.rows() ==
        std::vector<Row>{Row(RowKind::kInsert, {"one", 1}), Row(RowKind::kDelete, {"", 3})});
  const std::vector<size_t> wrong{0, 3};  // BIGINT into STRING
  CHECK_THROWS_AS(out.append_columns(batch, wrong), std::logic_error);
  CHECK(out.size() == 2);
}

TEST_CASE("input positions travel with their rows, and only where a source set them", "[batch]") {
  const Schema schema = Schema::parse("id BIGINT, note STRING");
  Batch from(schema);
  for (int64_t id = 1; id <= 4; ++id) from.append(Row(RowKind::kInsert, {id, "n"}));
  CHECK_FALSE(from.position(0).has_value());
  from.set_position(1, 11);
  from.set_position(3, 13);
  from.keep_if([&](uint32_t row) { return row != 0; });  // rows 1, 2, 3

  Batch to(schema);
  to.append(Row(RowKind::kInsert, {int64_t{9}, "before"}));  // no position
  to.append(from);
  REQUIRE(to.size() == 4);
  CHECK_FALSE(to.position(0).has_value());
  CHECK(to.position(1) == 11);
  CHECK_FALSE(to.position(2).has_value());
  CHECK(to.position(3) == 13);
  to.append(Row(RowKind::kInsert, {int64_t{10}, "after"}));
  CHECK_FALSE(to.position(4).has_value());

  Batch moved(schema);
  moved.take(to);  // takes the storage: the positions come along
  CHECK(moved.position(3) == 13);
  moved.clear();
  moved.append(Row(RowKind::kInsert, {int64_t{1}, "x"}));
  CHECK_FALSE(moved.position(0).has_value());
}

TEST_CASE("rows appended by number come whole, consecutive ones or not, positions too", "[batch]") {
  Batch source = batch_of(every_type());
  for (uint32_t row = 0; row < source.size(); ++row) source.set_position(row, 100 + row);
  const std::vector<Row> rows = every_type();
  for (const std::vector<uint32_t>& numbers :
       {std::vector<uint32_t>{1, 2}, std::vector<uint32_t>{2, 0}, std::vector<uint32_t>{0, 2},
        std::vector<uint32_t>{0, 1, 2}, std::vector<uint32_t>{2}}) {
    Batch out = batch_of({rows[0]});  // a row before them, without a position
    out.append(source, numbers);
    std::vector<Row> want = {rows[0]};
    for (uint32_t n : numbers) want.push_back(rows[n]);
    CHECK(out.rows() == want);
    CHECK_FALSE(out.position(0).has_value());
    for (size_t i = 0; i < numbers.size(); ++i) {
      CHECK(out.position(static_cast<uint32_t>(i + 1)) == 100 + numbers[i]);
    }
  }
}

TEST_CASE("strings of consecutive rows are copied whole, side by side or not", "[batch]") {
  const Schema schema = Schema::parse("s STRING, b BYTES");
  const auto text = [](const Batch& batch) {
    std::vector<std::string> out;
    for (const Row& row : batch.rows()) out.push_back(row.to_string());
    return out;
  };
  Batch source(schema);
  for (const char* s : {"alpha", "", "gamma", "delta"}) {
    source.append(Row(RowKind::kInsert, {std::string(s), Value::bytes(std::string(s) + "\x01")}));
  }
  source.append(Row(RowKind::kInsert, {Value(), Value()}));
  SECTION("as they were appended") {}
  SECTION("one rewritten: its old bytes stay where they were") {
    source.column(0).set_string(2, "G");
    source.column(1).set_string(0, "A");
  }
  SECTION("none with bytes") {
    source.clear();
    source.append(Row(RowKind::kInsert, {"", Value::bytes("")}));
    source.append(Row(RowKind::kInsert, {Value(), Value()}));
  }
  const std::vector<std::string> want = text(source);
  for (uint32_t start = 0; start < source.size(); ++start) {
    Batch out(schema);
    out.append(Row(RowKind::kInsert, {"before", Value::bytes("x")}));
    std::vector<uint32_t> numbers;
    for (uint32_t row = start; row < source.size(); ++row) numbers.push_back(row);
    out.append(source, numbers);
    std::vector<std::string> expected = {text(out).front()};
    expected.insert(expected.end(), want.begin() + start, want.end());
    CHECK(text(out) == expected);
  }
}

TEST_CASE("a key encodes the same from a batch's columns as from its Row", "[batch]") {
  Batch batch = batch_of(every_type());
  const std::vector<size_t> all = {0, 1, 2, 3, 4, 5};
  for (uint32_t row = 0; row < batch.size(); ++row) {
    CHECK(encode_key(batch.ref(row), all) == encode_key(every_type()[row], all));
  }
  // A wide DECIMAL, 4-byte UTF-8, and BYTES too.
  const Schema other = Schema::parse("d DECIMAL(65,0), s STRING, b BYTES");
  Batch wide(other);
  const Row row(RowKind::kInsert, {Decimal::of(std::string(60, '9')), "é😀",
                                   Value::bytes(std::string("\x00\xff", 2))});
  wide.append(row);
  CHECK(encode_key(wide.ref(0), {0, 1, 2}) == encode_key(row, {0, 1, 2}));
}
