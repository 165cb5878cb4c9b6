#include <array>
#include <catch2/catch.hpp>
#include <utility>
#include <vector>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/data/decimal.hpp"

using sluice::DataError;
using sluice::Decimal;
using sluice::Rounding;

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

TEST_CASE("decimals of every width up to 38 digits parse to the same number", "[decimal]") {
  // 18 digits parse in 64 bits, up to 38 in 128: both sides of each limit,
  // against the number the digits make by arithmetic.
  for (int digits = 1; digits <= 38; ++digits) {
    for (int scale : {0, 2, digits / 2, digits}) {
      if (scale > digits) continue;
      const std::string nines(static_cast<size_t>(digits), '9');
      const std::string text = nines.substr(0, static_cast<size_t>(digits - scale)) +
                               (scale > 0 ? "." + nines.substr(0, static_cast<size_t>(scale)) : "");
      INFO(text << " DECIMAL(" << digits << "," << scale << ")");
      const Decimal parsed = Decimal::parse(text, digits, scale);
      __int128 expected = 0;
      for (int i = 0; i < digits; ++i) expected = expected * 10 + 9;
      CHECK(parsed == Decimal(expected, scale));
      CHECK(Decimal::parse("-" + text, digits, scale) == Decimal(-expected, scale));
      CHECK(parsed.fits(digits, scale));
      CHECK_FALSE(parsed.fits(digits - 1, scale));
      // A whole number is scaled up: its nines, then `scale` zeros.
      __int128 whole = expected;
      for (int i = 0; i < scale; ++i) whole = whole / 10;
      for (int i = 0; i < scale; ++i) whole = whole * 10;
      if (digits > scale) {
        CHECK(Decimal::parse(nines.substr(0, static_cast<size_t>(digits - scale)), digits, scale) ==
              Decimal(whole, scale));
      }
    }
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

TEST_CASE("decimals of up to 65 digits round-trip, and overflow beyond is an error", "[decimal]") {
  const std::string max38 = "99999999999999999999999999999999999999";
  CHECK(Decimal::parse(max38, 38, 0).to_string() == max38);
  CHECK(Decimal::parse("-" + max38, 38, 0).to_string() == "-" + max38);
  CHECK_FALSE(Decimal::parse(max38, 38, 0).wide());
  // Past a 128-bit integer, on to MySQL's 65 digits.
  const Decimal sum = Decimal::parse(max38, 38, 0) + Decimal::parse(max38, 38, 0);
  CHECK(sum.wide());
  CHECK(sum.to_string() == "199999999999999999999999999999999999998");
  const std::string max65 = std::string(35, '9') + "." + std::string(30, '9');
  const Decimal high = Decimal::parse(max65, 65, 30);
  CHECK(high.to_string() == max65);
  CHECK(Decimal::parse("-" + max65, 65, 30).to_string() == "-" + max65);
  CHECK(Decimal::parse("-0." + std::string(29, '0') + "1", 65, 30).to_string() ==
        "-0." + std::string(29, '0') + "1");
  CHECK(high.fits(65, 30));
  CHECK_FALSE(high.fits(64, 30));
  CHECK_THROWS_WITH(high + Decimal::parse("0." + std::string(29, '0') + "1", 65, 30),
                    Catch::Contains("more than 65 digits"));
  CHECK_THROWS_AS(Decimal::parse(std::string(66, '9'), 65, 0), DataError);
  // Wide and narrow numbers compare, add and subtract with each other.
  const Decimal wide = Decimal::parse("123456789012345678901234567890123456789012", 50, 0);
  CHECK(wide > Decimal::parse(max38, 38, 0));
  CHECK(-wide < Decimal(-1, 0));
  CHECK((wide - wide) == Decimal(0, 0));
  CHECK((wide - Decimal::parse("123456789012345678901234567890123456789000", 50, 0)).to_string() ==
        "12");
  CHECK_FALSE((wide - Decimal::parse("123456789012345678901234567890123456789000", 50, 0)).wide());
  CHECK((wide + Decimal(5, 1)).to_string() == "123456789012345678901234567890123456789012.5");
  CHECK(wide.rescaled(2).to_string() == "123456789012345678901234567890123456789012.00");
  CHECK(Decimal::parse("1234567890123456789012345678901234567890.55", 50, 2)
            .rescaled(1, Rounding::kHalfEven)
            .to_string() == "1234567890123456789012345678901234567890.6");
  CHECK(Decimal::from_halves(wide.high(), wide.low(), 0) == wide);
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

TEST_CASE("rounding follows java.math.RoundingMode's table", "[decimal]") {
  using R = Rounding;
  const R modes[] = {R::kUp,     R::kDown,     R::kCeiling, R::kFloor,
                     R::kHalfUp, R::kHalfDown, R::kHalfEven};
  // Input, then the result under each mode above (the RoundingMode javadoc's table).
  const std::vector<std::pair<const char*, std::array<int, 7>>> table = {
      {"5.5", {6, 5, 6, 5, 6, 5, 6}},         {"2.5", {3, 2, 3, 2, 3, 2, 2}},
      {"1.6", {2, 1, 2, 1, 2, 2, 2}},         {"1.1", {2, 1, 2, 1, 1, 1, 1}},
      {"1.0", {1, 1, 1, 1, 1, 1, 1}},         {"-1.0", {-1, -1, -1, -1, -1, -1, -1}},
      {"-1.1", {-2, -1, -1, -2, -1, -1, -1}}, {"-1.6", {-2, -1, -1, -2, -2, -2, -2}},
      {"-2.5", {-3, -2, -2, -3, -3, -2, -2}}, {"-5.5", {-6, -5, -5, -6, -6, -5, -6}},
  };
  for (const auto& [input, expected] : table) {
    for (size_t m = 0; m < 7; ++m) {
      INFO(input << " mode " << m);
      CHECK(Decimal::of(input).rescaled(0, modes[m]) == expected[m]);
    }
  }
  CHECK(Decimal::of("-1.0").rescaled(0, R::kUnnecessary) == -1);
  CHECK_THROWS_AS(Decimal::of("1.1").rescaled(0, R::kUnnecessary), DataError);
}

TEST_CASE("decimals multiply exactly, or rounded to a scale; divide rounded", "[decimal]") {
  const Decimal price = Decimal::of("19.99"), rate = Decimal::of("0.075");
  CHECK((price * rate).to_string() == "1.49925");
  CHECK(price.multiply(rate, 2).to_string() == "1.50");
  CHECK(price.multiply(rate, 2, Rounding::kDown).to_string() == "1.49");
  CHECK(Decimal::of("10").divide(Decimal::of("3"), 4).to_string() == "3.3333");
  CHECK(Decimal::of("2").divide(Decimal::of("3"), 2).to_string() == "0.67");
  CHECK(Decimal::of("-2").divide(Decimal::of("3"), 2).to_string() == "-0.67");
  CHECK(Decimal::of("1").divide(Decimal::of("8"), 2).to_string() == "0.12");  // a tie, to even
  CHECK(Decimal::of("1").divide(Decimal::of("8"), 2, Rounding::kHalfUp).to_string() == "0.13");
  CHECK(Decimal::of("1.000").divide(Decimal::of("0.25"), 1).to_string() == "4.0");
  CHECK(Decimal::of("123.456").divide(Decimal::of("1000"), 0).to_string() == "0");
  // A product of more than 38 fractional digits still rounds.
  const Decimal tiny = Decimal::of("0.00000000000000000001");  // scale 20
  CHECK((tiny.multiply(tiny, 2, Rounding::kUp)).to_string() == "0.01");
  CHECK((tiny.multiply(tiny, 2)).to_string() == "0.00");
  CHECK_THROWS_WITH(Decimal::of("1").divide(Decimal::of("0.00"), 2),
                    Catch::Contains("division by zero"));
  const Decimal big = Decimal::of("100000000000000000000");  // 10^20
  CHECK((big * big).to_string() == "1" + std::string(40, '0'));
  const Decimal huge = Decimal::of("1" + std::string(40, '0'));
  CHECK_THROWS_WITH(huge * huge, Catch::Contains("overflow"));
  CHECK_THROWS_WITH(huge.multiply(huge, 0), Catch::Contains("overflow"));
  CHECK(huge.divide(big, 0) == big);
}

TEST_CASE("decimals compare with literals and whole numbers", "[decimal]") {
  const Decimal amount = Decimal::of("100.00");
  CHECK(amount.scale() == 2);
  CHECK(amount == 100);
  CHECK(amount > 99);
  CHECK(amount < 101);
  CHECK(amount > Decimal::of("99.995"));
  CHECK(Decimal::of("-0.5") < 0);
  CHECK_THROWS_AS(Decimal::of("12.x"), DataError);
}
