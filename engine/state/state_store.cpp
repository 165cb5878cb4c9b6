#include "sluice/engine/state/state_store.hpp"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "sluice/engine/common/error.hpp"

namespace fs = std::filesystem;

namespace sluice {
namespace {

void check(const rocksdb::Status& status, const std::string& what) {
  if (!status.ok()) throw Error("state: " + what + ": " + status.ToString());
}

// What the cache in front of RocksDB may hold before it writes back and
// starts over.
constexpr size_t kCacheBudget = 64 << 20;
// Roughly what an unordered_map entry costs beyond its key and value.
constexpr size_t kEntryOverhead = 64;

// RocksDB's own log goes to spdlog's debug level rather than to a LOG file
// beside the data: that file fills a full disk too, and RocksDB 7.8 asserts
// when it writes to its log again after a failed write. Every error that
// matters comes back as a Status, and is reported from there.
class SpdlogLogger final : public rocksdb::Logger {
 public:
  SpdlogLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::ERROR_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::ERROR_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || !spdlog::should_log(spdlog::level::debug)) return;
    char text[1024];
    std::vsnprintf(text, sizeof text, format, ap);
    spdlog::debug("rocksdb: {}", text);
  }
};

rocksdb::Options store_options() {
  static const auto logger = std::make_shared<SpdlogLogger>();
  rocksdb::Options options;
  options.create_if_missing = true;
  options.info_log = logger;
  // What is in the memtable at close is lost on purpose: a store is only
  // ever restored from a snapshot, so flushing it would be wasted writes.
  options.avoid_flush_during_shutdown = true;
  // Many subtasks may each hold a store: keep the memtables modest.
  options.write_buffer_size = 16 << 20;
  // Reads of absent keys (a new key of an aggregate) skip files by bloom filter.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // State is rewritten at every checkpoint: spend no CPU compressing it.
  options.compression = rocksdb::kNoCompression;
  return options;
}

rocksdb::WriteOptions no_wal() {
  rocksdb::WriteOptions options;
  options.disableWAL = true;
  return options;
}

bool is_sst(const fs::path& file) {
  return file.extension() == ".sst" || file.extension() == ".blob";
}

rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

// Writes `changes`, sorted first, straight into a table file and has RocksDB
// take the file over: for a snapshot's many entries this costs a fraction of
// inserting them into the memtable and flushing it.
template <typename Changes>
void ingest(rocksdb::DB& db, Changes& changes, const fs::path& file) {
  if (changes.changes.empty()) return;
  std::sort(changes.changes.begin(), changes.changes.end(),
            [&](const auto& a, const auto& b) { return changes.key(a) < changes.key(b); });
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), store_options());
  check(writer.Open(file.string()), "creating " + file.string());
  for (const auto& c : changes.changes) {
    const rocksdb::Slice key = slice(changes.key(c));
    check(c.erased ? writer.Delete(key) : writer.Put(key, slice(changes.value(c))),
          "writing " + file.string());
  }
  check(writer.Finish(), "finishing " + file.string());
  rocksdb::IngestExternalFileOptions options;
  options.move_files = true;
  check(db.IngestExternalFile({file.string()}, options), "ingesting " + file.string());
}

}  // namespace

void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path.string() + " to sync it");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw Error("cannot sync " + path.string());
}

StateStore::StateStore(rocksdb::DB* db, fs::path path) : db_(db), path_(std::move(path)) {}

template <typename F>
auto StateStore::reach_db(F&& f) -> decltype(f()) {
  if (broken_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    throw Error(broken_error_ + " (the state store stopped at this error)");
  }
  try {
    return f();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    if (broken_error_.empty()) broken_error_ = e.what();
    broken_.store(true, std::memory_order_release);
    throw;
  }
}

StateStore::~StateStore() {
  try {
    wait_for_snapshot();
  } catch (const std::exception&) {
    // The checkpoint that needed it has failed the job already.
  }
}

std::unique_ptr<StateStore> StateStore::open(const fs::path& path,
                                             const std::optional<fs::path>& restore_from) {
  fs::remove_all(path);
  fs::create_directories(path.parent_path());
  if (restore_from) {
    fs::create_directory(path);
    for (const auto& entry : fs::directory_iterator(*restore_from)) {
      const fs::path target = path / entry.path().filename();
      if (is_sst(entry.path())) {
        fs::create_hard_link(entry.path(), target);
      } else {
        fs::copy_file(entry.path(), target);
      }
    }
  }
  rocksdb::DB* db = nullptr;
  check(rocksdb::DB::Open(store_options(), path.string(), &db), "opening " + path.string());
  return std::unique_ptr<StateStore>(new StateStore(db, path));
}

