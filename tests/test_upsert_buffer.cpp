#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <random>

#include "sluice/connectors/mysql/sink/upsert_buffer.hpp"
#include "sluice/engine/data/value_codec.hpp"
#include "sluice/tests/unique_changes.hpp"

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

TEST_CASE("a key index finds every key given it, the number given last, after growing and clear",
          "[buffer]") {
  std::vector<std::string> keys;  // number i is keys[i]
  const auto key_of = [&](uint32_t number) { return std::string_view(keys[number]); };
  KeyIndex index;
  std::map<std::string, uint32_t> want;
  std::mt19937 random(7);
  for (uint32_t i = 0; i < 5000; ++i) {
    // Short and long keys, some given again, and the empty one.
    const std::string key =
        i % 97 == 0 ? "" : std::to_string(random() % 3000) + std::string(i % 3 * 9, 'k');
    keys.push_back(key);
    index.insert_or_assign(key, KeyIndex::hash(key), i, key_of);
    want[key] = i;
  }
  CHECK(index.size() == want.size());
  for (const auto& [key, number] : want) {
    INFO(key);
    const uint32_t* found = index.find(key, KeyIndex::hash(key), key_of);
    REQUIRE(found != nullptr);
    CHECK(*found == number);
  }
  CHECK(index.find("absent", KeyIndex::hash("absent"), key_of) == nullptr);
  index.clear();
  CHECK(index.size() == 0);
  CHECK(index.find(want.begin()->first, KeyIndex::hash(want.begin()->first), key_of) == nullptr);
  index.insert_or_assign(keys.front(), KeyIndex::hash(keys.front()), 0, key_of);
  CHECK(*index.find(keys.front(), KeyIndex::hash(keys.front()), key_of) == 0);
}

TEST_CASE("a key index tells keys of equal hashes apart by their bytes", "[buffer]") {
  const std::vector<std::string> keys = {"a", "b", "ab", "ba", ""};
  const auto key_of = [&](uint32_t number) { return std::string_view(keys[number]); };
  KeyIndex index;
  for (uint32_t i = 0; i < keys.size(); ++i) index.insert_or_assign(keys[i], 42, i, key_of);
  for (uint32_t i = 0; i < keys.size(); ++i) {
    INFO(keys[i]);
    REQUIRE(index.find(keys[i], 42, key_of) != nullptr);
    CHECK(*index.find(keys[i], 42, key_of) == i);
  }
  CHECK(index.find("c", 42, key_of) == nullptr);
}

TEST_CASE("the buffer keeps the last change of each key", "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kInsert, 1, 10));
  buffer.add(change(RowKind::kInsert, 2, 20));
  buffer.add(change(RowKind::kDelete, 1));
  buffer.add(change(RowKind::kInsert, 3, 30));
  buffer.add(change(RowKind::kDelete, 3));
  buffer.add(change(RowKind::kInsert, 3, 31));
  const auto runs = buffer.runs(false);
  // Numeric keys: all deletes, then all upserts, two statements at most.
  CHECK(describe(buffer, runs) == "-1 | +2 +3");
  CHECK(runs[1].rows.size() == 2);
  CHECK(buffer.size() == 3);
}

TEST_CASE("an update is one upsert; an update that changed the key deletes the old one",
          "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kUpdateBefore, 1, 10));
  buffer.add(change(RowKind::kUpdateAfter, 1, 11));
  buffer.add(change(RowKind::kUpdateBefore, 2, 20));
  buffer.add(change(RowKind::kUpdateAfter, 7, 20));
  CHECK(describe(buffer, buffer.runs(false)) == "-2 | +1 +7");
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
  CHECK(describe(buffer, buffer.runs(false, &locked)) == "-2 | +1");
  const std::vector<Row> taken = buffer.take();
  CHECK(taken.size() == 2);
  CHECK(buffer.size() == 1);
  CHECK(describe(buffer, buffer.runs(false)) == "+3");
}

