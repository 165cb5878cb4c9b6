#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/engine/data/value_codec.hpp"

namespace sluice {

class LazyStateStore;

/// Handles on an operator subtask's state, which the engine keeps in RocksDB
/// and saves at every checkpoint. Get them from the OperatorContext in
/// open(); after a restore they already hold what the checkpoint saved.
/// ValueState<T> and ListState<T> keep `T`s through StateCodec<T>; the raw
/// ones keep bytes. A handle is used from its operator's thread only.

/// How a `T` is kept in state: a column type (see column_type_of) as one
/// encoded value, a std::string as itself, a std::vector<Value> with
/// encode_values(), a Row as its fields and then its kind. Specialise it for
/// a type of your own.
template <typename T>
struct StateCodec {
  static std::string encode(const T& value) { return encode_values({Value::of(value)}); }
  static T decode(std::string_view bytes) { return decode_values(bytes).at(0).template as<T>(); }
};
template <>
struct StateCodec<std::string> {
  static std::string encode(const std::string& value) { return value; }
  static std::string decode(std::string_view bytes) { return std::string(bytes); }
};
template <>
struct StateCodec<std::vector<Value>> {
  static std::string encode(const std::vector<Value>& values) { return encode_values(values); }
  static std::vector<Value> decode(std::string_view bytes) { return decode_values(bytes); }
};
template <>
struct StateCodec<Row> {
  static std::string encode(const Row& row);
  static Row decode(std::string_view bytes);
};

/// One value for the whole subtask (not keyed), as bytes.
class RawValueState {
 public:
  RawValueState(LazyStateStore& store, std::string name);
  std::optional<std::string> get() const;
  void set(std::string_view value);
  void clear();

 private:
  LazyStateStore* store_;
  std::string key_;
};

/// A list for the whole subtask, as bytes.
class RawListState {
 public:
  RawListState(LazyStateStore& store, std::string name);
  std::vector<std::string> get() const;
  void add(std::string_view item);
  void update(const std::vector<std::string>& items);
  void clear();

 private:
  LazyStateStore* store_;
  std::string key_;
};

/// One `T` for the whole subtask (not keyed), e.g. a source's offset.
template <typename T>
class ValueState {
 public:
  explicit ValueState(RawValueState raw) : raw_(std::move(raw)) {}
  std::optional<T> get() const {
    const std::optional<std::string> bytes = raw_.get();
    if (!bytes) return std::nullopt;
    return StateCodec<T>::decode(*bytes);
  }
  void set(const T& value) { raw_.set(StateCodec<T>::encode(value)); }
  void clear() { raw_.clear(); }

 private:
  RawValueState raw_;
};

/// A list of `T`s for the whole subtask, e.g. pending transactions.
template <typename T>
class ListState {
 public:
  explicit ListState(RawListState raw) : raw_(std::move(raw)) {}
  std::vector<T> get() const {
    std::vector<T> items;
    for (const std::string& bytes : raw_.get()) items.push_back(StateCodec<T>::decode(bytes));
    return items;
  }
  void add(const T& item) { raw_.add(StateCodec<T>::encode(item)); }
  void update(const std::vector<T>& items) {
    std::vector<std::string> encoded;
    encoded.reserve(items.size());
    for (const T& item : items) encoded.push_back(StateCodec<T>::encode(item));
    raw_.update(encoded);
  }
  void clear() { raw_.clear(); }

 private:
  RawListState raw_;
};

/// A value per key (a key is the encoded key columns, see encode_key()), as bytes.
class RawKeyedValueState {
 public:
  RawKeyedValueState(LazyStateStore& store, std::string name);
  std::optional<std::string> get(std::string_view key) const;
  void put(std::string_view key, std::string_view value);
  void erase(std::string_view key);

 private:
  std::string key_of(std::string_view key) const;
  LazyStateStore* store_;
  std::string prefix_;
};

/// A map per key, as bytes.
class RawKeyedMapState {
 public:
  RawKeyedMapState(LazyStateStore& store, std::string name);
  std::optional<std::string> get(std::string_view key, std::string_view field) const;
  void put(std::string_view key, std::string_view field, std::string_view value);
  void erase(std::string_view key, std::string_view field);
  /// The key's entries, by field.
  std::vector<std::pair<std::string, std::string>> entries(std::string_view key) const;

 private:
  std::string prefix_of(std::string_view key) const;
  LazyStateStore* store_;
  std::string prefix_;
};

/// Throws the error of keyed state used where no record set a key.
[[noreturn]] void throw_no_current_key();

/// A `T` per key (the encoded key columns, see encode_key()). In an
/// operator whose input is partitioned with key_by, get(), put() and erase()
/// without a key act on the key of the record being processed, as Flink's
/// keyed state does.
template <typename T>
class KeyedValueState {
 public:
  /// `current_key`: the key of the record being processed; null when the
  /// operator's input is not keyed.
  explicit KeyedValueState(RawKeyedValueState raw, const std::string* current_key = nullptr)
      : raw_(std::move(raw)), current_key_(current_key) {}
  std::optional<T> get(std::string_view key) const {
    const std::optional<std::string> bytes = raw_.get(key);
    if (!bytes) return std::nullopt;
    return StateCodec<T>::decode(*bytes);
  }
  void put(std::string_view key, const T& value) { raw_.put(key, StateCodec<T>::encode(value)); }
  void erase(std::string_view key) { raw_.erase(key); }

  std::optional<T> get() const { return get(current_key()); }
  void put(const T& value) { put(current_key(), value); }
  void erase() { erase(current_key()); }

 private:
  const std::string& current_key() const {
    if (current_key_ == nullptr) throw_no_current_key();
    return *current_key_;
  }
  RawKeyedValueState raw_;
  const std::string* current_key_;
};

/// A map per key from field names to `T`s.
template <typename T>
class KeyedMapState {
 public:
  explicit KeyedMapState(RawKeyedMapState raw) : raw_(std::move(raw)) {}
  std::optional<T> get(std::string_view key, std::string_view field) const {
    const std::optional<std::string> bytes = raw_.get(key, field);
    if (!bytes) return std::nullopt;
    return StateCodec<T>::decode(*bytes);
  }
  void put(std::string_view key, std::string_view field, const T& value) {
    raw_.put(key, field, StateCodec<T>::encode(value));
  }
  void erase(std::string_view key, std::string_view field) { raw_.erase(key, field); }
  /// The key's entries, by field.
  std::vector<std::pair<std::string, T>> entries(std::string_view key) const {
    std::vector<std::pair<std::string, T>> out;
    for (auto& [field, bytes] : raw_.entries(key)) {
      out.emplace_back(std::move(field), StateCodec<T>::decode(bytes));
    }
    return out;
  }

 private:
  RawKeyedMapState raw_;
};

}  // namespace sluice
