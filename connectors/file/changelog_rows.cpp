#include "sluice/connectors/file/changelog_rows.hpp"

#include <string>

#include "sluice/engine/common/error.hpp"

namespace sluice {

void parse_column(Batch& rows, uint32_t row, size_t c, std::string_view text) {
  const Column& column = rows.schema().column(c);
  try {
    rows.column(c).parse(row, text, column.type);
  } catch (const DataError& e) {
    throw DataError("column '" + column.name + "': " + e.what());
  }
}

void check_changes(const Batch& rows, uint32_t first, const ChangelogMode& mode) {
  const Schema& schema = rows.schema();
  for (uint32_t row = first; row < rows.size(); ++row) {
    for (size_t k : schema.primary_key()) {
      if (rows.column(k).is_null(row)) {
        throw DataError("key column '" + schema.column(k).name + "' is empty");
      }
    }
  }
  for (uint32_t row = first; row < rows.size(); ++row) {
    const RowKind kind = rows.kind(row);
    if (mode.contains(kind)) continue;
    throw DataError(std::string("a ") + std::string(to_string(kind)) + " change in " +
                    (mode.is_insert_only() ? "an insert-only changelog"
                                           : "a changelog of " + mode.to_string()) +
                    " (source.changelog-mode)");
  }
}

}  // namespace sluice