TEST_CASE("a flush's rows are handed over where runs() numbered them; what stays is kept",
          "[buffer]") {
  UpsertBuffer buffer(kNumbers, {0}, false);
  buffer.add(change(RowKind::kInsert, 1, 10));
  buffer.add(change(RowKind::kInsert, 2, 20));
  buffer.add(change(RowKind::kUpdateAfter, 1, 11));
  buffer.add(change(RowKind::kInsert, 3, 30));
  buffer.add(change(RowKind::kUpdateBefore, 4, 40));  // held for its +U
  const UpsertBuffer::KeySet locked{encode_key(change(RowKind::kInsert, 3), {0})};
  const std::vector<UpsertBuffer::Run> runs = buffer.runs(false, &locked);
  REQUIRE(describe(buffer, runs) == "+1 +2");
  Batch spare(kNumbers);
  spare.append(change(RowKind::kInsert, 99, 99));  // a spare's rows are gone
  const Batch written = buffer.hand_over(std::move(spare));
  std::vector<std::string> values;
  for (uint32_t row : runs.at(0).rows) {
    values.push_back(written.column(0).value(row).to_string() + "=" +
                     written.column(1).value(row).to_string());
  }
  std::sort(values.begin(), values.end());
  CHECK(values == std::vector<std::string>{"1=11", "2=20"});
  // Key 3 and the held -U stay, and their rows with them.
  CHECK(buffer.rows().size() == 2);
  buffer.add(change(RowKind::kUpdateAfter, 4, 41));
  CHECK(describe(buffer, buffer.runs(false)) == "+3 +4");
  CHECK(buffer.rows().column(1).value(buffer.runs(false).at(0).rows.at(1)).to_string() == "41");
  buffer.clear();
  CHECK(buffer.empty());
  CHECK(buffer.hand_over(Batch(kNumbers)).size() == 0);
}

namespace {

using testing::UniqueEmailChanges;

// Applies the runs the buffer gives to `target`, checking that no upsert
// meets another row's email (it would update that row instead, or fail).
void write(const UniqueEmailChanges& changes, UpsertBuffer& buffer,
           const std::vector<UpsertBuffer::Run>& runs, UniqueEmailChanges::Table& target) {
  for (const auto& run : runs) {
    for (uint32_t r : run.rows) {
      const Row row = buffer.rows().row(r);
      const std::string id = row.fields[0].to_string();
      if (run.deletes) {
        target.erase(id);
        continue;
      }
      const UniqueEmailChanges::Person person{row.fields[1].as<std::string>(),
                                              row.fields[2].as<int64_t>()};
      INFO("upsert of " << id << " " << person.email);
      REQUIRE(changes.free(target, person.email, id));
      target[id] = person;
    }
  }
}

}  // namespace

TEST_CASE("with another unique key, every flush leaves the table as its changes applied in order",
          "[buffer]") {
  UniqueEmailChanges::Options options;
  options.case_insensitive = GENERATE(false, true);
  options.text_keys = GENERATE(false, true);
  options.lone_updates = GENERATE(false, true);
  INFO("case-insensitive " << options.case_insensitive << ", text keys " << options.text_keys
                           << ", lone +U " << options.lone_updates);
  options.emails = options.case_insensitive
                       ? std::vector<std::string>{"a", "A", "b", "B", "c", "C", "d"}
                       : std::vector<std::string>{"a", "b", "c", "d", "e"};
  const Schema schema = UniqueEmailChanges::schema(options.text_keys);
  UpsertBuffer::UniqueKey email{{1}, {}};
  if (options.case_insensitive) {
    email.images.push_back([](std::string_view v) {
      std::string out(v);
      for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return out;
    });
  }
  const auto fresh = [&] { return UpsertBuffer(schema, {0}, options.text_keys, {email}); };

  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    INFO("seed " << seed);
    UniqueEmailChanges changes(options, seed);
    std::mt19937_64 random(seed);
    const auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
    UniqueEmailChanges::Table target;
    UpsertBuffer buffer = fresh();
    for (int step = 0; step < 60; ++step) {
      for (const Row& change : changes.next()) buffer.add(change);
      switch (pick(6)) {
        case 0: {  // a flush, at a barrier or not
          write(changes, buffer, buffer.runs(pick(3) == 0), target);
          buffer.clear();
          break;
        }
        case 1: {  // a flush into a transaction, some keys locked
          // (With keep_order the sink writes nothing while keys are locked.)
          UpsertBuffer::KeySet locked;
          for (int i = 0; i < options.keys && !options.text_keys; ++i) {
            if (pick(5) == 0) locked.insert(encode_key(Row(RowKind::kInsert, {i}), {0}));
          }
          UniqueEmailChanges::Table written = target;
          write(changes, buffer, buffer.runs(false, options.text_keys ? nullptr : &locked),
                written);
          std::vector<Row> taken = buffer.take();
          if (pick(2) == 0) {
            target = std::move(written);  // committed
          } else {
            // Rolled back: its changes go in again ahead of the buffer's.
            UpsertBuffer again = fresh();
            for (const Row& row : taken) again.add(row);
            for (const Row& row : buffer.changes()) again.add(row);
            buffer = std::move(again);
          }
          break;
        }
        case 2: {  // a checkpoint's state restored into a new buffer
          UpsertBuffer restored = fresh();
          for (const Row& row : buffer.changes()) restored.add(row);
          buffer = std::move(restored);
          break;
        }
        default:
          break;
      }
    }
    write(changes, buffer, buffer.runs(true), target);
    buffer.clear();
    REQUIRE(buffer.empty());
    CHECK(target == changes.table());
  }
}

