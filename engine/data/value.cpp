#include "sluice/engine/data/value.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <functional>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

bool Value::matches(const DataType& type) const {
  switch (type.id) {
    case TypeId::kBigint:
      return is_null() || std::holds_alternative<int64_t>(v_);
    case TypeId::kDouble:
      return is_null() || std::holds_alternative<double>(v_);
    case TypeId::kDecimal:
      return is_null() || (std::holds_alternative<Decimal>(v_) &&
                           std::get<Decimal>(v_).fits(type.precision, type.scale));
    case TypeId::kString:
      return is_null() || std::holds_alternative<std::string>(v_);
    case TypeId::kBoolean:
      return is_null() || std::holds_alternative<bool>(v_);
    case TypeId::kTimestamp:
      return is_null() || std::holds_alternative<Timestamp>(v_);
    case TypeId::kDate:
      return is_null() || std::holds_alternative<Date>(v_);
    case TypeId::kTime:
      return is_null() || std::holds_alternative<Time>(v_);
    case TypeId::kBytes:
      return is_null() || std::holds_alternative<Bytes>(v_);
  }
  return false;
}

TypeId Value::type_id() const {
  if (is_null()) throw DataError("a NULL value has no type");
  // The variant's alternatives after monostate follow TypeId's order.
  return static_cast<TypeId>(v_.index() - 1);
}

const char* Value::type_name() const {
  // The variant's alternatives after monostate follow TypeId's order.
  return is_null() ? "NULL" : kTypeNames[v_.index() - 1];
}

void Value::throw_type_mismatch(const char* expected) const {
  throw DataError(std::string("expected a ") + expected + " value, got " + type_name() + " " +
                  to_string());
}

void Value::append_to(std::string& out) const {
  struct Append {
    std::string& out;
    void operator()(std::monostate) { out += "NULL"; }
    void operator()(int64_t v) {
      char buf[24];
      out.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
    }
    void operator()(double v) {
      char buf[32];
      out.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
    }
    void operator()(const Decimal& v) { v.append_to(out); }
    void operator()(const std::string& v) { out += v; }
    void operator()(bool v) { out += v ? "true" : "false"; }
    void operator()(Timestamp v) { v.append_to(out); }
    void operator()(Date v) { v.append_to(out); }
    void operator()(Time v) { v.append_to(out); }
    void operator()(const Bytes& v) { out += base64_encode(v.data); }
  };
  std::visit(Append{out}, v_);
}

std::string Value::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

size_t hash_field(int64_t v) { return std::hash<int64_t>{}(v); }
size_t hash_field(double v) { return std::hash<double>{}(v); }
// Equal decimals hash equally whatever their scale: hash the value with
// trailing zeros stripped (and a wide one as a narrow one, if it then is).
size_t hash_field(const Decimal& v) {
  if (v.wide()) {
    Decimal stripped = v;
    while (stripped.scale() > 0 && stripped.wide()) {
      const Decimal less = stripped.rescaled(stripped.scale() - 1, Rounding::kDown);
      if (less != stripped) break;
      stripped = less;
    }
    if (stripped.wide()) {
      return hash_field(static_cast<int64_t>(static_cast<uint64_t>(stripped.low()) ^
                                             static_cast<uint64_t>(stripped.high()) ^
                                             static_cast<uint64_t>(stripped.scale())));
    }
    return hash_field(stripped);
  }
  __int128 u = v.unscaled();
  int scale = v.scale();
  while (scale > 0 && u % 10 == 0) {
    u /= 10;
    --scale;
  }
  const auto lo = static_cast<uint64_t>(u);
  const auto hi = static_cast<uint64_t>(u >> 64);
  return std::hash<uint64_t>{}(lo ^ (hi * 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(scale));
}
size_t hash_field(std::string_view v) { return std::hash<std::string_view>{}(v); }
size_t hash_field(bool v) { return v ? 1 : 2; }
size_t hash_field(Timestamp v) { return std::hash<int64_t>{}(v.micros); }
size_t hash_field(Date v) { return std::hash<int32_t>{}(v.days); }
size_t hash_field(Time v) { return std::hash<int64_t>{}(v.micros); }

namespace {
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

void base64_append(std::string_view bytes, std::string& out) {
  // The two characters of every 12 bits: half the lookups of one a character.
  static const auto kPairs = [] {
    std::array<char, 2 * 4096> pairs{};
    for (size_t v = 0; v < 4096; ++v) {
      pairs[2 * v] = kBase64[v >> 6];
      pairs[2 * v + 1] = kBase64[v & 63];
    }
    return pairs;
  }();
  const size_t at = out.size();
  out.resize(at + (bytes.size() + 2) / 3 * 4);
  char* o = out.data() + at;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  for (; i + 3 <= n; i += 3, o += 4) {
    const uint32_t v = uint32_t{p[i]} << 16 | uint32_t{p[i + 1]} << 8 | p[i + 2];
    std::memcpy(o, &kPairs[2 * (v >> 12)], 2);
    std::memcpy(o + 2, &kPairs[2 * (v & 4095)], 2);
  }
  if (i < n) {
    const bool two = i + 1 < n;
    const uint32_t v = uint32_t{p[i]} << 16 | (two ? uint32_t{p[i + 1]} << 8 : 0);
    *o++ = kBase64[v >> 18];
    *o++ = kBase64[(v >> 12) & 63];
    *o++ = two ? kBase64[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  base64_append(bytes, out);
  return out;
}

std::string base64_decode(std::string_view text) {
  const auto fail = [&] {
    throw DataError("expected BYTES in base64 (as \"AP8Q\"), got '" + std::string(text) + "'");
  };
  if (text.size() % 4 != 0) fail();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    size_t padding = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const char* at = c == '\0' ? nullptr : std::strchr(kBase64, c);
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++padding;
      } else if (at == nullptr || padding > 0) {
        fail();
      }
      v = (v << 6) | (at ? static_cast<uint32_t>(at - kBase64) : 0u);
    }
    for (size_t k = 0; k < 3 - padding; ++k)
      out.push_back(static_cast<char>((v >> (16 - 8 * k)) & 255));
  }
  return out;
}

size_t Value::hash() const {
  const size_t h = std::visit(
      [](const auto& v) -> size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return 0x9e3779b97f4a7c15ULL;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return hash_field(std::string_view(v));
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return hash_field(std::string_view(v.data));
        } else {
          return hash_field(v);
        }
      },
      v_);
  return h ^ v_.index();
}

Value parse_value(std::string_view text, const DataType& type) {
  switch (type.id) {
    case TypeId::kBigint: {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        throw DataError(
            "expected a BIGINT (a whole number from -9223372036854775808 to "
            "9223372036854775807), got " +
            quoted(text));
      }
      return v;
    }
    case TypeId::kDouble: {
      double v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        throw DataError("expected a DOUBLE such as 3.25 or -1.5e10, got " + quoted(text));
      }
      return v;
    }
    case TypeId::kDecimal:
      return Decimal::parse(text, type.precision, type.scale);
    case TypeId::kString:
      return text;
    case TypeId::kBoolean:
      if (iequals(text, "true") || text == "1") return Value::boolean(true);
      if (iequals(text, "false") || text == "0") return Value::boolean(false);
      throw DataError("expected a BOOLEAN (true, false, 1 or 0), got " + quoted(text));
    case TypeId::kTimestamp:
      return Timestamp::parse(text);
    case TypeId::kDate:
      return Date::parse(text);
    case TypeId::kTime:
      return Time::parse(text);
    case TypeId::kBytes:
      return Value::bytes(base64_decode(text));
  }
  throw DataError("unknown type");
}

}  // namespace sluice
