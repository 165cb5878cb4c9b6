#include "sluice/engine/data/batch.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

template <size_t I = 0>
ColumnVector::Values values_of(TypeId type) {
  if constexpr (I + 1 < std::variant_size_v<ColumnVector::Values>) {
    if (static_cast<size_t>(type) != I) return values_of<I + 1>(type);
  }
  return ColumnVector::Values(std::in_place_index<I>);
}

}  // namespace

ColumnVector::ColumnVector(TypeId type) : values_(values_of(type)) {}

void ColumnVector::set_string(uint32_t row, std::string_view text) {
  // `text` may lie in bytes_ itself: append() copes with that.
  const auto offset = static_cast<uint32_t>(bytes_.size());
  bytes_.append(text);
  const StringSlot slot{offset, static_cast<uint32_t>(text.size())};
  if (type() == TypeId::kBytes) {
    values<BytesSlot>()[row] = {slot};
  } else {
    values<StringSlot>()[row] = slot;
  }
}

Value ColumnVector::value(uint32_t row) const {
  if (is_null(row)) return Value();
  switch (type()) {
    case TypeId::kBigint:
      return values<int64_t>()[row];
    case TypeId::kDouble:
      return values<double>()[row];
    case TypeId::kDecimal:
      return values<Decimal>()[row];
    case TypeId::kString:
      return string_at(row);
    case TypeId::kBoolean:
      return Value::boolean(values<BoolSlot>()[row].value);
    case TypeId::kTimestamp:
      return values<Timestamp>()[row];
    case TypeId::kDate:
      return values<Date>()[row];
    case TypeId::kTime:
      return values<Time>()[row];
    case TypeId::kBytes:
      return Value::bytes(std::string(string_at(row)));
  }
  return Value();
}

void ColumnVector::set_value(uint32_t row, const Value& value) {
  const bool null = value.is_null();
  set_null(row, null);
  if (null) return;
  if (value.type_id() != type()) {
    throw DataError("expected " + DataType{type()}.to_string() + ", got " + value.to_string());
  }
  switch (type()) {
    case TypeId::kBigint:
      values<int64_t>()[row] = value.as_bigint();
      break;
    case TypeId::kDouble:
      values<double>()[row] = value.as_double();
      break;
    case TypeId::kDecimal:
      values<Decimal>()[row] = value.as_decimal();
      break;
    case TypeId::kString:
      set_string(row, value.as_string());
      break;
    case TypeId::kBoolean:
      values<BoolSlot>()[row].value = value.as_boolean();
      break;
    case TypeId::kTimestamp:
      values<Timestamp>()[row] = value.as_timestamp();
      break;
    case TypeId::kDate:
      values<Date>()[row] = value.as_date();
      break;
    case TypeId::kTime:
      values<Time>()[row] = value.as_time();
      break;
    case TypeId::kBytes:
      set_string(row, value.as_bytes());
      break;
  }
}

size_t ColumnVector::hash(uint32_t row) const {
  if (is_null(row)) return Value().hash();
  // As Value::hash() mixes in its variant's index (TypeId + 1): a key goes
  // to the same subtask as it did when records were Values, so that keyed
  // state in older checkpoints is found where it was saved.
  const size_t index = static_cast<size_t>(type()) + 1;
  switch (type()) {
    case TypeId::kBigint:
      return hash_field(values<int64_t>()[row]) ^ index;
    case TypeId::kDouble:
      return hash_field(values<double>()[row]) ^ index;
    case TypeId::kDecimal:
      return hash_field(values<Decimal>()[row]) ^ index;
    case TypeId::kString:
      return hash_field(string_at(row)) ^ index;
    case TypeId::kBoolean:
      return hash_field(values<BoolSlot>()[row].value) ^ index;
    case TypeId::kTimestamp:
      return hash_field(values<Timestamp>()[row]) ^ index;
    case TypeId::kDate:
      return hash_field(values<Date>()[row]) ^ index;
    case TypeId::kTime:
      return hash_field(values<Time>()[row]) ^ index;
    case TypeId::kBytes:
      return hash_field(string_at(row)) ^ index;
  }
  return 0;
}

void ColumnVector::parse(uint32_t row, std::string_view text, const DataType& type) {
  set_null(row, false);
  switch (type.id) {
    case TypeId::kBigint: {
      int64_t& v = values<int64_t>()[row];
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return;
      break;  // parse_value() says what is wrong
    }
    case TypeId::kString:
      set_string(row, text);
      return;
    case TypeId::kDecimal:
      values<Decimal>()[row] = Decimal::parse(text, type.precision, type.scale);
      return;
    default:
      break;
  }
  set_value(row, parse_value(text, type));
}

void ColumnVector::grow(size_t n) {
  std::visit([n](auto& v) { v.resize(v.size() + n); }, values_);
  nulls_.resize(nulls_.size() + n, 0);
}

void ColumnVector::truncate(size_t n) {
  std::visit([n](auto& v) { v.resize(n); }, values_);
  nulls_.resize(n);
}

