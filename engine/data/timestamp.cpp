#include "sluice/engine/data/timestamp.hpp"

#include <chrono>
#include <cstdio>
#include <optional>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// Reads exactly `width` digits at `pos`, or calls `fail`.
template <typename Fail>
int digits_at(std::string_view text, size_t pos, size_t width, Fail fail) {
  if (pos + width > text.size()) fail();
  int value = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') fail();
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// Reads the ".ffffff" that may end `text` at `pos` as microseconds.
template <typename Fail>
int64_t fraction_at(std::string_view text, size_t pos, Fail fail) {
  if (pos == text.size()) return 0;
  const size_t width = text.size() - pos - 1;
  if (text[pos] != '.' || width < 1 || width > 6) fail();
  int64_t fraction = digits_at(text, pos + 1, width, fail);
  for (size_t i = width; i < 6; ++i) fraction *= 10;
  return fraction;
}

// Appends ".ffffff" without its trailing zeros, or nothing for none.
void append_fraction(std::string& out, int64_t fraction) {
  if (fraction == 0) return;
  int width = 6;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --width;
  }
  char buf[16];
  const int n = std::snprintf(buf, sizeof buf, ".%0*lld", width, static_cast<long long>(fraction));
  out.append(buf, static_cast<size_t>(n));
}

// The date of year, month and day, any kind (see Date), or nullopt.
std::optional<Date> date_of(int year, unsigned month, unsigned day) {
  if (year == 0 && month == 0 && day == 0) return Date::zero();
  if (year < 0 || year > 9999 || month > 12 || day > 31) return std::nullopt;
  if (month == 0 || day == 0) {
    return Date{Date::kZeroInDateDays + static_cast<int32_t>((year * 13 + month) * 32 + day)};
  }
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month(month),
                                         std::chrono::day(day)};
  if (!date.ok()) return std::nullopt;
  return Date{static_cast<int32_t>(std::chrono::sys_days(date).time_since_epoch().count())};
}

// The date of "YYYY-MM-DD" at the start of `text`; `fail` for anything else.
template <typename Fail>
Date date_at(std::string_view text, Fail fail) {
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') fail();
  const int year = digits_at(text, 0, 4, fail);
  const int month = digits_at(text, 5, 2, fail);
  const int day = digits_at(text, 8, 2, fail);
  const std::optional<Date> date =
      date_of(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  if (!date) fail();
  return *date;
}

// Appends a date of the calendar or of a zero month or day (not the zero
// date) as "YYYY-MM-DD".
void append_date(std::string& out, Date date) {
  int year = 0;
  unsigned month = 0, day = 0;
  if (date.is_zero_in_date()) {
    const int32_t place = date.days - Date::kZeroInDateDays;
    year = place / 32 / 13;
    month = static_cast<unsigned>(place / 32 % 13);
    day = static_cast<unsigned>(place % 32);
  } else {
    const std::chrono::year_month_day ymd{std::chrono::sys_days(std::chrono::days(date.days))};
    year = int(ymd.year());
    month = unsigned(ymd.month());
    day = unsigned(ymd.day());
  }
  char buf[16];
  const int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", year, month, day);
  out.append(buf, static_cast<size_t>(n));
}

}  // namespace

Timestamp Timestamp::of(Date date, int64_t micros_in_day) {
  if (date.is_zero()) {
    return micros_in_day == 0 ? zero() : Timestamp{kZeroInDateMicros + micros_in_day};
  }
  if (date.is_zero_in_date()) {
    return {kZeroInDateMicros + int64_t{date.days - Date::kZeroInDateDays} * kMicrosPerDay +
            micros_in_day};
  }
  return {int64_t{date.days} * kMicrosPerDay + micros_in_day};
}

