#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rocksdb {
class DB;
}

namespace sluice {

/// The state of one operator subtask: its own RocksDB, used from the
/// subtask's thread only. Writes skip RocksDB's write-ahead log: what makes
/// state durable is the snapshot taken at each checkpoint, and a restore
/// always starts from one. Errors throw sluice::Error with RocksDB's message.
///
/// In front of RocksDB sits a cache of recently used entries. Writes stay in
/// it until a snapshot (or until it outgrows its budget) and then go to
/// RocksDB in one batch, so a key updated by every record costs RocksDB one
/// write per checkpoint rather than a read and a write per record.
///
/// A snapshot has two parts: at the barrier, on the operator's thread, it
/// takes the writes since the previous one out of the cache (they stay there,
/// readable, as clean entries); then, on a thread of its own, it writes them
/// into a table file that RocksDB ingests, and has RocksDB save the snapshot. Meanwhile the
/// operator goes on; RocksDB itself is written by nothing else until that is done.
class StateStore {
 public:
  /// Opens a fresh working database at `path` (anything there is removed).
  /// With `restore_from`, it starts as a copy of that snapshot: immutable SST
  /// files are hard-linked, the few others copied.
  static std::unique_ptr<StateStore> open(const std::filesystem::path& path,
                                          const std::optional<std::filesystem::path>& restore_from);
  /// Opens a snapshot read-only, to check that it loads.
  static std::unique_ptr<StateStore> open_read_only(const std::filesystem::path& path);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  /// The value of `key`; remembers it in the cache.
  std::optional<std::string> get(std::string_view key);
  void put(std::string_view key, std::string_view value);
  void erase(std::string_view key);
  /// Calls `fn` for every entry whose key starts with `prefix`, in key order.
  void scan(std::string_view prefix,
            const std::function<void(std::string_view key, std::string_view value)>& fn);

  /// Starts saving the current state in `dir`, which must not exist, with
  /// RocksDB's Checkpoint (SST files hard-linked, not copied), synced. The
  /// future gives the bytes the snapshot holds, or throws what went wrong.
  std::shared_future<uint64_t> snapshot(const std::filesystem::path& dir);

 private:
  struct Cached {
    std::optional<std::string> value;  // nullopt: erased
    bool dirty = false;
  };
  using CacheEntry = std::pair<const std::string, Cached>;
  // Changed entries copied out of the cache into one buffer: no allocation
  // per entry at the barrier, and the thread that writes a snapshot neither
  // reads the cache nor frees memory entry by entry (which would contend
  // with the task's own allocations).
  struct Changes {
    struct Change {
      size_t key = 0;
      size_t key_size = 0;
      size_t value = 0;
      size_t value_size = 0;
      bool erased = false;
    };
    std::string bytes;  // keys and values, back to back
    std::vector<Change> changes;

    std::string_view key(const Change& c) const { return {bytes.data() + c.key, c.key_size}; }
    std::string_view value(const Change& c) const { return {bytes.data() + c.value, c.value_size}; }
  };

  explicit StateStore(rocksdb::DB* db, std::filesystem::path path);
  /// Sets the cached value of `key` (nullopt: erased); `dirty`: a write.
  Cached& cache(std::string_view key, std::optional<std::string_view> value, bool dirty);
  /// Copies the dirty entries, unsorted, and marks them clean.
  Changes take_dirty();
  /// Writes the dirty entries to RocksDB now (after any snapshot in progress).
  void write_back();
  /// Waits for the snapshot in progress, if any; rethrows its error.
  void wait_for_snapshot();
  /// Runs `f`, which reaches RocksDB. After a first failure the store is
  /// broken: every later call throws that error again without reaching
  /// RocksDB, whose files must not be written after an I/O error.
  template <typename F>
  auto reach_db(F&& f) -> decltype(f());

  std::unique_ptr<rocksdb::DB> db_;
  std::filesystem::path path_;
  std::unordered_map<std::string, Cached> cache_;
  std::vector<CacheEntry*> dirty_;  // nodes of cache_ never move
  size_t cache_bytes_ = 0;
  std::shared_future<uint64_t> snapshot_in_progress_;
  std::atomic<bool> broken_{false};
  std::mutex broken_mutex_;
  std::string broken_error_;  // the first failure
};

/// Syncs a file or a directory to disk; throws sluice::Error on failure.
void sync_path(const std::filesystem::path& path);

}  // namespace sluice
