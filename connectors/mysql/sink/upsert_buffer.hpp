#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/row.hpp"
#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

/// Numbers by key, for keys that live elsewhere: `key_of(number)` gives
/// the key of a number given before. An open-addressing table of (32 bits
/// of the hash, number) slots probed linearly, at most half full: a lookup
/// mostly reads one cache line of a compact array, and a key's bytes only
/// where the hash bits match, where a node-based map follows a chain of
/// allocations.
class KeyIndex {
 public:
  /// `key`'s hash, which find() and insert_or_assign() take: a key is hashed once.
  static size_t hash(std::string_view key) { return std::hash<std::string_view>()(key); }
  /// The number of `key`, or null.
  template <typename KeyOf>
  const uint32_t* find(std::string_view key, size_t hash, const KeyOf& key_of) const {
    if (size_ == 0) return nullptr;
    const Slot& slot = slots_[slot_of(key, hash, key_of)];
    return slot.number == kEmpty ? nullptr : &slot.number;
  }
  /// Makes `key`'s number `number`.
  template <typename KeyOf>
  void insert_or_assign(std::string_view key, size_t hash, uint32_t number, const KeyOf& key_of) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    Slot& slot = slots_[slot_of(key, hash, key_of)];
    if (slot.number == kEmpty) ++size_;
    slot = {static_cast<uint32_t>(hash), number};
  }
  /// Starts fetching the slot of a key of hash `hash` into the cache.
  void prefetch(size_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  /// Forgets every key, keeping the capacity.
  void clear();
  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint32_t hash = 0;  // its low 32 bits, which also place it
    uint32_t number = kEmpty;
  };
  // The slot of `key`, or the empty one where it would go.
  template <typename KeyOf>
  size_t slot_of(std::string_view key, size_t hash, const KeyOf& key_of) const {
    const size_t mask = slots_.size() - 1;
    const auto bits = static_cast<uint32_t>(hash);
    for (size_t i = bits & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.number == kEmpty || (slot.hash == bits && key_of(slot.number) == key)) return i;
    }
  }
  void grow();

  std::vector<Slot> slots_;  // a power of two of them, or none
  size_t size_ = 0;
};

/// The upsert sink's buffer: the last change of every key, so that a flush
/// leaves the table as the changes since the last one, applied in order,
/// would. +I and +U are upserts, -D a delete; a -U is held until the next
/// change: the +U of the same key (an ordinary update) replaces it, anything
/// else makes it the delete of its key (an update that changed the key must
/// not leave the old row behind).
///
/// Keys that differ as bytes may still be equal to the table: strings under
/// a case-insensitive or PAD SPACE collation ('abc', 'ABC', 'abc '). With
/// `keep_order`, runs() keeps the order of the keys' last changes, so such
/// keys are never reordered against each other; without it (numeric keys)
/// all deletes go before all upserts, in the fewest statements. When the
/// writer's upsert sets the whole row image, key spelling included, the
/// table then ends as the changes applied one by one would leave it: of the
/// keys it takes for one, the last change decides, and it comes last.
///
/// A table's other unique keys (UNIQUE (email) beside PRIMARY KEY (id))
/// make the order of different keys' writes matter: an upsert whose email a
/// row still holds, because that row's own change is written after it,
/// would update that row instead (INSERT … ON DUPLICATE KEY UPDATE), or
/// fail. Given such keys, the buffer tracks what the table holds for each
/// buffered key (the before image of the key's first change: a -U or -D;
/// nothing after a +I or the +U of a key-changing update; unknown after a
/// lone +U) and cuts its changes into generations, written one after the
/// other, deletes first in each: a change starts a new generation when its
/// upsert could meet a row still to be written in the current one (its
/// unique value is another upserted key's before image there, or another
/// key's image there is unknown), or when it upserts a key deleted in the
/// current generation. Within a generation, then, no upsert meets a row
/// other than its own: the rows that held its values are deleted before it
/// or already rewritten. Without such keys there is one generation.
///
/// The changes are copied into the buffer's own batch of columns: no heap
/// object per change; a key changed again takes a new row there, and what
/// a flush wrote is dropped by clear().
class UpsertBuffer {
 public:
  /// A unique key of the table besides the buffer's key: its columns'
  /// indexes, and for each what the table compares its values by (a
  /// collation's image of its text, cut to an index prefix, say), or null
  /// to compare the bytes.
  struct UniqueKey {
    std::vector<size_t> columns;
    std::vector<KeyImage> images;
  };

  /// `schema`: the changes' columns (it must outlive the buffer); `key`: the
  /// indexes of the key columns; `unique`: the table's other unique keys.
  UpsertBuffer(const Schema& schema, std::vector<size_t> key, bool keep_order,
               std::vector<UniqueKey> unique = {});
  // Moving keeps the entries where they are; a copy would not.
  UpsertBuffer(UpsertBuffer&&) = default;
  UpsertBuffer& operator=(UpsertBuffer&&) = default;
  UpsertBuffer(const UpsertBuffer&) = delete;
  UpsertBuffer& operator=(const UpsertBuffer&) = delete;

  /// Buffers the selected changes of `rows`, in order, and clears it; or
  /// one change. Key columns must not be NULL: a DataError names the change
  /// (what came before it is buffered).
  void add(Batch& rows);
  /// Buffers rows `selected` of `rows`, in that order.
  void add(const Batch& rows, std::span<const uint32_t> selected);
  void add(const Row& row);

