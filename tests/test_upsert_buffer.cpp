#include <algorithm>
#include <catch2/catch.hpp>

#include "sluice/connectors/upsert_buffer.hpp"
#include "sluice/engine/data/value_codec.hpp"

using namespace sluice;

namespace {

const Schema kNumbers = Schema::parse("id BIGINT, v BIGINT");
const Schema kNames = Schema::parse("id STRING, v BIGINT");

Row change(RowKind kind, Value key, int64_t value = 0) {
  return Row(kind, {std::move(key), value});
}

// The runs as text: "+1 +2 | -3" is a run of upserts of keys 1 and 2, then a
// run of deletes of key 3; keys within a run sorted (their order there is free).
std::string describe(const UpsertBuffer& buffer, const std::vector<UpsertBuffer::Run>& runs) {
  std::string out;
  for (const auto& run : runs) {
    std::vector<std::string> keys;
    for (uint32_t row : run.rows) {
      std::string key(run.deletes ? "-" : "+");
      key += buffer.rows().column(0).value(row).to_string();
      keys.push_back(std::move(key));
    }
    std::sort(keys.begin(), keys.end());
    if (!out.empty()) out += " | ";
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i > 0) out += ' ';
      out += keys[i];
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the buffer keeps the last change of each key", "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kInsert, 1, 10));
  buffer.add(change(RowKind::kInsert, 2, 20));
  buffer.add(change(RowKind::kDelete, 1));
  buffer.add(change(RowKind::kInsert, 3, 30));
  buffer.add(change(RowKind::kDelete, 3));
  buffer.add(change(RowKind::kInsert, 3, 31));
  const auto runs = buffer.runs(false);
  // Numeric keys: all upserts, then all deletes, two statements at most.
  CHECK(describe(buffer, runs) == "+2 +3 | -1");
  CHECK(runs[0].rows.size() == 2);
  CHECK(buffer.size() == 3);
}

TEST_CASE("an update is one upsert; an update that changed the key deletes the old one",
          "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kUpdateBefore, 1, 10));
  buffer.add(change(RowKind::kUpdateAfter, 1, 11));
  buffer.add(change(RowKind::kUpdateBefore, 2, 20));
  buffer.add(change(RowKind::kUpdateAfter, 7, 20));
  CHECK(describe(buffer, buffer.runs(false)) == "+1 +7 | -2");
}

TEST_CASE("no flush falls between a -U and the +U after it", "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kInsert, 1, 10));
  buffer.add(change(RowKind::kUpdateBefore, 2, 20));
  // A FlushSignal or max-rows now: the -U waits, it may be half of an update.
  CHECK(describe(buffer, buffer.runs(false)) == "+1");
  buffer.clear();
  CHECK_FALSE(buffer.empty());
  buffer.add(change(RowKind::kUpdateAfter, 2, 21));
  CHECK(describe(buffer, buffer.runs(false)) == "+2");  // the ordinary update, whole
  buffer.clear();
  CHECK(buffer.empty());

  // At a barrier or the end, a held -U is a delete: what came after it
  // belongs to the next checkpoint.
  buffer.add(change(RowKind::kUpdateBefore, 4, 40));
  CHECK(describe(buffer, buffer.runs(true)) == "-4");
  buffer.clear();
  CHECK(buffer.empty());
}

TEST_CASE("string keys keep the order of their last changes, in runs", "[buffer]") {
  UpsertBuffer buffer(kNames, {0}, true);
  buffer.add(change(RowKind::kInsert, "abc", 1));
  buffer.add(change(RowKind::kDelete, "abc"));
  buffer.add(change(RowKind::kInsert, "ABC", 2));
  buffer.add(change(RowKind::kInsert, "x", 3));
  buffer.add(change(RowKind::kDelete, "y"));
  // The delete of 'abc' goes before the upsert of 'ABC', which a
  // case-insensitive table takes for the same key.
  CHECK(describe(buffer, buffer.runs(false)) == "-abc | +ABC +x | -y");
}

TEST_CASE("the buffered changes, saved and added again, give the same runs", "[buffer]") {
  UpsertBuffer buffer(kNames, {0}, true);
  buffer.add(change(RowKind::kInsert, "b", 1));
  buffer.add(change(RowKind::kDelete, "a"));
  buffer.add(change(RowKind::kInsert, "c", 3));
  buffer.add(change(RowKind::kUpdateBefore, "d", 4));
  UpsertBuffer restored(kNames, {0}, true);
  for (const Row& row : buffer.changes()) restored.add(row);
  CHECK(describe(restored, restored.runs(false)) == describe(buffer, buffer.runs(false)));
  CHECK(describe(restored, restored.runs(true)) == "+b | -a | +c | -d");
}

TEST_CASE("keys held back stay buffered, the others are written", "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kInsert, 1, 10));
  buffer.add(change(RowKind::kDelete, 2));
  buffer.add(change(RowKind::kInsert, 3, 30));
  const UpsertBuffer::KeySet locked{encode_key(change(RowKind::kInsert, 3), {0})};
  CHECK(describe(buffer, buffer.runs(false, &locked)) == "+1 | -2");
  const std::vector<Row> taken = buffer.take();
  CHECK(taken.size() == 2);
  CHECK(buffer.size() == 1);
  CHECK(describe(buffer, buffer.runs(false)) == "+3");
}
