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
/// double, so 0.10 + 0.20 is exactly 0.30. Up to 65 digits, as MySQL's
/// DECIMAL; arithmetic that would overflow throws DataError. Sums and
/// products are exact; multiply(), divide() and rescaled() round to the
/// scale asked for, half-even unless told otherwise. A number within a
/// 128-bit integer's range (38 digits, and some) is held and computed as
/// one; a wider one takes a second 128-bit half and slower arithmetic.
class Decimal {
 public:
  static constexpr int kMaxPrecision = 65;

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

  /// Whether the unscaled number is beyond a 128-bit integer's range.
  bool wide() const { return high_ != (unscaled_ < 0 ? -1 : 0); }
  /// The unscaled number, when not wide(): the value is unscaled() * 10^-scale().
  __int128 unscaled() const { return unscaled_; }
  /// The unscaled number's two halves, as a 256-bit two's complement
  /// integer: high() * 2^128 + the bits of low().
  __int128 high() const { return high_; }
  __int128 low() const { return unscaled_; }
  /// The number whose unscaled value has those halves; throws DataError
  /// beyond 65 digits.
  static Decimal from_halves(__int128 high, __int128 low, int scale);
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
  friend struct WideDecimal;
  __int128 unscaled_ = 0;
  __int128 high_ = 0;  // the sign of unscaled_ unless wide()
  int scale_ = 0;
};

}  // namespace sluice
