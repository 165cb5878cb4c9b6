#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/sink/sink_connection.hpp"

namespace sluice::testing {

/// A MySQL server in memory, as far as the sink's writer and committer can
/// tell: one table keyed by its first column (compared without case if
/// `fold_case`, as utf8mb4_unicode_ci would), transactions, XA transactions
/// that survive their connection and keep the rows they wrote locked,
/// markers. Every call is logged as "c<connection id> <call>", and a call
/// can be made to fail; what send() sends runs when finish() waits for it.
/// For one thread at a time.
class FakeServer {
 public:
  explicit FakeServer(bool fold_case = false) : fold_case_(fold_case) {}

  std::unique_ptr<SinkConnection> connect();
  SinkConnector connector() {
    return [this] { return connect(); };
  }

  /// The next call whose log text (without "c<id> ") starts with `prefix`
  /// throws MySqlError `code`; with `while_prepared`, the next such call
  /// made while an XA transaction is prepared. `detail` ends the message
  /// (" at row 2", as the server names a row it refused).
  void fail_next(std::string prefix, unsigned code, bool while_prepared = false,
                 std::string detail = "") {
    failures_.push_back({std::move(prefix), code, while_prepared, std::move(detail)});
  }
  size_t pending_failures() const { return failures_.size(); }
  /// Ends connection `id` as KILL would: its next call fails with 2013.
  void kill(uint64_t id) { live_.erase(id); }
  /// Commits every prepared transaction, as XA COMMIT from anywhere would.
  void commit_prepared();
  /// A restart: connections end, prepared transactions stay, ids start again.
  void restart();

  /// The committed rows, by key.
  std::map<std::string, Row> table;
  std::vector<Xid> markers;
  struct Change {
    bool remove = false;
    std::optional<Row> row;  // the row, or for a delete its key
    std::optional<Xid> marker;
  };
  struct PreparedXa {
    Xid xid;
    std::vector<Change> changes;
  };
  std::vector<PreparedXa> prepared;
  std::vector<std::string> log;
  TableInfo table_info;
  uint64_t max_allowed_packet = 16 << 20;
  int connections_made = 0;
  /// Whether connections say they share one session (as the tables sink's do).
  bool shared_session = false;
  /// Writes of a row that a prepared transaction holds locked: a server
  /// would keep them waiting until it commits. Each throws 1205.
  int lock_conflicts = 0;
  /// Bulk writes into an XA transaction while another was prepared.
  int writes_while_prepared = 0;

  /// Lines of the log that contain `text`.
  std::vector<std::string> calls(const std::string& text) const;

 private:
  friend class FakeConnection;
  std::string key_of(const Row& row) const;
  bool is_locked(const Row& row) const;
  void apply(const std::vector<Change>& changes);
  void check(uint64_t id, const std::string& call);

  bool fold_case_;
  uint64_t next_id_ = 1;
  int64_t started_ = 1000;
  std::set<uint64_t> live_;
  struct Failure {
    std::string prefix;
    unsigned code;
    bool while_prepared;
    std::string detail;
  };
  std::vector<Failure> failures_;
};

}  // namespace sluice::testing