void ColumnVector::append_from(const ColumnVector& from, const uint32_t* rows, uint32_t n,
                               uint32_t start) {
  const size_t first = nulls_.size();
  if (rows == nullptr) {
    nulls_.insert(nulls_.end(), from.nulls_.begin() + start, from.nulls_.begin() + start + n);
  } else {
    nulls_.resize(first + n);
    for (uint32_t i = 0; i < n; ++i) nulls_[first + i] = from.nulls_[rows[i]];
  }
  if (type() == TypeId::kString || type() == TypeId::kBytes) {
    std::visit(
        [&](auto& slots) {
          using Vector = std::decay_t<decltype(slots)>;
          if constexpr (std::is_base_of_v<StringSlot, typename Vector::value_type>) {
            const Vector& source = std::get<Vector>(from.values_);
            slots.resize(first + n);
            if (rows == nullptr) {
              append_strings(source.data() + start, n, from.bytes_, slots.data() + first);
              return;
            }
            for (uint32_t i = 0; i < n; ++i) {
              set_string(static_cast<uint32_t>(first + i), from.string_at(rows[i]));
            }
          }
        },
        values_);
    return;
  }
  std::visit(
      [&](auto& to) {
        using Vector = std::decay_t<decltype(to)>;
        const Vector& source = std::get<Vector>(from.values_);
        if (rows == nullptr) {
          to.insert(to.end(), source.begin() + start, source.begin() + start + n);
        } else {
          to.resize(first + n);
          for (uint32_t i = 0; i < n; ++i) to[first + i] = source[rows[i]];
        }
      },
      values_);
}

template <typename Slot>
void ColumnVector::append_strings(const Slot* from, uint32_t n, const std::string& bytes,
                                  Slot* to) {
  // Where the strings lie: rows appended one after the other lie side by
  // side, and go in one copy.
  uint64_t total = 0;
  uint32_t low = UINT32_MAX, high = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (from[i].size == 0) continue;
    total += from[i].size;
    low = std::min(low, from[i].offset);
    high = std::max(high, from[i].offset + from[i].size);
  }
  const auto slot = [](uint32_t offset, uint32_t size) {
    Slot out;
    out.offset = offset;
    out.size = size;
    return out;
  };
  const auto base = static_cast<uint32_t>(bytes_.size());
  if (total == 0) {
    for (uint32_t i = 0; i < n; ++i) to[i] = slot(base, 0);
    return;
  }
  if (high - low == total) {
    bytes_.append(bytes, low, total);
    for (uint32_t i = 0; i < n; ++i) {
      to[i] = slot(from[i].size == 0 ? base : from[i].offset - low + base, from[i].size);
    }
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {  // strings overwritten, or apart
    to[i] = slot(static_cast<uint32_t>(bytes_.size()), from[i].size);
    bytes_.append(bytes, from[i].offset, from[i].size);
  }
}

void ColumnVector::clear() {
  std::visit([](auto& v) { v.clear(); }, values_);
  nulls_.clear();
  bytes_.clear();
}

Batch::Batch(const Schema& schema) : schema_(&schema) {
  columns_.reserve(schema.size());
  for (const Column& column : schema.columns()) columns_.emplace_back(column.type.id);
}

void Batch::set_table(const Schema& schema, uint32_t table) {
  clear();
  table_ = table;
  if (schema_ == &schema) return;
  schema_ = &schema;
  columns_.resize(schema.size(), ColumnVector(TypeId::kBigint));
  for (size_t c = 0; c < schema.size(); ++c) {
    if (columns_[c].type() != schema.column(c).type.id)
      columns_[c] = ColumnVector(schema.column(c).type.id);
  }
}

uint32_t Batch::add_rows(uint32_t n, RowKind kind) {
  const uint32_t first = size();
  if (!all_selected_) {
    for (uint32_t i = 0; i < n; ++i) selection_.push_back(first + i);
  }
  kinds_.resize(kinds_.size() + n, kind);
  if (!positions_.empty()) positions_.resize(kinds_.size(), -1);
  for (ColumnVector& column : columns_) column.grow(n);
  return first;
}

void Batch::truncate(uint32_t n) {
  if (n >= size()) return;
  if (!all_selected_) {
    while (!selection_.empty() && selection_.back() >= n) selection_.pop_back();
  }
  kinds_.resize(n);
  if (!positions_.empty()) positions_.resize(n);
  for (ColumnVector& column : columns_) column.truncate(n);
}

void Batch::set_position(uint32_t row, int64_t position) {
  if (positions_.empty()) positions_.resize(size(), -1);
  positions_[row] = position;
}

std::string Batch::misfit(const Row& row) const {
  const Schema& schema = *schema_;
  if (row.fields.size() != schema.size()) {
    return "it declares " + count_of(schema.size(), "column");
  }
  for (size_t i = 0; i < schema.size(); ++i) {
    const Value& field = row.fields[i];
    if (!field.is_null() && field.type_id() != schema.column(i).type.id) {
      return "column '" + schema.column(i).name + "' is " + schema.column(i).type.to_string();
    }
  }
  return {};
}

