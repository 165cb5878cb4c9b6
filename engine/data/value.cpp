#include "sluice/engine/data/value.hpp"

#include <charconv>
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
  }
  return false;
}

TypeId Value::type_id() const {
  constexpr TypeId kIds[] = {TypeId::kBigint, TypeId::kBigint,  TypeId::kDouble,   TypeId::kDecimal,
                             TypeId::kString, TypeId::kBoolean, TypeId::kTimestamp};
  if (is_null()) throw DataError("a NULL value has no type");
  return kIds[v_.index()];
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
// trailing zeros stripped.
size_t hash_field(const Decimal& v) {
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

size_t Value::hash() const {
  const size_t h = std::visit(
      [](const auto& v) -> size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return 0x9e3779b97f4a7c15ULL;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return hash_field(std::string_view(v));
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
  }
  throw DataError("unknown type");
}

}  // namespace sluice
