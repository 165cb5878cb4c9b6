#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

/// A table that a DDL statement changes, and what it does to the rows the
/// binlog logs for it.
struct DdlChange {
  /// In the order of how much they change.
  enum class Effect {
    kRowsAlike,            ///< an index, a default, a table option: rows read as before
    kNullableColumnAtEnd,  ///< one nullable column added at the end
    kRowsChange,           ///< anything else: the rows' columns, the key, or rows unlogged
  };
  std::string database;  ///< as written, or the statement's default database
  std::string table;     ///< empty: every table of `database` (DROP DATABASE)
  Effect effect = Effect::kRowsChange;
};

/// The tables DDL `statement`, run with default database `database`,
/// changes: the target of CREATE TABLE (not the table of its LIKE), ALTER
/// TABLE (and its RENAME TO), DROP TABLE, RENAME TABLE (both names),
/// TRUNCATE, CREATE and DROP INDEX, and DROP DATABASE. Comments are skipped,
/// MySQL's executable comments read. Statements that change no table's
/// columns (CREATE VIEW, TRIGGER, USER, …) and temporary tables give none.
std::vector<DdlChange> ddl_changes(std::string_view statement, std::string_view database);

}  // namespace sluice
