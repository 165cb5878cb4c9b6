#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/value_codec.hpp"
#include "sluice/engine/state/lazy_state_store.hpp"
#include "sluice/engine/state/state.hpp"
#include "sluice/engine/state/state_store.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
namespace fs = std::filesystem;

namespace {

LazyStateStore lazy_store(const fs::path& work, std::optional<fs::path> restore = std::nullopt) {
  const bool saved = restore.has_value();
  return LazyStateStore(saved, [work, restore] { return StateStore::open(work, restore); });
}

}  // namespace

TEST_CASE("values round-trip through the binary codec", "[state]") {
  const std::vector<Value> values = {Value(),
                                     Value(int64_t{-7}),
                                     Value(2.5),
                                     Value(Decimal(-12345, 2)),
                                     Value("text with \\0 and ünïcode"),
                                     Value::boolean(true),
                                     Value::boolean(false),
                                     Value(Timestamp{1'700'000'000'123'456}),
                                     Value(Timestamp::zero()),
                                     Value(Date{-719'528}),
                                     Value(Date::zero()),
                                     Value(Time{-3'020'399'999'999}),
                                     Value::bytes(std::string("\0\xff", 2)),
                                     Value(Decimal::parse("-" + std::string(65, '9'), 65, 0)),
                                     Value(Decimal::parse("1" + std::string(40, '0'), 65, 20))};
  CHECK(decode_values(encode_values(values)) == values);
  CHECK_THROWS_AS(decode_values(std::string("\x01\x02", 2)), DataError);
}

TEST_CASE("state of every kind survives a snapshot and a restore", "[state]") {
  testing::TempDir dir;
  auto store = lazy_store(dir.path() / "work");
  CHECK(store.if_open() == nullptr);
  RawValueState offset(store, "offset");
  CHECK_FALSE(offset.get());
  CHECK(store.if_open() == nullptr);  // reading nothing opens nothing
  offset.set("42");
  RawListState xids(store, "xids");
  xids.add("a");
  xids.add("b");
  RawKeyedValueState counts(store, "counts");
  counts.put("k1", "1");
  counts.put("k2", "2");
  counts.erase("k2");
  RawKeyedMapState items(store, "items");
  items.put("k", "x", "1");
  items.put("k", "y", "2");
  items.put("kk", "x", "3");  // a key that extends "k" must not leak into k's entries

  const uint64_t bytes = store.for_write().snapshot(dir.path() / "chk-1" / "op-0").get();
  CHECK(bytes > 0);
  offset.set("99");  // after the snapshot: must not come back

  auto restored = lazy_store(dir.path() / "work2", dir.path() / "chk-1" / "op-0");
  CHECK(RawValueState(restored, "offset").get() == "42");
  CHECK(RawListState(restored, "xids").get() == std::vector<std::string>{"a", "b"});
  CHECK(RawKeyedValueState(restored, "counts").get("k1") == "1");
  CHECK_FALSE(RawKeyedValueState(restored, "counts").get("k2"));
  using Entries = std::vector<std::pair<std::string, std::string>>;
  CHECK(RawKeyedMapState(restored, "items").entries("k") == Entries{{"x", "1"}, {"y", "2"}});
  CHECK(RawKeyedMapState(restored, "items").get("kk", "x") == "3");
  // Different kinds of state with the same name do not collide.
  CHECK_FALSE(RawKeyedValueState(restored, "offset").get(""));
}

TEST_CASE("typed state keeps values, rows and lists through their codecs", "[state]") {
  testing::TempDir dir;
  auto store = lazy_store(dir.path() / "work");
  ValueState<int64_t> offset(RawValueState(store, "offset"));
  ValueState<Decimal> total(RawValueState(store, "total"));
  ValueState<bool> done(RawValueState(store, "done"));
  ValueState<Row> last(RawValueState(store, "last"));
  ListState<std::vector<Value>> pending(RawListState(store, "pending"));
  KeyedValueState<Decimal> per_key(RawKeyedValueState(store, "per-key"));
  KeyedMapState<int64_t> fields(RawKeyedMapState(store, "fields"));
  CHECK_FALSE(offset.get());
  per_key.put("a", Decimal(150, 2));
  per_key.put("b", Decimal(1, 0));
  per_key.erase("b");
  fields.put("a", "x", 1);
  fields.put("a", "y", 2);
  offset.set(-7);
  total.set(Decimal::parse("12.30", 10, 2));
  done.set(true);
  const Row row(RowKind::kUpdateBefore, {1, "x", Value()});
  last.set(row);
  pending.add({Value(1), Value("a")});
  pending.add({Value(2), Value()});
  store.for_write().snapshot(dir.path() / "chk-1" / "op-0").get();

  auto restored = lazy_store(dir.path() / "work2", dir.path() / "chk-1" / "op-0");
  CHECK(ValueState<int64_t>(RawValueState(restored, "offset")).get() == -7);
  CHECK(ValueState<Decimal>(RawValueState(restored, "total")).get() ==
        Decimal::parse("12.30", 10, 2));
  CHECK(ValueState<bool>(RawValueState(restored, "done")).get() == true);
  CHECK(ValueState<Row>(RawValueState(restored, "last")).get() == row);
  CHECK(KeyedValueState<Decimal>(RawKeyedValueState(restored, "per-key")).get("a") ==
        Decimal(150, 2));
  CHECK_FALSE(KeyedValueState<Decimal>(RawKeyedValueState(restored, "per-key")).get("b"));
  CHECK(KeyedMapState<int64_t>(RawKeyedMapState(restored, "fields")).entries("a") ==
        std::vector<std::pair<std::string, int64_t>>{{"x", 1}, {"y", 2}});
  CHECK(ListState<std::vector<Value>>(RawListState(restored, "pending")).get() ==
        std::vector<std::vector<Value>>{{Value(1), Value("a")}, {Value(2), Value()}});
  // A value is one encoded Value: what encode_values() wrote before reads back.
  CHECK(RawValueState(restored, "offset").get() == encode_values({Value(-7)}));
  // Read as another type, it says what it holds.
  CHECK_THROWS_WITH(ValueState<int64_t>(RawValueState(restored, "total")).get(),
                    Catch::Contains("expected a BIGINT value, got DECIMAL 12.30"));
}

TEST_CASE("checkpoint metadata commits atomically and pruning keeps the newest", "[state]") {
  testing::TempDir dir;
  const CheckpointStorage storage(dir.path(), "job/with:odd name");
  for (int64_t id = 1; id <= 4; ++id) {
    fs::create_directories(storage.subtask_dir(id, "op", 0));
    if (id == 3) continue;  // an aborted one: no metadata
    storage.commit({.id = id, .job = "job", .parallelism = {{"op", 1}}, .states = {{"op", 0, 10}}});
  }
  fs::create_directories(storage.checkpoint_dir(5));  // in the making
  CHECK(storage.completed() == std::vector<int64_t>{1, 2, 4});
  CHECK(storage.latest() == 4);
  CHECK(storage.highest_id() == 5);
  CHECK(storage.read(2).states.at(0).bytes == 10);
  CHECK_THROWS_WITH(storage.read(3), Catch::Contains("checkpoint 3 is not complete"));

  storage.prune(2);
  CHECK(storage.completed() == std::vector<int64_t>{2, 4});
  CHECK_FALSE(fs::exists(storage.checkpoint_dir(1)));
  CHECK_FALSE(fs::exists(storage.checkpoint_dir(3)));  // aborted and older than 4
  CHECK(fs::exists(storage.checkpoint_dir(5)));        // newer: may still be written

  CHECK(storage.resumable() == 4);
  storage.mark_finished(4);
  CHECK_FALSE(storage.resumable());
}

TEST_CASE("after a failed write a state store fails every later call, never the process",
          "[state]") {
  testing::TempDir dir;
  auto store = StateStore::open(dir.path() / "work", std::nullopt);
  // 64 KiB that no file may hold: every write past 16 KiB fails with EFBIG,
  // as a full disk fails with ENOSPC.
  store->put("key", std::string(64 << 10, 'x'));
  struct rlimit saved;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 16 << 10;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string first, second;
  try {
    store->snapshot(dir.path() / "chk-1").get();
  } catch (const Error& e) {
    first = e.what();
  }
  // RocksDB 7.8 aborts the process if its failed files are written again
  // (its info log among them): the store must not reach them.
  store->put("other", "value");
  try {
    store->snapshot(dir.path() / "chk-2").get();
  } catch (const Error& e) {
    second = e.what();
  }
  std::string on_read;
  try {
    (void)store->get("not cached");
  } catch (const Error& e) {
    on_read = e.what();
  }
  store.reset();
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);
  CHECK_THAT(first, Catch::Contains("File too large") && Catch::Contains(dir.path().string()));
  CHECK_THAT(second, Catch::Contains("File too large"));
  CHECK_THAT(on_read, Catch::Contains("stopped at this error"));
}
