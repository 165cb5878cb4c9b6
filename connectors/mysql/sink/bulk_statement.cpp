#include "sluice/connectors/mysql/sink/bulk_statement.hpp"

#include <mysql.h>

#include <algorithm>
#include <cstring>

namespace sluice {
namespace {

// One parameter's arrays, one element per row, where the column's own
// cannot be bound.
struct ParameterArrays {
  std::vector<int64_t> integers;
  std::vector<double> doubles;
  std::vector<BoolSlot> booleans;
  std::string texts;  // formatted DECIMAL, TIMESTAMP, DATE and TIME values, one after another
  std::vector<const char*> pointers;
  std::vector<unsigned long> lengths;
  std::vector<uint8_t> nulls;
};

// The column's values of rows `rows`: the column itself from rows[0] on
// when they are consecutive, else gathered into `gathered`.
template <typename T>
const T* values_of(const std::vector<T>& column, std::span<const uint32_t> rows, bool consecutive,
                   std::vector<T>& gathered) {
  if (consecutive) return column.data() + rows[0];
  gathered.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) gathered[r] = column[rows[r]];
  return gathered.data();
}

// Appends the text of row `row` of `column`, a DECIMAL, TIMESTAMP, DATE or
// TIME, as Value::append_to() writes it.
void append_text(const ColumnVector& column, uint32_t row, std::string& out) {
  switch (column.type()) {
    case TypeId::kDecimal:
      column.values<Decimal>()[row].append_to(out);
      break;
    case TypeId::kTimestamp:
      column.values<Timestamp>()[row].append_to(out);
      break;
    case TypeId::kDate:
      column.values<Date>()[row].append_to(out);
      break;
    case TypeId::kTime:
      column.values<Time>()[row].append_to(out);
      break;
    default:
      column.value(row).append_to(out);
  }
}

// Binds `bind` to the values of `column` (of type `type`) at rows `rows`,
// gathered into `a` where the column's own cannot be bound.
void bind_parameter(const ColumnVector& column, TypeId type, std::span<const uint32_t> rows,
                    bool consecutive, ParameterArrays& a, MYSQL_BIND& bind) {
  const size_t n = rows.size();
  std::memset(&bind, 0, sizeof(bind));
  // A null flag is 0 or 1: STMT_INDICATOR_NONE or STMT_INDICATOR_NULL.
  static_assert(STMT_INDICATOR_NONE == 0 && STMT_INDICATOR_NULL == 1);
  bind.u.indicator = reinterpret_cast<char*>(
      const_cast<uint8_t*>(values_of(column.null_flags(), rows, consecutive, a.nulls)));
  switch (type) {
    case TypeId::kBigint:
      bind.buffer_type = MYSQL_TYPE_LONGLONG;
      bind.buffer =
          const_cast<int64_t*>(values_of(column.values<int64_t>(), rows, consecutive, a.integers));
      break;
    case TypeId::kDouble:
      bind.buffer_type = MYSQL_TYPE_DOUBLE;
      bind.buffer =
          const_cast<double*>(values_of(column.values<double>(), rows, consecutive, a.doubles));
      break;
    case TypeId::kBoolean:
      static_assert(sizeof(BoolSlot) == 1);
      bind.buffer_type = MYSQL_TYPE_TINY;
      bind.buffer = const_cast<BoolSlot*>(
          values_of(column.values<BoolSlot>(), rows, consecutive, a.booleans));
      break;
    case TypeId::kString:
    case TypeId::kBytes:
    case TypeId::kDecimal:
    case TypeId::kTimestamp:
    case TypeId::kDate:
    case TypeId::kTime: {
      // Strings and bytes are sent from the batch itself; the rest
      // formatted first, as the server reads them exactly.
      const bool in_place = type == TypeId::kString || type == TypeId::kBytes;
      a.pointers.assign(n, nullptr);
      a.lengths.assign(n, 0);
      for (size_t r = 0; r < n; ++r) {
        if (column.is_null(rows[r])) continue;
        if (in_place) {
          const std::string_view text = column.string_at(rows[r]);
          a.pointers[r] = text.data();
          a.lengths[r] = text.size();
        } else {
          const size_t from = a.texts.size();
          append_text(column, rows[r], a.texts);
          a.lengths[r] = a.texts.size() - from;
        }
      }
      if (!in_place) {  // now that a.texts no longer moves
        for (size_t r = 0, at = 0; r < n; at += a.lengths[r], ++r) {
          a.pointers[r] = a.texts.data() + at;
        }
      }
      // Bytes as bytes: the server takes no charset of theirs.
      bind.buffer_type = type == TypeId::kBytes ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
      bind.buffer = a.pointers.data();
      bind.length = a.lengths.data();
      break;
    }
  }
}

}  // namespace

