#include "sluice/connectors/mysql/sink/xa_committer.hpp"

#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "sluice/connectors/mysql/sink/statement_writer.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/fault_point.hpp"

namespace sluice {

XaCommitter::XaCommitter(SinkConnector connect, XidScheme xids, int subtask, int parallelism,
                         int64_t restored, std::string target, MySqlCanceller& canceller,
                         Counters counters)
    : connect_(std::move(connect)),
      xids_(std::move(xids)),
      subtask_(subtask),
      parallelism_(parallelism),
      target_(std::move(target)),
      canceller_(canceller),
      counters_(counters),
      last_checkpoint_(restored) {}

XaRecoveryPlan plan_recovery(const std::vector<ListedTransaction>& listed,
                             const std::vector<Xid>& prepared, const std::vector<Xid>& marked,
                             bool older, const XidScheme& xids, int subtask, int parallelism) {
  using Outcome = XaRecoveryPlan::Outcome;
  const auto among = [](const std::vector<Xid>& some, const Xid& xid) {
    return std::find(some.begin(), some.end(), xid) != some.end();
  };
  XaRecoveryPlan plan;
  std::vector<Xid> listed_xids;
  for (const ListedTransaction& t : listed) {
    // A commit leaves its marker until a later checkpoint completed: after
    // one did, a transaction no longer prepared committed before it.
    const Outcome outcome = among(prepared, t.xid) ? Outcome::kCommit
                            : among(marked, t.xid) ? Outcome::kCommitted
                            : older                ? Outcome::kCommittedBefore
                                                   : Outcome::kLost;
    plan.listed.push_back({outcome, t});
    listed_xids.push_back(t.xid);
  }
  for (const Xid& xid : prepared) {
    if (among(listed_xids, xid)) continue;
    const std::optional<int> owner = xids.subtask_of(xid);
    if (owner && (*owner == subtask || (subtask == 0 && *owner >= parallelism))) {
      plan.roll_back.push_back(xid);
    }
  }
  return plan;
}

void XaCommitter::recover(const std::vector<std::vector<Value>>& state,
                          std::unique_ptr<SinkConnection> connection, bool older) {
  std::vector<ListedTransaction> listed;
  for (const std::vector<Value>& v : state) {
    listed.push_back({.checkpoint = v.at(0).as_bigint(),
                      .xid = {v.at(1).as_string(), v.at(2).as_string()},
                      .session = {static_cast<uint64_t>(v.at(3).as_bigint()),
                                  v.size() > 4 ? v.at(4).as_bigint() : 0}});
  }
  const XaRecoveryPlan plan = inspect(*connection, listed, older);
  for (const XaRecoveryPlan::Step& step : plan.listed) {
    carry_out(*connection, step);
    counters_.recovered->add(1);
  }
  fault_point("recovery-after-commits", subtask_);
  for (const Xid& xid : plan.roll_back) {
    roll_back(*connection, xid);
    counters_.rolled_back->add(1);
    spdlog::info("mysql sink {}: rolled back {} left prepared by an earlier run", target_,
                 xid.to_string());
  }
  idle_.push_back(std::move(connection));
}

XaRecoveryPlan XaCommitter::inspect(SinkConnection& connection,
                                    const std::vector<ListedTransaction>& listed,
                                    bool older) const {
  for (const ListedTransaction& t : listed) connection.wait_until_gone(t.session);
  const std::vector<Xid> prepared = connection.xa_recover();
  std::vector<Xid> marked;
  for (const ListedTransaction& t : listed) {
    if (connection.has_marker(t.xid)) marked.push_back(t.xid);  // committed ones only
  }
  return plan_recovery(listed, prepared, marked, older, xids_, subtask_, parallelism_);
}

void XaCommitter::carry_out(SinkConnection& connection, const XaRecoveryPlan::Step& step) {
  const ListedTransaction& t = step.transaction;
  switch (step.outcome) {
    case XaRecoveryPlan::Outcome::kCommit:
      connection.xa("COMMIT", t.xid);
      break;
    case XaRecoveryPlan::Outcome::kCommitted:
      break;
    case XaRecoveryPlan::Outcome::kCommittedBefore:
      spdlog::info("mysql sink {}: {} of checkpoint {} committed before later checkpoints did",
                   target_, t.xid.to_string(), t.checkpoint);
      break;
    case XaRecoveryPlan::Outcome::kLost:
      throw Error("exactly-once: transaction " + t.xid.to_string() + " of checkpoint " +
                  std::to_string(t.checkpoint) + " is neither prepared nor committed in " +
                  target_ + ": its writes are lost");
  }
  committed_.push_back(t.xid);
}

std::unique_ptr<SinkConnection> XaCommitter::idle_connection() {
  if (idle_.empty()) return connect_();
  std::unique_ptr<SinkConnection> connection = std::move(idle_.back());
  idle_.pop_back();
  return connection;
}

SinkConnection& XaCommitter::open() {
  if (open_) return *open_->connection;
  std::unique_ptr<SinkConnection> connection = idle_connection();
  const Xid xid = xids_.next(last_checkpoint_);
  const auto begin = [&] {
    delete_old_markers(*connection);
    connection->execute(prepared_.empty() ? "SET SESSION innodb_lock_wait_timeout = DEFAULT"
                                          : "SET SESSION innodb_lock_wait_timeout = 1");
    connection->xa("START", xid);
    connection->insert_marker(xid);
  };
  try {
    begin();
  } catch (const MySqlError& e) {
    // An idle connection may have been lost meanwhile (a server restart):
    // nothing was written yet, so a new one starts afresh, once.
    if (!e.retriable()) throw;
    spdlog::info("mysql sink {}: {}; starting the transaction on a new connection", target_,
                 e.what());
    connection = connect_();
    begin();
  }
  open_ = Transaction{
      .xid = xid, .session = connection->session(), .connection = std::move(connection)};
  return *open_->connection;
}

void XaCommitter::wrote(std::vector<Row>&& rows) {
  std::vector<Row>& kept = open_.value().rows;
  if (kept.empty()) {
    kept = std::move(rows);
  } else {
    std::move(rows.begin(), rows.end(), std::back_inserter(kept));
  }
}

void XaCommitter::for_each_uncommitted(const std::function<void(const Row&)>& each) const {
  for (const Transaction& transaction : prepared_) {
    for (const Row& row : transaction.rows) each(row);
  }
  if (open_) {
    for (const Row& row : open_->rows) each(row);
  }
}

std::vector<Row> XaCommitter::abandon_open() {
  if (!open_) return {};
  std::vector<Row> rows = std::move(open_->rows);
  open_.reset();
  return rows;
}

void XaCommitter::prepare(int64_t checkpoint) {
  last_checkpoint_ = checkpoint;
  // From this checkpoint on, what was committed before it is not listed.
  if (!committed_.empty()) markers_to_delete_[checkpoint] = std::move(committed_);
  committed_.clear();
  if (!open_) return;
  try {
    open_->connection->xa("END", open_->xid);
    open_->connection->xa("PREPARE", open_->xid);
  } catch (const MySqlError& e) {
    fail("preparing the transaction of checkpoint " + std::to_string(checkpoint) + " in", e);
  }
  fault_point("after-prepare", subtask_);
  counters_.prepared->add(1);
  open_->checkpoint = checkpoint;
  prepared_.push_back(std::move(*open_));
  open_.reset();
  counters_.prepared_checkpoint->set(static_cast<uint64_t>(checkpoint));
}

void XaCommitter::commit_up_to(int64_t checkpoint) {
  while (!prepared_.empty() && prepared_.front().checkpoint <= checkpoint) {
    Transaction& t = prepared_.front();
    fault_point("before-commit", subtask_);
    try {
      t.connection->xa("COMMIT", t.xid);
      committed_.push_back(t.xid);
      idle_.push_back(std::move(t.connection));
    } catch (const MySqlError& e) {
      if (!e.retriable()) fail("committing " + t.xid.to_string() + " in", e);
      // Its connection died after the prepare: commit from another one.
      t.connection.reset();
      std::unique_ptr<SinkConnection> other = connect_();
      const ListedTransaction listed{t.checkpoint, t.xid, t.session};
      carry_out(*other, inspect(*other, {listed}, false).listed.front());
      idle_.push_back(std::move(other));
    }
    fault_point("after-commit", subtask_);
    counters_.committed->add(1);
    counters_.transactions->add(1);
    counters_.committed_checkpoint->set(static_cast<uint64_t>(t.checkpoint));
    prepared_.pop_front();
  }
  if (prepared_.empty()) counters_.prepared_checkpoint->set(0);
  last_completed_ = checkpoint;
}

std::vector<Row> XaCommitter::roll_back_up_to(int64_t checkpoint) {
  std::vector<Row> again;
  while (!prepared_.empty() && prepared_.front().checkpoint <= checkpoint) {
    Transaction& t = prepared_.front();
    try {
      t.connection->xa("ROLLBACK", t.xid);
      idle_.push_back(std::move(t.connection));
    } catch (const MySqlError& e) {
      if (!e.retriable()) fail("rolling back " + t.xid.to_string() + " in", e);
      t.connection.reset();
      std::unique_ptr<SinkConnection> other = connect_();
      other->wait_until_gone(t.session);
      roll_back(*other, t.xid);
      idle_.push_back(std::move(other));
    }
    counters_.rolled_back->add(1);
    spdlog::info("mysql sink {}: checkpoint {} aborted; rolled back {} to write its rows again",
                 target_, checkpoint, t.xid.to_string());
    std::move(t.rows.begin(), t.rows.end(), std::back_inserter(again));
    prepared_.pop_front();
  }
  if (prepared_.empty()) counters_.prepared_checkpoint->set(0);
  return again;
}

void XaCommitter::release(std::optional<int64_t> last_completed, const SinkConnector& connect) {
  open_.reset();  // never prepared: it rolls back as its connection goes
  std::unique_ptr<SinkConnection> connection;
  for (Transaction& t : prepared_) {
    if (last_completed && t.checkpoint <= *last_completed) continue;
    t.connection.reset();  // its owner gone, another may roll it back
    if (!connection) connection = connect();
    connection->wait_until_gone(t.session);
    roll_back(*connection, t.xid, false);
    counters_.rolled_back->add(1);
    spdlog::info("mysql sink {}: rolled back {}: checkpoint {} will not complete", target_,
                 t.xid.to_string(), t.checkpoint);
  }
  std::erase_if(prepared_, [](const Transaction& t) { return !t.connection; });
}

std::vector<std::vector<Value>> XaCommitter::state() const {
  std::vector<std::vector<Value>> entries;
  for (const Transaction& t : prepared_) {
    entries.push_back({Value(t.checkpoint), Value(t.xid.gtrid), Value(t.xid.bqual),
                       Value(static_cast<int64_t>(t.session.connection)),
                       Value(t.session.server_started)});
  }
  return entries;
}

// Commits a transaction prepared by a connection that is gone, and checks
// that it did commit: right after the owner disconnects, XA COMMIT from
// elsewhere may report OK without committing.
// Rolls back a transaction another connection prepared, and checks that it
// is gone: while its owner is still going away the server may refuse or
// ignore the rollback, so it is tried again until then.
void XaCommitter::roll_back(SinkConnection& connection, const Xid& xid, bool interruptible) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    try {
      connection.xa("ROLLBACK", xid);
    } catch (const MySqlError& e) {
      if (e.code() != ER_XAER_NOTA && e.code() != ER_XAER_RMFAIL) throw;
    }
    const auto prepared = connection.xa_recover();
    if (std::find(prepared.begin(), prepared.end(), xid) == prepared.end()) return;
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("exactly-once: transaction " + xid.to_string() + " is still prepared in " +
                  target_ + " after 60 s of rolling it back");
    }
    if (!interruptible) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } else if (!canceller_.sleep_for(std::chrono::milliseconds(50))) {
      throw Error("exactly-once: cancelled while rolling back " + xid.to_string());
    }
  }
}

// Once the checkpoint after a commit completed, no restore lists the
// transaction: its marker goes, before the next XA START.
void XaCommitter::delete_old_markers(SinkConnection& connection) {
  for (auto it = markers_to_delete_.begin();
       it != markers_to_delete_.end() && it->first <= last_completed_;) {
    for (const Xid& xid : it->second) connection.delete_marker(xid);
    it = markers_to_delete_.erase(it);
  }
}

void XaCommitter::fail(const std::string& doing, const MySqlError& e) const {
  fail_write(doing, target_, e);
}

}  // namespace sluice
