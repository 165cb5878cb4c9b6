#include "sluice/engine/data/decimal.hpp"

#include <algorithm>
#include <array>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

constexpr auto kPow10 = [] {
  std::array<__int128, Decimal::kMaxPrecision + 1> pow{};
  pow[0] = 1;
  for (size_t i = 1; i < pow.size(); ++i) pow[i] = pow[i - 1] * 10;
  return pow;
}();

__int128 magnitude(__int128 v) { return v < 0 ? -v : v; }

[[noreturn]] void throw_shape(std::string_view text, int precision, int scale) {
  throw DataError("expected a DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                  ") with at most " + std::to_string(precision - scale) +
                  " digits before the point and " + std::to_string(scale) + " after, got '" +
                  std::string(text) + "'");
}

[[noreturn]] void throw_overflow() { throw DataError("DECIMAL overflow: more than 38 digits"); }

__int128 checked_scale_up(__int128 v, int by) {
  __int128 out;
  if (by > Decimal::kMaxPrecision || __builtin_mul_overflow(v, kPow10[by], &out)) {
    throw_overflow();
  }
  return out;
}

// n / d rounded to a whole number by `rounding`; d is not zero.
__int128 divide_rounded(__int128 n, __int128 d, Rounding rounding) {
  const __int128 q = n / d;
  const __int128 r = n % d;
  if (r == 0) return q;
  const bool negative = (n < 0) != (d < 0);
  // Whether the dropped part is more, exactly or less than half of d,
  // without computing 2r (which could overflow).
  const __int128 rest = magnitude(r), other = magnitude(d) - rest;
  bool away = false;  // from zero
  switch (rounding) {
    case Rounding::kUp:
      away = true;
      break;
    case Rounding::kDown:
      break;
    case Rounding::kCeiling:
      away = !negative;
      break;
    case Rounding::kFloor:
      away = negative;
      break;
    case Rounding::kHalfUp:
      away = rest >= other;
      break;
    case Rounding::kHalfDown:
      away = rest > other;
      break;
    case Rounding::kHalfEven:
      away = rest > other || (rest == other && q % 2 != 0);
      break;
    case Rounding::kUnnecessary:
      throw DataError("DECIMAL rounding needed but Rounding::kUnnecessary given");
  }
  return away ? (negative ? q - 1 : q + 1) : q;
}

// `v` at scale `from`, as a count of 10^-to units, rounded by `rounding`.
__int128 rescale(__int128 v, int from, int to, Rounding rounding) {
  if (to >= from) return checked_scale_up(v, to - from);
  if (from - to > Decimal::kMaxPrecision) {
    // Every digit of v goes, and what goes is less than half a unit: round
    // a stand-in of the same sign that is less than half, too (1/3).
    return divide_rounded(v == 0 ? 0 : (v < 0 ? -1 : 1), 3, rounding);
  }
  return divide_rounded(v, kPow10[from - to], rounding);
}

}  // namespace

Decimal::Decimal(__int128 unscaled, int scale) : unscaled_(unscaled), scale_(scale) {
  if (scale < 0 || scale > kMaxPrecision) {
    throw DataError("DECIMAL scale must be between 0 and 38, got " + std::to_string(scale));
  }
}

Decimal Decimal::parse(std::string_view text, int precision, int scale) {
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest.front() == '-' || rest.front() == '+')) {
    negative = rest.front() == '-';
    rest.remove_prefix(1);
  }
  const size_t point = rest.find('.');
  std::string_view whole = rest.substr(0, point);
  std::string_view fraction = point == std::string_view::npos ? "" : rest.substr(point + 1);
  const auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((whole.empty() && fraction.empty()) || !all_digits(whole) || !all_digits(fraction)) {
    throw_shape(text, precision, scale);
  }
  while (!whole.empty() && whole.front() == '0') whole.remove_prefix(1);
  // Fractional digits beyond the scale are fine when they are zeros: nothing is lost.
  while (fraction.size() > static_cast<size_t>(scale) && fraction.back() == '0') {
    fraction.remove_suffix(1);
  }
  if (whole.size() > static_cast<size_t>(precision - scale) ||
      fraction.size() > static_cast<size_t>(scale)) {
    throw_shape(text, precision, scale);
  }
  __int128 unscaled = 0;
  for (char c : whole) unscaled = unscaled * 10 + (c - '0');
  for (char c : fraction) unscaled = unscaled * 10 + (c - '0');
  unscaled *= kPow10[scale - fraction.size()];
  return Decimal(negative ? -unscaled : unscaled, scale);
}

