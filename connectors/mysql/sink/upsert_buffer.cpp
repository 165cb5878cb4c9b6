#include "sluice/connectors/mysql/sink/upsert_buffer.hpp"

#include <algorithm>
#include <utility>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/value_codec.hpp"

namespace sluice {
namespace {

// Orders entries by their last change.
constexpr auto by_sequence = [](const auto* a, const auto* b) { return a->sequence < b->sequence; };

}  // namespace

void KeyIndex::clear() {
  if (size_ == 0) return;
  std::fill(slots_.begin(), slots_.end(), Slot{});
  size_ = 0;
}

void KeyIndex::grow() {
  std::vector<Slot> old =
      std::exchange(slots_, std::vector<Slot>(std::max<size_t>(64, slots_.size() * 2)));
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.number == kEmpty) continue;
    size_t i = slot.hash & mask;  // the keys are distinct: the first free slot
    while (slots_[i].number != kEmpty) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

UpsertBuffer::UpsertBuffer(const Schema& schema, std::vector<size_t> key, bool keep_order,
                           std::vector<UniqueKey> unique)
    : store_(schema), key_(std::move(key)), keep_order_(keep_order), unique_(std::move(unique)) {}

void UpsertBuffer::add(Batch& rows) {
  const uint32_t first = store_.size();
  store_.append(rows);
  rows.clear();
  add_stored_from(first);
}

void UpsertBuffer::add(const Batch& rows, std::span<const uint32_t> selected) {
  const uint32_t first = store_.size();
  store_.append(rows, selected);
  add_stored_from(first);
}

void UpsertBuffer::add(const Row& row) {
  const uint32_t first = store_.size();
  store_.append(row);
  add_stored_from(first);
}

void UpsertBuffer::add_stored_from(uint32_t first) {
  // The keys first, each one's slot in the index fetched into the cache
  // meanwhile: a lookup in a large index waits on memory otherwise.
  keys_.clear();
  uint32_t end = first;
  for (; end < store_.size() && null_key_column(end) == key_.end(); ++end) {
    std::string key = encode_key(store_.ref(end), key_);
    const size_t hash = KeyIndex::hash(key);
    latest_.prefetch(hash);
    keys_.push_back({std::move(key), hash});
  }
  for (uint32_t i = first; i < end; ++i) {
    auto& [key, hash] = keys_[i - first];
    add_stored(i, std::move(key), hash);
  }
  if (end == store_.size()) return;
  // The rows from here on stay in store_ unreferenced, dropped at clear().
  const size_t k = *null_key_column(end);
  const std::string change = store_.ref(end).to_string();
  throw DataError("key column '" + store_.schema().column(k).name + "' is NULL in " + change);
}

std::vector<size_t>::const_iterator UpsertBuffer::null_key_column(uint32_t row) const {
  return std::find_if(key_.begin(), key_.end(),
                      [&](size_t k) { return store_.column(k).is_null(row); });
}

void UpsertBuffer::add_stored(uint32_t row, std::string key, size_t hash) {
  const RowKind kind = store_.kind(row);
  // What the table held for the key before this change, if it is the first.
  Before holds = kind == RowKind::kInsert ? Before::kNothing : Before::kUnknown;
  uint32_t before = row;
  if (held_) {
    if (kind == RowKind::kUpdateAfter && key == held_key_) {
      // The +U of the same key completes an ordinary update: one upsert.
      holds = Before::kImage;
      before = *held_;
    } else {
      // Anything else makes the held -U the delete of its key, first; a +U
      // is then the new row of a key-changing update.
      put_held();
      if (kind == RowKind::kUpdateAfter) holds = Before::kNothing;
    }
    held_.reset();
  }
  if (kind == RowKind::kUpdateBefore) {
    held_ = row;
    held_key_ = std::move(key);
    return;
  }
  const bool deleted = kind == RowKind::kDelete;
  put(std::move(key), hash, row, deleted, deleted ? Before::kImage : holds, before);
}

void UpsertBuffer::put_held() {
  const size_t hash = KeyIndex::hash(held_key_);
  put(std::move(held_key_), hash, *held_, true, Before::kImage, *held_);
}

void UpsertBuffer::put(std::string key, size_t hash, uint32_t row, bool deleted, Before holds,
                       uint32_t before) {
  const uint32_t* latest = latest_.find(key, hash, key_of());
  Entry* entry = nullptr;
  if (latest != nullptr && entries_[*latest].generation == generation_) {
    entry = &entries_[*latest];
  }
  if (!unique_.empty() && must_cut(entry, row, deleted)) {
    cut();
    entry = nullptr;
  }
  if (entry == nullptr) {
    const auto at = static_cast<uint32_t>(entries_.size());
    entries_.push_back(
        {.key = std::move(key), .before = before, .holds = holds, .generation = generation_});
    latest_.insert_or_assign(entries_.back().key, hash, at, key_of());
    if (!unique_.empty()) index_before(at);
    entry = &entries_.back();
  }
  entry->row = row;
  if (deleted) store_.set_kind(row, RowKind::kDelete);  // a held -U, too
  entry->deleted = deleted;
  entry->in_run = false;
  entry->sequence = ++sequence_;
}

bool UpsertBuffer::must_cut(const Entry* entry, uint32_t row, bool deleted) {
  // A key deleted again (in a replay, or as changes() tells a generation
  // where the key had no row): with keep_order the second delete would
  // move the first past the upserts between them.
  if (deleted) return entry != nullptr && entry->deleted;
  // A key deleted in this generation and upserted again: its delete is no
  // longer written before the others' upserts, and the row it held might
  // meet one of them.
  if (entry != nullptr && entry->deleted && entry->holds != Before::kNothing) return true;
  // A row still to be written here holds what this upsert takes: another
  // key's upsert. A delete is written before (first, or, with keep_order,
  // by its place: it came before this change, and a later change to its
  // key is an upsert, which cuts).
  const auto in_the_way = [&](uint32_t other) {
    const Entry& e = entries_[other];
    return &e != entry && !e.deleted;
  };
  if (std::any_of(unknown_.begin(), unknown_.end(), in_the_way)) return true;
  for (size_t k = 0; k < unique_.size(); ++k) {
    const std::optional<std::string> value = unique_value(row, k);
    if (!value) continue;
    const auto [first, last] = befores_.equal_range(*value);
    for (auto it = first; it != last; ++it) {
      if (in_the_way(it->second)) return true;
    }
  }
  return false;
}

void UpsertBuffer::cut() {
  ++generation_;
  befores_.clear();
  unknown_.clear();
}

void UpsertBuffer::index_before(uint32_t at) {
  const Entry& entry = entries_[at];
  if (entry.holds == Before::kUnknown) {
    unknown_.push_back(at);
  } else if (entry.holds == Before::kImage) {
    for (size_t k = 0; k < unique_.size(); ++k) {
      if (std::optional<std::string> value = unique_value(entry.before, k)) {
        befores_.emplace(std::move(*value), at);
      }
    }
  }
}

std::optional<std::string> UpsertBuffer::unique_value(uint32_t row, size_t k) {
  const UniqueKey& key = unique_[k];
  std::string out(1, static_cast<char>(k));
  for (size_t i = 0; i < key.columns.size(); ++i) {
    const size_t c = key.columns[i];
    const ColumnVector& column = store_.column(c);
    if (column.is_null(row)) return std::nullopt;
    if (i < key.images.size() && key.images[i]) {
      const std::string image = key.images[i](column.string_at(row));
      out += std::to_string(image.size());
      out += ':';
      out += image;
    } else if (column.type() == TypeId::kDouble && column.values<double>()[row] == 0.0) {
      out += encode_key(Row(RowKind::kInsert, {0.0}), {0});  // -0 is 0 to an index
    } else {
      out += encode_key(store_.ref(row), {c});
    }
  }
  return out;
}

std::vector<UpsertBuffer::Run> UpsertBuffer::runs(bool resolve_held, const KeySet* hold_back) {
  if (resolve_held && held_) {
    put_held();
    held_.reset();
  }
  // Keys held back stay, and with other unique keys every generation from
  // the first that has one: a later change may depend on theirs.
  uint32_t written = generation_ + 1;  // generations
  for (Entry& entry : entries_) {
    entry.in_run = hold_back == nullptr || !hold_back->contains(entry.key);
    if (!entry.in_run && !unique_.empty()) written = std::min(written, entry.generation);
  }
  std::vector<Run> out;
  for (const Entry* entry : in_order()) {
    if (entry->generation >= written) break;
    if (!entry->in_run) continue;
    // One run for consecutive changes of a kind, generations too: a
    // statement writes its rows in order.
    if (out.empty() || out.back().deletes != entry->deleted) out.push_back({entry->deleted});
    out.back().rows.push_back(entry->row);
    out.back().had_row.push_back(entry->holds != Before::kNothing);
  }
  for (Entry& entry : entries_) entry.in_run = entry.in_run && entry.generation < written;
  return out;
}

void UpsertBuffer::clear() {
  drop_written();
  if (entries_.empty() && !held_) {
    store_.clear();
    return;
  }
  keep_rows_of(std::exchange(store_, Batch(store_.schema())));
}

Batch UpsertBuffer::hand_over(Batch spare) {
  drop_written();
  spare.clear();
  Batch written = std::exchange(store_, std::move(spare));
  if (!entries_.empty() || held_) keep_rows_of(written);
  return written;
}

void UpsertBuffer::drop_written() {
  const size_t buffered = entries_.size();
  std::erase_if(entries_, [](const Entry& entry) { return entry.in_run; });
  if (entries_.size() != buffered) reindex();
}

void UpsertBuffer::reindex() {
  // Erasing moved the entries, and their keys.
  latest_.clear();
  befores_.clear();
  unknown_.clear();
  if (entries_.empty()) generation_ = 0;
  for (uint32_t at = 0; at < entries_.size(); ++at) {
    const std::string& key = entries_[at].key;
    latest_.insert_or_assign(key, KeyIndex::hash(key), at, key_of());  // later generations last
    if (!unique_.empty() && entries_[at].generation == generation_) index_before(at);
  }
}

void UpsertBuffer::keep_rows_of(const Batch& from) {
  for (Entry& entry : entries_) {
    const uint32_t last = entry.row;
    store_.append_from(from, last);
    entry.row = store_.size() - 1;
    if (entry.holds == Before::kImage) {
      if (entry.before != last) store_.append_from(from, entry.before);
      entry.before = store_.size() - 1;
    }
  }
  if (held_) {
    store_.append_from(from, *held_);
    held_ = store_.size() - 1;
  }
}

std::vector<Row> UpsertBuffer::take() {
  std::vector<const Entry*> taken = in_order();
  std::erase_if(taken, [](const Entry* entry) { return !entry->in_run; });
  std::vector<Row> rows = changes_of(taken);
  clear();
  return rows;
}

std::vector<const UpsertBuffer::Entry*> UpsertBuffer::in_order() const {
  std::vector<const Entry*> ordered;
  ordered.reserve(entries_.size());
  auto generation = entries_.begin();
  while (generation != entries_.end()) {
    const auto end = std::find_if(generation, entries_.end(), [&](const Entry& entry) {
      return entry.generation != generation->generation;
    });
    const size_t first = ordered.size();
    for (auto it = generation; it != end; ++it) ordered.push_back(&*it);
    if (keep_order_) {
      std::sort(ordered.begin() + first, ordered.end(), by_sequence);
    } else {
      std::stable_partition(ordered.begin() + first, ordered.end(),
                            [](const Entry* entry) { return entry->deleted; });
    }
    generation = end;
  }
  return ordered;
}

std::vector<Row> UpsertBuffer::changes_of(const std::vector<const Entry*>& entries) const {
  std::vector<Row> rows;
  rows.reserve(entries.size());
  for (const Entry* entry : entries) {
    Row last = store_.row(entry->row);
    if (!unique_.empty() && !entry->deleted) {
      // What the table holds for the key until the upsert, told as add()
      // learns it: the -U of an update, a +I for no row, a lone +U.
      if (entry->holds == Before::kImage) {
        Row before = store_.row(entry->before);
        before.kind = RowKind::kUpdateBefore;
        rows.push_back(std::move(before));
        last.kind = RowKind::kUpdateAfter;
      } else {
        last.kind = entry->holds == Before::kNothing ? RowKind::kInsert : RowKind::kUpdateAfter;
      }
    }
    rows.push_back(std::move(last));
  }
  return rows;
}

std::vector<Row> UpsertBuffer::changes() const {
  std::vector<Row> rows = changes_of(in_order());
  if (held_) rows.push_back(store_.row(*held_));
  return rows;
}

}  // namespace sluice
