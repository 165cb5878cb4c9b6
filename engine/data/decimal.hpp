#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

/// How a result with more fractional digits than wanted loses them, as
/// java.math.RoundingMode: kHalfEven (to the nearest, a tie to the even
/// neighbour: banker's rounding), kHalfUp and kHalfDown (a tie away from or
/// towards zero), kUp and kDown (away from or towards zero), kCeiling and
/// kFloor (towards +∞ or −∞), kUnnecessary (a DataError if any digit but
/// zero would be lost).
enum class Rounding { kHalfEven, kHalfUp, kHalfDown, kUp, kDown, kCeiling, kFloor, kUnnecessary };

/// An exact fixed-point number: an integer count of 10^-scale units. Never a
/// double, so 0.10 + 0.20 is exactly 0.30. Up to 38 digits (the range of a
/// 128-bit integer); arithmetic that would overflow throws DataError. Sums
/// and products are exact; multiply(), divide() and rescaled() round to the
/// scale asked for, half-even unless told otherwise.
class Decimal {
 public:
  static constexpr int kMaxPrecision = 38;

  Decimal() = default;
  Decimal(__int128 unscaled, int scale);

  /// Parses `text` (optional sign, digits, optional point and digits) as a
  /// DECIMAL(precision, scale). Extra fractional digits are accepted only when
  /// they are zeros; nothing is rounded. Throws DataError saying what a
  /// DECIMAL(precision, scale) accepts.
  static Decimal parse(std::string_view text, int precision, int scale);
  /// A literal: its scale is the digits written after the point, so
  /// Decimal::of("12.50") is 12.50 at scale 2. Throws DataError if malformed.
  static Decimal of(std::string_view text);

  __int128 unscaled() const { return unscaled_; }
  int scale() const { return scale_; }

  /// The same number with `scale` fractional digits; throws DataError if that
  /// would drop a non-zero digit or overflow.
  Decimal rescaled(int scale) const;
  /// The same number with `scale` fractional digits, rounded by `rounding`.
  Decimal rescaled(int scale, Rounding rounding) const;

  /// This times `other`, rounded to `scale` fractional digits. (`*` gives
  /// the exact product, at the sum of the scales.)
  Decimal multiply(const Decimal& other, int scale, Rounding rounding = Rounding::kHalfEven) const;
  /// This divided by `other`, rounded to `scale` fractional digits; throws
  /// DataError for a division by zero.
  Decimal divide(const Decimal& other, int scale, Rounding rounding = Rounding::kHalfEven) const;

  /// Whether the number fits DECIMAL(precision, scale) without rounding.
  bool fits(int precision, int scale) const;

  /// The text form, with exactly scale() fractional digits: "-12.50".
  std::string to_string() const;
  void append_to(std::string& out) const;

  friend Decimal operator+(const Decimal& a, const Decimal& b);
  friend Decimal operator-(const Decimal& a, const Decimal& b);
  friend Decimal operator-(const Decimal& a);
  /// The exact product, at scale a.scale() + b.scale().
  friend Decimal operator*(const Decimal& a, const Decimal& b);
  /// Numeric comparison: 0.1 == 0.10; also with whole numbers (amount > 100).
  friend std::strong_ordering operator<=>(const Decimal& a, const Decimal& b);
  friend bool operator==(const Decimal& a, const Decimal& b) { return (a <=> b) == 0; }
  friend std::strong_ordering operator<=>(const Decimal& a, int64_t b) {
    return a <=> Decimal(b, 0);
  }
  friend bool operator==(const Decimal& a, int64_t b) { return (a <=> b) == 0; }

 private:
  __int128 unscaled_ = 0;
  int scale_ = 0;
};

}  // namespace sluice
