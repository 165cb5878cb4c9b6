#include "sluice/connectors/mysql/cdc/binlog_rows.hpp"

#include <mysql.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sluice/connectors/mysql/cdc/binary_json.hpp"
#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

bool starts_with_any(const std::string& text, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view prefix) { return text.starts_with(prefix); });
}

// MariaDB's binlog types of COMPRESSED columns, which Connector/C does not name.
constexpr uint8_t kBlobCompressed = 140, kVarcharCompressed = 141;

// The value of a COMPRESSED column as MariaDB stores it (sql/field.cc,
// field_comp.cc): nothing for ''; a byte 0 and the value as it is; or
// compressed, as inflated() reads.
std::string uncompressed(std::string_view stored, const std::string& table) {
  if (stored.empty()) return {};
  if (stored[0] == 0) return std::string(stored.substr(1));
  std::optional<std::string> value = inflated(stored);
  if (!value) {
    throw DataError("table '" + table +
                    "': a COMPRESSED column's value in the binlog is not zlib data as MariaDB "
                    "writes it (header byte " +
                    std::to_string(static_cast<uint8_t>(stored[0])) + ")");
  }
  return std::move(*value);
}

// The metadata bytes each binlog type carries in a TABLE_MAP event.
size_t metadata_size(uint8_t type) {
  switch (type) {
    case kBlobCompressed:
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE:
    case MYSQL_TYPE_BLOB:
    case MYSQL_TYPE_GEOMETRY:
    case MYSQL_TYPE_JSON:
    case MYSQL_TYPE_TIMESTAMP2:
    case MYSQL_TYPE_DATETIME2:
    case MYSQL_TYPE_TIME2:
      return 1;
    case MYSQL_TYPE_VARCHAR:
    case kVarcharCompressed:
    case MYSQL_TYPE_VAR_STRING:
    case MYSQL_TYPE_NEWDECIMAL:
    case MYSQL_TYPE_STRING:
    case MYSQL_TYPE_BIT:
    case MYSQL_TYPE_ENUM:
    case MYSQL_TYPE_SET:
      return 2;
    default:
      return 0;
  }
}

constexpr int64_t kMicrosPerSecond = 1'000'000;

// MariaDB's text of an INET6 address: lower-case hex words, the longest run
// of zero words (even a single one) as "::", and an IPv4-compatible or
// -mapped address with its last four bytes dotted.
std::string inet6_text(const uint8_t* b) {
  uint16_t words[8];
  for (int i = 0; i < 8; ++i) words[i] = static_cast<uint16_t>(b[2 * i] << 8 | b[2 * i + 1]);
  int gap = -1, gap_length = 0;
  for (int i = 0; i < 8;) {
    if (words[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && words[j] == 0) ++j;
    if (j - i > gap_length) {
      gap = i;
      gap_length = j - i;
    }
    i = j;
  }
  std::string out;
  char text[16];
  for (int i = 0; i < 8; ++i) {
    if (i == gap) {
      out += i == 0 ? "::" : ":";
      i += gap_length - 1;
    } else if (i == 6 && gap == 0 && (gap_length == 6 || (gap_length == 5 && words[5] == 0xffff))) {
      std::snprintf(text, sizeof text, "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
      return out + text;
    } else {
      std::snprintf(text, sizeof text, "%x", words[i]);
      out += text;
      if (i + 1 < 8) out += ':';
    }
  }
  return out;
}

std::string uuid_text(const uint8_t* b) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 15];
  }
  return out;
}

Timestamp timestamp_of(unsigned year, unsigned month, unsigned day, int64_t seconds_in_day,
                       int64_t micros) {
  return Timestamp::of(Date::of(static_cast<int>(year), month, day),
                       seconds_in_day * kMicrosPerSecond + micros);
}

}  // namespace

std::optional<std::string> inflated(std::string_view compressed) {
  if (compressed.empty()) return std::nullopt;
  const auto header = static_cast<uint8_t>(compressed[0]);
  const size_t length_bytes = header & 7;
  if ((header & 0xf0) != 0x80 || compressed.size() < 1 + length_bytes) return std::nullopt;
  uint64_t length = 0;
  for (size_t i = 0; i < length_bytes; ++i)
    length = length << 8 | static_cast<uint8_t>(compressed[1 + i]);
  std::string out(length, '\0');
  z_stream stream{};
  stream.next_in =
      reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + 1 + length_bytes));
  stream.avail_in = static_cast<uInt>(compressed.size() - 1 - length_bytes);
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(length);
  if (inflateInit2(&stream, header & 8 ? -MAX_WBITS : MAX_WBITS) != Z_OK) return std::nullopt;
  const int result = inflate(&stream, Z_FINISH);
  inflateEnd(&stream);
  if (result != Z_STREAM_END || stream.total_out != length) return std::nullopt;
  return out;
}

