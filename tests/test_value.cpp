#include <catch2/catch.hpp>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/row.hpp"
#include "sluice/engine/data/value.hpp"

using namespace sluice;

namespace {

std::string round_trip(std::string_view text, const DataType& type) {
  return parse_value(text, type).to_string();
}

}  // namespace

TEST_CASE("every value type round-trips text to value to text", "[value]") {
  const std::vector<std::pair<DataType, std::vector<std::string>>> cases = {
      {DataType::bigint(), {"0", "42", "-9223372036854775808", "9223372036854775807"}},
      {DataType::float64(), {"0", "3.25", "-1.5", "1e+300", "0.1", "123456.789"}},
      {DataType::decimal(10, 2), {"0.00", "0.30", "-12345678.99", "12345678.99"}},
      {DataType::decimal(38, 10), {"1234567890123456789012345678.0123456789"}},
      {DataType::string(), {"", "hello", "with, comma", "ünïcødé"}},
      {DataType::boolean(), {"true", "false"}},
      {DataType::timestamp(),
       {"1970-01-01 00:00:00", "2024-02-29 23:59:59", "1969-12-31 23:59:59.5",
        "2026-11-29 12:34:56.000001", "1900-03-01 01:02:03.123456", "0000-00-00 00:00:00",
        "0000-01-01 00:00:00", "9999-12-31 23:59:59.999999", "2020-00-15 10:00:00",
        "2020-05-00 00:00:00.5", "0000-00-00 10:11:12", "9999-12-00 23:59:59.999999"}},
      {DataType::decimal(65, 30), {"-" + std::string(35, '9') + "." + std::string(30, '9')}},
      {DataType::date(),
       {"1970-01-01", "1000-01-01", "9999-12-31", "2024-02-29", "0000-00-00", "2020-00-15",
        "2020-05-00", "0000-00-31", "9999-12-00"}},
      {DataType::time(),
       {"00:00:00", "-00:00:01", "23:59:59.5", "838:59:59.999999", "-838:59:59.000001",
        "100:00:00"}},
      {DataType::bytes(), {"", "AA==", "AP8Q", "AAEC/w=="}},
  };
  for (const auto& [type, texts] : cases) {
    for (const auto& text : texts) {
      INFO(type.to_string() << " " << text);
      CHECK(round_trip(text, type) == text);
    }
  }
}

TEST_CASE("values parse to the right alternative", "[value]") {
  CHECK(parse_value("42", DataType::bigint()).as_bigint() == 42);
  CHECK(parse_value("2.5", DataType::float64()).as_double() == 2.5);
  CHECK(parse_value("TRUE", DataType::boolean()).as_boolean());
  CHECK_FALSE(parse_value("0", DataType::boolean()).as_boolean());
  CHECK(parse_value("1970-01-01T00:00:01.25", DataType::timestamp()).as_timestamp().micros ==
        1'250'000);
  CHECK(parse_value("1.5", DataType::decimal(4, 1)).as_decimal() == Decimal(15, 1));
  CHECK_THROWS_WITH(parse_value("1", DataType::bigint()).as_string(),
                    Catch::Contains("expected a STRING") && Catch::Contains("BIGINT"));
}

TEST_CASE("malformed values are rejected with what the type expects", "[value]") {
  CHECK_THROWS_WITH(parse_value("12x", DataType::bigint()),
                    Catch::Contains("expected a BIGINT") && Catch::Contains("'12x'"));
  CHECK_THROWS_WITH(parse_value("9223372036854775808", DataType::bigint()),
                    Catch::Contains("expected a BIGINT"));
  CHECK_THROWS_WITH(parse_value("", DataType::bigint()), Catch::Contains("expected a BIGINT"));
  CHECK_THROWS_WITH(parse_value("one", DataType::float64()), Catch::Contains("expected a DOUBLE"));
  CHECK_THROWS_WITH(parse_value("yes", DataType::boolean()), Catch::Contains("expected a BOOLEAN"));
  for (const char* bad :
       {"2024-02-30 00:00:00", "2024-01-01", "2024-01-01 24:00:00", "2024-01-01 00:00:00.",
        "2024-01-01 00:00:00.1234567", "2024/01/01 00:00:00"}) {
    CHECK_THROWS_WITH(parse_value(bad, DataType::timestamp()),
                      Catch::Contains("expected a TIMESTAMP as YYYY-MM-DD HH:MM:SS"));
  }
}

