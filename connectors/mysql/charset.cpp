#include "sluice/connectors/mysql/charset.hpp"

#include <iconv.h>

#include <array>
#include <mutex>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// A single-byte charset: the UTF-8 of each byte, as the server converts it.
class ByteTable final : public TextDecoder {
 public:
  explicit ByteTable(std::array<std::string, 256> table) : table_(std::move(table)) {}
  std::string to_utf8(std::string_view bytes) const override {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char b : bytes) out += table_[static_cast<unsigned char>(b)];
    return out;
  }

 private:
  std::array<std::string, 256> table_;
};

// UTF-16 (MySQL's utf16 and ucs2 are big-endian, utf16le little) and
// UTF-32 (big-endian).
class Unicode final : public TextDecoder {
 public:
  Unicode(size_t unit, bool little_endian) : unit_(unit), little_endian_(little_endian) {}
  std::string to_utf8(std::string_view bytes) const override {
    std::string out;
    out.reserve(bytes.size());
    for (size_t i = 0; i + unit_ <= bytes.size();) {
      uint32_t c = take(bytes, i);
      if (unit_ == 2 && c >= 0xd800 && c < 0xdc00 && i + 2 <= bytes.size()) {
        const uint32_t low = take(bytes, i);
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
      }
      append_utf8(c, out);
    }
    return out;
  }

 private:
  uint32_t take(std::string_view bytes, size_t& i) const {
    uint32_t c = 0;
    for (size_t k = 0; k < unit_; ++k) {
      const auto b = static_cast<unsigned char>(bytes[i + (little_endian_ ? unit_ - 1 - k : k)]);
      c = (c << 8) | b;
    }
    i += unit_;
    return c;
  }
  size_t unit_;
  bool little_endian_;
};

// A multi-byte charset through iconv.
class Iconv final : public TextDecoder {
 public:
  explicit Iconv(const char* name) : convert_(iconv_open("UTF-8", name)) {}
  ~Iconv() override {
    if (ok()) iconv_close(convert_);
  }
  bool ok() const { return convert_ != reinterpret_cast<iconv_t>(-1); }
  std::string to_utf8(std::string_view bytes) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out(bytes.size() * 4 + 4, '\0');
    char* in = const_cast<char*>(bytes.data());
    size_t in_left = bytes.size();
    char* to = out.data();
    size_t to_left = out.size();
    iconv(convert_, nullptr, nullptr, nullptr, nullptr);
    while (in_left > 0) {
      if (iconv(convert_, &in, &in_left, &to, &to_left) != static_cast<size_t>(-1)) break;
      // A byte it cannot read: '?', as the server writes it, and on.
      *to++ = '?';
      --to_left;
      ++in;
      --in_left;
    }
    out.resize(out.size() - to_left);
    return out;
  }

 private:
  iconv_t convert_;
  mutable std::mutex mutex_;
};

// iconv's names of MySQL's multi-byte charsets of Chinese, Japanese and Korean.
const char* iconv_name(const std::string& charset) {
  static const std::map<std::string, const char*> kNames = {
      {"big5", "BIG5"},    {"cp932", "CP932"},    {"eucjpms", "EUC-JP-MS"},
      {"euckr", "EUC-KR"}, {"gb2312", "GB2312"},  {"gb18030", "GB18030"},
      {"gbk", "GBK"},      {"sjis", "SHIFT_JIS"}, {"ujis", "EUC-JP"}};
  const auto found = kNames.find(charset);
  return found == kNames.end() ? nullptr : found->second;
}

}  // namespace

void append_utf8(uint32_t c, std::string& out) {
  if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) c = '?';
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

std::shared_ptr<const TextDecoder> Charsets::decoder(const std::string& charset,
                                                     const std::string& column) {
  if (charset == "utf8mb4" || charset == "utf8mb3" || charset == "utf8" || charset == "ascii") {
    return nullptr;
  }
  if (const auto made = made_.find(charset); made != made_.end()) return made->second;
  std::shared_ptr<const TextDecoder> decoder;
  if (charset == "utf16" || charset == "ucs2") {
    decoder = std::make_shared<Unicode>(2, false);
  } else if (charset == "utf16le") {
    decoder = std::make_shared<Unicode>(2, true);
  } else if (charset == "utf32") {
    decoder = std::make_shared<Unicode>(4, false);
  } else if (const char* name = iconv_name(charset)) {
    auto iconv = std::make_shared<Iconv>(name);
    if (!iconv->ok()) {
      throw ConfigError("column '" + column + "' is text in " + charset +
                        ", which this system's iconv cannot convert (" + name + ")");
    }
    decoder = iconv;
  } else {
    const auto width = connection_.query(
        "SELECT MAXLEN FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME = " +
        connection_.quote(charset));
    if (width.empty() || width[0].at(0) != "1") {
      throw ConfigError("column '" + column + "' is text in " + charset +
                        ", a charset the binlog reader does not read");
    }
    // Every byte as the server turns it into utf8mb4.
    std::array<std::string, 256> table;
    for (const auto& row : connection_.query(
             "WITH RECURSIVE b(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM b WHERE n < 255) "
             "SELECT n, CONVERT(CHAR(n USING " +
             charset + ") USING utf8mb4) FROM b")) {
      table.at(std::stoul(row.at(0).value_or("0"))) = row.at(1).value_or("?");
    }
    decoder = std::make_shared<ByteTable>(std::move(table));
  }
  made_[charset] = decoder;
  return decoder;
}

}  // namespace sluice
