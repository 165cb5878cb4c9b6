#include "sluice/connectors/mysql/binlog_position.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace sluice {
namespace {

// The number at the end of a binlog file's name, and the name before it.
std::pair<std::string_view, std::string_view> split_file(std::string_view file) {
  size_t digits = file.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(file[digits - 1]))) --digits;
  return {file.substr(0, digits), file.substr(digits)};
}

}  // namespace

std::string BinlogPosition::to_string() const { return file + ":" + std::to_string(offset); }

std::optional<BinlogPosition> BinlogPosition::parse(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  char* end = nullptr;
  const unsigned long long offset = std::strtoull(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(text[colon + 1]))) {
    return std::nullopt;
  }
  return BinlogPosition{text.substr(0, colon), offset};
}

std::optional<int64_t> BinlogPosition::packed() const {
  const std::string_view number = split_file(file).second;
  if (number.empty() || number.size() > 9 || offset >= (uint64_t{1} << 32)) return std::nullopt;
  uint64_t n = 0;
  std::from_chars(number.data(), number.data() + number.size(), n);
  if (n >= (uint64_t{1} << 29)) return std::nullopt;
  return static_cast<int64_t>(n << 32 | offset);
}

BinlogPosition BinlogPosition::unpacked(int64_t packed, const std::string& like) {
  const auto [name, digits] = split_file(like);
  std::string number = std::to_string(static_cast<uint64_t>(packed) >> 32);
  if (number.size() < digits.size()) number.insert(0, digits.size() - number.size(), '0');
  return {std::string(name) + number, static_cast<uint64_t>(packed) & 0xffffffffU};
}

std::strong_ordering operator<=>(const BinlogPosition& a, const BinlogPosition& b) {
  const auto [a_name, a_number] = split_file(a.file);
  const auto [b_name, b_number] = split_file(b.file);
  if (const auto by_name = a_name <=> b_name; by_name != 0) return by_name;
  // A longer number is a larger one: the server pads to six digits, then grows.
  if (const auto by_size = a_number.size() <=> b_number.size(); by_size != 0) return by_size;
  if (const auto by_number = a_number <=> b_number; by_number != 0) return by_number;
  return a.offset <=> b.offset;
}

}  // namespace sluice