std::vector<BinlogColumnFormat> column_formats(std::string_view types, std::string_view metadata) {
  std::vector<BinlogColumnFormat> out;
  out.reserve(types.size());  // every transaction of a table maps it again
  size_t at = 0;
  const auto* meta = reinterpret_cast<const uint8_t*>(metadata.data());
  for (const char type : types) {
    BinlogColumnFormat f{.type = static_cast<uint8_t>(type)};
    const size_t n = metadata_size(f.type);
    if (at + n > metadata.size()) throw Error("a binlog TABLE_MAP event is corrupt");
    if (n == 1) f.meta = meta[at];
    // NEWDECIMAL and STRING keep their two bytes in order; the others are little-endian.
    if (n == 2) {
      const bool in_order = f.type == MYSQL_TYPE_NEWDECIMAL || f.type == MYSQL_TYPE_STRING ||
                            f.type == MYSQL_TYPE_ENUM || f.type == MYSQL_TYPE_SET;
      f.meta = in_order ? static_cast<uint16_t>(meta[at] << 8 | meta[at + 1])
                        : static_cast<uint16_t>(meta[at] | meta[at + 1] << 8);
    }
    at += n;
    out.push_back(f);
  }
  return out;
}

BinlogDecoding decoding_of(const TableColumn& column, Charsets& charsets) {
  const std::string& type = column.column_type;
  BinlogDecoding d;
  d.is_unsigned = type.find("unsigned") != std::string::npos;
  if (starts_with_any(type, {"tinyint", "smallint", "mediumint", "int", "bigint", "year", "decimal",
                             "float", "double", "real", "date", "time"})) {
    // (datetime and timestamp too.) MariaDB's before 10.1 need the digits.
    if (type.find("mariadb-5.3") != std::string::npos) {
      const size_t open = type.find('(');
      if (open != std::string::npos)
        d.old_fsp = std::clamp(std::atoi(type.c_str() + open + 1), 0, 6);
    }
    return d;
  }
  if (type.starts_with("bit")) {
    d.how = type == "bit(1)" ? BinlogDecoding::kBit1 : BinlogDecoding::kBytes;
    return d;
  }
  if (starts_with_any(type, {"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})) {
    d.how = BinlogDecoding::kText;
    d.text = charsets.decoder(column.charset, column.name);
    return d;
  }
  if (type.starts_with("binary")) {
    d.how = BinlogDecoding::kBytes;
    d.length = column.octet_length;  // the binlog drops its trailing zero bytes
    return d;
  }
  if (starts_with_any(type, {"varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry",
                             "point", "linestring", "polygon", "multipoint", "multilinestring",
                             "multipolygon", "geomcollection", "geometrycollection"})) {
    d.how = BinlogDecoding::kBytes;
    return d;
  }
  if (starts_with_any(type, {"enum(", "set("})) {
    d.how = BinlogDecoding::kMembers;
    d.members = column.members();
    return d;
  }
  if (type == "json") {
    d.how = BinlogDecoding::kJson;
    return d;
  }
  if (type == "uuid" || type == "inet6" || type == "inet4") {
    d.how = type == "uuid"    ? BinlogDecoding::kUuid
            : type == "inet6" ? BinlogDecoding::kInet6
                              : BinlogDecoding::kInet4;
    d.length = type == "inet4" ? 4 : 16;
    return d;
  }
  throw ConfigError("column '" + column.name + "' is " + type +
                    ", which the binlog reader does not take");
}

size_t binary_decimal_size(int precision, int scale) {
  static constexpr int kBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const int intg = precision - scale;
  return static_cast<size_t>(intg / 9 * 4 + kBytes[intg % 9] + scale / 9 * 4 + kBytes[scale % 9]);
}

// MySQL's binary DECIMAL: groups of nine digits in four bytes, big-endian,
// the leftover digits in fewer; the sign bit flipped, and every bit of a
// negative number inverted. Up to 38 digits the unscaled number fits an
// __int128; beyond, it is read through its text.
Decimal decode_binary_decimal(const uint8_t* b, int precision, int scale) {
  static constexpr int kBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const int intg = precision - scale;
  const bool negative = (b[0] & 0x80) == 0;
  const uint8_t invert = negative ? 0xff : 0;
  int at = 0;
  const auto group = [&](int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i, ++at) {
      v = (v << 8) | static_cast<uint8_t>(b[at] ^ invert ^ (at == 0 ? 0x80 : 0));
    }
    return v;
  };
  if (precision <= 38) {
    // The digits, group after group, as one unscaled integer.
    __int128 unscaled = intg % 9 > 0 ? group(kBytes[intg % 9]) : 0;
    for (int g = 0; g < intg / 9 + scale / 9; ++g) unscaled = unscaled * 1'000'000'000 + group(4);
    if (scale % 9 > 0) {
      int64_t shift = 1;
      for (int d = 0; d < scale % 9; ++d) shift *= 10;
      unscaled = unscaled * shift + group(kBytes[scale % 9]);
    }
    return Decimal(negative ? -unscaled : unscaled, scale);
  }
  const auto digits = [](uint64_t v, int width) {
    std::string text = std::to_string(v);
    return std::string(static_cast<size_t>(std::max(0, width - static_cast<int>(text.size()))),
                       '0') +
           text;
  };
  std::string whole = std::to_string(group(kBytes[intg % 9]));
  for (int g = 0; g < intg / 9; ++g) whole += digits(group(4), 9);
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size() - 1));
  std::string fraction;
  for (int g = 0; g < scale / 9; ++g) fraction += digits(group(4), 9);
  if (scale % 9 > 0) fraction += digits(group(kBytes[scale % 9]), scale % 9);
  const std::string text = (negative ? "-" : "") + whole + (scale > 0 ? "." + fraction : "");
  return Decimal::parse(text, precision, scale);
}

