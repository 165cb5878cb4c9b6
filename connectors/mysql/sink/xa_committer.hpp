#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/sink/sink_connection.hpp"
#include "sluice/connectors/mysql/sink/xa.hpp"
#include "sluice/engine/graph/metrics.hpp"

namespace sluice {

/// A transaction a restored checkpoint lists as prepared (XaCommitter::state()).
struct ListedTransaction {
  int64_t checkpoint = 0;  ///< the barrier that prepared it
  Xid xid;
  SessionId session;  ///< the connection that prepared it
};

/// What recovery does, decided by plan_recovery() from what it found.
struct XaRecoveryPlan {
  enum class Outcome {
    kCommit,     ///< still prepared: commit it
    kCommitted,  ///< committed already: its marker row says so
    /// Neither prepared nor marked, but later checkpoints completed after
    /// the restored one: it committed then, and its marker went since.
    kCommittedBefore,
    kLost,  ///< neither prepared nor committed: its writes are lost, the job fails
  };
  struct Step {
    Outcome outcome = Outcome::kCommit;
    ListedTransaction transaction;
  };
  /// One per listed transaction, in the order listed.
  std::vector<Step> listed;
  /// Prepared transactions of earlier runs that nothing lists and that this
  /// subtask owns: its own, and in subtask 0 those of subtasks this run
  /// does not have (they will never commit).
  std::vector<Xid> roll_back;
};

/// Recovery's decisions, without I/O: from the transactions `listed` by
/// the restored state, those the server has `prepared` (XA RECOVER, read
/// once every listed transaction's connection left the server) and those
/// of `listed` whose marker row it has (`marked`), for subtask `subtask`
/// of `parallelism` naming its transactions by `xids`. `older`: later
/// checkpoints completed after the restored one (restore=<id>).
XaRecoveryPlan plan_recovery(const std::vector<ListedTransaction>& listed,
                             const std::vector<Xid>& prepared, const std::vector<Xid>& marked,
                             bool older, const XidScheme& xids, int subtask, int parallelism);

/// The exactly-once side of the MySQL sink, for one subtask: one XA
/// transaction per checkpoint, begun when the first flush after a barrier
/// writes, prepared at the next barrier, committed from the connection that
/// prepared it when that checkpoint completes. While one is prepared, the
/// next checkpoint's transaction runs on a second connection (a connection
/// holds one XA transaction, and after XA PREPARE it takes nothing but
/// XA COMMIT or XA ROLLBACK of it). Each transaction writes a marker row,
/// so that recovery can tell a committed transaction from a lost one.
class XaCommitter {
 public:
  struct Counters {
    Counter* prepared = nullptr;
    Counter* committed = nullptr;
    Counter* recovered = nullptr;
    Counter* rolled_back = nullptr;
    Counter* transactions = nullptr;
    /// Gauges: the checkpoint of the newest transaction prepared and not
    /// yet committed (0: none), and of the last one committed.
    Counter* prepared_checkpoint = nullptr;
    Counter* committed_checkpoint = nullptr;
  };

  /// A transaction and the rows it wrote, in order: written again if it is
  /// rolled back.
  struct Transaction {
    int64_t checkpoint = 0;  ///< the barrier that prepared it; 0 while open
    Xid xid;
    SessionId session;                           ///< the connection that prepared it
    std::unique_ptr<SinkConnection> connection;  ///< null after a restore: another run prepared it
    std::vector<Row> rows;
  };

  /// `subtask` of `parallelism`; `restored`: the checkpoint the subtask
  /// restored, 0 if none; `target` names the table and server in errors;
  /// `canceller` ends waits when the job is cancelled.
  XaCommitter(SinkConnector connect, XidScheme xids, int subtask, int parallelism, int64_t restored,
              std::string target, MySqlCanceller& canceller, Counters counters);

  /// After a restore, on `connection` (kept for later use): commits the
  /// transactions `listed` (state() of the restored checkpoint), each after
  /// its connection left the server and checked by its marker; then rolls
  /// back this subtask's other prepared transactions of any earlier run, and
  /// in subtask 0 those of subtasks this run does not have. `older`: later
  /// checkpoints completed after the restored one (restore=<id>), so its
  /// transactions committed then, and their markers may be gone.
  void recover(const std::vector<std::vector<Value>>& listed,
               std::unique_ptr<SinkConnection> connection, bool older = false);

  /// The connection of the open transaction, begun if none is open: on an
  /// idle connection, or a new one. While another is prepared, the new one
  /// waits at most a second for a row lock: a lock the prepared one holds
  /// would be released only by a commit this thread has to make.
  SinkConnection& open();
  bool has_open() const { return open_.has_value(); }
  /// Hands the committer rows the open transaction wrote.
  void wrote(std::vector<Row>&& rows);
  /// Drops the open transaction's connection, which rolls it back, and
  /// returns what it wrote.
  std::vector<Row> abandon_open();

  /// At barrier `checkpoint`: prepares the open transaction, if any.
  void prepare(int64_t checkpoint);
  /// Commits every transaction prepared up to `checkpoint` (those of
  /// aborted checkpoints before it, too), oldest first.
  void commit_up_to(int64_t checkpoint);
  /// Rolls back every transaction prepared up to `checkpoint`, which was
  /// aborted, and returns their rows, oldest first.
  std::vector<Row> roll_back_up_to(int64_t checkpoint);

  /// At the job's end, once no checkpoint completes any more: rolls back,
  /// on connections of `connect`'s, the transactions prepared for
  /// checkpoints after `last_completed`, which will never commit, so that
  /// their locks go now rather than at the next run's recovery. Those of
  /// completed checkpoints stay for recovery to commit.
  void release(std::optional<int64_t> last_completed, const SinkConnector& connect);

  const std::deque<Transaction>& prepared() const { return prepared_; }
  /// Calls `each` with the rows of the transactions not committed, the
  /// prepared ones and then the open one, oldest first.
  void for_each_uncommitted(const std::function<void(const Row&)>& each) const;
  /// The prepared transactions, as a checkpoint saves them for recover():
  /// checkpoint, gtrid, bqual, connection id, server start.
  std::vector<std::vector<Value>> state() const;

 private:
  std::unique_ptr<SinkConnection> idle_connection();
  // Waits until the connections of `listed` left the server, reads what
  // plan_recovery() needs from it and returns the plan.
  XaRecoveryPlan inspect(SinkConnection& connection, const std::vector<ListedTransaction>& listed,
                         bool older) const;
  // Carries out `step` of a plan on `connection`.
  void carry_out(SinkConnection& connection, const XaRecoveryPlan::Step& step);
  // Interruptible by the canceller, unless the job is over anyway.
  void roll_back(SinkConnection& connection, const Xid& xid, bool interruptible = true);
  void delete_old_markers(SinkConnection& connection);
  [[noreturn]] void fail(const std::string& doing, const MySqlError& e) const;

  SinkConnector connect_;
  XidScheme xids_;
  int subtask_;
  int parallelism_;
  std::string target_;
  MySqlCanceller& canceller_;
  Counters counters_;

  std::optional<Transaction> open_;
  std::deque<Transaction> prepared_;
  std::vector<std::unique_ptr<SinkConnection>> idle_;
  int64_t last_checkpoint_;  // the last barrier: names the next transaction
  int64_t last_completed_ = 0;
  std::vector<Xid> committed_;  // since the last barrier
  // A committed transaction's marker is needed as long as a checkpoint that
  // recovery may restore lists the transaction: until a checkpoint taken
  // after the commit completes.
  std::map<int64_t, std::vector<Xid>> markers_to_delete_;
};

}  // namespace sluice
