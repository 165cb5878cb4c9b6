#include "sluice/connectors/mysql/collation.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice {
namespace {

constexpr uint32_t kWeighed = 0x20000;  // code points whose weights are asked for

struct Weights {
  std::vector<std::string> of;  // by code point
  bool pad_space = false;
};

std::shared_ptr<const Weights> load(MySqlConnection& connection, const std::string& charset,
                                    const std::string& collation) {
  auto weights = std::make_shared<Weights>();
  weights->of.resize(kWeighed);
  const auto as = [&](const std::string& text) {
    return "CONVERT(" + text + " USING " + charset + ") COLLATE " + collation;
  };
  weights->pad_space =
      connection.query("SELECT " + as("'a'") + " = " + as("'a '")).at(0).at(0) == "1";
  // Every code point below U+20000 but the surrogates, from digits joined.
  std::string digit = "(SELECT 0 d";
  for (int d = 1; d < 16; ++d) digit += " UNION ALL SELECT " + std::to_string(d);
  digit += ")";
  const std::string sql =
      "SELECT n, WEIGHT_STRING(" + as("CHAR(n USING utf32)") +
      ") FROM (SELECT p.d * 65536 + a.d * 4096 + b.d * 256 + c.d * 16 + e.d AS n FROM "
      "(SELECT 0 d UNION ALL SELECT 1) p, " +
      digit + " a, " + digit + " b, " + digit + " c, " + digit +
      " e) code_points WHERE n < 55296 OR n > 57343";
  for (const auto& row : connection.query(sql)) {
    weights->of.at(std::stoul(row.at(0).value_or("0"))) = row.at(1).value_or("");
  }
  return weights;
}

// The next code point of UTF-8 `text` at `at`; a byte that begins none is itself.
uint32_t next_code_point(std::string_view text, size_t& at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b = byte(at);
  const size_t n = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
  if (n == 0 || at + n > text.size()) return 0x110000 + byte(at++);
  uint32_t c = n == 1 ? b : b & (0x7f >> n);
  for (size_t i = 1; i < n; ++i) c = c << 6 | (byte(at + i) & 0x3f);
  at += n;
  return c;
}

}  // namespace

KeyImage collation_image(MySqlConnection& connection, const std::string& charset,
                         const std::string& collation, uint32_t prefix) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Weights>> loaded;
  std::shared_ptr<const Weights> weights;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& cached = loaded[charset + "/" + collation];
    if (!cached) cached = load(connection, charset, collation);
    weights = cached;
  }
  return [weights, prefix](std::string_view value) {
    if (prefix > 0) {
      size_t at = 0;
      for (uint32_t n = 0; n < prefix && at < value.size(); ++n) next_code_point(value, at);
      value = value.substr(0, at);
    }
    if (weights->pad_space) {
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    }
    std::string image;
    image.reserve(value.size() * 2);
    for (size_t at = 0; at < value.size();) {
      const size_t from = at;
      const uint32_t c = next_code_point(value, at);
      if (c < kWeighed) {
        image += weights->of[c];
      } else {
        image.append(value.substr(from, at - from)).push_back('\xff');
      }
    }
    return image;
  };
}

}  // namespace sluice
