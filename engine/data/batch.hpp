#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "sluice/engine/data/row.hpp"
#include "sluice/engine/data/schema.hpp"

/// Records travel in batches: the columns of one stream's schema, each a
/// vector of its type, filled in place and recycled through the channels so
/// that nothing is allocated per record once they have grown. Why columnar,
/// and what was measured: docs/data-plane.md.
namespace sluice {

enum class EventKind : uint8_t {
  kNone,          ///< a batch of records only
  kFlush,         ///< FlushSignal(id = tick): sinks run their flush action
  kBarrier,       ///< Barrier(id = checkpoint id)
  kEndOfData,     ///< no records follow: operators finish, sinks write their tail
  kEndOfInput,    ///< nothing at all follows (after the final checkpoint, if any)
  kSchemaChange,  ///< `schema_change`: a table's rows after it have new columns
};

/// A control event travelling in a channel behind the records sent before it.
struct ControlEvent {
  EventKind kind = EventKind::kNone;
  int64_t id = 0;
  std::shared_ptr<const SchemaChange> schema_change;  ///< kSchemaChange
};

/// Where a STRING value lies in its column's byte area.
struct StringSlot {
  uint32_t offset = 0;
  uint32_t size = 0;
};
/// Where a BYTES value lies in its column's byte area.
struct BytesSlot : StringSlot {};

/// A BOOLEAN value as stored, so that a row can hand out a `bool&`.
struct BoolSlot {
  bool value = false;
};

/// One column of a batch: a value per row in a vector of the column's type
/// (STRING and BYTES: slots into one byte area), and a null flag per row.
class ColumnVector {
 public:
  /// Indexed by TypeId.
  using Values =
      std::variant<std::vector<int64_t>, std::vector<double>, std::vector<Decimal>,
                   std::vector<StringSlot>, std::vector<BoolSlot>, std::vector<Timestamp>,
                   std::vector<Date>, std::vector<Time>, std::vector<BytesSlot>>;

  explicit ColumnVector(TypeId type);

  TypeId type() const { return static_cast<TypeId>(values_.index()); }

  /// The values, as the vector of `T`'s storage (StringSlot for STRING,
  /// BytesSlot for BYTES, BoolSlot for BOOLEAN). A NULL row holds a default
  /// value.
  template <typename T>
  std::vector<T>& values() {
    return std::get<std::vector<T>>(values_);
  }
  template <typename T>
  const std::vector<T>& values() const {
    return std::get<std::vector<T>>(values_);
  }

  bool is_null(uint32_t row) const { return nulls_[row] != 0; }
  /// A byte per row: 1 where it is NULL, else 0.
  const std::vector<uint8_t>& null_flags() const { return nulls_; }
  void set_null(uint32_t row, bool null) { nulls_[row] = null ? 1 : 0; }

  /// The text of a STRING, or the bytes of a BYTES, in row `row`.
  std::string_view string_at(uint32_t row) const {
    const StringSlot slot =
        type() == TypeId::kBytes ? values<BytesSlot>()[row] : values<StringSlot>()[row];
    return {bytes_.data() + slot.offset, slot.size};
  }
  /// Writes a STRING's text, or a BYTES' bytes, into row `row`; the old
  /// ones stay until clear().
  void set_string(uint32_t row, std::string_view text);

  /// The value of `row` (a NULL Value for a NULL row).
  Value value(uint32_t row) const;
  /// Writes `value` into `row`; throws DataError if it is of another type.
  void set_value(uint32_t row, const Value& value);
  /// Writes the value `text` spells into `row`, not NULL: what
  /// set_value(row, parse_value(text, type)) writes, without a Value
  /// between for the common types. `type` is the column's.
  void parse(uint32_t row, std::string_view text, const DataType& type);
  /// Row `row`'s value's Value::hash(): equal values hash equally (DECIMALs
  /// of any scale too), and as they always did.
  size_t hash(uint32_t row) const;

  /// Adds `n` rows holding defaults, not NULL.
  void grow(size_t n);
  /// Keeps the first `n` rows. (The bytes of the others' strings stay
  /// until clear().)
  void truncate(size_t n);
  /// Appends rows `rows[0..n)` of `from`, a column of the same type, or its
  /// `n` rows from `start` on when `rows` is null.
  void append_from(const ColumnVector& from, const uint32_t* rows, uint32_t n, uint32_t start = 0);
  void clear();

