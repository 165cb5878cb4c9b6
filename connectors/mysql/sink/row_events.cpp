#include "sluice/connectors/mysql/sink/row_events.hpp"

#include <mysql.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>

#include "sluice/engine/common/text.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {
namespace {

constexpr uint8_t kFormatDescriptionEvent = 15;
constexpr uint8_t kTableMapEvent = 19;
constexpr size_t kEventHeaderBytes = 19;
constexpr uint64_t kTableId = 1;
constexpr uint8_t kStatementEnd = 1;  // STMT_END_F: the statement's last event
// NO_FOREIGN_KEY_CHECKS_F: applied as the sink's statements are, without
// foreign key checks (see MySqlSinkConnection); without it the server
// checks them whatever the session says.
constexpr uint8_t kNoForeignKeyChecks = 2;
constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;
// Bytes of a DECIMAL group of 0 … 9 digits.
constexpr int kDecimalBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

// `bytes` (at most 8) of `v`, least significant first.
void append_le(std::string& out, uint64_t v, int bytes) {
  char b[8];
  for (int i = 0; i < bytes; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out.append(b, static_cast<size_t>(bytes));
}

}  // namespace

// Where a row image's values go: room made for them ahead in the events'
// string (see append_image()), written at a cursor with no check of the
// string's capacity for each value. A number of up to 8 bytes is stored as
// a whole word, so the room ends in 8 spare bytes.
class RowImageCursor {
 public:
  /// The most a value other than a string's bytes takes (a DECIMAL(65,30)
  /// takes 30), and the room's spare bytes.
  static constexpr size_t kValueRoom = 32, kSpare = 8;

  explicit RowImageCursor(char* start) : start_(start), at_(start) {}
  size_t size() const { return static_cast<size_t>(at_ - start_); }
  char& operator[](size_t i) { return start_[i]; }
  void resize(size_t n) { at_ = start_ + n; }
  void push_back(char c) { *at_++ = c; }
  RowImageCursor& operator+=(std::string_view bytes) {
    std::memcpy(at_, bytes.data(), bytes.size());
    at_ += bytes.size();
    return *this;
  }
  // `bytes` (1 to 8) of `v`, least or most significant first.
  void put_le(uint64_t v, int bytes) {
    std::memcpy(at_, &v, sizeof v);
    at_ += bytes;
  }
  void put_be(uint64_t v, int bytes) {
    const uint64_t first_at_front = __builtin_bswap64(v << (64 - 8 * bytes));
    std::memcpy(at_, &first_at_front, sizeof first_at_front);
    at_ += bytes;
  }

