#include "sluice/connectors/mysql_binlog_rows.hpp"

#include <mysql.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.rfind(prefix, 0) == 0;
}

// The metadata bytes each binlog type carries in a TABLE_MAP event.
size_t metadata_size(uint8_t type) {
  switch (type) {
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

}  // namespace

std::vector<BinlogColumnFormat> column_formats(std::string_view types, std::string_view metadata) {
  std::vector<BinlogColumnFormat> out;
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

BinlogDecoding decoding_of(const std::string& column, const std::string& type) {
  const bool is_unsigned = type.find("unsigned") != std::string::npos;
  if (starts_with(type, "tinyint(1)") || starts_with(type, "boolean"))
    return {BinlogDecoding::kBoolean};
  for (const char* integer : {"tinyint", "smallint", "mediumint", "int", "bigint"}) {
    if (!starts_with(type, integer)) continue;
    if (!is_unsigned) return {BinlogDecoding::kSigned};
    return {starts_with(type, "bigint") ? BinlogDecoding::kUnsigned64 : BinlogDecoding::kUnsigned};
  }
  for (const char* taken :
       {"year",   "decimal",   "float",    "double",   "real",       "datetime",   "timestamp",
        "date",   "char",      "varchar",  "tinytext", "text",       "mediumtext", "longtext",
        "binary", "varbinary", "tinyblob", "blob",     "mediumblob", "longblob"}) {
    if (starts_with(type, taken)) return {BinlogDecoding::kAsWritten};
  }
  throw ConfigError("column '" + column + "' is " + type +
                    ", which the binlog reader does not take yet (it takes integers, DECIMAL, "
                    "FLOAT, DOUBLE, DATE, DATETIME, TIMESTAMP, YEAR, CHAR, VARCHAR, TEXT and "
                    "BLOB)");
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
      return integer(1, d);
    case MYSQL_TYPE_SHORT:
      return integer(2, d);
    case MYSQL_TYPE_INT24:
      return integer(3, d);
    case MYSQL_TYPE_LONG:
      return integer(4, d);
    case MYSQL_TYPE_LONGLONG:
      return integer(8, d);
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
      const int64_t seconds = static_cast<int64_t>(big_endian(4));
      return Timestamp{seconds * 1'000'000 + fraction(f.meta)};
    }
    case MYSQL_TYPE_DATE: {
      const uint64_t v = little_endian(3);
      char text[16];
      std::snprintf(text, sizeof text, "%04u-%02u-%02u", static_cast<unsigned>(v >> 9),
                    static_cast<unsigned>((v >> 5) & 15), static_cast<unsigned>(v & 31));
      return std::string(text);
    }
    case MYSQL_TYPE_VARCHAR:
    case MYSQL_TYPE_VAR_STRING:
      return bytes(f.meta < 256 ? 1 : 2);
    case MYSQL_TYPE_STRING: {
      // CHAR and BINARY: the metadata packs the real type and the length.
      const unsigned high = f.meta >> 8, low = f.meta & 0xff;
      const unsigned length = (high & 0x30) != 0x30 ? low | (((high & 0x30) ^ 0x30) << 4) : low;
      return bytes(length < 256 ? 1 : 2);
    }
    case MYSQL_TYPE_BLOB:
      return bytes(f.meta);
    default:
      throw ConfigError("table '" + table_ + "' has a column of binlog type " +
                        std::to_string(f.type) + ", which the binlog reader does not take");
  }
}

Value RowImageReader::integer(size_t n, const BinlogDecoding& d) {
  const uint64_t raw = little_endian(n);
  const int bits = static_cast<int>(8 * n);
  switch (d.how) {
    case BinlogDecoding::kBoolean:
      return Value::boolean(raw != 0);
    case BinlogDecoding::kUnsigned:
      return static_cast<int64_t>(raw);
    case BinlogDecoding::kUnsigned64:
      return Decimal::parse(std::to_string(raw), 20, 0);
    default: {
      const int shift = 64 - bits;  // sign-extend
      return static_cast<int64_t>(raw << shift) >> shift;
    }
  }
}

// MySQL's binary DECIMAL: groups of nine digits in four bytes, big-endian,
// the leftover digits in fewer; the sign bit flipped, and every bit of a
// negative number inverted.
Value RowImageReader::decimal(int precision, int scale) {
  static constexpr int kBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const int intg = precision - scale;
  const int size = intg / 9 * 4 + kBytes[intg % 9] + scale / 9 * 4 + kBytes[scale % 9];
  const uint8_t* b = take(static_cast<size_t>(size));
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

// DATETIME2: year*13+month, day, hour, minute, second packed in 40 bits
// above 2^39, then the fraction.
Value RowImageReader::datetime(int fsp) {
  const uint64_t packed = big_endian(5) - 0x8000000000ULL;
  const uint64_t ymd = packed >> 17, hms = packed & ((1 << 17) - 1);
  const uint64_t year_month = ymd >> 5;
  char text[40];
  std::snprintf(text, sizeof text, "%04u-%02u-%02u %02u:%02u:%02u",
                static_cast<unsigned>(year_month / 13), static_cast<unsigned>(year_month % 13),
                static_cast<unsigned>(ymd & 31), static_cast<unsigned>(hms >> 12),
                static_cast<unsigned>((hms >> 6) & 63), static_cast<unsigned>(hms & 63));
  Timestamp at = Timestamp::parse(text);
  at.micros += fraction(fsp);
  return at;
}

// The fraction of a second after DATETIME2, TIMESTAMP2 and TIME2, in micros.
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

Value RowImageReader::bytes(size_t length_bytes) {
  const size_t n = little_endian(length_bytes);
  const uint8_t* data = take(n);
  return std::string(reinterpret_cast<const char*>(data), n);
}

}  // namespace sluice
