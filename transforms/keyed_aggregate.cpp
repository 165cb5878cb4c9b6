#include "sluice/transforms/keyed_aggregate.hpp"

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// sum + sign * value, in the sum's type.
Value add(const Value& sum, const Value& value, int sign) {
  if (value.is_null()) return sum;
  switch (value.type_id()) {
    case TypeId::kBigint:
      return sum.as_bigint() + sign * value.as_bigint();
    case TypeId::kDouble:
      return sum.as_double() + sign * value.as_double();
    case TypeId::kDecimal:
      return sign > 0 ? sum.as_decimal() + value.as_decimal()
                      : sum.as_decimal() - value.as_decimal();
    default:
      throw DataError("cannot sum a " + value.to_string());
  }
}

Value zero_of(const DataType& type) {
  switch (type.id) {
    case TypeId::kBigint:
      return int64_t{0};
    case TypeId::kDouble:
      return 0.0;
    default:
      return Decimal(0, type.scale);
  }
}

class KeyedAggregate final : public Operator {
 public:
  KeyedAggregate(std::vector<size_t> keys, size_t value, DataType sum_type)
      : keys_(std::move(keys)), value_(value), sum_type_(sum_type) {}

  void open(OperatorContext& context) override {
    // Per key: the count, then the sum.
    accumulators_.emplace(context.keyed_value_state<std::vector<Value>>("accumulator"));
  }

  // The input comes through key_by: the state is that of the row's key.
  void process_row(RowRef row, Collector& out) override {
    int64_t count = 0;
    Value sum = zero_of(sum_type_);
    if (auto saved = accumulators_->get()) {
      count = saved->at(0).as_bigint();
      sum = std::move(saved->at(1));
    }
    const bool adds = row.kind() == RowKind::kInsert || row.kind() == RowKind::kUpdateAfter;
    const int sign = adds ? 1 : -1;
    const int64_t new_count = count + sign;
    const Value new_sum = add(sum, row.value(value_), sign);
    if (new_count < 0) {
      throw DataError("retraction " + row.to_string() + " of a key that has no rows");
    }
    if (new_count == 0) {
      accumulators_->erase();
      emit(out, RowKind::kDelete, row, count, sum);
      return;
    }
    accumulators_->put({Value(new_count), new_sum});
    if (count == 0) {
      emit(out, RowKind::kInsert, row, new_count, new_sum);
    } else {
      emit(out, RowKind::kUpdateBefore, row, count, sum);
      emit(out, RowKind::kUpdateAfter, row, new_count, new_sum);
    }
  }

 private:
  // Appends (key columns of `input`, count, sum) to the output's columns.
  void emit(Collector& out, RowKind kind, RowRef input, int64_t count, const Value& sum) const {
    Batch& batch = out.batch();
    const uint32_t at = batch.add_rows(1, kind);
    size_t c = 0;
    for (size_t k : keys_) batch.column(c++).set_value(at, input.value(k));
    batch.column(c++).values<int64_t>()[at] = count;
    batch.column(c).set_value(at, sum);
  }

  const std::vector<size_t> keys_;
  const size_t value_;
  const DataType sum_type_;
  std::optional<KeyedValueState<std::vector<Value>>> accumulators_;
};

// The operator for input rows of `in`.
OperatorDef keyed_aggregate_of(const Schema& in, const std::vector<std::string>& key_columns,
                               const std::string& value_column) {
  std::vector<size_t> keys;
  std::vector<Column> columns;
  for (const auto& k : key_columns) {
    if (const auto i = in.index_of(k)) {
      keys.push_back(*i);
      columns.push_back(in.column(*i));
    }
  }
  const auto value = in.index_of(value_column);
  DataType sum_type = DataType::bigint();
  if (value) {
    const DataType& t = in.column(*value).type;
    sum_type = t.id == TypeId::kDecimal ? DataType::decimal(Decimal::kMaxPrecision, t.scale) : t;
  }
  columns.push_back({"count", DataType::bigint()});
  columns.push_back({"sum", sum_type});
  StreamType output{Schema(std::move(columns), key_columns), ChangelogMode::all()};

  auto check = [value_column, sum_type](const StreamType& type) {
    std::vector<std::string> problems;
    const auto i = type.schema.index_of(value_column);
    if (!i) {
      problems.push_back("value column '" + value_column + "' is not in its input");
    } else if (const TypeId t = type.schema.column(*i).type.id;
               t != TypeId::kBigint && t != TypeId::kDouble && t != TypeId::kDecimal) {
      problems.push_back("cannot sum column '" + value_column + "' of type " +
                         type.schema.column(*i).type.to_string());
    }
    if (type.mode.contains(RowKind::kUpdateAfter) && !type.mode.contains(RowKind::kUpdateBefore)) {
      problems.push_back("its input " + type.mode.to_string() +
                         " has updates without update-before (-U) rows, which it cannot retract");
    }
    return problems;
  };
  const size_t value_index = value.value_or(0);
  return {.create =
              [keys, value_index, sum_type](const SubtaskInfo&) {
                return std::make_unique<KeyedAggregate>(keys, value_index, sum_type);
              },
          .output = std::move(output),
          .check = check,
          .keyed_state = true,
          .key_by = key_columns};
}

}  // namespace

OperatorDef keyed_aggregate(std::vector<std::string> key_columns, std::string value_column) {
  return {.for_input = [key_columns, value_column](const StreamType& input) {
    return keyed_aggregate_of(input.schema, key_columns, value_column);
  }};
}

}  // namespace sluice
