#include "sluice/connectors/mysql/cdc/binary_json.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>

#include "sluice/connectors/mysql/cdc/binlog_rows.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/decimal.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {
namespace {

// The value types of the binary form (sql/json_binary.h).
enum : uint8_t {
  kSmallObject = 0x00,
  kLargeObject = 0x01,
  kSmallArray = 0x02,
  kLargeArray = 0x03,
  kLiteral = 0x04,
  kInt16 = 0x05,
  kUint16 = 0x06,
  kInt32 = 0x07,
  kUint32 = 0x08,
  kInt64 = 0x09,
  kUint64 = 0x0a,
  kDouble = 0x0b,
  kString = 0x0c,
  kOpaque = 0x0f,
};

// The field types an opaque value may carry (enum_field_types).
enum : uint8_t {
  kFieldTimestamp = 7,
  kFieldDate = 10,
  kFieldTime = 11,
  kFieldDatetime = 12,
  kFieldNewDecimal = 246,
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view bytes) : bytes_(bytes) {}

  void document(std::string& out) {
    need(0, 1);
    value(static_cast<uint8_t>(bytes_[0]), 1, out);
  }

 private:
  [[noreturn]] void corrupt() const {
    throw DataError("a MySQL JSON value in the binlog is not in JSON's binary form");
  }
  void need(size_t at, size_t n) const {
    if (at > bytes_.size() || bytes_.size() - at < n) corrupt();
  }
  uint64_t unsigned_at(size_t at, size_t n) const {
    need(at, n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(bytes_[at + i])} << (8 * i);
    return v;
  }
  int64_t signed_at(size_t at, size_t n) const {
    const uint64_t v = unsigned_at(at, n);
    const int shift = static_cast<int>(64 - 8 * n);
    return static_cast<int64_t>(v << shift) >> shift;
  }
  // A data-length: 7 bits a byte, least significant first.
  uint64_t length_at(size_t& at) const {
    uint64_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      need(at, 1);
      const auto b = static_cast<uint8_t>(bytes_[at++]);
      v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return v;
    }
    corrupt();
  }

  // The value of type `type` at `at`.
  void value(uint8_t type, size_t at, std::string& out) const {
    switch (type) {
      case kSmallObject:
      case kLargeObject:
        container(at, type == kLargeObject, true, out);
        return;
      case kSmallArray:
      case kLargeArray:
        container(at, type == kLargeArray, false, out);
        return;
      case kLiteral:
        literal(unsigned_at(at, 1), out);
        return;
      case kInt16:
        out += std::to_string(signed_at(at, 2));
        return;
      case kUint16:
        out += std::to_string(unsigned_at(at, 2));
        return;
      case kInt32:
        out += std::to_string(signed_at(at, 4));
        return;
      case kUint32:
        out += std::to_string(unsigned_at(at, 4));
        return;
      case kInt64:
        out += std::to_string(signed_at(at, 8));
        return;
      case kUint64:
        out += std::to_string(unsigned_at(at, 8));
        return;
      case kDouble: {
        const uint64_t bits = unsigned_at(at, 8);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        append_double(d, out);
        return;
      }
      case kString: {
        const uint64_t n = length_at(at);
        need(at, n);
        append_quoted(bytes_.substr(at, n), out);
        return;
      }
      case kOpaque: {
        need(at, 1);
        const auto field = static_cast<uint8_t>(bytes_[at++]);
        const uint64_t n = length_at(at);
        need(at, n);
        opaque(field, bytes_.substr(at, n), out);
        return;
      }
      default:
        corrupt();
    }
  }

  void literal(uint64_t which, std::string& out) const {
    switch (which) {
      case 0:
        out += "null";
        return;
      case 1:
        out += "true";
        return;
      case 2:
        out += "false";
        return;
      default:
        corrupt();
    }
  }

  // An object or an array whose header begins at `at`; offsets in it count
  // from there.
  void container(size_t at, bool large, bool object, std::string& out) const {
    const size_t word = large ? 4 : 2;
    const uint64_t count = unsigned_at(at, word);
    const uint64_t size = unsigned_at(at + word, word);
    need(at, size);
    const size_t keys = at + 2 * word;  // key entries: offset, length (2)
    const size_t values = keys + (object ? count * (word + 2) : 0);  // value entries: type, offset
    out += object ? '{' : '[';
    for (uint64_t i = 0; i < count; ++i) {
      if (i > 0) out += ", ";
      if (object) {
        const size_t entry = keys + i * (word + 2);
        const uint64_t offset = unsigned_at(entry, word);
        const uint64_t length = unsigned_at(entry + word, 2);
        need(at + offset, length);
        append_quoted(bytes_.substr(at + offset, length), out);
        out += ": ";
      }
      const size_t entry = values + i * (1 + word);
      need(entry, 1 + word);
      const auto type = static_cast<uint8_t>(bytes_[entry]);
      // Literals, and integers that fit the offset's place, stand there.
      const bool inlined = type == kLiteral || type == kInt16 || type == kUint16 ||
                           (large && (type == kInt32 || type == kUint32));
      if (inlined) {
        value(type, entry + 1, out);
      } else {
        const uint64_t offset = unsigned_at(entry + 1, word);
        if (offset >= size) corrupt();
        value(type, at + offset, out);
      }
    }
    out += object ? '}' : ']';
  }

  void opaque(uint8_t field, std::string_view data, std::string& out) const {
    switch (field) {
      case kFieldNewDecimal: {
        // Precision, scale, then MySQL's binary DECIMAL.
        if (data.size() < 2) corrupt();
        const int precision = static_cast<uint8_t>(data[0]);
        const int scale = static_cast<uint8_t>(data[1]);
        out += binary_decimal(data.substr(2), precision, scale).to_string();
        return;
      }
      case kFieldDate:
      case kFieldDatetime:
      case kFieldTimestamp:
      case kFieldTime: {
        if (data.size() < 8) corrupt();
        int64_t packed = 0;
        for (size_t i = 0; i < 8; ++i) packed |= int64_t{static_cast<uint8_t>(data[i])} << (8 * i);
        out += '"' + packed_temporal(field, packed) + '"';
        return;
      }
      default:
        out += "\"base64:type" + std::to_string(field) + ":" + base64_encode(data) + '"';
    }
  }

  // MySQL's packed temporal form (my_time.h): ((date << 17 | time) << 24) +
  // microseconds, negative for a negative TIME; date is (year * 13 + month)
  // << 5 | day, time hour << 12 | minute << 6 | second.
  static std::string packed_temporal(uint8_t field, int64_t packed) {
    const bool negative = packed < 0;
    const uint64_t v = negative ? static_cast<uint64_t>(-packed) : static_cast<uint64_t>(packed);
    const uint64_t micros = v % (1 << 24);
    const uint64_t whole = v >> 24;
    const uint64_t ymd = whole >> 17, hms = whole % (1 << 17);
    const uint64_t ym = ymd >> 5;
    char text[64];
    if (field == kFieldTime) {
      // A TIME keeps its hours in the date's place beyond 24 too.
      std::snprintf(text, sizeof text, "%s%02llu:%02llu:%02llu.%06llu", negative ? "-" : "",
                    static_cast<unsigned long long>(hms >> 12),
                    static_cast<unsigned long long>((hms >> 6) % 64),
                    static_cast<unsigned long long>(hms % 64),
                    static_cast<unsigned long long>(micros));
    } else if (field == kFieldDate) {
      std::snprintf(
          text, sizeof text, "%04llu-%02llu-%02llu", static_cast<unsigned long long>(ym / 13),
          static_cast<unsigned long long>(ym % 13), static_cast<unsigned long long>(ymd % 32));
    } else {
      std::snprintf(
          text, sizeof text, "%04llu-%02llu-%02llu %02llu:%02llu:%02llu.%06llu",
          static_cast<unsigned long long>(ym / 13), static_cast<unsigned long long>(ym % 13),
          static_cast<unsigned long long>(ymd % 32), static_cast<unsigned long long>(hms >> 12),
          static_cast<unsigned long long>((hms >> 6) % 64),
          static_cast<unsigned long long>(hms % 64), static_cast<unsigned long long>(micros));
    }
    return text;
  }

  static void append_double(double d, std::string& out) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, d).ptr;
    const std::string_view written(text, static_cast<size_t>(end - text));
    out += written;
    // A double keeps a point, so that it reads back as one.
    if (written.find_first_of(".eEn") == std::string_view::npos) out += ".0";
  }

  static void append_quoted(std::string_view text, std::string& out) {
    out += '"';
    for (const char c : text) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out += escaped;
          } else {
            out += c;
          }
      }
    }
    out += '"';
  }

  Decimal binary_decimal(std::string_view b, int precision, int scale) const {
    const size_t size = binary_decimal_size(precision, scale);
    if (precision < 1 || scale > precision || b.size() < size || size == 0) corrupt();
    return decode_binary_decimal(reinterpret_cast<const uint8_t*>(b.data()), precision, scale);
  }

  std::string_view bytes_;
};

}  // namespace

std::string mysql_json_text(std::string_view binary) {
  std::string out;
  if (binary.empty()) return "null";  // how MySQL writes a JSON NULL's placeholder
  JsonReader(binary).document(out);
  return out;
}

}  // namespace sluice