TEST_CASE("DATE, TIME and BYTES read what MySQL writes, zero dates too", "[value]") {
  CHECK(parse_value("1970-01-02", DataType::date()).as_date().days == 1);
  CHECK(parse_value("1969-12-31", DataType::date()).as_date().days == -1);
  CHECK(parse_value("0000-00-00", DataType::date()).as_date() == Date::zero());
  CHECK(Date::zero() < Date::of(0, 1, 1));
  CHECK(parse_value("0000-00-00 00:00:00", DataType::timestamp()).as_timestamp().is_zero());
  // A zero month or day, which a server without NO_ZERO_IN_DATE keeps: a
  // value of its own between the zero date and the calendar's days.
  const Date zero_month = parse_value("2020-00-15", DataType::date()).as_date();
  CHECK(zero_month.is_zero_in_date());
  CHECK_FALSE(zero_month.is_zero());
  CHECK(Date::zero() < zero_month);
  CHECK(zero_month < Date::of(0, 1, 1));
  CHECK(zero_month == Date::of(2020, 0, 15));
  CHECK_THROWS_WITH(Date::of(2020, 13, 0), Catch::Contains("not a DATE"));
  CHECK_FALSE(Date::of(2020, 1, 15).is_zero_in_date());
  const Timestamp zero_day =
      parse_value("2020-05-00 10:00:00", DataType::timestamp()).as_timestamp();
  CHECK(zero_day.is_zero_in_date());
  CHECK(Timestamp::zero() < zero_day);
  CHECK(zero_day < Timestamp::parse("0000-01-01 00:00:00"));
  CHECK(zero_day == Timestamp::of(Date::of(2020, 5, 0), 36'000'000'000LL));
  CHECK_FALSE(Timestamp::parse("1900-01-01 00:00:00").is_zero_in_date());
  CHECK(parse_value("-838:59:59", DataType::time()).as_time().micros ==
        -((838LL * 60 + 59) * 60 + 59) * 1'000'000);
  CHECK(parse_value("12:00:00.25", DataType::time()).as_time().micros == 43'200'250'000LL);
  CHECK(parse_value("AP8Q", DataType::bytes()).as_bytes() == std::string("\0\xff\x10", 3));
  CHECK(Value::bytes(std::string("\0\xff\x10", 3)).to_string() == "AP8Q");
  for (const char* bad : {"2024-02-30", "2024-13-10", "2024-01-32", "24-01-01", "2024-1-1"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_value(bad, DataType::date()), Catch::Contains("expected a DATE"));
  }
  for (const char* bad : {"839:00:00", "12:60:00", "1:00:00", "12:00", "12:00:00.1234567"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_value(bad, DataType::time()), Catch::Contains("expected a TIME"));
  }
  CHECK_THROWS_WITH(parse_value("AP8", DataType::bytes()), Catch::Contains("base64"));
  CHECK_THROWS_WITH(parse_value("A=P8", DataType::bytes()), Catch::Contains("base64"));
  // BYTES and STRING are not each other, whatever their bytes.
  CHECK(Value::bytes("a") != Value("a"));
  CHECK(Value::bytes("a").hash() != Value("a").hash());
}

TEST_CASE("equal values hash equally, decimals whatever their scale", "[value]") {
  const Decimal wide = Decimal::parse("1" + std::string(45, '0'), 50, 0);
  CHECK(wide.wide());
  CHECK(Value(wide).hash() == Value(wide.rescaled(5)).hash());
  CHECK(Value(Decimal::parse("1" + std::string(29, '0'), 50, 0)).hash() ==
        Value(Decimal::parse("1" + std::string(29, '0') + "." + std::string(20, '0'), 50, 20))
            .hash());
  CHECK(Value(Decimal(10, 2)) == Value(Decimal(1, 1)));
  CHECK(Value(Decimal(10, 2)).hash() == Value(Decimal(1, 1)).hash());
  CHECK(Value("a").hash() == Value(std::string("a")).hash());
  CHECK(Value(1) != Value::boolean(true));
  CHECK(Value().is_null());
  CHECK(Value().to_string() == "NULL");
}

TEST_CASE("row kinds read and print as +I -U +U -D", "[value]") {
  for (const char* text : {"+I", "-U", "+U", "-D"}) CHECK(to_string(parse_row_kind(text)) == text);
  CHECK_THROWS_WITH(parse_row_kind("I"), Catch::Contains("expected a row kind"));
  CHECK(Row(RowKind::kUpdateAfter, {1, "x", Value()}).to_string() == "+U[1, x, NULL]");
}

TEST_CASE("base64 is RFC 4648's, every byte and every tail length", "[value]") {
  const std::pair<const char*, const char*> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : kVectors) CHECK(base64_encode(bytes) == text);
  std::string every;
  for (int b = 0; b < 256; ++b) every.push_back(static_cast<char>(b));
  for (size_t length = 250; length <= 256; ++length) {
    const std::string bytes = every.substr(0, length);
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
  }
  std::string appended = "head:";
  base64_append("foobar", appended);
  CHECK(appended == "head:Zm9vYmFy");
  // 0xfb 0xff 0xbf: the last two of the 64 characters.
  CHECK(base64_encode("\xfb\xff\xbf") == "+/+/");
}
