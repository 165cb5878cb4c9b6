#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class StateStore;

/// An operator subtask's state store, opened when first needed: an operator
/// that never writes state and has none to restore never opens RocksDB.
class LazyStateStore {
 public:
  using Opener = std::function<std::unique_ptr<StateStore>()>;
  /// `saved`: whether there is restored state to open.
  LazyStateStore(bool saved, Opener opener);
  ~LazyStateStore();

  /// The store, or null when nothing was restored or written yet.
  StateStore* for_read();
  StateStore& for_write();
  /// The store if it is open, without opening it.
  StateStore* if_open() const { return store_.get(); }

 private:
  bool saved_;
  Opener opener_;
  std::unique_ptr<StateStore> store_;
};

/// Handles on an operator subtask's state, which the engine keeps in RocksDB
/// and saves at every checkpoint. Get them from the OperatorContext in
/// open(); after a restore they already hold what the checkpoint saved.
/// Values are bytes: encode rows with encode_values() (value_codec.hpp).
/// A handle is used from its operator's thread only.

/// One value for the whole subtask (not keyed), e.g. a source's offset.
class ValueState {
 public:
  ValueState(LazyStateStore& store, std::string name);
  std::optional<std::string> get() const;
  void set(std::string_view value);
  void clear();

 private:
  LazyStateStore* store_;
  std::string key_;
};

/// A list for the whole subtask, e.g. pending transaction ids.
class ListState {
 public:
  ListState(LazyStateStore& store, std::string name);
  std::vector<std::string> get() const;
  void add(std::string_view item);
  void update(const std::vector<std::string>& items);
  void clear();

 private:
  LazyStateStore* store_;
  std::string key_;
};

/// A value per key (a key is the encoded key columns, see encode_key()).
class KeyedValueState {
 public:
  KeyedValueState(LazyStateStore& store, std::string name);
  std::optional<std::string> get(std::string_view key) const;
  void put(std::string_view key, std::string_view value);
  void erase(std::string_view key);

 private:
  std::string key_of(std::string_view key) const;
  LazyStateStore* store_;
  std::string prefix_;
};

/// A map per key.
class KeyedMapState {
 public:
  KeyedMapState(LazyStateStore& store, std::string name);
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

}  // namespace sluice
