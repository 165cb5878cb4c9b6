#pragma once

#include <cctype>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

/// `n` and the noun in the form `n` takes: "1 row", "2 rows", "0 rows";
/// `plural` for nouns that do not just add an "s" ("retries").
inline std::string count_of(uint64_t n, std::string_view singular, std::string_view plural = {}) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out.append(singular);
  return plural.empty() ? out.append(singular).append("s") : out.append(plural);
}

/// `text` in ASCII lower case ("Exactly-Once" -> "exactly-once").
inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// `text` without the spaces, tabs and carriage returns around it.
inline std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

/// `pieces` with `separator` between them: {"a", "b"} -> "a, b".
inline std::string join(const std::vector<std::string>& pieces, std::string_view separator = ", ") {
  std::string out;
  for (const auto& piece : pieces) {
    if (&piece != &pieces.front()) out.append(separator);
    out.append(piece);
  }
  return out;
}

/// A moment, in seconds since the epoch, as UTC's "2026-12-07 13:41:29".
inline std::string utc_datetime(int64_t epoch_seconds) {
  const auto seconds = static_cast<std::time_t>(epoch_seconds);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  return std::string(text, std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &utc));
}

}  // namespace sluice