  /// Changes to write as one statement kind, in order: row numbers in rows().
  struct Run {
    bool deletes = false;
    std::vector<uint32_t> rows;
    /// Per row: whether the table holds a row of its key before the run,
    /// as the changes in order tell (its first change since the last write
    /// was no +I, nor the +U of a key-changing update). A replay, or
    /// anything else that wrote the table, may prove it wrong.
    std::vector<bool> had_row;
  };
  /// Keys as encode_key() gives them.
  using KeySet = std::unordered_set<std::string>;
  /// What to write now, as runs, to be written in their order. A held -U
  /// stays held (a flush must not fall between it and its +U) unless
  /// `resolve_held` (a barrier, the end), which makes it a delete. Keys in
  /// `hold_back` stay buffered, too, and with them every later generation:
  /// only without keep_order, where other keys' changes may pass them. The
  /// row numbers stay valid until clear().
  std::vector<Run> runs(bool resolve_held, const KeySet* hold_back = nullptr);
  /// The rows runs() numbers.
  const Batch& rows() const { return store_; }
  /// Forgets what runs() returned, once written; what it held stays.
  void clear();
  /// Like clear(), but hands over the rows runs() numbered, where they
  /// still are, and takes `spare` (of the same columns) for its own: what
  /// a flush wrote outlives the buffer's next changes, with no copy.
  Batch hand_over(Batch spare);
  /// Like clear(), but hands over what was written, as changes() would.
  std::vector<Row> take();

  /// Distinct keys buffered (in each generation), a held -U not counted.
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty() && !held_; }
  /// The buffered changes as a changelog that add() takes back to the same
  /// writes, a held -U last: what a checkpoint saves, and what a restore
  /// buffers again. Each key's last change, in the order runs() writes
  /// them; given other unique keys, preceded by the before image it
  /// replaces, as a -U.
  std::vector<Row> changes() const;

 private:
  // What the table holds for an entry's key until the entry is written.
  enum class Before : uint8_t {
    kNothing,  // no row: the key's first change was a +I, or a key change's +U
    kImage,    // the row of Entry::before
    kUnknown,  // some row, or none: the first change was a lone +U
  };
  struct Entry {
    std::string key;      // encode_key()
    uint32_t row = 0;     // its last change, in store_
    uint32_t before = 0;  // with Before::kImage, in store_
    Before holds = Before::kUnknown;
    bool deleted = false;
    bool in_run = false;  // returned by the last runs()
    uint32_t generation = 0;
    uint64_t sequence = 0;  // of its last change
  };
  // Buffers store_'s rows from `first` on.
  void add_stored_from(uint32_t first);
  // The first key column that is NULL in store_'s row `row`, or key_.end().
  std::vector<size_t>::const_iterator null_key_column(uint32_t row) const;
  // Buffers store_'s row `row`, of key `key` (encode_key()) and its `hash`.
  void add_stored(uint32_t row, std::string key, size_t hash);
  void put(std::string key, size_t hash, uint32_t row, bool deleted, Before holds, uint32_t before);
  // The held -U, as the delete of its key.
  void put_held();
  // Whether the change `row` (to `entry`, its key's entry in the current
  // generation, or null) must go into a new generation.
  bool must_cut(const Entry* entry, uint32_t row, bool deleted);
  // Starts a new generation.
  void cut();
  // Notes what `entry`, of the current generation, holds in the table.
  void index_before(uint32_t entry);
  // The value of unique key `k` in `row`, as the table compares it; null
  // if a column of it is NULL (NULLs never collide).
  std::optional<std::string> unique_value(uint32_t row, size_t k);
  // What latest_ needs: the key of an entry.
  auto key_of() const {
    return [this](uint32_t entry) { return std::string_view(entries_[entry].key); };
  }
  // Rebuilds the indexes of entries_ after entries left it.
  void reindex();
  // Forgets the entries runs() returned.
  void drop_written();
  // Copies into store_, empty, the rows of `from` that entries refer to.
  void keep_rows_of(const Batch& from);
  // The entries in writing order: generation by generation; in each,
  // deletes then upserts (or, with keep_order, by their last change).
  std::vector<const Entry*> in_order() const;
  // The entries as changes() gives them.
  std::vector<Row> changes_of(const std::vector<const Entry*>& entries) const;

  Batch store_;
  std::vector<size_t> key_;
  bool keep_order_;
  std::vector<UniqueKey> unique_;
  // In the order their keys first came in each generation: without
  // keep_order, runs() writes them so, with no sort (an ever-growing key
  // then goes to the end of the table's B-tree, row after row). A deque:
  // an entry stays where it is while later ones are added.
  std::deque<Entry> entries_;
  KeyIndex latest_;  // key: its latest entry
  // The current generation's entries by the unique values their before
  // images hold (each prefixed by the unique key's number), and those whose
  // before image is unknown.
  std::unordered_multimap<std::string, uint32_t> befores_;
  std::vector<uint32_t> unknown_;
  uint32_t generation_ = 0;
  std::optional<uint32_t> held_;  // a -U waiting for the next change
  std::string held_key_;
  std::vector<std::pair<std::string, size_t>> keys_;  // add_stored_from()'s, with their hashes
  uint64_t sequence_ = 0;
};

}  // namespace sluice
