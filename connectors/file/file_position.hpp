#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/connectors/file/record_reader.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {

/// Where the changelog-file source is, as its checkpoints save it: the byte
/// offset and the line of the next record, and what identifies the input
/// that offset is in (the file's absolute path, its size then, and a
/// fingerprint of its bytes before the offset). An offset means something
/// only in the file it was taken in, or that file grown since.
struct FilePosition {
  int64_t offset = 0;
  int64_t line = 1;
  std::string path;  ///< empty in a checkpoint taken before positions named their input
  int64_t size = 0;
  int64_t fingerprint = 0;

  /// Where `reader` is now.
  static FilePosition of(const RecordReader& reader);
  /// `path` made absolute, as a position names it.
  static std::string absolute(const std::string& path);

  /// As a checkpoint keeps it, and back.
  std::vector<Value> to_values() const;
  static FilePosition from_values(const std::vector<Value>& values);

  /// Why the file `reader` reads is other input than this position's
  /// (another file, a shorter one, other bytes before the offset); empty
  /// when it is the same, or the position does not say.
  std::string differs(const RecordReader& reader) const;
};

}  // namespace sluice