 private:
  char* start_;
  char* at_;
};

static_assert(std::endian::native == std::endian::little, "put_le() stores words as they are");

namespace {

void append_le(RowImageCursor& out, uint64_t v, int bytes) { out.put_le(v, bytes); }
void append_be(RowImageCursor& out, uint64_t v, int bytes) {
  if (bytes > 0) out.put_be(v, bytes);
}
// The binlog's packed integer.
void append_packed(std::string& out, uint64_t v) {
  if (v < 251) {
    out.push_back(static_cast<char>(v));
  } else if (v < (1 << 16)) {
    out.push_back(static_cast<char>(0xfc));
    append_le(out, v, 2);
  } else if (v < (1 << 24)) {
    out.push_back(static_cast<char>(0xfd));
    append_le(out, v, 3);
  } else {
    out.push_back(static_cast<char>(0xfe));
    append_le(out, v, 8);
  }
}
// A bitmap of `width` bits, those of `set` on.
void append_bitmap(std::string& out, size_t width, const std::vector<size_t>& set) {
  const size_t at = out.size();
  out.append((width + 7) / 8, '\0');
  for (size_t i : set) out[at + i / 8] = static_cast<char>(out[at + i / 8] | (1 << (i % 8)));
}
// An event's common header; its size is patched in when it ends.
void append_header(std::string& out, uint8_t type, uint32_t server_id, uint32_t when) {
  append_le(out, when, 4);
  out.push_back(static_cast<char>(type));
  append_le(out, server_id, 4);
  append_le(out, 0, 4);  // the size, see patch_size()
  append_le(out, 0, 4);  // the position after it in a binlog: none here
  append_le(out, 0, 2);  // flags
}
void patch_size(std::string& out, size_t event_start) {
  const auto size = static_cast<uint32_t>(out.size() - event_start);
  for (int i = 0; i < 4; ++i) out[event_start + 9 + i] = static_cast<char>(size >> (8 * i));
}

// The characters of UTF-8 `text`, or nullopt where it is not well-formed
// (a stray or missing continuation byte, an overlong form, a surrogate, a
// code point beyond U+10FFFF), which the server would refuse; or where it
// holds a character of four bytes and `four_bytes` is false (utf8mb3).
std::optional<uint64_t> utf8_characters(std::string_view text, bool four_bytes) {
  uint64_t n = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = p + text.size();
  while (p < end) {
    // Eight ASCII bytes at a time.
    uint64_t word;
    if (end - p >= 8 && (std::memcpy(&word, p, 8), (word & 0x8080808080808080ULL) == 0)) {
      n += 8;
      p += 8;
      continue;
    }
    const unsigned char c = *p;
    ++n;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int more;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      more = 1, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      more = 2, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4 && four_bytes) {
      more = 3, cp = c & 0x07;
    } else {
      return std::nullopt;
    }
    if (end - p <= more) return std::nullopt;
    for (int i = 1; i <= more; ++i) {
      if ((p[i] & 0xc0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((more == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (more == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
      return std::nullopt;
    }
    p += more + 1;
  }
  return n;
}

// 10^n, for n up to 38.
__int128 power_of_ten(int n) {
  static constexpr auto kPowers = [] {
    std::array<__int128, 39> powers{};
    powers[0] = 1;
    for (size_t i = 1; i < powers.size(); ++i) powers[i] = powers[i - 1] * 10;
    return powers;
  }();
  return kPowers[static_cast<size_t>(n)];
}

// MySQL's binary DECIMAL(precision, scale) of `value` (see
// decode_binary_decimal()), or false if it does not fit exactly.
bool append_decimal(RowImageCursor& out, const Decimal& value, int precision, int scale) {
  Decimal v = value;
  if (v.scale() != scale) {
    try {
      v = value.rescaled(scale);
    } catch (const DataError&) {
      return false;  // a digit the column drops: the server rounds, a statement decides
    }
  }
  if (v.wide()) return false;
  __int128 u = v.unscaled();
  const bool negative = u < 0;
  if (negative) u = -u;
  if (precision <= 38 && u >= power_of_ten(precision)) return false;
  const int intg = precision - scale;
  const size_t start = out.size();
  // The whole part's groups of nine digits, then the fraction's: in 64-bit
  // arithmetic where they fit, as __int128 division is a library call.
  const auto append_groups = [&](auto whole, auto fraction) {
    using U = decltype(whole);
    // `x` without its last `n` digits: 0 where 10^n is beyond U, as x is.
    const auto shifted = [](U x, int n) -> U {
      constexpr int kDigits = sizeof(U) == 8 ? 19 : 38;  // of the largest power of ten in U
      return n > kDigits ? 0 : x / static_cast<U>(power_of_ten(n));
    };
    if (intg % 9 > 0) {
      append_be(out, static_cast<uint64_t>(shifted(whole, intg / 9 * 9)), kDecimalBytes[intg % 9]);
    }
    for (int g = intg / 9 - 1; g >= 0; --g) {
      append_be(out, static_cast<uint64_t>(shifted(whole, 9 * g) % 1'000'000'000), 4);
    }
    for (int g = 0; g < scale / 9; ++g) {
      append_be(out, static_cast<uint64_t>(shifted(fraction, scale - 9 * (g + 1)) % 1'000'000'000),
                4);
    }
    if (scale % 9 > 0) {
      append_be(out, static_cast<uint64_t>(fraction % static_cast<U>(power_of_ten(scale % 9))),
                kDecimalBytes[scale % 9]);
    }
  };
  if (u <= UINT64_MAX && scale <= 19) {
    const auto u64 = static_cast<uint64_t>(u);
    const auto one = static_cast<uint64_t>(power_of_ten(scale));
    append_groups(u64 / one, u64 % one);
  } else {
    const __int128 one = power_of_ten(scale);
    append_groups(u / one, u % one);
  }
  out[start] = static_cast<char>(out[start] ^ 0x80);
  if (negative) {
    for (size_t i = start; i < out.size(); ++i) out[i] = static_cast<char>(~out[i]);
  }
  return true;
}

// The fraction of DATETIME2 and TIMESTAMP2 with `fsp` digits, or false if
// `micros` has a finer one, which the server would round.
bool append_fraction(RowImageCursor& out, int64_t micros, int fsp) {
  if (micros % static_cast<int64_t>(power_of_ten(6 - fsp)) != 0) return false;
  switch ((fsp + 1) / 2) {
    case 1:
      append_be(out, static_cast<uint64_t>(micros / 10'000), 1);
      break;
    case 2:
      append_be(out, static_cast<uint64_t>(micros / 100), 2);
      break;
    case 3:
      append_be(out, static_cast<uint64_t>(micros), 3);
      break;
    default:
      break;
  }
  return true;
}

// Floor division, for times before 1970.
int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

std::chrono::year_month_day civil(int64_t days) {
  return std::chrono::year_month_day{std::chrono::sys_days(std::chrono::days(days))};
}

// The number in "varchar(32)", "decimal(12,2)" (the first), or 0.
uint64_t type_length(const std::string& type) {
  const size_t open = type.find('(');
  return open == std::string::npos ? 0 : std::strtoull(type.c_str() + open + 1, nullptr, 10);
}

}  // namespace

std::string RowEventEncoder::format_description(uint32_t server_id) {
  // Each event type's post-header length, as MariaDB 10.11 writes them
  // (type 1 first): what the server reads the events after it by.
  std::string post_headers(171, '\0');
  static constexpr uint8_t kCommon[] = {56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0,  228, 0,
                                        4,  26, 8, 0, 0, 0,  8, 8, 8, 2, 0, 0,  0, 10, 10,  10};
  static constexpr uint8_t kMariaDb[] = {0, 4, 19, 4, 0, 13, 8, 8, 8, 10, 10, 10};  // from type 160
  std::memcpy(post_headers.data(), kCommon, sizeof kCommon);
  std::memcpy(post_headers.data() + 159, kMariaDb, sizeof kMariaDb);
  std::string out;
  append_header(out, kFormatDescriptionEvent, server_id, 0);
  append_le(out, 4, 2);  // binlog version
  std::string version = "10.11.0-MariaDB";
  version.resize(50, '\0');
  out += version;
  append_le(out, 0, 4);  // created
  out.push_back(static_cast<char>(kEventHeaderBytes));
  out += post_headers;
  out.push_back('\0');  // no checksums
  out.append(4, '\0');  // a checksum's room, which the event always has
  patch_size(out, 0);
  return out;
}

std::optional<RowEventEncoder> RowEventEncoder::fit(const RowEventTarget& target,
                                                    const std::string& table_name,
                                                    const TableInfo& table, const Schema& input,
                                                    const std::vector<size_t>& key,
                                                    std::string& why_not) {
  if (!target.obstacle.empty()) {
    why_not = target.obstacle;
    return std::nullopt;
  }
  std::vector<std::string> key_names;
  for (size_t k : key) key_names.push_back(input.column(k).name);
  std::vector<std::string> sorted_key = key_names;
  std::sort(sorted_key.begin(), sorted_key.end());
  bool primary = false;
  for (const TableIndex& index : table.unique_keys) {
    std::vector<std::string> columns = index.columns;
    std::sort(columns.begin(), columns.end());
    if (index.name == "PRIMARY" && columns == sorted_key) {
      // A key on a prefix of a column takes values the sink tells apart
      // for one: the server would find rows the changes do not name.
      if (std::any_of(index.prefixes.begin(), index.prefixes.end(),
                      [](uint32_t prefix) { return prefix > 0; })) {
        why_not = "its primary key takes a prefix of a column";
        return std::nullopt;
      }
      primary = true;
    } else {
      why_not = "it has a unique key besides the sink's (" + join(index.columns) + ")";
      return std::nullopt;
    }
  }
  if (!primary) {
    why_not = "the sink's key (" + join(key_names) + ") is not its primary key";
    return std::nullopt;
  }
  if (table.columns.size() != input.size()) {
    why_not = "the input does not fill all its columns";
    return std::nullopt;
  }
  RowEventEncoder encoder;
  encoder.server_id_ = target.server_id;
  for (const TableColumn& column : table.columns) {
    const std::optional<size_t> at = input.index_of(column.name);
    if (!at) {
      why_not = "the input has no column '" + column.name + "'";
      return std::nullopt;
    }
    const TypeId from = input.column(*at).type.id;
    ColumnCode code{.input = *at, .nullable = column.nullable};
    const std::string& type = column.column_type;
    const std::string kind = type.substr(0, type.find_first_of("( "));
    // MariaDB's COMPRESSED columns (shown "/*M!100301 COMPRESSED*/") keep
    // zlib data in their row images. So do MariaDB's TIME, DATETIME and TIMESTAMP of before 10.1
    // (shown "time(3) /* mariadb-5.3 */") in formats of their own.
    if (type.find("COMPRESSED") != std::string::npos ||
        type.find("mariadb-5.3") != std::string::npos) {
      why_not = "column '" + column.name + "' is " + type + ", which row events do not write";
      return std::nullopt;
    }
    code.is_unsigned = type.find(" unsigned") != std::string::npos;
    const auto takes = [&](std::initializer_list<TypeId> ids) {
      return std::find(ids.begin(), ids.end(), from) != ids.end();
    };
    const auto integer = [&](uint8_t binlog_type, int bytes) {
      code.how = ColumnCode::kInteger;
      code.type = binlog_type;
      code.bytes = bytes;
      return takes({TypeId::kBigint, TypeId::kBoolean, TypeId::kDecimal});
    };
    // UTF-8 text, whose bytes the row image holds as they are.
    const bool utf8 = column.charset == "utf8mb4" || column.charset == "utf8mb3";
    code.four_byte_chars = column.charset == "utf8mb4";
    const bool binary = column.charset.empty() || column.charset == "binary";
    bool ok = false;
    if (kind == "tinyint") {
      ok = integer(MYSQL_TYPE_TINY, 1);
    } else if (kind == "smallint") {
      ok = integer(MYSQL_TYPE_SHORT, 2);
    } else if (kind == "mediumint") {
      ok = integer(MYSQL_TYPE_INT24, 3);
    } else if (kind == "int") {
      ok = integer(MYSQL_TYPE_LONG, 4);
    } else if (kind == "bigint") {
      ok = integer(MYSQL_TYPE_LONGLONG, 8);
    } else if (kind == "decimal") {
      const size_t comma = type.find(',');
      code.how = ColumnCode::kDecimal;
      code.type = MYSQL_TYPE_NEWDECIMAL;
      code.precision = static_cast<int>(type_length(type));
      code.scale = comma == std::string::npos ? 0 : std::atoi(type.c_str() + comma + 1);
      code.metadata = {static_cast<char>(code.precision), static_cast<char>(code.scale)};
      ok = takes({TypeId::kDecimal, TypeId::kBigint}) && !code.is_unsigned;
    } else if (kind == "double") {
      code.how = ColumnCode::kDouble;
      code.type = MYSQL_TYPE_DOUBLE;
      code.metadata = {8};
      ok = takes({TypeId::kDouble}) && !code.is_unsigned;
    } else if (type == "float") {  // FLOAT(M,D) rounds to D digits: statements
      code.how = ColumnCode::kFloat;
      code.type = MYSQL_TYPE_FLOAT;
      code.metadata = {4};
      ok = takes({TypeId::kDouble});
    } else if (kind == "year") {
      code.how = ColumnCode::kYear;
      code.type = MYSQL_TYPE_YEAR;
      ok = takes({TypeId::kBigint});
    } else if (kind == "time") {
      code.how = ColumnCode::kTime;
      code.type = MYSQL_TYPE_TIME2;
      code.scale = static_cast<int>(type_length(type));
      code.metadata = {static_cast<char>(code.scale)};
      ok = takes({TypeId::kTime});
    } else if (kind == "date") {
      code.how = ColumnCode::kDate;
      code.type = MYSQL_TYPE_DATE;
      ok = takes({TypeId::kDate});
    } else if (kind == "datetime" || kind == "timestamp") {
      code.how = kind == "datetime" ? ColumnCode::kDatetime : ColumnCode::kTimestamp;
      code.type = kind == "datetime" ? MYSQL_TYPE_DATETIME2 : MYSQL_TYPE_TIMESTAMP2;
      code.scale = static_cast<int>(type_length(type));
      code.metadata = {static_cast<char>(code.scale)};
      ok = takes({TypeId::kTimestamp});
    } else if ((kind == "varchar" && utf8) || (kind == "varbinary" && binary)) {
      code.how = kind == "varchar" ? ColumnCode::kText : ColumnCode::kBinary;
      code.type = MYSQL_TYPE_VARCHAR;
      code.max_bytes = column.octet_length;
      code.max_chars = kind == "varchar" ? type_length(type) : 0;
      code.bytes = column.octet_length < 256 ? 1 : 2;
      append_le(code.metadata, column.octet_length, 2);
      ok = takes({kind == "varchar" ? TypeId::kString : TypeId::kBytes});
    } else if ((kind == "char" && utf8) || (kind == "binary" && binary)) {
      code.how = kind == "char" ? ColumnCode::kText : ColumnCode::kBinary;
      code.type = MYSQL_TYPE_STRING;
      code.max_bytes = column.octet_length;
      code.max_chars = kind == "char" ? type_length(type) : 0;
      code.bytes = column.octet_length < 256 ? 1 : 2;
      // The real type, with the length's two high bits folded in.
      code.metadata = {static_cast<char>(MYSQL_TYPE_STRING ^ ((column.octet_length & 0x300) >> 4)),
                       static_cast<char>(column.octet_length & 0xff)};
      ok = takes({kind == "char" ? TypeId::kString : TypeId::kBytes}) && column.octet_length < 1024;
    } else if (kind == "enum" || kind == "set") {
      // The member's index (from 1), or the members' bits, in as few bytes
      // as the column keeps them (Field_enum, Field_set): the type is
      // STRING, the real one in the metadata.
      code.how = kind == "enum" ? ColumnCode::kEnum : ColumnCode::kSet;
      code.type = MYSQL_TYPE_STRING;
      code.members = column.members();
      const size_t n = code.members.size();
      code.bytes = kind == "enum" ? (n < 256 ? 1 : 2) : ((n + 7) / 8 > 4 ? 8 : (n + 7) / 8);
      code.metadata = {static_cast<char>(kind == "enum" ? MYSQL_TYPE_ENUM : MYSQL_TYPE_SET),
                       static_cast<char>(code.bytes)};
      ok = n > 0 && takes({TypeId::kString});
    } else {
      static const std::pair<std::string_view, int> kBlobs[] = {
          {"tinytext", 1}, {"text", 2}, {"mediumtext", 3}, {"longtext", 4},
          {"tinyblob", 1}, {"blob", 2}, {"mediumblob", 3}, {"longblob", 4}};
      for (const auto& [name, bytes] : kBlobs) {
        if (kind != name) continue;
        const bool text = name.ends_with("text");
        code.how = text ? ColumnCode::kText : ColumnCode::kBinary;
        code.type = MYSQL_TYPE_BLOB;
        code.bytes = bytes;
        code.max_bytes = column.octet_length;
        code.metadata = {static_cast<char>(bytes)};
        ok = text ? utf8 && takes({TypeId::kString}) : binary && takes({TypeId::kBytes});
      }
    }
    if (!ok) {
      why_not = "column '" + column.name + "' is " + type +
                (column.charset.empty() ? "" : " " + column.charset) + " and the input's " +
                input.column(*at).type.to_string() + ", which row events do not carry here";
      return std::nullopt;
    }
    encoder.columns_.push_back(std::move(code));
  }
  for (size_t c = 0; c < encoder.columns_.size(); ++c) {
    encoder.all_.push_back(c);
    if (std::find(key.begin(), key.end(), encoder.columns_[c].input) != key.end()) {
      encoder.key_.push_back(c);
    }
  }
  // The statement's head: how to read it, and the table its rows are of.
  std::string head = format_description(target.server_id);
  const size_t map_start = head.size();
  append_header(head, kTableMapEvent, target.server_id, 0);
  append_le(head, kTableId, 6);
  append_le(head, 1, 2);  // TM_BIT_LEN_EXACT_F
  for (const std::string* name : {&target.database, &table_name}) {
    head.push_back(static_cast<char>(name->size()));
    head += *name;
    head.push_back('\0');
  }
  append_packed(head, encoder.columns_.size());
  std::string metadata;
  std::vector<size_t> nullable;
  for (size_t c = 0; c < encoder.columns_.size(); ++c) {
    head.push_back(static_cast<char>(encoder.columns_[c].type));
    metadata += encoder.columns_[c].metadata;
    if (encoder.columns_[c].nullable) nullable.push_back(c);
  }
  append_packed(head, metadata.size());
  head += metadata;
  append_bitmap(head, encoder.columns_.size(), nullable);
  patch_size(head, map_start);
  encoder.head_base64_ = base64_encode(head);
  return encoder;
}

bool RowEventEncoder::add(Kind kind, const Batch& batch, uint32_t row) {
  if (kind_ != kind) {
    if (kind_) end_event(false);
    start_event(kind);
  }
  if (kind == Kind::kWrite) return append_image(batch, row, all_);
  if (kind == Kind::kDelete) return append_image(batch, row, key_);
  return append_image(batch, row, key_) && append_image(batch, row, all_);
}

void RowEventEncoder::clear() {
  events_.clear();
  kind_.reset();
}

void RowEventEncoder::start_event(Kind kind) {
  kind_ = kind;
  event_start_ = events_.size();
  append_header(events_, static_cast<uint8_t>(kind), server_id_,
                static_cast<uint32_t>(std::time(nullptr)));
  append_le(events_, kTableId, 6);
  append_le(events_, kNoForeignKeyChecks, 2);  // flags, see end_event()
  append_packed(events_, columns_.size());
  append_bitmap(events_, columns_.size(), kind == Kind::kWrite ? all_ : key_);
  if (kind == Kind::kUpdate) append_bitmap(events_, columns_.size(), all_);
}

void RowEventEncoder::end_event(bool last) {
  if (last) events_[event_start_ + kEventHeaderBytes + 6] |= static_cast<char>(kStatementEnd);
  patch_size(events_, event_start_);
}

std::string RowEventEncoder::statement() {
  if (kind_) end_event(true);
  // Base64 chunks, as mariadb-binlog writes them: the head's, made once,
  // and the rows events'.
  std::string sql;
  sql.reserve(head_base64_.size() + events_.size() / 3 * 4 + 32);
  sql += "BINLOG '";
  sql += head_base64_;
  sql += '\n';
  base64_append(events_, sql);
  sql += "'";
  clear();
  return sql;
}

bool RowEventEncoder::append_image(const Batch& batch, uint32_t row,
                                   const std::vector<size_t>& columns) {
  // The NULL bits of the image's columns, then the others' values, in
  // room made for the most they can take.
  const size_t nulls = (columns.size() + 7) / 8;
  size_t room = nulls + RowImageCursor::kSpare;
  for (size_t c : columns) {
    const ColumnCode& code = columns_[c];
    const bool bytes = code.how == ColumnCode::kText || code.how == ColumnCode::kBinary;
    const ColumnVector& column = batch.column(code.input);
    room += RowImageCursor::kValueRoom +
            (bytes && !column.is_null(row) ? column.string_at(row).size() : 0);
  }
  const size_t start = events_.size();
  events_.resize(start + room);  // the NULL bits start as 0
  RowImageCursor out(events_.data() + start);
  out.resize(nulls);
  bool taken = true;
  for (size_t i = 0; i < columns.size() && taken; ++i) {
    const ColumnCode& code = columns_[columns[i]];
    const ColumnVector& column = batch.column(code.input);
    if (column.is_null(row)) {
      taken = code.nullable;  // if not, the server's own error, from a statement
      out[i / 8] = static_cast<char>(out[i / 8] | (1 << (i % 8)));
      continue;
    }
    taken = append_value(code, column, row, out);
  }
  events_.resize(start + out.size());
  return taken;
}

void RowEventEncoder::keep_invalid_enum_values() {
  for (ColumnCode& code : columns_) code.invalid_enum = code.how == ColumnCode::kEnum;
}

bool RowEventEncoder::append_value(const ColumnCode& code, const ColumnVector& column, uint32_t row,
                                   RowImageCursor& out) {
  switch (code.how) {
    case ColumnCode::kInteger: {
      __int128 v;
      if (column.type() == TypeId::kBigint) {
        v = column.values<int64_t>()[row];
      } else if (column.type() == TypeId::kBoolean) {
        v = column.values<BoolSlot>()[row].value ? 1 : 0;
      } else {
        const Decimal& d = column.values<Decimal>()[row];
        if (d.scale() != 0 || d.wide()) return false;
        v = d.unscaled();
      }
      const int bits = 8 * code.bytes;
      const __int128 low = code.is_unsigned ? 0 : -(__int128{1} << (bits - 1));
      const __int128 high =
          code.is_unsigned ? (__int128{1} << bits) - 1 : (__int128{1} << (bits - 1)) - 1;
      if (v < low || v > high) return false;
      append_le(out, static_cast<uint64_t>(v), code.bytes);
      return true;
    }
    case ColumnCode::kDecimal:
      if (column.type() == TypeId::kBigint) {
        return append_decimal(out, Decimal(column.values<int64_t>()[row], 0), code.precision,
                              code.scale);
      }
      return append_decimal(out, column.values<Decimal>()[row], code.precision, code.scale);
    case ColumnCode::kDouble: {
      const double v = column.values<double>()[row];
      if (!std::isfinite(v) || (v == 0 && std::signbit(v))) return false;
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      append_le(out, bits, 8);
      return true;
    }
    case ColumnCode::kFloat: {
      const double v = column.values<double>()[row];
      const auto f = static_cast<float>(v);
      if (!std::isfinite(f) || (v == 0 && std::signbit(v))) return false;
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      append_le(out, bits, 4);
      return true;
    }
    case ColumnCode::kYear: {
      // 0, or 1901 to 2155 as the years since 1900; a statement reads the
      // others (70 as 1970, say).
      const int64_t year = column.values<int64_t>()[row];
      if (year != 0 && (year < 1901 || year > 2155)) return false;
      append_le(out, static_cast<uint64_t>(year == 0 ? 0 : year - 1900), 1);
      return true;
    }
    case ColumnCode::kTime: {
      // TIME2 (my_time_packed_to_binary): hours << 12 | minutes << 6 |
      // seconds, shifted 24 bits above the microseconds, signed, offset.
      const int64_t micros = column.values<Time>()[row].micros;
      const int64_t magnitude = micros < 0 ? -micros : micros;
      if (magnitude > Time::kMaxMicros) return false;
      const int64_t seconds = magnitude / kMicrosPerSecond;
      const int64_t fraction = magnitude % kMicrosPerSecond;
      if (fraction % static_cast<int64_t>(power_of_ten(6 - code.scale)) != 0) return false;
      const int64_t hms = (seconds / 3600) << 12 | (seconds / 60 % 60) << 6 | (seconds % 60);
      const int64_t packed = ((hms << 24) + fraction) * (micros < 0 ? -1 : 1);
      const int64_t whole = packed >> 24;                // arithmetic: the floor
      const int64_t part = packed % (int64_t{1} << 24);  // the sign of `packed`
      if (code.scale >= 5) {
        append_be(out, static_cast<uint64_t>(packed + 0x800000000000LL), 6);
      } else {
        // The whole part, then the fraction in one or two bytes, signed.
        append_be(out, static_cast<uint64_t>(whole + 0x800000), 3);
        if (code.scale >= 3) {
          append_be(out, static_cast<uint16_t>(static_cast<int16_t>(part / 100)), 2);
        } else if (code.scale >= 1) {
          append_be(out, static_cast<uint8_t>(static_cast<int8_t>(part / 10'000)), 1);
        }
      }
      return true;
    }
    case ColumnCode::kText:
    case ColumnCode::kBinary: {
      const std::string_view v = column.string_at(row);
      if (v.size() > code.max_bytes) return false;
      if (code.how == ColumnCode::kText) {
        const std::optional<uint64_t> characters = utf8_characters(v, code.four_byte_chars);
        if (!characters || (code.max_chars > 0 && *characters > code.max_chars)) return false;
      }
      append_le(out, v.size(), code.bytes);
      out += v;
      return true;
    }
    case ColumnCode::kEnum:
    case ColumnCode::kSet: {
      // Members as the column spells them. Another spelling (another case,
      // trailing spaces), or no member, goes as a statement: the server
      // matches by the column's collation, or refuses.
      const auto index_of = [&](std::string_view member) -> std::optional<size_t> {
        const auto at = std::find(code.members.begin(), code.members.end(), member);
        if (at == code.members.end()) return std::nullopt;
        return static_cast<size_t>(at - code.members.begin());
      };
      const std::string_view v = column.string_at(row);
      if (code.how == ColumnCode::kEnum) {
        const std::optional<size_t> index = index_of(v);
        if (!index && !(v.empty() && code.invalid_enum)) return false;
        append_le(out, index ? *index + 1 : 0, code.bytes);
        return true;
      }
      uint64_t bits = 0;
      for (size_t from = 0; !v.empty() && from <= v.size();) {  // '' is the empty set
        const size_t comma = std::min(v.find(',', from), v.size());
        const std::optional<size_t> index = index_of(v.substr(from, comma - from));
        if (!index) return false;
        bits |= uint64_t{1} << *index;
        from = comma + 1;
      }
      append_le(out, bits, code.bytes);
      return true;
    }
    case ColumnCode::kDate: {
      const Date d = column.values<Date>()[row];
      if (d.is_zero_in_date()) return false;  // a statement writes it
      uint64_t v = 0;
      if (!d.is_zero()) {
        const std::chrono::year_month_day ymd = civil(d.days);
        const int year = static_cast<int>(ymd.year());
        if (year < 1 || year > 9999) return false;
        v = static_cast<unsigned>(ymd.day()) | static_cast<unsigned>(ymd.month()) << 5 |
            static_cast<uint64_t>(year) << 9;
      }
      append_le(out, v, 3);
      return true;
    }
    case ColumnCode::kDatetime: {
      const Timestamp t = column.values<Timestamp>()[row];
      if (t.is_zero_in_date()) return false;  // a statement writes it
      uint64_t packed = 0;
      int64_t micros = 0;
      if (!t.is_zero()) {
        const int64_t days = floor_div(t.micros, kMicrosPerDay);
        const int64_t in_day = t.micros - days * kMicrosPerDay;
        const std::chrono::year_month_day ymd = civil(days);
        const int year = static_cast<int>(ymd.year());
        if (year < 1 || year > 9999) return false;
        const int64_t seconds = in_day / kMicrosPerSecond;
        micros = in_day % kMicrosPerSecond;
        const uint64_t year_month =
            static_cast<uint64_t>(year) * 13 + static_cast<unsigned>(ymd.month());
        const uint64_t ymd_bits = year_month << 5 | static_cast<unsigned>(ymd.day());
        const uint64_t hms = static_cast<uint64_t>(seconds / 3600) << 12 |
                             static_cast<uint64_t>(seconds / 60 % 60) << 6 |
                             static_cast<uint64_t>(seconds % 60);
        packed = ymd_bits << 17 | hms;
      }
      const size_t start = out.size();
      append_be(out, packed + 0x8000000000ULL, 5);
      if (!append_fraction(out, micros, code.scale)) {
        out.resize(start);
        return false;
      }
      return true;
    }
    case ColumnCode::kTimestamp: {
      const Timestamp t = column.values<Timestamp>()[row];
      if (t.is_zero_in_date()) return false;
      int64_t seconds = 0, micros = 0;
      if (!t.is_zero()) {
        seconds = floor_div(t.micros, kMicrosPerSecond);
        micros = t.micros - seconds * kMicrosPerSecond;
        // TIMESTAMP's range: 1970-01-01 00:00:01 to 2038-01-19 03:14:07 UTC.
        if (seconds < 1 || seconds > INT32_MAX) return false;
      }
      const size_t start = out.size();
      append_be(out, static_cast<uint64_t>(seconds), 4);
      if (!append_fraction(out, micros, code.scale)) {
        out.resize(start);
        return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace sluice
