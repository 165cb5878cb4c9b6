#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "sluice/connectors/mysql/sink/upsert_buffer.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/row.hpp"
#include "sluice/engine/data/schema.hpp"

namespace sluice {

/// What the MySQL sink has yet to write: in upsert mode the last change
/// per key (UpsertBuffer), in append mode every row, in order.
class SinkBuffer {
 public:
  /// Rows of `input`, keyed by the columns `key` (upsert mode) or not
  /// (append mode); `keep_order` as UpsertBuffer has it.
  SinkBuffer(Schema input, std::vector<size_t> key, bool keep_order, bool upsert)
      : input_(std::move(input)),
        key_(std::move(key)),
        keep_order_(keep_order),
        upsert_(upsert),
        changes_(input_, key_, keep_order_) {}
  // Its buffers point at input_.
  SinkBuffer(const SinkBuffer&) = delete;
  SinkBuffer& operator=(const SinkBuffer&) = delete;

  bool upsert() const { return upsert_; }
  /// Whether the order of changes matters across keys (see UpsertBuffer).
  bool keeps_order() const { return keep_order_; }
  const std::vector<size_t>& key() const { return key_; }

  /// Orders the writes by the table's other unique keys too; before any
  /// row is buffered.
  void set_unique_keys(std::vector<UpsertBuffer::UniqueKey> keys) {
    unique_ = std::move(keys);
    changes_ = UpsertBuffer(input_, key_, keep_order_, unique_);
  }

  /// Takes a Row, every selected row of a batch, or rows `selected` of a batch.
  template <typename... Rows>
  void add(Rows&&... rows) {
    if (upsert_) {
      changes_.add(rows...);
    } else {
      appended_.append(rows...);
    }
  }

  /// `rows`, which came before everything buffered now, buffered again.
  void add_before(const std::vector<Row>& rows) {
    if (rows.empty()) return;
    if (!upsert_) {
      Batch again(input_);
      for (const Row& row : rows) again.append(row);
      again.append(appended_);
      appended_ = std::move(again);
      return;
    }
    UpsertBuffer rebuilt(input_, key_, keep_order_, unique_);
    for (const Row& row : rows) rebuilt.add(row);
    for (const Row& row : changes_.changes()) rebuilt.add(row);
    changes_ = std::move(rebuilt);
  }

  bool empty() const { return changes_.empty() && appended_.size() == 0; }

  /// Everything buffered, as the rows that would buffer it again.
  std::vector<Row> rows() const {
    std::vector<Row> rows = changes_.changes();
    for (Row& row : appended_.rows()) rows.push_back(std::move(row));
    return rows;
  }

  UpsertBuffer& changes() { return changes_; }  ///< upsert mode
  Batch& appended() { return appended_; }       ///< append mode

 private:
  const Schema input_;
  const std::vector<size_t> key_;
  const bool keep_order_;
  const bool upsert_;
  std::vector<UpsertBuffer::UniqueKey> unique_;  // the table's other unique keys
  UpsertBuffer changes_;
  Batch appended_{input_};
};

}  // namespace sluice
