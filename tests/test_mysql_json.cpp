#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/cdc/binary_json.hpp"
#include "sluice/engine/common/error.hpp"

using sluice::DataError;
using sluice::mysql_json_text;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (const int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string little_endian(uint64_t v, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// The pieces one after another (appended: GCC 12 warns, wrongly, of
// overlapping copies in chains of +).
std::string join(std::initializer_list<std::string> pieces) {
  std::string out;
  for (const std::string& piece : pieces) out += piece;
  return out;
}

std::string scalar_double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return join({"\x0b", little_endian(bits, 8)});
}

// MySQL's packed DATETIME: ((ymd << 17 | hms) << 24) + microseconds.
int64_t packed(int year, int month, int day, int hour, int minute, int second, int micros) {
  const int64_t ymd = (int64_t{year} * 13 + month) << 5 | day;
  const int64_t hms = int64_t{hour} << 12 | minute << 6 | second;
  return ((ymd << 17 | hms) << 24) + micros;
}

std::string opaque(int field, const std::string& data) {
  return join({"\x0f", std::string(1, static_cast<char>(field)),
               std::string(1, static_cast<char>(data.size())), data});
}

}  // namespace

TEST_CASE("MySQL's binary JSON reads as MySQL prints it: objects, arrays, literals",
          "[mysql-json]") {
  // {"a": 1, "b": [true, null]}: a small object of two keys, the first
  // value an inlined int16, the second a small array of two literals.
  const std::string document =
      bytes({0x00, 2,   0,  30,   0,                         // object: 2 members, 30 bytes
             18,   0,   1,  0,    19,   0, 1, 0,             // keys at 18 and 19, one byte each
             0x05, 1,   0,  0x02, 20,   0,                   // 1 inlined; an array at 20
             'a',  'b',                                      // the keys
             2,    0,   10, 0,    0x04, 1, 0, 0x04, 0, 0});  // [true, null]
  CHECK(mysql_json_text(document) == R"({"a": 1, "b": [true, null]})");
  CHECK(mysql_json_text(bytes({0x02, 0, 0, 4, 0})) == "[]");
  CHECK(mysql_json_text(bytes({0x00, 0, 0, 4, 0})) == "{}");
  CHECK(mysql_json_text(bytes({0x04, 2})) == "false");
}

TEST_CASE("MySQL's binary JSON reads numbers and strings exactly", "[mysql-json]") {
  CHECK(mysql_json_text(join({"\x05", little_endian(0xfffb, 2)})) == "-5");
  CHECK(mysql_json_text(join({"\x06", little_endian(0xfffb, 2)})) == "65531");
  CHECK(mysql_json_text(join({"\x07", little_endian(0x80000000, 4)})) == "-2147483648");
  CHECK(mysql_json_text(join({"\x08", little_endian(0xffffffff, 4)})) == "4294967295");
  CHECK(mysql_json_text(join({"\x09", little_endian(static_cast<uint64_t>(-5), 8)})) == "-5");
  CHECK(mysql_json_text(join({"\x0a", little_endian(~uint64_t{0}, 8)})) == "18446744073709551615");
  CHECK(mysql_json_text(scalar_double(2.5)) == "2.5");
  CHECK(mysql_json_text(scalar_double(100.0)) == "100.0");  // a double keeps its point
  CHECK(mysql_json_text(scalar_double(0.1)) == "0.1");
  CHECK(mysql_json_text(scalar_double(1e300)) == "1e+300");
  CHECK(mysql_json_text(std::string("\x0c\x05hello")) == R"("hello")");
  CHECK(mysql_json_text(join({std::string("\x0c\x07q\"\\\n\x01\xc3", 8), "\xa9"})) ==
        R"("q\"\\\n\u0001é")");
  // A string's length takes a byte per seven bits.
  const std::string long_string(200, 'x');
  CHECK(mysql_json_text(join({"\x0c", bytes({0xc8, 0x01}), long_string})) ==
        join({"\"", long_string, "\""}));
}

TEST_CASE("MySQL's binary JSON reads a large array with inlined 32-bit integers", "[mysql-json]") {
  // A large array: 4-byte count and size, and 5-byte value entries; 20
  // bytes, the string's at 18.
  const std::string document =
      join({"\x03", little_endian(2, 4), little_endian(20, 4), "\x07", little_endian(0xfffffffe, 4),
            "\x0c", little_endian(18, 4), "\x01z"});
  CHECK(mysql_json_text(document) == R"([-2, "z"])");
}

TEST_CASE("MySQL's binary JSON reads its opaque DECIMAL and temporal values", "[mysql-json]") {
  // DECIMAL(4,2) 12.34: precision, scale, then the binary decimal.
  CHECK(mysql_json_text(opaque(246, bytes({4, 2, 0x8c, 0x22}))) == "12.34");
  CHECK(mysql_json_text(opaque(12, little_endian(packed(2015, 1, 15, 23, 24, 25, 0), 8))) ==
        R"("2015-01-15 23:24:25.000000")");
  CHECK(mysql_json_text(opaque(10, little_endian(packed(2015, 1, 15, 0, 0, 0, 0), 8))) ==
        R"("2015-01-15")");
  const int64_t noon_and_a_half = (int64_t{12} << 12 << 24) + 500'000;
  CHECK(mysql_json_text(opaque(11, little_endian(static_cast<uint64_t>(-noon_and_a_half), 8))) ==
        R"("-12:00:00.500000")");
  CHECK(mysql_json_text(opaque(252, "\x01\x02")) == R"("base64:type252:AQI=")");
}

TEST_CASE("bytes that are not MySQL's binary JSON are an error", "[mysql-json]") {
  CHECK_THROWS_AS(mysql_json_text(bytes({0x00, 2, 0, 30, 0})), DataError);
  CHECK_THROWS_AS(mysql_json_text(bytes({0x0c, 5, 'a'})), DataError);
  CHECK_THROWS_AS(mysql_json_text(bytes({0x42})), DataError);
  CHECK_THROWS_AS(mysql_json_text(bytes({0x04, 7})), DataError);
}
