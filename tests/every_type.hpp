#pragma once

#include <string>
#include <vector>

namespace sluice::testing {

/// The columns of a table with one column of every type MariaDB 10.11 has,
/// text in several charsets, keyed by `id INT`: for CREATE TABLE t (…).
extern const char kEveryType[];
/// Rows of kEveryType, for INSERT … VALUES: row 1 the lows, row 2 the
/// highs, row 3 NULLs, row 4 zeros and empties.
extern const std::vector<std::string> kEveryTypeRows;
/// Changes to every column of rows 1 and 4, one statement each, and rows
/// deleted and copied; `{}` stands for the table (with_table()).
extern const std::vector<std::string> kEveryTypeUpdates;

/// `statement` with each `{}` replaced by `table`.
std::string with_table(std::string statement, const std::string& table);

/// A key of one or more columns, and how the n-th row's key is made from
/// `seq` (1, 2, …), in SQL: values close together, or ordered otherwise by
/// the column's collation than by their bytes, or ending in zero bytes.
struct KeyCase {
  const char* columns;  ///< "k DECIMAL(20,0)", the key columns
  const char* key;      ///< "k"
  const char* values;   ///< for INSERT … SELECT … FROM seq_1_to_N
  int rows = 300;
};
/// Every key type, and composite keys of several.
extern const std::vector<KeyCase> kKeyCases;

}  // namespace sluice::testing