 private:
  // Appends to bytes_ the strings of slots `from[0..n)` of `bytes` (another
  // column's byte area), writing their slots here into `to`.
  template <typename Slot>
  void append_strings(const Slot* from, uint32_t n, const std::string& bytes, Slot* to);

  Values values_;
  std::vector<uint8_t> nulls_;
  std::string bytes_;  // STRING and BYTES only
};

class RowRef;

/// Records of one schema, a changelog kind per row, and which of them are
/// selected: a filter narrows the selection instead of moving rows. A batch
/// that travels in a channel may carry a control event behind its records.
/// clear() keeps every capacity, so a recycled batch allocates nothing.
class Batch {
 public:
  /// `schema` must outlive the batch.
  explicit Batch(const Schema& schema);
  explicit Batch(Schema&&) = delete;

  const Schema& schema() const { return *schema_; }
  /// In a stream of several tables (StreamType::tables), which one the rows
  /// are of; 0 in a stream of one.
  uint32_t table() const { return table_; }
  /// Empties the batch and makes it hold rows of table `table`, of columns
  /// `schema` (which must outlive the batch). Columns of the types it had
  /// keep their capacity.
  void set_table(const Schema& schema, uint32_t table);
  /// Rows held, selected or not.
  uint32_t size() const { return static_cast<uint32_t>(kinds_.size()); }
  /// Rows selected.
  uint32_t selected() const {
    return all_selected_ ? size() : static_cast<uint32_t>(selection_.size());
  }
  bool empty() const { return selected() == 0; }

  /// Calls `f(row)` with the number of each selected row, in order.
  template <typename F>
  void for_each(F&& f) {
    if (all_selected_) {
      const uint32_t n = size();
      for (uint32_t i = 0; i < n; ++i) f(i);
    } else {
      for (uint32_t i : selection_) f(i);
    }
  }
  /// Deselects the selected rows for which `keep(row)` is false. If `keep`
  /// throws, the rows it decided on keep its decision, the rest are
  /// deselected, and the exception goes on.
  template <typename F>
  void keep_if(F&& keep) {
    scratch_.clear();
    try {
      for_each([&](uint32_t i) {
        if (keep(i)) scratch_.push_back(i);
      });
    } catch (...) {
      select_scratch();
      throw;
    }
    if (all_selected_ && scratch_.size() == size()) return;
    select_scratch();
  }
  /// Keeps the first `n` selected rows selected, and no other.
  void keep_first(uint32_t n) {
    uint32_t seen = 0;
    keep_if([&](uint32_t) { return seen++ < n; });
  }

  RowKind kind(uint32_t row) const { return kinds_[row]; }
  void set_kind(uint32_t row, RowKind kind) { kinds_[row] = kind; }

  /// Where row `row` came from in its source's input (a changelog file's
  /// line, say: SourceDef::describe_position says), if the source said.
  /// Positions travel with the rows through in-place operators, channels
  /// and sink buffers; a row emitted as a new Row has none. A batch keeps
  /// them only once a source set one: others pay nothing.
  std::optional<int64_t> position(uint32_t row) const {
    if (positions_.empty() || positions_[row] < 0) return std::nullopt;
    return positions_[row];
  }
  /// Sets row `row`'s position (at least 0).
  void set_position(uint32_t row, int64_t position);
  ColumnVector& column(size_t i) { return columns_[i]; }
  const ColumnVector& column(size_t i) const { return columns_[i]; }

  /// Adds `n` rows of kind `kind`, every field a default non-NULL value, and
  /// returns the number of the first; they are selected. For sources that
  /// write columns in place.
  uint32_t add_rows(uint32_t n, RowKind kind = RowKind::kInsert);
  /// Drops the rows from `n` on: undoes add_rows() of rows a source could
  /// not fill after all.
  void truncate(uint32_t n);
  /// What keeps `row` out of this batch (its arity, or the column whose
  /// type a field does not have); empty when it fits.
  std::string misfit(const Row& row) const;
  /// Appends `row` and returns "", or returns misfit() and appends nothing.
  std::string try_append(const Row& row);
  /// Appends `row`; throws DataError with misfit() if it does not fit
  /// (nothing is appended then).
  void append(const Row& row);
  /// Appends row `row` of `from`, a batch of the same column types (else
  /// throws std::logic_error).
  void append_from(const Batch& from, uint32_t row);
  /// Appends every selected row of `from`, a batch of the same column types.
  void append(const Batch& from);
  /// Appends rows `rows` of `from`, in that order.
  void append(const Batch& from, std::span<const uint32_t> rows);
  /// Appends the selected rows of `from`, taking this batch's column `c`
  /// from `from`'s column `columns[c]`, which must be of the same type
  /// (else throws std::logic_error): a projection.
  void append_columns(const Batch& from, std::span<const size_t> columns);
  /// Appends every selected row of `from` and clears it; takes its storage
  /// instead when this batch holds nothing and the column types agree.
  void take(Batch& from);

