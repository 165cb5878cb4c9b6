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

void encode_value(const Value& v, std::string& out) {
  if (v.is_null()) {
    out.push_back(kNull);
    return;
  }
  switch (v.type_id()) {
    case TypeId::kBigint:
      out.push_back(kBigint);
      put_raw(out, v.as_bigint());
      break;
    case TypeId::kDouble:
      out.push_back(kDouble);
      put_raw(out, v.as_double());
      break;
    case TypeId::kDecimal: {
      const Decimal& d = v.as_decimal();
      out.push_back(d.wide() ? kWideDecimal : kDecimal);
      out.push_back(static_cast<char>(d.scale()));
      put_raw(out, d.low());
      if (d.wide()) put_raw(out, d.high());
      break;
    }
    case TypeId::kString:
      out.push_back(kString);
      put_varint(out, v.as_string().size());
      out += v.as_string();
      break;
    case TypeId::kBoolean:
      out.push_back(v.as_boolean() ? kTrue : kFalse);
      break;
    case TypeId::kTimestamp:
      out.push_back(kTimestamp);
      put_raw(out, v.as_timestamp().micros);
      break;
    case TypeId::kDate:
      out.push_back(kDate);
      put_raw(out, v.as_date().days);
      break;
    case TypeId::kTime:
      out.push_back(kTime);
      put_raw(out, v.as_time().micros);
      break;
    case TypeId::kBytes:
      out.push_back(kBytes);
      put_varint(out, v.as_bytes().size());
      out += v.as_bytes();
      break;
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
  for (size_t i : key_indexes) encode_value(row.value(i), out);
  return out;
}

}  // namespace sluice