std::unique_ptr<StateStore> StateStore::open_read_only(const fs::path& path) {
  rocksdb::DB* db = nullptr;
  rocksdb::Options options = store_options();
  options.create_if_missing = false;
  check(rocksdb::DB::OpenForReadOnly(options, path.string(), &db), "opening " + path.string());
  return std::unique_ptr<StateStore>(new StateStore(db, path));
}

StateStore::Cached& StateStore::cache(std::string_view key, std::optional<std::string_view> value,
                                      bool dirty) {
  if (cache_bytes_ > kCacheBudget) {
    write_back();
    cache_.clear();
    cache_bytes_ = 0;
  }
  auto [it, inserted] = cache_.try_emplace(std::string(key));
  Cached& entry = it->second;
  if (inserted) cache_bytes_ += key.size() + kEntryOverhead;
  if (entry.value) cache_bytes_ -= entry.value->size();
  if (!value) {
    entry.value.reset();
  } else if (entry.value) {
    entry.value->assign(*value);  // reuses the buffer
  } else {
    entry.value.emplace(*value);
  }
  if (entry.value) cache_bytes_ += entry.value->size();
  if (dirty && !entry.dirty) {
    entry.dirty = true;
    dirty_.push_back(&*it);
  }
  return entry;
}

std::optional<std::string> StateStore::get(std::string_view key) {
  if (const auto it = cache_.find(std::string(key)); it != cache_.end()) return it->second.value;
  std::string value;
  const bool found = reach_db([&] {
    const rocksdb::Status status =
        db_->Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &value);
    if (status.IsNotFound()) return false;
    check(status, "reading");
    return true;
  });
  return cache(key, found ? std::optional<std::string_view>(value) : std::nullopt, false).value;
}

void StateStore::put(std::string_view key, std::string_view value) { cache(key, value, true); }

void StateStore::erase(std::string_view key) { cache(key, std::nullopt, true); }

StateStore::Changes StateStore::take_dirty() {
  Changes out;
  size_t bytes = 0;
  for (const CacheEntry* entry : dirty_) {
    bytes += entry->first.size() + (entry->second.value ? entry->second.value->size() : 0);
  }
  out.bytes.reserve(bytes);
  out.changes.reserve(dirty_.size());
  for (CacheEntry* entry : dirty_) {
    Changes::Change& c = out.changes.emplace_back();
    c.key = out.bytes.size();
    c.key_size = entry->first.size();
    out.bytes += entry->first;
    c.erased = !entry->second.value;
    if (!c.erased) {
      c.value = out.bytes.size();
      c.value_size = entry->second.value->size();
      out.bytes += *entry->second.value;
    }
    entry->second.dirty = false;
  }
  dirty_.clear();
  return out;
}

void StateStore::write_back() {
  wait_for_snapshot();
  const Changes dirty = take_dirty();
  if (dirty.changes.empty()) return;
  rocksdb::WriteBatch batch;
  for (const auto& c : dirty.changes) {
    if (c.erased) {
      batch.Delete(slice(dirty.key(c)));
    } else {
      batch.Put(slice(dirty.key(c)), slice(dirty.value(c)));
    }
  }
  reach_db([&] { check(db_->Write(no_wal(), &batch), "writing"); });
}

void StateStore::wait_for_snapshot() {
  if (!snapshot_in_progress_.valid()) return;
  const auto done = std::move(snapshot_in_progress_);
  snapshot_in_progress_ = {};
  done.get();
}

void StateStore::scan(std::string_view prefix,
                      const std::function<void(std::string_view, std::string_view)>& fn) {
  write_back();
  reach_db([&] {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
         it->Valid() && it->key().starts_with(rocksdb::Slice(prefix.data(), prefix.size()));
         it->Next()) {
      fn(std::string_view(it->key().data(), it->key().size()),
         std::string_view(it->value().data(), it->value().size()));
    }
    check(it->status(), "scanning");
  });
}

std::shared_future<uint64_t> StateStore::snapshot(const fs::path& dir) {
  wait_for_snapshot();
  snapshot_in_progress_ =
      std::async(std::launch::async, [this, dir, changes = take_dirty()]() mutable {
        return reach_db([&] {
          ingest(*db_, changes, path_.string() + "-ingest.sst");
          rocksdb::Checkpoint* raw = nullptr;
          check(rocksdb::Checkpoint::Create(db_.get(), &raw), "preparing a snapshot");
          std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
          fs::create_directories(dir.parent_path());
          // The default log_size_for_flush of 0 flushes the memtable first (it
          // holds what write_back() put there), which the snapshot needs since
          // writes skip the write-ahead log.
          check(checkpoint->CreateCheckpoint(dir.string()), "snapshot into " + dir.string());
          uint64_t bytes = 0;
          for (const auto& entry : fs::directory_iterator(dir)) {
            bytes += entry.file_size();
            sync_path(entry.path());
          }
          sync_path(dir);
          return bytes;
        });
      }).share();
  return snapshot_in_progress_;
}

}  // namespace sluice
