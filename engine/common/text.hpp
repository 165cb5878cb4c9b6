#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

/// `n` and the noun in the form `n` takes: "1 row", "2 rows", "0 rows";
/// `plural` for nouns that do not just add an "s" ("retries").
inline std::string count_of(uint64_t n, std::string_view singular, std::string_view plural = {}) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out.append(singular);
  return plural.empty() ? out.append(singular).append("s") : out.append(plural);
}

}  // namespace sluice
