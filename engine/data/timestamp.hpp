#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

/// A point in time without a zone, as MySQL's DATETIME(6): microseconds since
/// 1970-01-01 00:00:00, read and written as "YYYY-MM-DD HH:MM:SS[.ffffff]".
struct Timestamp {
  int64_t micros = 0;

  /// Accepts "YYYY-MM-DD HH:MM:SS" with an optional fraction of 1 to 6 digits;
  /// a 'T' may stand for the space. Throws DataError saying the expected form.
  static Timestamp parse(std::string_view text);

  /// Writes the canonical form; the fraction appears only when non-zero, with
  /// its trailing zeros dropped: "2024-03-01 12:00:00.25".
  void append_to(std::string& out) const;
  std::string to_string() const;

  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

}  // namespace sluice
