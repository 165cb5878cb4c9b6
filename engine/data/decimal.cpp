#include "sluice/engine/data/decimal.hpp"

#include <algorithm>
#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <limits>
#include <optional>

#include "sluice/engine/common/error.hpp"

namespace sluice {

// What a number beyond a 128-bit integer is computed as: wide enough for the
// exact product of two 65-digit numbers before it is rounded; overflow
// throws std::overflow_error.
using Wide = boost::multiprecision::number<boost::multiprecision::cpp_int_backend<
    512, 512, boost::multiprecision::signed_magnitude, boost::multiprecision::checked, void>>;

namespace {

constexpr int kNarrowDigits = 38;  // every 38-digit number fits a 128-bit integer

constexpr auto kPow10 = [] {
  std::array<__int128, kNarrowDigits + 1> pow{};
  pow[0] = 1;
  for (size_t i = 1; i < pow.size(); ++i) pow[i] = pow[i - 1] * 10;
  return pow;
}();

// 10^n, for n up to the digits a Wide holds.
const Wide& wide_pow10(int n) {
  static const auto pow = [] {
    std::array<Wide, 155> out;
    out[0] = 1;
    for (size_t i = 1; i < out.size(); ++i) out[i] = out[i - 1] * 10;
    return out;
  }();
  if (n < 0 || n >= static_cast<int>(pow.size())) throw DataError("DECIMAL overflow");
  return pow[n];
}

template <typename Int>
Int magnitude(const Int& v) {
  return v < 0 ? Int(-v) : v;
}

[[noreturn]] void throw_shape(std::string_view text, int precision, int scale) {
  throw DataError("expected a DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                  ") with at most " + std::to_string(precision - scale) +
                  " digits before the point and " + std::to_string(scale) + " after, got '" +
                  std::string(text) + "'");
}

[[noreturn]] void throw_overflow() { throw DataError("DECIMAL overflow: more than 65 digits"); }

// n / d rounded to a whole number by `rounding`; d is not zero.
template <typename Int>
Int divide_rounded(const Int& n, const Int& d, Rounding rounding) {
  const Int q = n / d;
  const Int r = n % d;
  if (r == 0) return q;
  const bool negative = (n < 0) != (d < 0);
  // Whether the dropped part is more, exactly or less than half of d,
  // without computing 2r (which could overflow).
  const Int rest = magnitude(r), other = magnitude(d) - rest;
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
  return away ? Int(negative ? q - 1 : q + 1) : q;
}

// `v` at scale `from`, as a count of 10^-to units, rounded by `rounding`.
Wide rescale(const Wide& v, int from, int to, Rounding rounding) {
  if (to >= from) return v * wide_pow10(to - from);
  if (from - to >= 150) {
    // Every digit of v goes, and what goes is less than half a unit: round
    // a stand-in of the same sign that is less than half, too (1/3).
    return divide_rounded(Wide(v == 0 ? 0 : (v < 0 ? -1 : 1)), Wide(3), rounding);
  }
  return divide_rounded(v, wide_pow10(from - to), rounding);
}

// `v` * 10^by, or nullopt if that leaves a 128-bit integer's range.
std::optional<__int128> narrow_scale_up(__int128 v, int by) {
  __int128 out;
  if (by > kNarrowDigits || __builtin_mul_overflow(v, kPow10[by], &out)) return std::nullopt;
  return out;
}

}  // namespace

// Decimal's arithmetic beyond a 128-bit integer.
struct WideDecimal {
  static Wide of(const Decimal& d) {
    static const Wide kTwo128 = Wide(1) << 128;
    return Wide(d.high_) * kTwo128 + Wide(static_cast<unsigned __int128>(d.unscaled_));
  }
  static Decimal make(const Wide& v, int scale) {
    if (magnitude(v) >= wide_pow10(Decimal::kMaxPrecision)) throw_overflow();
    static const Wide kMask = (Wide(1) << 128) - 1;
    const Wide m = magnitude(v);
    auto low = static_cast<unsigned __int128>(m & kMask);
    auto high = static_cast<unsigned __int128>(m >> 128);
    if (v < 0) {  // two's complement of the 256 bits
      low = ~low + 1;
      high = ~high + (low == 0 ? 1 : 0);
    }
    Decimal out;
    out.unscaled_ = static_cast<__int128>(low);
    out.high_ = static_cast<__int128>(high);
    out.scale_ = scale;
    return out;
  }
  // `f` on the numbers as Wides, overflow a DataError.
  template <typename F>
  static auto compute(F&& f) {
    try {
      return f();
    } catch (const std::overflow_error&) {
      throw_overflow();
    }
  }
};

