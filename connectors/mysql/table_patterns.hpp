#pragma once

#include <compare>
#include <memory>
#include <string>
#include <vector>

namespace sluice {

class MySqlConnection;

/// A table as database and name.
struct TableName {
  std::string database;
  std::string table;
  /// "db.table".
  std::string to_string() const { return database + "." + table; }
  friend auto operator<=>(const TableName&, const TableName&) = default;
};

/// `db.table` patterns, as Flink CDC's `tables` option reads them: a
/// pattern is a regular expression for the database, a '.', and one for
/// the table; '\.' stands for the regular expression's '.' (any
/// character), and '*' alone for any name. The server's own databases never
/// match.
class TablePatterns {
 public:
  /// Throws ConfigError for a pattern that is not of that form, naming
  /// `option`, where the patterns were given.
  explicit TablePatterns(const std::vector<std::string>& patterns,
                         const std::string& option = "source.tables");
  bool matches(const std::string& database, const std::string& table) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
};

/// The base tables of the server that one of `patterns` matches, ordered by
/// database and name (TablePatterns). Throws ConfigError for a pattern that
/// is not of that form.
std::vector<TableName> match_tables(MySqlConnection& connection,
                                    const std::vector<std::string>& patterns);

}  // namespace sluice