const uint8_t* RowImageReader::take(size_t n) {
  if (static_cast<size_t>(end_ - p_) < n) {
    throw Error("a binlog row of table '" + table_ + "' ends early: the row image is corrupt");
  }
  const uint8_t* at = p_;
  p_ += n;
  return at;
}

uint64_t RowImageReader::little_endian(size_t n) {
  const uint8_t* b = take(n);
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{b[i]} << (8 * i);
  return v;
}

uint64_t RowImageReader::big_endian(size_t n) {
  const uint8_t* b = take(n);
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | b[i];
  return v;
}

Value RowImageReader::value(const BinlogColumnFormat& f, const BinlogDecoding& d) {
  switch (f.type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
      return integer(integer_width(f.type), d);
    case MYSQL_TYPE_YEAR: {
      const uint64_t year = little_endian(1);
      return static_cast<int64_t>(year == 0 ? 0 : 1900 + year);
    }
    case MYSQL_TYPE_FLOAT: {
      const auto bits = static_cast<uint32_t>(little_endian(4));
      float f32;
      std::memcpy(&f32, &bits, sizeof f32);
      return static_cast<double>(f32);
    }
    case MYSQL_TYPE_DOUBLE: {
      const uint64_t bits = little_endian(8);
      double f64;
      std::memcpy(&f64, &bits, sizeof f64);
      return f64;
    }
    case MYSQL_TYPE_NEWDECIMAL:
      return decimal(f.meta >> 8, f.meta & 0xff);
    case MYSQL_TYPE_DATETIME2:
      return datetime(f.meta);
    case MYSQL_TYPE_TIMESTAMP2: {
      const auto seconds = static_cast<int64_t>(big_endian(4));
      const int64_t micros = fraction(f.meta);
      // No TIMESTAMP is the epoch itself: 0 is MySQL's zero datetime.
      if (seconds == 0 && micros == 0) return Timestamp::zero();
      return Timestamp{seconds * kMicrosPerSecond + micros};
    }
    case MYSQL_TYPE_TIME2:
      return time(f.meta);
    case MYSQL_TYPE_DATE: {
      const uint64_t v = little_endian(3);
      return Date::of(static_cast<int>(v >> 9), static_cast<unsigned>((v >> 5) & 15),
                      static_cast<unsigned>(v & 31));
    }
    // The formats before MySQL 5.6, of tables created then: whole seconds,
    // or MariaDB's own with a fraction.
    case MYSQL_TYPE_TIMESTAMP: {
      if (d.old_fsp > 0) return old_timestamp(d.old_fsp);
      const auto seconds = static_cast<int64_t>(little_endian(4));
      return seconds == 0 ? Timestamp::zero() : Timestamp{seconds * kMicrosPerSecond};
    }
    case MYSQL_TYPE_DATETIME: {
      if (d.old_fsp > 0) return old_datetime(d.old_fsp);
      const uint64_t v = little_endian(8);  // YYYYMMDDhhmmss as a number
      const uint64_t date = v / 1'000'000, time = v % 1'000'000;
      return timestamp_of(
          static_cast<unsigned>(date / 10000), static_cast<unsigned>(date / 100 % 100),
          static_cast<unsigned>(date % 100),
          static_cast<int64_t>(time / 10000 * 3600 + time / 100 % 100 * 60 + time % 100), 0);
    }
    case MYSQL_TYPE_TIME: {
      if (d.old_fsp > 0) return old_time(d.old_fsp);
      const uint64_t raw = little_endian(3);  // [-]HHMMSS as a number
      const int64_t v = static_cast<int64_t>(raw << 40) >> 40;
      const int64_t m = v < 0 ? -v : v;
      const int64_t micros = (m / 10000 * 3600 + m / 100 % 100 * 60 + m % 100) * kMicrosPerSecond;
      return Time{v < 0 ? -micros : micros};
    }
    case MYSQL_TYPE_VARCHAR:
    case MYSQL_TYPE_VAR_STRING:
      return string_value(bytes(length_bytes(f)), d);
    case MYSQL_TYPE_STRING: {
      // CHAR, BINARY, ENUM and SET: the metadata packs the real type (and
      // for ENUM and SET the width of the number).
      const unsigned high = f.meta >> 8, low = f.meta & 0xff;
      if (high == MYSQL_TYPE_ENUM || high == MYSQL_TYPE_SET) {
        const uint64_t number = little_endian(low);
        std::string text;
        if (high == MYSQL_TYPE_ENUM) {
          // 0 is the empty value an invalid one becomes.
          if (number > 0 && number <= d.members.size()) text = d.members[number - 1];
        } else {
          for (size_t m = 0; m < d.members.size() && m < 64; ++m) {
            if (number & (uint64_t{1} << m)) text += (text.empty() ? "" : ",") + d.members[m];
          }
        }
        return text;
      }
      return string_value(bytes(length_bytes(f)), d);
    }
    case MYSQL_TYPE_BLOB:
    case MYSQL_TYPE_GEOMETRY:
      return string_value(bytes(length_bytes(f)), d);
    case kVarcharCompressed:
    case kBlobCompressed:
      return string_value(uncompressed(bytes(length_bytes(f)), table_), d);
    case MYSQL_TYPE_JSON:
      return mysql_json_text(bytes(f.meta));
    case MYSQL_TYPE_BIT: {
      const unsigned bits = f.meta & 0xff, whole = f.meta >> 8;
      const size_t n = whole + (bits > 0 ? 1 : 0);
      const uint8_t* b = take(n);
      if (d.how == BinlogDecoding::kBit1) return Value::boolean(n > 0 && b[n - 1] != 0);
      return Value::bytes(std::string(reinterpret_cast<const char*>(b), n));
    }
    default:
      throw ConfigError("table '" + table_ + "' has a column of binlog type " +
                        std::to_string(f.type) + ", which the binlog reader does not take");
  }
}

