#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/connectors/mysql/connection.hpp"

namespace sluice {

/// Text in one of the server's character sets turned into UTF-8, as the
/// server itself converts it (it does, when a snapshot reads a column over a
/// utf8mb4 connection): how the binlog's bytes of a CHAR, VARCHAR or TEXT
/// column become a STRING.
class TextDecoder {
 public:
  virtual ~TextDecoder() = default;
  /// `bytes`, text in the charset, as UTF-8; what the charset cannot hold
  /// becomes '?', as the server has it.
  virtual std::string to_utf8(std::string_view bytes) const = 0;
};

/// The decoders of one server's character sets, each made once. The tables
/// of single-byte charsets and of those of Chinese, Japanese and Korean
/// text come from the server, but GB18030's (iconv's); UTF-16, UTF-32 and
/// UCS-2 are decoded here.
class Charsets {
 public:
  explicit Charsets(MySqlConnection& connection) : connection_(connection) {}

  /// The decoder for text in `charset` ("latin1"); null for a charset whose
  /// text is UTF-8 already (utf8mb4, utf8mb3, ascii). Throws ConfigError,
  /// naming `column`, for one it cannot read.
  std::shared_ptr<const TextDecoder> decoder(const std::string& charset, const std::string& column);

 private:
  // The UTF-8 of each byte of single-byte text in `charset`.
  std::array<std::string, 256> byte_table(const std::string& charset);

  MySqlConnection& connection_;
  std::map<std::string, std::shared_ptr<const TextDecoder>> made_;
};

/// Appends code point `c` as UTF-8.
void append_utf8(uint32_t c, std::string& out);

}  // namespace sluice