Decimal Decimal::rescaled(int scale) const {
  if (scale >= scale_) return Decimal(checked_scale_up(unscaled_, scale - scale_), scale);
  const __int128 divisor = kPow10[scale_ - scale];
  if (unscaled_ % divisor != 0) {
    throw DataError("DECIMAL " + to_string() + " does not fit " + std::to_string(scale) +
                    " fractional digits without rounding");
  }
  return Decimal(unscaled_ / divisor, scale);
}

Decimal Decimal::rescaled(int scale, Rounding rounding) const {
  if (rounding == Rounding::kUnnecessary) return rescaled(scale);
  return Decimal(rescale(unscaled_, scale_, scale, rounding), scale);
}

Decimal Decimal::of(std::string_view text) {
  const size_t point = text.find('.');
  const size_t fraction = point == std::string_view::npos ? 0 : text.size() - point - 1;
  if (fraction > static_cast<size_t>(kMaxPrecision)) {
    throw DataError("DECIMAL literal '" + std::string(text) + "' has more than 38 digits");
  }
  const int scale = static_cast<int>(fraction);
  return parse(text, kMaxPrecision, scale);
}

Decimal Decimal::multiply(const Decimal& other, int scale, Rounding rounding) const {
  __int128 product;
  if (__builtin_mul_overflow(unscaled_, other.unscaled_, &product)) throw_overflow();
  return Decimal(rescale(product, scale_ + other.scale_, scale, rounding), scale);
}

Decimal Decimal::divide(const Decimal& other, int scale, Rounding rounding) const {
  if (other.unscaled_ == 0)
    throw DataError("DECIMAL division by zero: " + to_string() + " / " + other.to_string());
  // unscaled / other.unscaled is at scale scale_ - other.scale_; shift the
  // numerator (or the denominator) so that the quotient is at `scale`.
  const int shift = scale + other.scale_ - scale_;
  if (shift >= 0) {
    return Decimal(divide_rounded(checked_scale_up(unscaled_, shift), other.unscaled_, rounding),
                   scale);
  }
  return Decimal(divide_rounded(unscaled_, checked_scale_up(other.unscaled_, -shift), rounding),
                 scale);
}

bool Decimal::fits(int precision, int scale) const {
  __int128 v;
  if (scale < scale_) {
    if (unscaled_ % kPow10[scale_ - scale] != 0) return false;
    v = unscaled_ / kPow10[scale_ - scale];
  } else if (__builtin_mul_overflow(unscaled_, kPow10[scale - scale_], &v)) {
    return false;
  }
  return magnitude(v) < kPow10[precision];
}

namespace {

// Writes `m`'s digits backwards ending at `p`, `scale` of them after a
// point; returns the first. `Int` unsigned: 64-bit division by 10 is a
// multiplication, 128-bit a library call.
template <typename Int>
char* write_digits(Int m, int scale, char* p) {
  for (int i = 0; i < scale; ++i) {
    *--p = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  }
  if (scale > 0) *--p = '.';
  do {
    *--p = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  } while (m != 0);
  return p;
}

}  // namespace

void Decimal::append_to(std::string& out) const {
  char buf[48];
  char* end = buf + sizeof(buf);
  const __int128 m = magnitude(unscaled_);
  char* p = m <= static_cast<__int128>(UINT64_MAX)
                ? write_digits(static_cast<uint64_t>(m), scale_, end)
                : write_digits(static_cast<unsigned __int128>(m), scale_, end);
  if (unscaled_ < 0) *--p = '-';
  out.append(p, end);
}

std::string Decimal::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

Decimal operator+(const Decimal& a, const Decimal& b) {
  const int scale = std::max(a.scale_, b.scale_);
  __int128 sum;
  if (__builtin_add_overflow(a.rescaled(scale).unscaled_, b.rescaled(scale).unscaled_, &sum)) {
    throw_overflow();
  }
  return Decimal(sum, scale);
}

Decimal operator-(const Decimal& a) { return Decimal(-a.unscaled_, a.scale_); }

Decimal operator*(const Decimal& a, const Decimal& b) {
  __int128 product;
  if (__builtin_mul_overflow(a.unscaled_, b.unscaled_, &product) ||
      a.scale_ + b.scale_ > Decimal::kMaxPrecision) {
    throw_overflow();
  }
  return Decimal(product, a.scale_ + b.scale_);
}

Decimal operator-(const Decimal& a, const Decimal& b) { return a + -b; }

std::strong_ordering operator<=>(const Decimal& a, const Decimal& b) {
  if (a.scale_ == b.scale_) return a.unscaled_ <=> b.unscaled_;
  const int scale = std::max(a.scale_, b.scale_);
  return a.rescaled(scale).unscaled_ <=> b.rescaled(scale).unscaled_;
}

}  // namespace sluice