Decimal::Decimal(__int128 unscaled, int scale)
    : unscaled_(unscaled), high_(unscaled < 0 ? -1 : 0), scale_(scale) {
  if (scale < 0 || scale > kMaxPrecision) {
    throw DataError("DECIMAL scale must be between 0 and 65, got " + std::to_string(scale));
  }
}

Decimal Decimal::from_halves(__int128 high, __int128 low, int scale) {
  Decimal out(low, scale);
  out.high_ = high;
  if (out.wide()) return WideDecimal::make(WideDecimal::of(out), scale);  // checks the range
  return out;
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
  if (whole.size() + static_cast<size_t>(scale) <= 18) {  // in 64 bits: no 128-bit multiplying
    uint64_t unscaled = 0;
    for (char c : whole) unscaled = unscaled * 10 + static_cast<uint64_t>(c - '0');
    for (char c : fraction) unscaled = unscaled * 10 + static_cast<uint64_t>(c - '0');
    unscaled *= static_cast<uint64_t>(kPow10[scale - fraction.size()]);
    const auto v = static_cast<__int128>(unscaled);
    return Decimal(negative ? -v : v, scale);
  }
  if (whole.size() + static_cast<size_t>(scale) <= kNarrowDigits) {
    __int128 unscaled = 0;
    for (char c : whole) unscaled = unscaled * 10 + (c - '0');
    for (char c : fraction) unscaled = unscaled * 10 + (c - '0');
    unscaled *= kPow10[scale - fraction.size()];
    return Decimal(negative ? -unscaled : unscaled, scale);
  }
  Wide unscaled = 0;
  for (char c : whole) unscaled = unscaled * 10 + (c - '0');
  for (char c : fraction) unscaled = unscaled * 10 + (c - '0');
  unscaled *= wide_pow10(scale - static_cast<int>(fraction.size()));
  return WideDecimal::make(negative ? Wide(-unscaled) : unscaled, scale);
}

Decimal Decimal::rescaled(int scale) const {
  if (!wide()) {
    if (scale >= scale_) {
      if (const auto up = narrow_scale_up(unscaled_, scale - scale_)) return Decimal(*up, scale);
    } else {
      const __int128 divisor = kPow10[std::min(scale_ - scale, kNarrowDigits)];
      if (scale_ - scale <= kNarrowDigits && unscaled_ % divisor == 0) {
        return Decimal(unscaled_ / divisor, scale);
      }
    }
  }
  return WideDecimal::compute([&] {
    const Wide v = WideDecimal::of(*this);
    if (scale >= scale_) return WideDecimal::make(v * wide_pow10(scale - scale_), scale);
    const Wide& divisor = wide_pow10(scale_ - scale);
    if (v % divisor != 0) {
      throw DataError("DECIMAL " + to_string() + " does not fit " + std::to_string(scale) +
                      " fractional digits without rounding");
    }
    return WideDecimal::make(v / divisor, scale);
  });
}

Decimal Decimal::rescaled(int scale, Rounding rounding) const {
  if (rounding == Rounding::kUnnecessary) return rescaled(scale);
  if (!wide() && scale < scale_ && scale_ - scale <= kNarrowDigits) {
    return Decimal(divide_rounded(unscaled_, kPow10[scale_ - scale], rounding), scale);
  }
  return WideDecimal::compute([&] {
    return WideDecimal::make(rescale(WideDecimal::of(*this), scale_, scale, rounding), scale);
  });
}

Decimal Decimal::of(std::string_view text) {
  const size_t point = text.find('.');
  const size_t fraction = point == std::string_view::npos ? 0 : text.size() - point - 1;
  if (fraction > static_cast<size_t>(kMaxPrecision)) {
    throw DataError("DECIMAL literal '" + std::string(text) + "' has more than 65 digits");
  }
  const int scale = static_cast<int>(fraction);
  return parse(text, kMaxPrecision, scale);
}

Decimal Decimal::multiply(const Decimal& other, int scale, Rounding rounding) const {
  return WideDecimal::compute([&] {
    const Wide product = WideDecimal::of(*this) * WideDecimal::of(other);
    return WideDecimal::make(rescale(product, scale_ + other.scale_, scale, rounding), scale);
  });
}