BulkStatement::BulkStatement(MySqlConnection& connection, std::string sql,
                             std::vector<DataType> types, size_t rows)
    : connection_(connection), sql_(std::move(sql)), types_(std::move(types)), rows_(rows) {
  stmt_ = mysql_stmt_init(connection.raw());
  if (stmt_ == nullptr) connection.throw_error("mysql_stmt_init");
  connection.call_starting();
  if (mysql_stmt_prepare(stmt_, sql_.data(), sql_.size()) != 0) {
    const MySqlError error = connection.error(mysql_stmt_errno(stmt_),
                                              "preparing " + sql_ + ": " + mysql_stmt_error(stmt_));
    mysql_stmt_close(stmt_);
    throw error;
  }
}

BulkStatement::~BulkStatement() { mysql_stmt_close(stmt_); }

size_t BulkStatement::wire_size(const Batch& batch, uint32_t row,
                                const std::vector<size_t>& columns) {
  size_t bytes = 0;
  for (size_t c : columns) {
    const ColumnVector& column = batch.column(c);
    const bool text = (column.type() == TypeId::kString || column.type() == TypeId::kBytes) &&
                      !column.is_null(row);
    bytes += 10 + (text ? column.string_at(row).size() : 40);
  }
  return bytes;
}

uint64_t BulkStatement::execute(const Batch& batch, std::span<const uint32_t> rows,
                                const std::vector<size_t>& columns) {
  if (rows.empty()) return 0;
  // Execution i binds rows[i * rows_ + j] to the parameters of its row j.
  const size_t n = rows.size() / rows_;
  std::vector<ParameterArrays> arrays(columns.size() * rows_);
  std::vector<MYSQL_BIND> binds(arrays.size());
  std::vector<uint32_t> strided;
  for (size_t j = 0; j < rows_; ++j) {
    std::span<const uint32_t> of_row = rows;
    if (rows_ > 1) {
      strided.resize(n);
      for (size_t i = 0; i < n; ++i) strided[i] = rows[i * rows_ + j];
      of_row = strided;
    }
    const bool consecutive =
        of_row.back() - of_row.front() + 1 == n && std::is_sorted(of_row.begin(), of_row.end());
    for (size_t c = 0; c < columns.size(); ++c) {
      const size_t p = j * columns.size() + c;
      bind_parameter(batch.column(columns[c]), types_[c].id, of_row, consecutive, arrays[p],
                     binds[p]);
    }
  }
  unsigned int size = static_cast<unsigned int>(n);
  connection_.call_starting();
  if (mysql_stmt_attr_set(stmt_, STMT_ATTR_ARRAY_SIZE, &size) != 0 ||
      mysql_stmt_bind_param(stmt_, binds.data()) != 0 || mysql_stmt_execute(stmt_) != 0) {
    throw connection_.error(
        mysql_stmt_errno(stmt_),
        std::string(mysql_stmt_error(stmt_)) + " (executing " + shortened_sql(sql_, 120) + ")");
  }
  return mysql_stmt_affected_rows(stmt_);
}

}  // namespace sluice