void RowImageReader::read_into(ColumnVector& column, uint32_t row, const BinlogColumnFormat& f,
                               const BinlogDecoding& d) {
  const size_t width = integer_width(f.type);
  if (width > 0 && column.type() == TypeId::kBigint && !(d.is_unsigned && width == 8)) {
    column.values<int64_t>()[row] = whole(width, d.is_unsigned);
    return;
  }
  switch (f.type) {
    case MYSQL_TYPE_DOUBLE:
      if (column.type() == TypeId::kDouble) {
        column.values<double>()[row] = value(f, d).as_double();
        return;
      }
      break;
    case MYSQL_TYPE_NEWDECIMAL:
      if (column.type() == TypeId::kDecimal) {
        column.values<Decimal>()[row] = decimal(f.meta >> 8, f.meta & 0xff);
        return;
      }
      break;
    case MYSQL_TYPE_DATETIME2:
      if (column.type() == TypeId::kTimestamp) {
        column.values<Timestamp>()[row] = datetime(f.meta);
        return;
      }
      break;
    case MYSQL_TYPE_VARCHAR:
    case MYSQL_TYPE_VAR_STRING:
    case MYSQL_TYPE_BLOB:
    case MYSQL_TYPE_STRING: {
      // Text that is UTF-8 already, and bytes but a BINARY(n)'s: as they
      // are. (An ENUM's or a SET's number, as the binlog says, is not.)
      const unsigned high = f.meta >> 8;
      const bool number =
          f.type == MYSQL_TYPE_STRING && (high == MYSQL_TYPE_ENUM || high == MYSQL_TYPE_SET);
      const bool as_is =
          (d.how == BinlogDecoding::kText && !d.text)
              ? column.type() == TypeId::kString
              : d.how == BinlogDecoding::kBytes && d.length == 0 && column.type() == TypeId::kBytes;
      if (as_is && !number) {
        column.set_string(row, bytes(length_bytes(f)));
        return;
      }
      break;
    }
    default:
      break;
  }
  column.set_value(row, value(f, d));
}