  /// Row `row` as a Row, and as a view.
  Row row(uint32_t row) const;
  RowRef ref(uint32_t row);
  /// The selected rows as Rows, in order.
  std::vector<Row> rows() const;

  /// Whether `other` has the same column types, so that rows can move between them.
  bool same_layout(const Batch& other) const;

  /// The control event behind the records (channels only).
  ControlEvent event;

  /// Empties the batch, keeping its capacity.
  void clear();

 private:
  void select_scratch() {
    selection_.swap(scratch_);
    all_selected_ = false;
  }
  // Rows `rows[0..n)` of `from`, or its `n` from `start` on when `rows` is
  // null; column c from `from`'s column columns[c], or c when `columns` is null.
  void append_selected(const Batch& from, const uint32_t* rows, uint32_t n,
                       const size_t* columns = nullptr, uint32_t start = 0);
  [[noreturn]] void throw_layout_mismatch(const Batch& from) const;

  const Schema* schema_;
  uint32_t table_ = 0;
  std::vector<RowKind> kinds_;
  // Empty, or a position per row: -1 where there is none.
  std::vector<int64_t> positions_;
  std::vector<ColumnVector> columns_;
  bool all_selected_ = true;
  std::vector<uint32_t> selection_;  // when !all_selected_
  std::vector<uint32_t> scratch_;
};

/// A row of a batch, as user code sees it: `row[column]` reads and writes a
/// field through a typed handle (see TypedColumn), with no copy. STRING
/// fields read as std::string_view and are written with set().
class RowRef {
 public:
  RowRef(Batch& batch, uint32_t row) : batch_(&batch), row_(row) {}

  RowKind kind() const { return batch_->kind(row_); }
  void set_kind(RowKind kind) { batch_->set_kind(row_, kind); }

  /// The field; throws DataError naming the column if it is NULL.
  template <typename T>
  decltype(auto) operator[](const TypedColumn<T>& column) const {
    const ColumnVector& c = batch_->column(column.index());
    if (c.is_null(row_)) throw_null(column.name());
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes>) {
      return c.string_at(row_);
    } else if constexpr (std::is_same_v<T, bool>) {
      // Parenthesised: a bool&, not a bool.
      return (const_cast<ColumnVector&>(c).values<BoolSlot>()[row_].value);
    } else {
      return const_cast<ColumnVector&>(c).values<T>()[row_];
    }
  }
  template <typename T>
  bool is_null(const TypedColumn<T>& column) const {
    return batch_->column(column.index()).is_null(row_);
  }
  /// Writes the field, also over a NULL.
  template <typename T, typename V>
  void set(const TypedColumn<T>& column, V&& value) {
    ColumnVector& c = batch_->column(column.index());
    c.set_null(row_, false);
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes>) {
      c.set_string(row_, std::string_view(value));
    } else if constexpr (std::is_same_v<T, bool>) {
      c.values<BoolSlot>()[row_].value = value;
    } else {
      c.values<T>()[row_] = std::forward<V>(value);
    }
  }
  template <typename T>
  void set_null(const TypedColumn<T>& column) {
    batch_->column(column.index()).set_null(row_, true);
  }

  /// Field `index` as a Value, and the whole row as a Row.
  Value value(size_t index) const { return batch_->column(index).value(row_); }
  Row to_row() const { return batch_->row(row_); }
  /// "+I[1, abc, NULL]", as Row::to_string().
  std::string to_string() const { return to_row().to_string(); }

  Batch& batch() const { return *batch_; }
  uint32_t index() const { return row_; }

 private:
  [[noreturn]] void throw_null(const std::string& column) const;

  Batch* batch_;
  uint32_t row_;
};

inline RowRef Batch::ref(uint32_t row) { return RowRef(*this, row); }

}  // namespace sluice
