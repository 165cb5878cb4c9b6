#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sluice/engine/data/row.hpp"
#include "sluice/engine/data/schema.hpp"

namespace sluice::testing {

/// Random transactions on the rows (id, email, v) of a table with UNIQUE
/// (email), as a source database with that key would log them: each valid
/// against the table the ones before left. Inserts and deletes, updates of
/// the email, key-changing updates that keep or change it, and two rows
/// swapping their emails through a third value.
class UniqueEmailChanges {
 public:
  struct Options {
    int keys = 8;                     ///< ids 0 .. keys-1
    std::vector<std::string> emails;  ///< what the emails are drawn from
    bool case_insensitive = false;    ///< 'a' and 'A' are one email
    bool text_keys = false;           ///< ids "k0", "k1", … (STRING) instead of numbers
    bool lone_updates = false;        ///< some updates come without their -U
  };
  struct Person {
    std::string email;
    int64_t v = 0;
    bool operator==(const Person&) const = default;
  };
  /// By the id's text.
  using Table = std::map<std::string, Person>;

  UniqueEmailChanges(Options options, uint64_t seed);

  /// "id BIGINT, email STRING, v BIGINT", or with a STRING id.
  static Schema schema(bool text_keys);
  /// The next transaction's changes; none when the draw fit no row.
  std::vector<Row> next();
  /// The table the changes so far leave.
  const Table& table() const { return table_; }
  /// Whether the table takes `a` and `b` for one email.
  bool same(const std::string& a, const std::string& b) const;
  /// Whether no row but `except`'s holds `email` in `table`.
  bool free(const Table& table, const std::string& email, const std::string& except = "") const;

 private:
  Value key(int id) const;
  Row row(RowKind kind, const Value& id, const Person& person) const;

  Options options_;
  std::mt19937_64 random_;
  Table table_;
  int64_t step_ = 0;
};

}  // namespace sluice::testing
