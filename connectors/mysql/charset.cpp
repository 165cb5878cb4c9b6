#include "sluice/connectors/mysql/charset.hpp"

#include <iconv.h>

#include <array>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

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

// A charset of one- and two-byte characters (and, in EUC-JP, three-byte
// ones after 0x8F), each character's UTF-8 as the server converts it:
// where iconv's tables and the server's differ (Shift-JIS 0x5C and 0x7E,
// EUC-KR's Hangul beyond KS X 1001, Big5's symbols), the server's are the
// ones its snapshot reads and its target writes back.
class DoubleByteTable final : public TextDecoder {
 public:
  // Which bytes begin a character of two bytes, and which may follow.
  struct Layout {
    std::vector<std::pair<uint8_t, uint8_t>> heads, tails;
    bool three_byte = false;  // EUC-JP: 0x8F and two more
  };

  DoubleByteTable(const Layout& layout, std::array<std::string, 256> singles)
      : singles_(std::move(singles)), doubles_(1 << 16), triples_(layout.three_byte ? 1 << 16 : 0) {
    for (const auto& [first, last] : layout.heads) {
      for (unsigned b = first; b <= last; ++b) head_[b] = true;
    }
    for (const auto& [first, last] : layout.tails) {
      for (unsigned b = first; b <= last; ++b) tail_[b] = true;
    }
  }

  // Sets the UTF-8 of character `code`: two bytes, or three after 0x8F.
  void set(uint32_t code, std::string utf8) {
    (code > 0xffff ? triples_ : doubles_).at(code & 0xffff) = std::move(utf8);
  }

  std::string to_utf8(std::string_view bytes) const override {
    std::string out;
    out.reserve(bytes.size() * 2);
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
    for (size_t i = 0; i < bytes.size();) {
      const uint8_t b = byte(i);
      const std::string* text = nullptr;
      if (!triples_.empty() && b == 0x8f && i + 2 < bytes.size()) {
        text = &triples_[(byte(i + 1) << 8) | byte(i + 2)];
        i += 3;
      } else if (head_[b] && i + 1 < bytes.size() && tail_[byte(i + 1)]) {
        text = &doubles_[(b << 8) | byte(i + 1)];
        i += 2;
      } else {
        text = &singles_[b];
        i += 1;
      }
      out += text->empty() ? "?" : *text;  // what the server cannot read
    }
    return out;
  }

 private:
  std::array<std::string, 256> singles_;
  std::vector<std::string> doubles_, triples_;
  std::array<bool, 256> head_{}, tail_{};
};

// The layouts of MySQL's charsets of Chinese, Japanese and Korean text
// (its strings/ctype-*.c), but GB18030's, which has four-byte characters.
const DoubleByteTable::Layout* double_byte_layout(const std::string& charset) {
  using Layout = DoubleByteTable::Layout;
  static const Layout kShiftJis{{{0x81, 0x9f}, {0xe0, 0xfc}}, {{0x40, 0x7e}, {0x80, 0xfc}}};
  static const Layout kEucJp{{{0x8e, 0x8e}, {0xa1, 0xfe}}, {{0xa1, 0xfe}}, true};
  static const std::map<std::string, Layout> kLayouts = {
      {"big5", {{{0xa1, 0xf9}}, {{0x40, 0x7e}, {0xa1, 0xfe}}}},
      {"cp932", kShiftJis},
      {"sjis", kShiftJis},
      {"eucjpms", kEucJp},
      {"ujis", kEucJp},
      {"euckr", {{{0x81, 0xfe}}, {{0x41, 0x5a}, {0x61, 0x7a}, {0x81, 0xfe}}}},
      {"gb2312", {{{0xa1, 0xf7}}, {{0xa1, 0xfe}}}},
      {"gbk", {{{0x81, 0xfe}}, {{0x40, 0x7e}, {0x80, 0xfe}}}}};
  const auto found = kLayouts.find(charset);
  return found == kLayouts.end() ? nullptr : &found->second;
}

// GB18030 through iconv, whose table the server's matches.
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

// The numbers 0 to 255, as a query's table `name`(n).
std::string bytes_table(const std::string& name) {
  return name + "(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM " + name + " WHERE n < 255)";
}

// SQL: `n` in the range of one of `ranges`.
std::string in_ranges(const std::string& n,
                      const std::vector<std::pair<uint8_t, uint8_t>>& ranges) {
  std::string out;
  for (const auto& [first, last] : ranges) {
    out += (out.empty() ? "(" : " OR ") + n + " BETWEEN " + std::to_string(first) + " AND " +
           std::to_string(last);
  }
  return out + ")";
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

std::array<std::string, 256> Charsets::byte_table(const std::string& charset) {
  // Every byte as the server turns it into utf8mb4.
  std::array<std::string, 256> table;
  for (const auto& row :
       connection_.query("WITH RECURSIVE " + bytes_table("b") + " SELECT n, CONVERT(CHAR(n USING " +
                         charset + ") USING utf8mb4) FROM b")) {
    table.at(std::stoul(row.at(0).value_or("0"))) = row.at(1).value_or("?");
  }
  return table;
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
  } else if (charset == "gb18030") {
    auto iconv = std::make_shared<Iconv>("GB18030");
    if (!iconv->ok()) {
      throw ConfigError("column '" + column + "' is text in " + charset +
                        ", which this system's iconv cannot convert");
    }
    decoder = iconv;
  } else if (const DoubleByteTable::Layout* layout = double_byte_layout(charset)) {
    auto table = std::make_shared<DoubleByteTable>(*layout, byte_table(charset));
    // Every character of two bytes (or three) as the server turns it into utf8mb4.
    std::string pairs = "WITH RECURSIVE " + bytes_table("h") + ", " + bytes_table("t") +
                        " SELECT h.n * 256 + t.n, CONVERT(CHAR(h.n * 256 + t.n USING " + charset +
                        ") USING utf8mb4) FROM h JOIN t WHERE " + in_ranges("h.n", layout->heads) +
                        " AND " + in_ranges("t.n", layout->tails);
    if (layout->three_byte) {
      pairs +=
          " UNION ALL SELECT 65536 + h.n * 256 + t.n, CONVERT(CHAR(0x8f0000 + h.n * 256 + "
          "t.n USING " +
          charset + ") USING utf8mb4) FROM h JOIN t WHERE h.n >= 161 AND t.n >= 161";
    }
    for (const auto& row : connection_.query(pairs)) {
      table->set(static_cast<uint32_t>(std::stoul(row.at(0).value_or("0"))),
                 row.at(1).value_or("?"));
    }
    decoder = table;
  } else {
    const auto width = connection_.query(
        "SELECT MAXLEN FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME = " +
        connection_.quote(charset));
    if (width.empty() || width[0].at(0) != "1") {
      throw ConfigError("column '" + column + "' is text in " + charset +
                        ", a charset the binlog reader does not read");
    }
    decoder = std::make_shared<ByteTable>(byte_table(charset));
  }
  made_[charset] = decoder;
  return decoder;
}

}  // namespace sluice
