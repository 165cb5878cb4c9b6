#include "connectors/upsert_buffer.hpp"

#include <algorithm>

#include "engine/value_codec.hpp"

namespace sluice {
namespace {

// Orders entries by their last change.
constexpr auto by_sequence = [](const auto* a, const auto* b) { return a->sequence < b->sequence; };

}  // namespace

UpsertBuffer::UpsertBuffer(std::vector<size_t> key, bool keep_order)
    : key_(std::move(key)), keep_order_(keep_order) {}

void UpsertBuffer::add(Row&& row) {
  std::string key = encode_key(row, key_);
  if (held_) {
    // The +U of the same key completes an ordinary update: one upsert.
    // Anything else makes the held -U the delete of its key, first.
    if (!(row.kind == RowKind::kUpdateAfter && key == held_key_)) {
      put(std::move(held_key_), std::move(*held_), true);
    }
    held_.reset();
  }
  if (row.kind == RowKind::kUpdateBefore) {
    held_ = std::move(row);
    held_key_ = std::move(key);
    return;
  }
  const bool deleted = row.kind == RowKind::kDelete;
  put(std::move(key), std::move(row), deleted);
}

void UpsertBuffer::put(std::string key, Row&& row, bool deleted) {
  const auto [it, added] = entries_.try_emplace(std::move(key));
  Entry& entry = it->second;
  if (added) arrival_.push_back(&entry);
  entry.row = std::move(row);
  if (deleted) entry.row.kind = RowKind::kDelete;  // a held -U, too
  entry.deleted = deleted;
  entry.in_run = false;
  entry.sequence = ++sequence_;
}

std::vector<UpsertBuffer::Run> UpsertBuffer::runs(bool resolve_held, const KeySet* hold_back) {
  if (resolve_held && held_) {
    put(std::move(held_key_), std::move(*held_), true);
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
      if (entry->in_run) (entry->deleted ? deletes : upserts).rows.push_back(&entry->row);
    }
    for (Run* run : {&upserts, &deletes}) {
      if (!run->rows.empty()) out.push_back(std::move(*run));
    }
    return out;
  }
  for (auto& [key, entry] : entries_) entry.in_run = true;
  for (const Entry* entry : in_order()) {
    if (out.empty() || out.back().deletes != entry->deleted) out.push_back({entry->deleted, {}});
    out.back().rows.push_back(&entry->row);
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
  for (Entry* entry : taken) rows.push_back(std::move(entry->row));
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

std::vector<const Row*> UpsertBuffer::changes() const {
  std::vector<const Row*> rows;
  for (const Entry* entry : in_order()) rows.push_back(&entry->row);
  if (held_) rows.push_back(&*held_);
  return rows;
}

}  // namespace sluice
