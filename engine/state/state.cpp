#include "sluice/engine/state/state.hpp"

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/value_codec.hpp"
#include "sluice/engine/state/lazy_state_store.hpp"
#include "sluice/engine/state/state_store.hpp"

namespace sluice {
namespace {

// Every kind of state has its own first byte, so that names never collide
// across kinds; a name ends at a NUL byte.
std::string state_key(char kind, const std::string& name) {
  std::string key(1, kind);
  key += name;
  key.push_back('\0');
  return key;
}

std::optional<std::string> read(LazyStateStore& lazy, std::string_view key) {
  StateStore* store = lazy.for_read();
  return store ? store->get(key) : std::nullopt;
}

void erase(LazyStateStore& lazy, std::string_view key) {
  if (StateStore* store = lazy.for_read()) store->erase(key);
}

}  // namespace

std::string StateCodec<Row>::encode(const Row& row) {
  std::string out;
  encode_values(row.fields, out);
  encode_values({Value(static_cast<int64_t>(row.kind))}, out);
  return out;
}

Row StateCodec<Row>::decode(std::string_view bytes) {
  std::vector<Value> values = decode_values(bytes);
  if (values.empty()) throw DataError("a Row in state without its kind");
  const auto kind = static_cast<RowKind>(values.back().as_bigint());
  values.pop_back();
  return Row(kind, std::move(values));
}

void throw_no_current_key() {
  throw ConfigError(
      "keyed state used without a key: the operator's input must be partitioned with key_by");
}

LazyStateStore::LazyStateStore(bool saved, Opener opener)
    : saved_(saved), opener_(std::move(opener)) {}

LazyStateStore::~LazyStateStore() = default;

StateStore* LazyStateStore::for_read() {
  if (!store_ && saved_) store_ = opener_();
  return store_.get();
}

StateStore& LazyStateStore::for_write() {
  if (!store_) store_ = opener_();
  return *store_;
}

RawValueState::RawValueState(LazyStateStore& store, std::string name)
    : store_(&store), key_(state_key('v', name)) {}
std::optional<std::string> RawValueState::get() const { return read(*store_, key_); }
void RawValueState::set(std::string_view value) { store_->for_write().put(key_, value); }
void RawValueState::clear() { erase(*store_, key_); }

RawListState::RawListState(LazyStateStore& store, std::string name)
    : store_(&store), key_(state_key('l', name)) {}

std::vector<std::string> RawListState::get() const {
  std::vector<std::string> items;
  if (const auto bytes = read(*store_, key_)) {
    for (const Value& item : decode_values(*bytes)) items.push_back(item.as_string());
  }
  return items;
}

void RawListState::add(std::string_view item) {
  std::vector<std::string> items = get();
  items.emplace_back(item);
  update(items);
}

void RawListState::update(const std::vector<std::string>& items) {
  std::vector<Value> values(items.begin(), items.end());
  store_->for_write().put(key_, encode_values(values));
}

void RawListState::clear() { erase(*store_, key_); }

RawKeyedValueState::RawKeyedValueState(LazyStateStore& store, std::string name)
    : store_(&store), prefix_(state_key('k', name)) {}
std::string RawKeyedValueState::key_of(std::string_view key) const {
  return prefix_ + std::string(key);
}
std::optional<std::string> RawKeyedValueState::get(std::string_view key) const {
  return read(*store_, key_of(key));
}
void RawKeyedValueState::put(std::string_view key, std::string_view value) {
  store_->for_write().put(key_of(key), value);
}
void RawKeyedValueState::erase(std::string_view key) { sluice::erase(*store_, key_of(key)); }

RawKeyedMapState::RawKeyedMapState(LazyStateStore& store, std::string name)
    : store_(&store), prefix_(state_key('m', name)) {}

// The key's length goes first, so that one key's prefix is never a prefix of
// another key's entries.
std::string RawKeyedMapState::prefix_of(std::string_view key) const {
  std::string out = prefix_;
  out += encode_values({Value(static_cast<int64_t>(key.size()))});
  out += key;
  return out;
}

std::optional<std::string> RawKeyedMapState::get(std::string_view key,
                                                 std::string_view field) const {
  return read(*store_, prefix_of(key) + std::string(field));
}

void RawKeyedMapState::put(std::string_view key, std::string_view field, std::string_view value) {
  store_->for_write().put(prefix_of(key) + std::string(field), value);
}

void RawKeyedMapState::erase(std::string_view key, std::string_view field) {
  sluice::erase(*store_, prefix_of(key) + std::string(field));
}

std::vector<std::pair<std::string, std::string>> RawKeyedMapState::entries(
    std::string_view key) const {
  const std::string prefix = prefix_of(key);
  std::vector<std::pair<std::string, std::string>> out;
  if (StateStore* store = store_->for_read()) {
    store->scan(prefix, [&](std::string_view k, std::string_view v) {
      out.emplace_back(std::string(k.substr(prefix.size())), std::string(v));
    });
  }
  return out;
}

}  // namespace sluice
