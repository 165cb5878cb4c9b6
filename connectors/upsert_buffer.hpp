#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/row.hpp"

namespace sluice {

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
/// all upserts go before all deletes, in the fewest statements. When the
/// writer's upsert sets the whole row image, key spelling included, the
/// table then ends as the changes applied one by one would leave it: of the
/// keys it takes for one, the last change decides, and it comes last.
///
/// The changes are copied into the buffer's own batch of columns: no heap
/// object per change; a key changed again takes a new row there, and what
/// a flush wrote is dropped by clear().
class UpsertBuffer {
 public:
  /// `schema`: the changes' columns (it must outlive the buffer); `key`: the
  /// indexes of the key columns.
  UpsertBuffer(const Schema& schema, std::vector<size_t> key, bool keep_order);
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
  };
  /// Keys as encode_key() gives them.
  using KeySet = std::unordered_set<std::string>;
  /// What to write now, as runs. A held -U stays held (a flush must not
  /// fall between it and its +U) unless `resolve_held` (a barrier, the end),
  /// which makes it a delete. Keys in `hold_back` stay buffered, too: only
  /// without keep_order, where other keys' changes may pass them. The row
  /// numbers stay valid until clear().
  std::vector<Run> runs(bool resolve_held, const KeySet* hold_back = nullptr);
  /// The rows runs() numbers.
  const Batch& rows() const { return store_; }
  /// Forgets what runs() returned, once written; what it held stays.
  void clear();
  /// Like clear(), but hands over the rows, in the order runs() gave them
  /// up to the order of unrelated keys.
  std::vector<Row> take();

  /// Distinct keys buffered, a held -U not counted.
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty() && !held_; }
  /// Every buffered change in the order of arrival, a held -U last: what a
  /// checkpoint saves, and add() takes back after a restore.
  std::vector<Row> changes() const;

 private:
  struct Entry {
    uint32_t row = 0;  // in store_
    bool deleted = false;
    bool in_run = false;    // returned by the last runs()
    uint64_t sequence = 0;  // of its last change
  };
  // Buffers store_'s rows from `first` on.
  void add_stored_from(uint32_t first);
  void add_stored(uint32_t row);
  void put(std::string key, uint32_t row, bool deleted);
  // Drops the rows no entry refers to.
  void compact();
  std::vector<const Entry*> in_order() const;

  Batch store_;
  std::vector<size_t> key_;
  bool keep_order_;
  std::unordered_map<std::string, Entry> entries_;
  // The entries in the order their keys first came: without keep_order,
  // runs() writes them so, with no sort (an ever-growing key then goes to
  // the end of the table's B-tree, row after row).
  std::vector<Entry*> arrival_;
  std::optional<uint32_t> held_;  // a -U waiting for the next change
  std::string held_key_;
  uint64_t sequence_ = 0;
};

}  // namespace sluice