TEST_CASE("another unique key orders the writes, and only when a change needs it", "[buffer]") {
  const auto person = [](RowKind kind, int64_t id, const char* email) {
    return Row(kind, {id, email, int64_t{0}});
  };
  // The runs in their order, keys in the order written.
  const auto written = [](const UpsertBuffer& buffer, const std::vector<UpsertBuffer::Run>& runs) {
    std::string out;
    for (const auto& run : runs) {
      if (!out.empty()) out += " |";
      for (uint32_t row : run.rows) {
        out += run.deletes ? " -" : " +";
        out += buffer.rows().column(0).value(row).to_string();
      }
    }
    return out;
  };
  const Schema people = UniqueEmailChanges::schema(false);
  UpsertBuffer buffer(people, {0}, false, {{{1}, {}}});
  SECTION("a key change that keeps the email deletes the old key first") {
    buffer.add(person(RowKind::kUpdateBefore, 1, "a"));
    buffer.add(person(RowKind::kUpdateAfter, 5, "a"));
    buffer.add(person(RowKind::kDelete, 2, "b"));
    buffer.add(person(RowKind::kInsert, 6, "b"));
    CHECK(written(buffer, buffer.runs(false)) == " -1 -2 | +5 +6");
  }
  SECTION("two rows swapping their emails through a third: one generation per step") {
    buffer.add(person(RowKind::kUpdateBefore, 1, "a"));
    buffer.add(person(RowKind::kUpdateAfter, 1, "parked"));
    buffer.add(person(RowKind::kUpdateBefore, 2, "b"));
    buffer.add(person(RowKind::kUpdateAfter, 2, "a"));
    buffer.add(person(RowKind::kUpdateBefore, 1, "parked"));
    buffer.add(person(RowKind::kUpdateAfter, 1, "b"));
    // Upserts of one statement go in order: 1 parked, 2 takes a, 1 takes b.
    CHECK(written(buffer, buffer.runs(false)) == " +1 +2 +1");
  }
  SECTION("changes that meet no other row's email stay in two runs") {
    for (int64_t id = 0; id < 50; ++id) {
      std::string from = std::to_string(id), to = from;
      from.insert(from.begin(), 'x');
      to.insert(to.begin(), 'y');
      buffer.add(person(RowKind::kUpdateBefore, id, from.c_str()));
      buffer.add(person(RowKind::kUpdateAfter, id, to.c_str()));
      if (id % 7 == 0) buffer.add(person(RowKind::kDelete, id + 100, "z"));
    }
    const auto runs = buffer.runs(false);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].rows.size() == 8);
    CHECK(runs[1].rows.size() == 50);
  }
  SECTION("NULL emails never meet") {
    buffer.add(Row(RowKind::kUpdateBefore, {int64_t{1}, Value(), int64_t{0}}));
    buffer.add(Row(RowKind::kUpdateAfter, {int64_t{1}, "a", int64_t{0}}));
    buffer.add(Row(RowKind::kInsert, {int64_t{2}, Value(), int64_t{0}}));
    CHECK(written(buffer, buffer.runs(false)) == " +1 +2");
  }
  SECTION("a lone +U could hold any email: the next key's upsert waits for it") {
    buffer.add(person(RowKind::kUpdateAfter, 1, "b"));
    buffer.add(person(RowKind::kInsert, 2, "a"));
    buffer.add(person(RowKind::kDelete, 3, "c"));
    const auto runs = buffer.runs(false);
    CHECK(written(buffer, runs) == " +1 | -3 | +2");
  }
}