// How many bytes give the length of a string, binary or BLOB value.
size_t RowImageReader::length_bytes(const BinlogColumnFormat& f) {
  if (f.type == MYSQL_TYPE_BLOB || f.type == MYSQL_TYPE_GEOMETRY || f.type == kBlobCompressed) {
    return f.meta;
  }
  if (f.type != MYSQL_TYPE_STRING) return f.meta < 256 ? 1 : 2;  // VARCHAR: its length
  // CHAR and BINARY: the metadata packs the real type and the length.
  const unsigned high = f.meta >> 8, low = f.meta & 0xff;
  const unsigned length = (high & 0x30) != 0x30 ? low | (((high & 0x30) ^ 0x30) << 4) : low;
  return length < 256 ? 1 : 2;
}

Value RowImageReader::string_value(std::string_view b, const BinlogDecoding& d) const {
  switch (d.how) {
    case BinlogDecoding::kText:
      return d.text ? Value(d.text->to_utf8(b)) : Value(b);
    case BinlogDecoding::kUuid:
    case BinlogDecoding::kInet6:
    case BinlogDecoding::kInet4: {
      // Their bytes, the trailing zeros dropped as a BINARY's are.
      uint8_t full[16] = {};
      std::memcpy(full, b.data(), std::min(b.size(), sizeof full));
      if (d.how == BinlogDecoding::kUuid) return uuid_text(full);
      if (d.how == BinlogDecoding::kInet6) return inet6_text(full);
      char text[16];
      std::snprintf(text, sizeof text, "%u.%u.%u.%u", full[0], full[1], full[2], full[3]);
      return std::string(text);
    }
    default: {
      std::string bytes(b);
      if (bytes.size() < d.length) bytes.resize(d.length, '\0');  // BINARY(n)'s padding
      return Value::bytes(std::move(bytes));
    }
  }
}

Value RowImageReader::integer(size_t n, const BinlogDecoding& d) {
  // BIGINT UNSIGNED beyond BIGINT's range: exact as a DECIMAL(20,0).
  if (d.is_unsigned && n == 8) return Decimal::parse(std::to_string(little_endian(n)), 20, 0);
  return whole(n, d.is_unsigned);
}

int64_t RowImageReader::whole(size_t n, bool is_unsigned) {
  const uint64_t raw = little_endian(n);
  if (is_unsigned) return static_cast<int64_t>(raw);
  const int shift = static_cast<int>(64 - 8 * n);  // sign-extend
  return static_cast<int64_t>(raw << shift) >> shift;
}

size_t RowImageReader::integer_width(uint8_t type) {
  switch (type) {
    case MYSQL_TYPE_TINY:
      return 1;
    case MYSQL_TYPE_SHORT:
      return 2;
    case MYSQL_TYPE_INT24:
      return 3;
    case MYSQL_TYPE_LONG:
      return 4;
    case MYSQL_TYPE_LONGLONG:
      return 8;
    default:
      return 0;
  }
}

Decimal RowImageReader::decimal(int precision, int scale) {
  return decode_binary_decimal(take(binary_decimal_size(precision, scale)), precision, scale);
}

// DATETIME2: year*13+month, day, hour, minute, second packed in 40 bits
// above 2^39, then the fraction.
Timestamp RowImageReader::datetime(int fsp) {
  const uint64_t packed = big_endian(5) - 0x8000000000ULL;
  const uint64_t ymd = packed >> 17, hms = packed & ((1 << 17) - 1);
  const uint64_t year_month = ymd >> 5;
  const int64_t micros = fraction(fsp);
  return timestamp_of(
      static_cast<unsigned>(year_month / 13), static_cast<unsigned>(year_month % 13),
      static_cast<unsigned>(ymd & 31),
      static_cast<int64_t>((hms >> 12) * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63)), micros);
}