Decimal Decimal::divide(const Decimal& other, int scale, Rounding rounding) const {
  if (other.unscaled_ == 0 && other.high_ == 0)
    throw DataError("DECIMAL division by zero: " + to_string() + " / " + other.to_string());
  return WideDecimal::compute([&] {
    // unscaled / other.unscaled is at scale scale_ - other.scale_; shift the
    // numerator (or the denominator) so that the quotient is at `scale`.
    const int shift = scale + other.scale_ - scale_;
    const Wide n = WideDecimal::of(*this), d = WideDecimal::of(other);
    if (shift >= 0) {
      return WideDecimal::make(divide_rounded(Wide(n * wide_pow10(shift)), d, rounding), scale);
    }
    return WideDecimal::make(divide_rounded(n, Wide(d * wide_pow10(-shift)), rounding), scale);
  });
}

bool Decimal::fits(int precision, int scale) const {
  if (!wide() && precision <= kNarrowDigits) {
    if (scale == scale_) return magnitude(unscaled_) < kPow10[precision];
    __int128 v;
    if (scale < scale_) {
      if (scale_ - scale > kNarrowDigits || unscaled_ % kPow10[scale_ - scale] != 0) return false;
      v = unscaled_ / kPow10[scale_ - scale];
    } else if (scale - scale_ > kNarrowDigits ||
               __builtin_mul_overflow(unscaled_, kPow10[scale - scale_], &v)) {
      return false;
    }
    return magnitude(v) < kPow10[precision];
  }
  const Wide v = WideDecimal::of(*this);
  Wide at;
  if (scale < scale_) {
    const Wide& divisor = wide_pow10(scale_ - scale);
    if (v % divisor != 0) return false;
    at = v / divisor;
  } else {
    at = v * wide_pow10(scale - scale_);
  }
  return magnitude(at) < wide_pow10(precision);
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
  if (wide()) {
    std::string digits = magnitude(WideDecimal::of(*this)).str();
    if (digits.size() <= static_cast<size_t>(scale_)) {
      digits.insert(0, static_cast<size_t>(scale_) + 1 - digits.size(), '0');
    }
    if (high_ < 0) out += '-';
    out.append(digits, 0, digits.size() - static_cast<size_t>(scale_));
    if (scale_ > 0) out.append(".").append(digits, digits.size() - static_cast<size_t>(scale_));
    return;
  }
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
  if (!a.wide() && !b.wide()) {
    const auto x = narrow_scale_up(a.unscaled_, scale - a.scale_);
    const auto y = narrow_scale_up(b.unscaled_, scale - b.scale_);
    __int128 sum;
    if (x && y && !__builtin_add_overflow(*x, *y, &sum)) return Decimal(sum, scale);
  }
  return WideDecimal::compute([&] {
    return WideDecimal::make(WideDecimal::of(a) * wide_pow10(scale - a.scale_) +
                                 WideDecimal::of(b) * wide_pow10(scale - b.scale_),
                             scale);
  });
}

Decimal operator-(const Decimal& a) {
  if (!a.wide() && a.unscaled_ != std::numeric_limits<__int128>::min()) {
    return Decimal(-a.unscaled_, a.scale_);
  }
  return WideDecimal::make(-WideDecimal::of(a), a.scale_);
}

Decimal operator*(const Decimal& a, const Decimal& b) {
  if (a.scale_ + b.scale_ > Decimal::kMaxPrecision) throw_overflow();
  __int128 product;
  if (!a.wide() && !b.wide() && !__builtin_mul_overflow(a.unscaled_, b.unscaled_, &product)) {
    return Decimal(product, a.scale_ + b.scale_);
  }
  return WideDecimal::compute([&] {
    return WideDecimal::make(WideDecimal::of(a) * WideDecimal::of(b), a.scale_ + b.scale_);
  });
}

Decimal operator-(const Decimal& a, const Decimal& b) { return a + -b; }

std::strong_ordering operator<=>(const Decimal& a, const Decimal& b) {
  if (!a.wide() && !b.wide()) {
    if (a.scale_ == b.scale_) return a.unscaled_ <=> b.unscaled_;
    const int scale = std::max(a.scale_, b.scale_);
    const auto x = narrow_scale_up(a.unscaled_, scale - a.scale_);
    const auto y = narrow_scale_up(b.unscaled_, scale - b.scale_);
    if (x && y) return *x <=> *y;
  }
  const int scale = std::max(a.scale_, b.scale_);
  const Wide x = WideDecimal::of(a) * wide_pow10(scale - a.scale_);
  const Wide y = WideDecimal::of(b) * wide_pow10(scale - b.scale_);
  return x < y ? std::strong_ordering::less
               : (x > y ? std::strong_ordering::greater : std::strong_ordering::equal);
}

}  // namespace sluice
