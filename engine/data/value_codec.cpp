#include "sluice/engine/data/value_codec.hpp"

#include <cstring>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// Kept in checkpoints: new tags go at the end.
enum Tag : char {
  kNull,
  kBigint,
  kDouble,
  kDecimal,
  kString,
  kTrue,
  kFalse,
  kTimestamp,
  kDate,
  kTime,
  kBytes,
  kWideDecimal,
};

template <typename T>
void put_raw(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ == bytes_.size(); }
  char tag() { return take(1)[0]; }
  template <typename T>
  T raw() {
    T v;
    std::memcpy(&v, take(sizeof(T)).data(), sizeof(T));
    return v;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const auto byte = static_cast<unsigned char>(take(1)[0]);
      v |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    throw DataError("malformed encoded value: varint too long");
  }
  std::string_view take(size_t n) {
    if (bytes_.size() - pos_ < n) throw DataError("malformed encoded value: truncated");
    const std::string_view part = bytes_.substr(pos_, n);
    pos_ += n;
    return part;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// A value's parts, read from a Value (FromValue) or from a batch's column
// (FromColumn): one encoding for both.
struct FromValue {
  const Value& v;
  int64_t bigint() const { return v.as_bigint(); }
  double real() const { return v.as_double(); }
  const Decimal& decimal() const { return v.as_decimal(); }
  std::string_view text() const { return v.as_string(); }
  bool boolean() const { return v.as_boolean(); }
  Timestamp timestamp() const { return v.as_timestamp(); }
  Date date() const { return v.as_date(); }
  Time time() const { return v.as_time(); }
  std::string_view bytes() const { return v.as_bytes(); }
};

struct FromColumn {
  const ColumnVector& c;
  uint32_t row;
  int64_t bigint() const { return c.values<int64_t>()[row]; }
  double real() const { return c.values<double>()[row]; }
  const Decimal& decimal() const { return c.values<Decimal>()[row]; }
  std::string_view text() const { return c.string_at(row); }
  bool boolean() const { return c.values<BoolSlot>()[row].value; }
  Timestamp timestamp() const { return c.values<Timestamp>()[row]; }
  Date date() const { return c.values<Date>()[row]; }
  Time time() const { return c.values<Time>()[row]; }
  std::string_view bytes() const { return c.string_at(row); }
};

// Appends the value `from` reads, of type `type`, not NULL.
template <typename From>
void encode_non_null(TypeId type, const From& from, std::string& out) {
  switch (type) {
    case TypeId::kBigint:
      out.push_back(kBigint);
      put_raw(out, from.bigint());
      break;
    case TypeId::kDouble:
      out.push_back(kDouble);
      put_raw(out, from.real());
      break;
    case TypeId::kDecimal: {
      const Decimal& d = from.decimal();
      out.push_back(d.wide() ? kWideDecimal : kDecimal);
      out.push_back(static_cast<char>(d.scale()));
      put_raw(out, d.low());
      if (d.wide()) put_raw(out, d.high());
      break;
    }
    case TypeId::kString:
      out.push_back(kString);
      put_varint(out, from.text().size());
      out += from.text();
      break;
    case TypeId::kBoolean:
      out.push_back(from.boolean() ? kTrue : kFalse);
      break;
    case TypeId::kTimestamp:
      out.push_back(kTimestamp);
      put_raw(out, from.timestamp().micros);
      break;
    case TypeId::kDate:
      out.push_back(kDate);
      put_raw(out, from.date().days);
      break;
    case TypeId::kTime:
      out.push_back(kTime);
      put_raw(out, from.time().micros);
      break;
    case TypeId::kBytes:
      out.push_back(kBytes);
      put_varint(out, from.bytes().size());
      out += from.bytes();
      break;
  }
}

void encode_value(const Value& v, std::string& out) {
  if (v.is_null()) {
    out.push_back(kNull);
  } else {
    encode_non_null(v.type_id(), FromValue{v}, out);
  }
}

}  // namespace

void encode_values(const std::vector<Value>& values, std::string& out) {
  for (const Value& v : values) encode_value(v, out);
}

std::string encode_values(const std::vector<Value>& values) {
  std::string out;
  encode_values(values, out);
  return out;
}

std::vector<Value> decode_values(std::string_view bytes) {
  Reader in(bytes);
  std::vector<Value> values;
  while (!in.done()) {
    switch (in.tag()) {
      case kNull:
        values.emplace_back();
        break;
      case kBigint:
        values.emplace_back(in.raw<int64_t>());
        break;
      case kDouble:
        values.emplace_back(in.raw<double>());
        break;
      case kDecimal: {
        const int scale = in.tag();
        values.emplace_back(Decimal(in.raw<__int128>(), scale));
        break;
      }
      case kString:
        values.emplace_back(in.take(in.varint()));
        break;
      case kTrue:
        values.push_back(Value::boolean(true));
        break;
      case kFalse:
        values.push_back(Value::boolean(false));
        break;
      case kTimestamp:
        values.emplace_back(Timestamp{in.raw<int64_t>()});
        break;
      case kDate:
        values.emplace_back(Date{in.raw<int32_t>()});
        break;
      case kTime:
        values.emplace_back(Time{in.raw<int64_t>()});
        break;
      case kBytes:
        values.push_back(Value::bytes(std::string(in.take(in.varint()))));
        break;
      case kWideDecimal: {
        const int scale = in.tag();
        const auto low = in.raw<__int128>();
        values.emplace_back(Decimal::from_halves(in.raw<__int128>(), low, scale));
        break;
      }
      default:
        throw DataError("malformed encoded value: unknown tag");
    }
  }
  return values;
}

std::string encode_key(const Row& row, const std::vector<size_t>& key_indexes) {
  std::string out;
  for (size_t i : key_indexes) encode_value(row.fields[i], out);
  return out;
}

std::string encode_key(RowRef row, const std::vector<size_t>& key_indexes) {
  std::string out;
  for (size_t i : key_indexes) {
    const ColumnVector& column = row.batch().column(i);
    if (column.is_null(row.index())) {
      out.push_back(kNull);
    } else {
      encode_non_null(column.type(), FromColumn{column, row.index()}, out);
    }
  }
  return out;
}

}  // namespace sluice
