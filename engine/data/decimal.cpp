#include "engine/data/decimal.hpp"

#include <algorithm>
#include <array>

#include "engine/common/error.hpp"

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

__int128 checked_scale_up(__int128 v, int by) {
  __int128 out;
  if (by > Decimal::kMaxPrecision || __builtin_mul_overflow(v, kPow10[by], &out)) {
    throw DataError("DECIMAL overflow: more than 38 digits");
  }
  return out;
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
    throw DataError("DECIMAL overflow: more than 38 digits");
  }
  return Decimal(sum, scale);
}

Decimal operator-(const Decimal& a) { return Decimal(-a.unscaled_, a.scale_); }

Decimal operator-(const Decimal& a, const Decimal& b) { return a + -b; }

std::strong_ordering operator<=>(const Decimal& a, const Decimal& b) {
  if (a.scale_ == b.scale_) return a.unscaled_ <=> b.unscaled_;
  const int scale = std::max(a.scale_, b.scale_);
  return a.rescaled(scale).unscaled_ <=> b.rescaled(scale).unscaled_;
}

}  // namespace sluice
