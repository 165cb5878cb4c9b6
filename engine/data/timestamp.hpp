#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

/// Points in time, days and times of day, as MySQL's DATETIME, DATE and
/// TIME hold them, MySQL's zero date and zero datetime included.
namespace sluice {

struct Date;

/// A point in time without a zone, as MySQL's DATETIME(6): microseconds since
/// 1970-01-01 00:00:00, read and written as "YYYY-MM-DD HH:MM:SS[.ffffff]".
/// MySQL's zero datetime, "0000-00-00 00:00:00", is a value of its own,
/// before every other; so are datetimes of a zero month or day, which a
/// server without NO_ZERO_IN_DATE keeps ("2020-00-15 10:00:00", see Date),
/// after the zero datetime and before every day of the calendar.
struct Timestamp {
  static constexpr int64_t kZeroMicros = std::numeric_limits<int64_t>::min();
  /// Where the datetimes of a zero month or day begin: their date's place
  /// among those (see Date) times a day's microseconds, plus the time of day.
  static constexpr int64_t kZeroInDateMicros = kZeroMicros + 1;
  static constexpr int64_t kZeroInDateSpan = int64_t{1} << 59;

  int64_t micros = 0;

  static constexpr Timestamp zero() { return {kZeroMicros}; }
  bool is_zero() const { return micros == kZeroMicros; }
  bool is_zero_in_date() const {
    return micros >= kZeroInDateMicros && micros - kZeroInDateMicros < kZeroInDateSpan;
  }
  /// `date` at `micros_in_day` (0 to a day's): the zero datetime, one of a
  /// zero month or day (the zero date with a time of day too), or a point
  /// in time.
  static Timestamp of(Date date, int64_t micros_in_day);

  /// Accepts "YYYY-MM-DD HH:MM:SS" with an optional fraction of 1 to 6 digits;
  /// a 'T' may stand for the space. Throws DataError saying the expected form.
  static Timestamp parse(std::string_view text);

  /// Writes the canonical form; the fraction appears only when non-zero, with
  /// its trailing zeros dropped: "2024-03-01 12:00:00.25".
  void append_to(std::string& out) const;
  std::string to_string() const;

  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

/// A day of the calendar, as MySQL's DATE: days since 1970-01-01, read and
/// written as "YYYY-MM-DD", years 0 to 9999. MySQL's zero date,
/// "0000-00-00", is a value of its own, before every other; so are dates of
/// a zero month or day ("2020-00-15", "2020-05-00"), which a server without
/// NO_ZERO_IN_DATE keeps, after the zero date and before every day of the
/// calendar: kZeroInDateDays + (year * 13 + month) * 32 + day.
struct Date {
  static constexpr int32_t kZeroDays = std::numeric_limits<int32_t>::min();
  static constexpr int32_t kZeroInDateDays = kZeroDays + 1;
  static constexpr int32_t kZeroInDateSpan = 1 << 23;

  int32_t days = 0;

  static constexpr Date zero() { return {kZeroDays}; }
  bool is_zero() const { return days == kZeroDays; }
  bool is_zero_in_date() const {
    return days >= kZeroInDateDays && days - kZeroInDateDays < kZeroInDateSpan;
  }
  /// Throws DataError unless it is a day of the calendar, 0000-00-00, or a
  /// date of year 0 to 9999 with a zero month or day.
  static Date of(int year, unsigned month, unsigned day);
  /// Reads "YYYY-MM-DD"; throws DataError saying the expected form.
  static Date parse(std::string_view text);

  void append_to(std::string& out) const;
  std::string to_string() const;

  friend auto operator<=>(const Date&, const Date&) = default;
};

/// A time of day or a span of time, as MySQL's TIME(6): microseconds, from
/// -838:59:59.999999 to 838:59:59.999999, read and written as
/// "[-]HH:MM:SS[.ffffff]" with two or three digits of hours.
struct Time {
  static constexpr int64_t kMaxMicros = ((838 * 60 + 59) * 60 + 59) * 1'000'000LL + 999'999;

  int64_t micros = 0;

  /// Reads "[-][H]HH:MM:SS[.ffffff]"; throws DataError saying the expected form.
  static Time parse(std::string_view text);

  /// The fraction appears only when non-zero, trailing zeros dropped.
  void append_to(std::string& out) const;
  std::string to_string() const;

  friend auto operator<=>(const Time&, const Time&) = default;
};

}  // namespace sluice