Timestamp Timestamp::parse(std::string_view text) {
  const auto fail = [&] {
    throw DataError("expected a TIMESTAMP as YYYY-MM-DD HH:MM:SS[.ffffff], got '" +
                    std::string(text) + "'");
  };
  // YYYY-MM-DD HH:MM:SS is 19 characters; the separators sit at fixed places.
  if (text.size() < 19 || (text[10] != ' ' && text[10] != 'T') || text[13] != ':' ||
      text[16] != ':') {
    fail();
  }
  const Date date = date_at(text, fail);
  const int hour = digits_at(text, 11, 2, fail);
  const int minute = digits_at(text, 14, 2, fail);
  const int second = digits_at(text, 17, 2, fail);
  if (hour > 23 || minute > 59 || second > 59) fail();
  const int64_t fraction = fraction_at(text, 19, fail);
  return of(date, ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction);
}

void Timestamp::append_to(std::string& out) const {
  if (is_zero()) {
    out += "0000-00-00 00:00:00";
    return;
  }
  int64_t in_day = 0;
  if (is_zero_in_date()) {
    // The date's place among those of a zero month or day; 0: the zero date.
    const auto place = static_cast<int32_t>((micros - kZeroInDateMicros) / kMicrosPerDay);
    in_day = (micros - kZeroInDateMicros) % kMicrosPerDay;
    if (place == 0) {
      out += "0000-00-00";
    } else {
      append_date(out, Date{Date::kZeroInDateDays + place});
    }
  } else {
    int64_t days = micros / kMicrosPerDay;
    in_day = micros % kMicrosPerDay;
    if (in_day < 0) {
      in_day += kMicrosPerDay;
      --days;
    }
    append_date(out, Date{static_cast<int32_t>(days)});
  }
  const int64_t seconds = in_day / kMicrosPerSecond;
  char buf[16];
  const int n = std::snprintf(buf, sizeof buf, " %02d:%02d:%02d", int(seconds / 3600),
                              int(seconds / 60 % 60), int(seconds % 60));
  out.append(buf, static_cast<size_t>(n));
  append_fraction(out, in_day % kMicrosPerSecond);
}

std::string Timestamp::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

Date Date::of(int year, unsigned month, unsigned day) {
  const std::optional<Date> date = date_of(year, month, day);
  if (!date) {
    throw DataError("not a DATE: year " + std::to_string(year) + ", month " +
                    std::to_string(month) + ", day " + std::to_string(day));
  }
  return *date;
}

Date Date::parse(std::string_view text) {
  const auto fail = [&] {
    throw DataError("expected a DATE as YYYY-MM-DD, got '" + std::string(text) + "'");
  };
  if (text.size() != 10) fail();
  return date_at(text, fail);
}

void Date::append_to(std::string& out) const {
  if (is_zero()) {
    out += "0000-00-00";
    return;
  }
  append_date(out, *this);
}

std::string Date::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

Time Time::parse(std::string_view text) {
  const auto fail = [&] {
    throw DataError("expected a TIME as [-]HH:MM:SS[.ffffff] (-838:59:59 to 838:59:59), got '" +
                    std::string(text) + "'");
  };
  std::string_view rest = text;
  const bool negative = !rest.empty() && rest.front() == '-';
  if (negative) rest.remove_prefix(1);
  const size_t colon = rest.find(':');
  if (colon != 2 && colon != 3) fail();
  const int hours = digits_at(rest, 0, colon, fail);
  if (rest.size() < colon + 6 || rest[colon + 3] != ':') fail();
  const int minutes = digits_at(rest, colon + 1, 2, fail);
  const int seconds = digits_at(rest, colon + 4, 2, fail);
  const int64_t fraction = fraction_at(rest, colon + 6, fail);
  const int64_t micros =
      ((int64_t{hours} * 60 + minutes) * 60 + seconds) * kMicrosPerSecond + fraction;
  if (minutes > 59 || seconds > 59 || micros > kMaxMicros) fail();
  return {negative ? -micros : micros};
}

void Time::append_to(std::string& out) const {
  const int64_t m = micros < 0 ? -micros : micros;
  const int64_t seconds = m / kMicrosPerSecond;
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%s%02lld:%02d:%02d", micros < 0 ? "-" : "",
                              static_cast<long long>(seconds / 3600), int(seconds / 60 % 60),
                              int(seconds % 60));
  out.append(buf, static_cast<size_t>(n));
  append_fraction(out, m % kMicrosPerSecond);
}

std::string Time::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

}  // namespace sluice
