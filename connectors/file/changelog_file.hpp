#pragma once

#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// A changelog read from a file, in one of two formats:
///
/// - CSV: a header naming `op` and then the schema's columns in order; each
///   line an op (+I, -U, +U, -D) and the values. An empty field is NULL, a
///   quoted empty one ("") the empty string; quoting follows RFC 4180 (quoted
///   commas, doubled quotes, line breaks). A quote inside an unquoted field
///   makes that one line malformed. A -D line may stop after the key.
/// - Debezium JSON: one envelope per line, {"op": "c"|"r"|"u"|"d", "before":
///   {...}, "after": {...}}, bare or inside "payload". c and r are +I; u is
///   -U (if "before" is given) then +U, or -D of the old key then +I of the
///   new one when the update changed the key; d is -D. Numbers keep every
///   digit (a DECIMAL is read from the number's text, never a double).
///   Tombstones (a `null` line, or a null "payload") are skipped and counted.
///
/// Either may start with a UTF-8 byte order mark, and its last line may lack
/// a line break. Its checkpointed position is the byte offset of the next
/// line, with the file's path, size and a fingerprint of the bytes before
/// that offset: a restore reads on from there in the same file (grown or
/// not), and refuses another file, or this one rewritten, naming both and
/// suggesting restore=none. A malformed line fails the job naming the file
/// and line, or with `source.on-error=skip` is counted and written to
/// `source.dead-letter` (one JSON object per line: file, line, error,
/// record).
struct ChangelogFileOptions {
  /// The file to read. Required.
  std::string path;
  /// How a line is written: CSV (`+I,1,...`) or Debezium JSON. Default: CSV.
  enum class Format { kCsv, kDebeziumJson } format = Format::kCsv;
  /// The columns of the records and their types. Required.
  Schema schema;
  /// The kinds a line may carry; another is a malformed line. Default: all.
  ChangelogMode mode = ChangelogMode::all();
  /// What a malformed line does: fail the job, or be skipped and counted.
  /// Default: fail.
  enum class OnError { kFail, kSkip } on_error = OnError::kFail;
  /// Where skipped lines go; empty = nowhere (they are still counted).
  /// Default: empty.
  std::string dead_letter;
  /// Records per second; 0 = as fast as possible. Default: 0.
  double rate = 0;

  /// Reads the `source.*` keys of changelog_file_option_specs().
  static ChangelogFileOptions from(const Config& config, Schema schema);
};

std::vector<OptionSpec> changelog_file_option_specs();

/// The changelog-file source, as a graph node. It runs with parallelism 1.
SourceDef changelog_file_source(const ChangelogFileOptions& options);

}  // namespace sluice