std::string Batch::try_append(const Row& row) {
  std::string problem = misfit(row);
  if (!problem.empty()) return problem;
  const uint32_t at = add_rows(1, row.kind);
  for (size_t i = 0; i < columns_.size(); ++i) columns_[i].set_value(at, row.fields[i]);
  return problem;
}

void Batch::append(const Row& row) {
  if (std::string problem = try_append(row); !problem.empty()) {
    throw DataError("row " + row.to_string() + " does not fit: " + problem);
  }
}

void Batch::append_from(const Batch& from, uint32_t row) {
  if (!same_layout(from)) throw_layout_mismatch(from);
  append_selected(from, &row, 1);
}

void Batch::append(const Batch& from) {
  if (!same_layout(from)) throw_layout_mismatch(from);
  append_selected(from, from.all_selected_ ? nullptr : from.selection_.data(), from.selected());
}

void Batch::append(const Batch& from, std::span<const uint32_t> rows) {
  if (!same_layout(from)) throw_layout_mismatch(from);
  const auto n = static_cast<uint32_t>(rows.size());
  // Consecutive rows (all of a batch, say) are copied as a range, not one by one.
  const auto gap = [](uint32_t a, uint32_t b) { return b != a + 1; };
  if (n > 0 && std::adjacent_find(rows.begin(), rows.end(), gap) == rows.end()) {
    append_selected(from, nullptr, n, nullptr, rows[0]);
  } else {
    append_selected(from, rows.data(), n);
  }
}

void Batch::append_columns(const Batch& from, std::span<const size_t> columns) {
  bool fits = columns.size() == columns_.size();
  for (size_t c = 0; fits && c < columns.size(); ++c) {
    fits =
        columns[c] < from.columns_.size() && from.columns_[columns[c]].type() == columns_[c].type();
  }
  if (!fits) throw_layout_mismatch(from);
  append_selected(from, from.all_selected_ ? nullptr : from.selection_.data(), from.selected(),
                  columns.data());
}

void Batch::take(Batch& from) {
  if (size() == 0 && same_layout(from)) {
    kinds_.swap(from.kinds_);
    positions_.swap(from.positions_);
    columns_.swap(from.columns_);
    std::swap(all_selected_, from.all_selected_);
    selection_.swap(from.selection_);
  } else {
    append(from);
  }
  from.clear();
}

void Batch::append_selected(const Batch& from, const uint32_t* rows, uint32_t n,
                            const size_t* columns, uint32_t start) {
  const uint32_t first = size();
  if (!all_selected_) {
    for (uint32_t i = 0; i < n; ++i) selection_.push_back(first + i);
  }
  if (rows == nullptr) {
    kinds_.insert(kinds_.end(), from.kinds_.begin() + start, from.kinds_.begin() + start + n);
  } else {
    for (uint32_t i = 0; i < n; ++i) kinds_.push_back(from.kinds_[rows[i]]);
  }
  if (!from.positions_.empty()) {
    positions_.resize(first, -1);
    for (uint32_t i = 0; i < n; ++i) {
      positions_.push_back(from.positions_[rows ? rows[i] : start + i]);
    }
  } else if (!positions_.empty()) {
    positions_.resize(kinds_.size(), -1);
  }
  for (size_t c = 0; c < columns_.size(); ++c) {
    columns_[c].append_from(from.columns_[columns ? columns[c] : c], rows, n, start);
  }
}

Row Batch::row(uint32_t row) const {
  Row out;
  out.kind = kinds_[row];
  out.fields.reserve(columns_.size());
  for (const ColumnVector& column : columns_) out.fields.push_back(column.value(row));
  return out;
}

std::vector<Row> Batch::rows() const {
  std::vector<Row> out;
  out.reserve(selected());
  const_cast<Batch*>(this)->for_each([&](uint32_t i) { out.push_back(row(i)); });
  return out;
}

bool Batch::same_layout(const Batch& other) const {
  if (schema_ == other.schema_) return true;  // the common case, per emitted row
  if (columns_.size() != other.columns_.size()) return false;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].type() != other.columns_[i].type()) return false;
  }
  return true;
}

void Batch::clear() {
  kinds_.clear();
  positions_.clear();
  for (ColumnVector& column : columns_) column.clear();
  all_selected_ = true;
  selection_.clear();
  event = {};
}

void Batch::throw_layout_mismatch(const Batch& from) const {
  throw std::logic_error("rows of (" + from.schema().to_string() + ") cannot go into a batch of (" +
                         schema().to_string() + "); emit a Row to change the columns");
}

void RowRef::throw_null(const std::string& column) const {
  throw DataError("column '" + column + "' is NULL in " + to_string() +
                  "; test it with is_null() first");
}

}  // namespace sluice
