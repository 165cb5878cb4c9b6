#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/changelog_mode.hpp"

namespace sluice {

/// What the changelog file's formats share as they write a line's changes
/// straight into the columns of the source's batch.

/// Writes the value `text` spells into column `c` of row `row` (not NULL);
/// a DataError names the column.
void parse_column(Batch& rows, uint32_t row, size_t c, std::string_view text);

/// Checks rows `first` on of `rows`, the changes of one line: each of a
/// kind `mode` has, and no key column NULL. Throws DataError naming what is
/// wrong.
void check_changes(const Batch& rows, uint32_t first, const ChangelogMode& mode);

}  // namespace sluice
