#include "connectors/mysql_bulk_statement.hpp"

#include <mysql.h>

#include <cstring>

namespace sluice {
namespace {

// One parameter's arrays, one element per row.
struct ParameterArrays {
  std::vector<int64_t> integers;
  std::vector<double> doubles;
  std::vector<signed char> booleans;
  std::vector<std::string> texts;  // formatted DECIMAL and TIMESTAMP values
  std::vector<const char*> pointers;
  std::vector<unsigned long> lengths;
  std::vector<char> indicators;
};

// Fills `out` with `get` of every row's field `column`; NULLs are left to
// the indicator array.
template <typename T, typename Get>
void fill(std::vector<T>& out, std::span<const Row* const> rows, size_t column, Get get) {
  out.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    const Value& v = rows[r]->fields[column];
    if (!v.is_null()) out[r] = get(v);
  }
}

}  // namespace

BulkStatement::BulkStatement(MySqlConnection& connection, std::string sql, std::vector<DataType> types)
    : connection_(connection), sql_(std::move(sql)), types_(std::move(types)) {
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

size_t BulkStatement::wire_size(const Row& row, const std::vector<size_t>& columns) {
  size_t bytes = 0;
  for (size_t c : columns) {
    const Value& v = row.fields[c];
    bytes += 10 + (!v.is_null() && v.type_id() == TypeId::kString ? v.as_string().size() : 40);
  }
  return bytes;
}

uint64_t BulkStatement::execute(std::span<const Row* const> rows, const std::vector<size_t>& columns) {
  const size_t n = rows.size();
  if (n == 0) return 0;
  std::vector<ParameterArrays> arrays(columns.size());
  std::vector<MYSQL_BIND> binds(columns.size());
  for (size_t p = 0; p < columns.size(); ++p) {
    ParameterArrays& a = arrays[p];
    MYSQL_BIND& bind = binds[p];
    std::memset(&bind, 0, sizeof(bind));
    a.indicators.resize(n);
    for (size_t r = 0; r < n; ++r) {
      a.indicators[r] = rows[r]->fields[columns[p]].is_null() ? STMT_INDICATOR_NULL : STMT_INDICATOR_NONE;
    }
    bind.u.indicator = a.indicators.data();
    switch (types_[p].id) {
      case TypeId::kBigint:
        fill(a.integers, rows, columns[p], [](const Value& v) { return v.as_bigint(); });
        bind.buffer_type = MYSQL_TYPE_LONGLONG;
        bind.buffer = a.integers.data();
        break;
      case TypeId::kDouble:
        fill(a.doubles, rows, columns[p], [](const Value& v) { return v.as_double(); });
        bind.buffer_type = MYSQL_TYPE_DOUBLE;
        bind.buffer = a.doubles.data();
        break;
      case TypeId::kBoolean:
        fill(a.booleans, rows, columns[p],
             [](const Value& v) { return static_cast<signed char>(v.as_boolean() ? 1 : 0); });
        bind.buffer_type = MYSQL_TYPE_TINY;
        bind.buffer = a.booleans.data();
        break;
      case TypeId::kString:
      case TypeId::kDecimal:
      case TypeId::kTimestamp: {
        const bool string = types_[p].id == TypeId::kString;
        if (!string) a.texts.resize(n);
        a.pointers.resize(n);
        a.lengths.resize(n);
        for (size_t r = 0; r < n; ++r) {
          const Value& v = rows[r]->fields[columns[p]];
          if (v.is_null()) continue;
          // Strings are sent from the row itself; the rest formatted first.
          const std::string* text;
          if (string) {
            text = &v.as_string();
          } else {
            v.append_to(a.texts[r]);
            text = &a.texts[r];
          }
          a.pointers[r] = text->data();
          a.lengths[r] = text->size();
        }
        bind.buffer_type = MYSQL_TYPE_STRING;
        bind.buffer = a.pointers.data();
        bind.length = a.lengths.data();
        break;
      }
    }
  }
  unsigned int size = static_cast<unsigned int>(n);
  connection_.call_starting();
  if (mysql_stmt_attr_set(stmt_, STMT_ATTR_ARRAY_SIZE, &size) != 0 ||
      mysql_stmt_bind_param(stmt_, binds.data()) != 0 || mysql_stmt_execute(stmt_) != 0) {
    throw connection_.error(
        mysql_stmt_errno(stmt_),
        std::string(mysql_stmt_error(stmt_)) + " (executing " + sql_.substr(0, 120) + ")");
  }
  return mysql_stmt_affected_rows(stmt_);
}

}  // namespace sluice