// TIME2 (my_time_packed_from_binary): the packed time, hours << 12 |
// minutes << 6 | seconds, then the fraction, 2^23 added; negative times
// borrow from the whole part for a fraction.
Value RowImageReader::time(int fsp) {
  int64_t packed;  // (whole << 24) + microseconds
  if (fsp >= 5) {
    packed = static_cast<int64_t>(big_endian(6)) - 0x800000000000LL;
  } else {
    int64_t whole = static_cast<int64_t>(big_endian(3)) - 0x800000;
    int64_t micros = 0;
    if (fsp >= 1) {
      const size_t width = fsp <= 2 ? 1 : 2;
      int64_t f = static_cast<int64_t>(big_endian(width));
      if (whole < 0 && f != 0) {
        ++whole;
        f -= width == 1 ? 0x100 : 0x10000;
      }
      micros = f * (width == 1 ? 10'000 : 100);
    }
    packed = whole * (int64_t{1} << 24) + micros;
  }
  const bool negative = packed < 0;
  const int64_t m = negative ? -packed : packed;
  const int64_t hms = m >> 24;
  const int64_t micros =
      (((hms >> 12) % 1024) * 3600 + ((hms >> 6) % 64) * 60 + hms % 64) * kMicrosPerSecond +
      m % (int64_t{1} << 24);
  return Time{negative ? -micros : micros};
}

// MariaDB 5.3's formats (sql/field.cc, Field_*_hires) hold a number
// big-endian, in as few bytes as `fsp` digits need, in units of 10^-fsp s.
namespace {
constexpr int64_t kUnitMicros[] = {1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
}  // namespace

// TIME: the signed time (pack_time()) plus 838:59:59 and a second, so that
// every time is positive.
Value RowImageReader::old_time(int fsp) {
  static constexpr size_t kBytes[] = {3, 4, 4, 5, 5, 5, 6};
  const int64_t zero = 3'020'400 * (kMicrosPerSecond / kUnitMicros[fsp]);
  return Time{(static_cast<int64_t>(big_endian(kBytes[fsp])) - zero) * kUnitMicros[fsp]};
}

// DATETIME: pack_time(), ((((year * 13 + month) * 32 + day) * 24 + hour)
// * 60 + minute) * 60 + second, in microseconds.
Timestamp RowImageReader::old_datetime(int fsp) {
  static constexpr size_t kBytes[] = {5, 6, 6, 7, 7, 7, 8};
  uint64_t v = big_endian(kBytes[fsp]) * static_cast<uint64_t>(kUnitMicros[fsp]);
  const auto micros = static_cast<int64_t>(v % 1'000'000);
  v /= 1'000'000;
  const auto seconds = static_cast<int64_t>(v % 86'400);
  v /= 86'400;
  return timestamp_of(static_cast<unsigned>(v / 32 / 13), static_cast<unsigned>(v / 32 % 13),
                      static_cast<unsigned>(v % 32), seconds, micros);
}

// TIMESTAMP: the seconds since the epoch in four bytes, then the fraction.
Timestamp RowImageReader::old_timestamp(int fsp) {
  static constexpr size_t kBytes[] = {0, 1, 1, 2, 2, 3, 3};
  const auto seconds = static_cast<int64_t>(big_endian(4));
  const int64_t micros = static_cast<int64_t>(big_endian(kBytes[fsp])) * kUnitMicros[fsp];
  if (seconds == 0 && micros == 0) return Timestamp::zero();
  return Timestamp{seconds * kMicrosPerSecond + micros};
}

// The fraction of a second after DATETIME2 and TIMESTAMP2, in micros.
int64_t RowImageReader::fraction(int fsp) {
  switch ((fsp + 1) / 2) {
    case 1:
      return static_cast<int64_t>(big_endian(1)) * 10'000;
    case 2:
      return static_cast<int64_t>(big_endian(2)) * 100;
    case 3:
      return static_cast<int64_t>(big_endian(3));
    default:
      return 0;
  }
}

std::string_view RowImageReader::bytes(size_t length_bytes) {
  const size_t n = little_endian(length_bytes);
  const uint8_t* data = take(n);
  return {reinterpret_cast<const char*>(data), n};
}

}  // namespace sluice
