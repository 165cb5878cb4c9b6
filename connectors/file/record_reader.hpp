#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

/// One record of a changelog file: its text without the line break, and
/// where it starts. The text is valid until the next record is read.
struct RawRecord {
  std::string_view text;
  int64_t line = 0;  ///< 1-based number of its first line
};

/// Reads the records of a file, tracking the byte offset and the line
/// number of the next one. A CSV record continues over line breaks inside
/// a quoted field (CsvScan); any other record is a line. A UTF-8 byte
/// order mark at the start is passed over.
class RecordReader {
 public:
  /// Throws ConfigError, naming `path`, if the file cannot be read.
  RecordReader(const std::string& path, bool csv);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  /// Reads on from byte `offset`, the start of line `line`.
  void seek(int64_t offset, int64_t line);
  /// The next record; nullopt at the end of the file.
  std::optional<RawRecord> next();

  int64_t offset() const { return offset_; }
  int64_t line() const { return line_; }
  const std::string& path() const { return path_; }

  /// The file's size now.
  int64_t size() const;
  /// A fingerprint of what the file holds before byte `end`: its first and
  /// its last few KiB there (FNV-1a), read without moving the read position.
  uint64_t fingerprint(int64_t end) const;

 private:
  std::string path_;
  bool csv_;
  FILE* file_ = nullptr;
  char* buffer_ = nullptr;  // getline()'s
  size_t capacity_ = 0;
  std::string record_;  // a record of several lines
  int64_t offset_ = 0;
  int64_t line_ = 1;
};

/// Why the changelog file at `path` cannot be read (`error` an errno), as
/// a ConfigError says it.
std::string cannot_read(const std::string& path, int error);

}  // namespace sluice
