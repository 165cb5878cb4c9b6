#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

/// An exact fixed-point number: an integer count of 10^-scale units. Never a
/// double, so 0.10 + 0.20 is exactly 0.30. Up to 38 digits (the range of a
/// 128-bit integer); arithmetic that would overflow throws DataError.
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

  __int128 unscaled() const { return unscaled_; }
  int scale() const { return scale_; }

  /// The same number with `scale` fractional digits; throws DataError if that
  /// would drop a non-zero digit or overflow.
  Decimal rescaled(int scale) const;

  /// Whether the number fits DECIMAL(precision, scale) without rounding.
  bool fits(int precision, int scale) const;

  /// The text form, with exactly scale() fractional digits: "-12.50".
  std::string to_string() const;
  void append_to(std::string& out) const;

  friend Decimal operator+(const Decimal& a, const Decimal& b);
  friend Decimal operator-(const Decimal& a, const Decimal& b);
  friend Decimal operator-(const Decimal& a);
  /// Numeric comparison: 0.1 == 0.10.
  friend std::strong_ordering operator<=>(const Decimal& a, const Decimal& b);
  friend bool operator==(const Decimal& a, const Decimal& b) { return (a <=> b) == 0; }

 private:
  __int128 unscaled_ = 0;
  int scale_ = 0;
};

}  // namespace sluice
