#include "sluice/connectors/file/file_position.hpp"

#include <filesystem>

#include "sluice/engine/common/text.hpp"

namespace sluice {

FilePosition FilePosition::of(const RecordReader& reader) {
  return {.offset = reader.offset(),
          .line = reader.line(),
          .path = absolute(reader.path()),
          .size = reader.size(),
          .fingerprint = static_cast<int64_t>(reader.fingerprint(reader.offset()))};
}

std::string FilePosition::absolute(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

std::vector<Value> FilePosition::to_values() const {
  return {Value(offset), Value(line), Value(path), Value(size), Value(fingerprint)};
}

FilePosition FilePosition::from_values(const std::vector<Value>& values) {
  FilePosition position{.offset = values.at(0).as_bigint(), .line = values.at(1).as_bigint()};
  if (values.size() >= 5) {
    position.path = values[2].as_string();
    position.size = values[3].as_bigint();
    position.fingerprint = values[4].as_bigint();
  }
  return position;
}

std::string FilePosition::differs(const RecordReader& reader) const {
  if (path.empty()) return "";
  if (path != absolute(reader.path())) return "it is another file";
  if (reader.size() < size) {
    return "it holds " + count_of(reader.size(), "byte") + ", fewer than the " +
           std::to_string(size) + " it held then";
  }
  if (static_cast<int64_t>(reader.fingerprint(offset)) != fingerprint) {
    return "its first " + count_of(offset, "byte") + " are not the ones read then";
  }
  return "";
}

}  // namespace sluice
