#include <catch2/catch.hpp>

#include "engine/common/error.hpp"
#include "engine/data/decimal.hpp"

using sluice::DataError;
using sluice::Decimal;

TEST_CASE("DECIMAL(10,2) adds 0.10 and 0.20 to exactly 0.30", "[decimal]") {
  const Decimal a = Decimal::parse("0.10", 10, 2);
  const Decimal b = Decimal::parse("0.20", 10, 2);
  const Decimal sum = a + b;
  CHECK(sum == Decimal::parse("0.30", 10, 2));
  CHECK(sum.to_string() == "0.30");
  CHECK(sum.unscaled() == 30);
  // A double gets this wrong; the decimal must not.
  CHECK(0.10 + 0.20 != 0.30);
}

TEST_CASE("DECIMAL(10,2) rejects a value with too many digits, saying what fits", "[decimal]") {
  CHECK_THROWS_WITH(Decimal::parse("123456789.123", 10, 2),
                    Catch::Contains("DECIMAL(10,2)") && Catch::Contains("8 digits before") &&
                        Catch::Contains("2 after") && Catch::Contains("123456789.123"));
  CHECK_THROWS_AS(Decimal::parse("123456789.12", 10, 2), DataError);
  CHECK_THROWS_AS(Decimal::parse("1.234", 10, 2), DataError);
  CHECK(Decimal::parse("12345678.12", 10, 2).to_string() == "12345678.12");
}

TEST_CASE("decimal parsing accepts signs, bare points and harmless trailing zeros", "[decimal]") {
  CHECK(Decimal::parse("-0.5", 4, 2).to_string() == "-0.50");
  CHECK(Decimal::parse("+7", 4, 2).to_string() == "7.00");
  CHECK(Decimal::parse(".25", 4, 2).to_string() == "0.25");
  CHECK(Decimal::parse("1.500", 4, 2).to_string() == "1.50");
  CHECK(Decimal::parse("007.1", 3, 2).to_string() == "7.10");
  for (const char* bad : {"", "-", ".", "1.2.3", "1e5", "abc", " 1"}) {
    CHECK_THROWS_AS(Decimal::parse(bad, 10, 2), DataError);
  }
}

TEST_CASE("decimals compare by value across scales and check their fit", "[decimal]") {
  CHECK(Decimal(10, 2) == Decimal(1, 1));
  CHECK(Decimal(-5, 1) < Decimal(1, 3));
  CHECK(Decimal(12345, 2).fits(5, 2));
  CHECK_FALSE(Decimal(12345, 2).fits(4, 2));
  CHECK_FALSE(Decimal(12345, 3).fits(10, 2));
  CHECK(Decimal(12340, 3).fits(10, 2));
  CHECK((Decimal(1, 2) - Decimal(3, 1)).to_string() == "-0.29");
}

TEST_CASE("38-digit decimals round-trip and overflow is an error", "[decimal]") {
  const std::string max = "99999999999999999999999999999999999999";
  CHECK(Decimal::parse(max, 38, 0).to_string() == max);
  CHECK(Decimal::parse("-" + max, 38, 0).to_string() == "-" + max);
  CHECK_THROWS_AS(Decimal::parse(max, 38, 0) + Decimal::parse(max, 38, 0), DataError);
}

TEST_CASE("decimals print exactly on both sides of 2^64", "[decimal]") {
  for (const std::string text :
       {"18446744073709551615", "18446744073709551616", "1844674407370955.1616",
        "-18446744073709551615", "-18446744073709551616", "0.05", "-0.5", "0"}) {
    const size_t point = text.find('.');
    const int scale = point == std::string::npos ? 0 : static_cast<int>(text.size() - point - 1);
    CHECK(Decimal::parse(text, 38, scale).to_string() == text);
  }
}
