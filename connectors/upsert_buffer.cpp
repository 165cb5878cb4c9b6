#include "sluice/connectors/upsert_buffer.hpp"

#include <algorithm>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/value_codec.hpp"

namespace sluice {
namespace {

// Orders entries by their last change.
constexpr auto by_sequence = [](const auto* a, const auto* b) { return a->sequence < b->sequence; };

}  // namespace

UpsertBuffer::UpsertBuffer(const Schema& schema, std::vector<size_t> key, bool keep_order)
    : store_(schema), key_(std::move(key)), keep_order_(keep_order) {}

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
  for (uint32_t i = first; i < store_.size(); ++i) add_stored(i);
}

void UpsertBuffer::add_stored(uint32_t row) {
  for (size_t k : key_) {
    if (store_.column(k).is_null(row)) {
      // The rows from here on stay in store_ unreferenced, dropped at clear().
      const std::string change = store_.ref(row).to_string();
      throw DataError("key column '" + store_.schema().column(k).name + "' is NULL in " + change);
    }
  }
  std::string key = encode_key(store_.ref(row), key_);
  const RowKind kind = store_.kind(row);
  if (held_) {
    // The +U of the same key completes an ordinary update: one upsert.
    // Anything else makes the held -U the delete of its key, first.
    if (!(kind == RowKind::kUpdateAfter && key == held_key_)) {
      put(std::move(held_key_), *held_, true);
    }
    held_.reset();
  }
  if (kind == RowKind::kUpdateBefore) {
    held_ = row;
    held_key_ = std::move(key);
    return;
  }
  put(std::move(key), row, kind == RowKind::kDelete);
}

void UpsertBuffer::put(std::string key, uint32_t row, bool deleted) {
  const auto [it, added] = entries_.try_emplace(std::move(key));
  Entry& entry = it->second;
  if (added) arrival_.push_back(&entry);
  entry.row = row;
  if (deleted) store_.set_kind(row, RowKind::kDelete);  // a held -U, too
  entry.deleted = deleted;
  entry.in_run = false;
  entry.sequence = ++sequence_;
}

std::vector<UpsertBuffer::Run> UpsertBuffer::runs(bool resolve_held, const KeySet* hold_back) {
  if (resolve_held && held_) {
    put(std::move(held_key_), *held_, true);
    held_.reset();
  }
  std::vector<Run> out;
  if (!keep_order_) {
    Run upserts{false, {}}, deletes{true, {}};
    if (hold_back != nullptr) {
      for (auto& [key, entry] : entries_) entry.in_run = !hold_back->contains(key);
    }
    for (Entry* entry : arrival_) {
      if (hold_back == nullptr) entry->in_run = true;
      if (entry->in_run) (entry->deleted ? deletes : upserts).rows.push_back(entry->row);
    }
    for (Run* run : {&upserts, &deletes}) {
      if (!run->rows.empty()) out.push_back(std::move(*run));
    }
    return out;
  }
  for (auto& [key, entry] : entries_) entry.in_run = true;
  for (const Entry* entry : in_order()) {
    if (out.empty() || out.back().deletes != entry->deleted) out.push_back({entry->deleted, {}});
    out.back().rows.push_back(entry->row);
  }
  return out;
}

void UpsertBuffer::clear() {
  std::erase_if(arrival_, [](const Entry* entry) { return entry->in_run; });
  if (arrival_.empty()) {
    entries_.clear();
  } else {
    std::erase_if(entries_, [](const auto& item) { return item.second.in_run; });
  }
  compact();
}

void UpsertBuffer::compact() {
  if (arrival_.empty() && !held_) {
    store_.clear();
    return;
  }
  Batch kept(store_.schema());
  for (Entry* entry : arrival_) {
    kept.append_from(store_, entry->row);
    entry->row = kept.size() - 1;
  }
  if (held_) {
    kept.append_from(store_, *held_);
    held_ = kept.size() - 1;
  }
  store_ = std::move(kept);
}

std::vector<Row> UpsertBuffer::take() {
  std::vector<Entry*> taken;
  taken.reserve(arrival_.size());
  for (Entry* entry : arrival_) {
    if (entry->in_run) taken.push_back(entry);
  }
  if (keep_order_) std::sort(taken.begin(), taken.end(), by_sequence);
  std::vector<Row> rows;
  rows.reserve(taken.size());
  for (Entry* entry : taken) rows.push_back(store_.row(entry->row));
  clear();
  return rows;
}

std::vector<const UpsertBuffer::Entry*> UpsertBuffer::in_order() const {
  std::vector<const Entry*> ordered;
  ordered.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) ordered.push_back(&entry);
  std::sort(ordered.begin(), ordered.end(), by_sequence);
  return ordered;
}

std::vector<Row> UpsertBuffer::changes() const {
  std::vector<Row> rows;
  for (const Entry* entry : in_order()) rows.push_back(store_.row(entry->row));
  if (held_) rows.push_back(store_.row(*held_));
  return rows;
}

}  // namespace sluice
