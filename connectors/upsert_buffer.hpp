#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/row.hpp"

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
class UpsertBuffer {
 public:
  /// `key`: the indexes of the key columns.
  UpsertBuffer(std::vector<size_t> key, bool keep_order);
  // Moving keeps the entries where they are; a copy would not.
  UpsertBuffer(UpsertBuffer&&) = default;
  UpsertBuffer& operator=(UpsertBuffer&&) = default;
  UpsertBuffer(const UpsertBuffer&) = delete;
  UpsertBuffer& operator=(const UpsertBuffer&) = delete;

  /// Buffers a change. Its key columns must not be NULL.
  void add(Row&& row);

  /// Changes to write as one statement kind, in order.
  struct Run {
    bool deletes = false;
    std::vector<const Row*> rows;
  };
  /// Keys as encode_key() gives them.
  using KeySet = std::unordered_set<std::string>;
  /// What to write now, as runs. A held -U stays held (a flush must not
  /// fall between it and its +U) unless `resolve_held` (a barrier, the end),
  /// which makes it a delete. Keys in `hold_back` stay buffered, too: only
  /// without keep_order, where other keys' changes may pass them. The rows
  /// stay valid until clear().
  std::vector<Run> runs(bool resolve_held, const KeySet* hold_back = nullptr);
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
  std::vector<const Row*> changes() const;

 private:
  struct Entry {
    Row row;
    bool deleted = false;
    bool in_run = false;    // returned by the last runs()
    uint64_t sequence = 0;  // of its last change
  };
  void put(std::string key, Row&& row, bool deleted);
  std::vector<const Entry*> in_order() const;

  std::vector<size_t> key_;
  bool keep_order_;
  std::unordered_map<std::string, Entry> entries_;
  // The entries in the order their keys first came: without keep_order,
  // runs() writes them so, with no sort (an ever-growing key then goes to
  // the end of the table's B-tree, row after row).
  std::vector<Entry*> arrival_;
  std::optional<Row> held_;  // a -U waiting for the next change
  std::string held_key_;
  uint64_t sequence_ = 0;
};

}  // namespace sluice
