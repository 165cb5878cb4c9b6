#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/connection.hpp"

namespace sluice {

/// An XA transaction id: gtrid and bqual, at most 64 bytes each.
struct Xid {
  std::string gtrid;
  std::string bqual;

  /// As XA statements take it: X'…',X'…' (hex, so any byte is safe).
  std::string sql() const;
  /// "gtrid = X'…' AND bqual = X'…'": a condition on a table holding xids.
  std::string where() const;
  std::string to_string() const { return gtrid + "," + bqual; }
  friend bool operator==(const Xid&, const Xid&) = default;
};

/// Names one sink subtask's transactions and recognises them later:
/// gtrid "sluice|<job>|<epoch>", bqual "<sink>|<subtask>|<checkpoint>|<sequence>",
/// where <sink> is the sink operator's name (two exactly-once sinks of one
/// job never take each other's transactions), the epoch is drawn afresh for
/// every run (so a restarted job never reuses an id: XAER_DUPID) and
/// <checkpoint> is the last checkpoint before the transaction began. Names
/// too long for 64 bytes, or holding '|', are shortened with a hash.
class XidScheme {
 public:
  XidScheme(const std::string& job, const std::string& sink, int subtask);

  Xid next(int64_t after_checkpoint);
  /// Whether `xid` is this job's, sink's and subtask's, of any run.
  bool owns(const Xid& xid) const;
  /// The subtask of this job's and sink's that `xid` belongs to, of any run;
  /// nullopt for another job's or sink's.
  std::optional<int> subtask_of(const Xid& xid) const;
  /// Whether `xid` is of job `job`, any sink, any subtask, any run.
  static bool of_job(const Xid& xid, const std::string& job);

 private:
  std::string prefix_;  // "sluice|<job>|"
  std::string sink_;    // "<sink>|"
  std::string epoch_;
  int subtask_;
  uint64_t sequence_ = 0;
};

/// The transactions the server holds prepared (XA RECOVER).
std::vector<Xid> xa_recover(MySqlConnection& connection);

/// When the server started, in Unix seconds (now less its Uptime): tells a
/// restarted server, whose connection ids start again, from the one that
/// gave out an id.
int64_t server_started_at(MySqlConnection& connection);

/// Waits until connection `id`, given out by the server that started at
/// `server_started` (0: unknown), is gone from information_schema.PROCESSLIST:
/// committing a transaction from another connection while its owner is
/// still going away may return OK without committing. No wait if the server
/// restarted since: the id is another connection's now, or nobody's. Throws
/// after `timeout`.
void wait_until_disconnected(MySqlConnection& connection, uint64_t id, int64_t server_started,
                             std::chrono::seconds timeout = std::chrono::seconds(60));

}  // namespace sluice
