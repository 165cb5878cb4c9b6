#pragma once

#include <string>
#include <string_view>

#include "sluice/connectors/file/csv.hpp"
#include "sluice/connectors/file/record_reader.hpp"
#include "sluice/engine/data/batch.hpp"

namespace sluice {

/// A changelog in CSV: a header naming `op` and then the schema's columns
/// in order; each record an op (+I, -U, +U, -D) and the values. An empty
/// field is NULL, a quoted empty one ("") the empty string. A -D may stop
/// after the key.
class CsvChangelog {
 public:
  explicit CsvChangelog(const Schema& schema);

  /// Checks the header of the file at `path`; a ConfigError names the
  /// first field that differs, showing what a terminal would not.
  void check_header(const RawRecord& header, const std::string& path);
  /// Appends the change of `record` to `rows`, a batch of the schema's
  /// columns; throws DataError saying what is wrong, leaving a row it began
  /// for the caller to drop (Batch::truncate()).
  void append(std::string_view record, Batch& rows);

 private:
  const Schema& schema_;
  const size_t key_prefix_;  // columns a key-only -D gives: through the last key column
  CsvFields fields_;
};

}  // namespace sluice
