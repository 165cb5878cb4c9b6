#include "sluice/connectors/file/record_reader.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sluice/connectors/file/csv.hpp"
#include "sluice/engine/common/error.hpp"

namespace sluice {

std::string cannot_read(const std::string& path, int error) {
  return "source.path: cannot read the changelog file " + path + ": " + std::strerror(error);
}

RecordReader::RecordReader(const std::string& path, bool csv) : path_(path), csv_(csv) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw ConfigError(cannot_read(path, errno));
  char bom[3];
  if (std::fread(bom, 1, 3, file_) == 3 && std::string_view(bom, 3) == "\xEF\xBB\xBF") {
    offset_ = 3;
  }
  seek(offset_, 1);
}

RecordReader::~RecordReader() {
  if (file_) std::fclose(file_);
  std::free(buffer_);
}

void RecordReader::seek(int64_t offset, int64_t line) {
  if (fseeko(file_, offset, SEEK_SET) != 0) {
    throw Error("cannot seek to byte " + std::to_string(offset) + " of " + path_);
  }
  offset_ = offset;
  line_ = line;
}

std::optional<RawRecord> RecordReader::next() {
  const int64_t first = line_;
  std::string_view text;
  CsvScan scan;
  bool several = false;  // lines, gathered in record_
  while (true) {
    const ssize_t n = getline(&buffer_, &capacity_, file_);
    if (n < 0) {
      if (std::ferror(file_)) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
      if (line_ == first) return std::nullopt;
      break;  // an unclosed quote at the end of the file
    }
    offset_ += n;
    ++line_;
    const std::string_view part(buffer_, static_cast<size_t>(n));
    const bool more = csv_ && scan.ends_quoted(part);
    if (!more && !several) {
      text = part;
      break;
    }
    if (!several) record_.clear();
    several = true;
    record_.append(part);
    if (!more) break;
  }
  if (several) text = record_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return RawRecord{text, first};
}

int64_t RecordReader::size() const {
  struct stat st;
  if (::fstat(::fileno(file_), &st) != 0) throw Error("cannot stat " + path_);
  return st.st_size;
}

uint64_t RecordReader::fingerprint(int64_t end) const {
  constexpr int64_t kSpan = 4096;
  uint64_t hash = 14695981039346656037ull;
  std::vector<char> bytes;
  for (const int64_t from : {int64_t{0}, std::max<int64_t>(0, end - kSpan)}) {
    bytes.resize(static_cast<size_t>(std::min(kSpan, end - from)));
    const ssize_t n = ::pread(::fileno(file_), bytes.data(), bytes.size(), from);
    if (n < 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
    for (ssize_t i = 0; i < n; ++i)
      hash = (hash ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ull;
  }
  return hash;
}

}  // namespace sluice
