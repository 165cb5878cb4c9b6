#include "sluice/engine/data/timestamp.hpp"

#include <chrono>
#include <cstdio>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

[[noreturn]] void throw_shape(std::string_view text) {
  throw DataError("expected a TIMESTAMP as YYYY-MM-DD HH:MM:SS[.ffffff], got '" +
                  std::string(text) + "'");
}

// Reads exactly `width` digits at `pos`.
int digits_at(std::string_view text, size_t pos, size_t width) {
  if (pos + width > text.size()) throw_shape(text);
  int value = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') throw_shape(text);
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

Timestamp Timestamp::parse(std::string_view text) {
  // YYYY-MM-DD HH:MM:SS is 19 characters; the separators sit at fixed places.
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' ||
      (text[10] != ' ' && text[10] != 'T') || text[13] != ':' || text[16] != ':') {
    throw_shape(text);
  }
  const std::chrono::year_month_day date{std::chrono::year{digits_at(text, 0, 4)},
                                         std::chrono::month(digits_at(text, 5, 2)),
                                         std::chrono::day(digits_at(text, 8, 2))};
  const int hour = digits_at(text, 11, 2);
  const int minute = digits_at(text, 14, 2);
  const int second = digits_at(text, 17, 2);
  if (!date.ok() || hour > 23 || minute > 59 || second > 59) throw_shape(text);
  int64_t fraction = 0;
  if (text.size() > 19) {
    const size_t width = text.size() - 20;
    if (text[19] != '.' || width < 1 || width > 6) throw_shape(text);
    fraction = digits_at(text, 20, width);
    for (size_t i = width; i < 6; ++i) fraction *= 10;
  }
  const int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  return {days * kMicrosPerDay + ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond +
          fraction};
}

void Timestamp::append_to(std::string& out) const {
  int64_t days = micros / kMicrosPerDay;
  int64_t in_day = micros % kMicrosPerDay;
  if (in_day < 0) {
    in_day += kMicrosPerDay;
    --days;
  }
  const std::chrono::year_month_day date{std::chrono::sys_days(std::chrono::days(days))};
  const int64_t seconds = in_day / kMicrosPerSecond;
  int64_t fraction = in_day % kMicrosPerSecond;
  char buf[40];
  int n = std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u %02d:%02d:%02d", int(date.year()),
                        unsigned(date.month()), unsigned(date.day()), int(seconds / 3600),
                        int(seconds / 60 % 60), int(seconds % 60));
  if (fraction != 0) {
    int width = 6;
    while (fraction % 10 == 0) {
      fraction /= 10;
      --width;
    }
    n +=
        std::snprintf(buf + n, sizeof(buf) - n, ".%0*lld", width, static_cast<long long>(fraction));
  }
  out.append(buf, n);
}

std::string Timestamp::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

}  // namespace sluice
