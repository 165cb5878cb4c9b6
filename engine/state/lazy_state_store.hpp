#pragma once

#include <functional>
#include <memory>

namespace sluice {

class StateStore;

/// An operator subtask's state store, opened when first needed (internal:
/// the handles of state.hpp keep a pointer to it): an operator
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

}  // namespace sluice
