#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"

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
  /// Whether an ALTER TABLE changes the table in place (it does not rename
  /// it): what alter_clauses() can replay.
  bool altered_in_place = false;
  /// Whether an ALTER TABLE sets or drops a column's DEFAULT (ALTER [COLUMN]
  /// c SET DEFAULT, DROP DEFAULT): rows read as before, but a target that
  /// follows its table's columns changes too.
  bool defaults = false;
  /// Whether the statement makes the table (CREATE TABLE, the new name of
  /// a RENAME).
  bool creates = false;
  /// Whether it deletes or brings in rows of the table that the binlog
  /// does not log as rows: TRUNCATE TABLE, ALTER TABLE's DROP, TRUNCATE,
  /// EXCHANGE and CONVERT of partitions, and ALTER IGNORE TABLE's ADD
  /// UNIQUE or PRIMARY KEY, which deletes rows whose values repeat.
  bool rows_unlogged = false;
  /// What the statement does to the table as a whole.
  enum class Action {
    kOther,     ///< ALTER TABLE, an index
    kCreate,    ///< CREATE TABLE
    kRename,    ///< RENAME TABLE or ALTER TABLE … RENAME TO, either name
    kDrop,      ///< DROP TABLE
    kTruncate,  ///< TRUNCATE TABLE
  };
  Action action = Action::kOther;
};

/// The tables DDL `statement`, run with default database `database`,
/// changes: the target of CREATE TABLE (not the table of its LIKE), ALTER
/// TABLE (and its RENAME TO), DROP TABLE, RENAME TABLE (both names),
/// TRUNCATE, CREATE and DROP INDEX, and DROP DATABASE. Comments are skipped,
/// MySQL's executable comments read. Statements that change no table's
/// columns (CREATE VIEW, TRIGGER, USER, …) and temporary tables give none.
std::vector<DdlChange> ddl_changes(std::string_view statement, std::string_view database);

/// The tables an INSERT, REPLACE, UPDATE, DELETE or LOAD DATA `statement`,
/// run with default database `database`, may change, as database and name:
/// the table it inserts into, or every name an UPDATE or DELETE gives
/// before its SET or WHERE (a multi-table one may change any of its
/// tables); with a WITH clause, every name. Empty for other statements.
std::vector<std::pair<std::string, std::string>> written_tables(std::string_view statement,
                                                                std::string_view database);

/// The clauses of ALTER TABLE `statement` that change the columns of its
/// rows (or the default charset of columns added later), as an ALTER TABLE
/// of `table` (a quoted name) instead: what the schema history replays on
/// its copy. Indexes other than the primary key, foreign keys, partitions
/// and table options are left out. Empty if nothing is left.
std::string alter_clauses(std::string_view statement, std::string_view table);

/// The columns ALTER TABLE `statement` renames, old name and new: CHANGE
/// [COLUMN] old new …, RENAME COLUMN old TO new.
std::vector<std::pair<std::string, std::string>> column_renames(std::string_view statement);

/// What a column's values come from, as SHOW CREATE TABLE writes it.
struct ColumnExpressions {
  std::string default_sql;  ///< its DEFAULT ("1.50", "current_timestamp()")
  std::string generated;    ///< of a generated column, its expression ("(`a` + 1)")
  bool auto_increment = false;
  bool operator==(const ColumnExpressions&) const = default;
};
/// The DEFAULT and the generation expression of each column of
/// `definition`, a CREATE TABLE that SHOW CREATE TABLE wrote, and whether
/// it is AUTO_INCREMENT, by column name; columns with none are left out.
std::map<std::string, ColumnExpressions> column_expressions(std::string_view definition);

/// The foreign keys of `definition`, a CREATE TABLE that SHOW CREATE TABLE
/// wrote of a table of database `database` (the parent's, unless named).
std::vector<ForeignKey> foreign_keys(std::string_view definition, std::string_view database);

/// The table option `option` (COLLATE, CHARSET, ENGINE) of `definition`,
/// a CREATE TABLE that SHOW CREATE TABLE wrote; empty if it has none.
std::string table_option(std::string_view definition, std::string_view option);

/// `definition`, a CREATE TABLE that SHOW CREATE TABLE wrote, as a CREATE
/// TEMPORARY TABLE `table` (a quoted name) that a temporary table can have:
/// without foreign keys, and without partitions.
std::string temporary_copy(std::string_view definition, std::string_view table);

/// CREATE TABLE `statement` (run with default database `database`, as the
/// binlog has it: columns and all, or LIKE another) as a CREATE TEMPORARY
/// TABLE `table` (a quoted name), as temporary_copy() makes it; empty when
/// it is neither form.
std::string created_copy(std::string_view statement, std::string_view database,
                         std::string_view table);

/// The table CREATE TABLE … LIKE `statement` (default database `database`)
/// copies, as database and name; nullopt for another statement.
std::optional<std::pair<std::string, std::string>> created_like(std::string_view statement,
                                                                std::string_view database);

}  // namespace sluice
