#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/sink_buffer.hpp"
#include "sluice/connectors/mysql/sink/sink_connection.hpp"
#include "sluice/connectors/mysql/sink/statement_writer.hpp"
#include "sluice/connectors/mysql/sink/xa_committer.hpp"
#include "sluice/engine/graph/operator.hpp"

namespace sluice {

/// How the MySQL sink's flushes reach the table
/// (MySqlSinkOptions::Delivery). The sink decides when to flush; a delivery
/// writes what the buffer holds through the sink's StatementWriter, and
/// takes part in checkpoints.
class MySqlDelivery {
 public:
  virtual ~MySqlDelivery() = default;
  /// Writes what `buffer` holds and may be written now, and takes it out
  /// of the buffer. A held -U waits for its +U unless `resolve_held`.
  /// Returns the rows (in upsert mode, keys) written.
  virtual size_t flush(SinkBuffer& buffer, bool resolve_held) = 0;
  /// Returns once what flush() wrote is in the table, or fails as a
  /// flush would: flush() may leave its last step running.
  virtual void settle() {}
  /// At checkpoint `id`'s barrier, after its flush.
  virtual void snapshot_state(int64_t /*id*/, const SinkBuffer& /*buffer*/) {}
  virtual void notify_checkpoint_complete(int64_t /*id*/) {}
  virtual void notify_checkpoint_aborted(int64_t /*id*/, SinkBuffer& /*buffer*/) {}
  /// At the job's end; `last_completed` as Sink::close() has it.
  virtual void close(std::optional<int64_t> /*last_completed*/) {}
  /// Calls `each` with the changes it wrote that another connection to the
  /// table may not see yet, oldest first, then with those `buffer` holds.
  /// Here, those of `buffer` only: call settle() first.
  virtual void for_each_unseen(const SinkBuffer& buffer,
                               const std::function<void(const Row&)>& each) const {
    for (const Row& row : buffer.rows()) each(row);
  }
};

/// At least once: each flush is a transaction of its own, replayed whole on
/// a new connection after a lost connection or a deadlock. Upserts and
/// deletes by key converge when a replay writes them again.
///
/// A flush sends its COMMIT and returns: the server commits while the sink
/// buffers the next changes and writes them, in a transaction on a second
/// connection, whose writes of the same keys wait for that commit. Before
/// it commits in turn, the flush reads the first COMMIT's answer; if that
/// failed, it drops its own transaction and writes both flushes again, in
/// order. settle() reads the answer at once. (Not on connections that
/// share a session: there each flush waits for its commit.)
class AtLeastOnceDelivery final : public MySqlDelivery {
 public:
  /// Writes with `writer` on `connection`, and on new ones of `connect`'s
  /// as `retry` says; `target` names the table and server in errors.
  /// With `applied`, each flush also sets its marker (see AppliedRows).
  AtLeastOnceDelivery(StatementWriter& writer, std::unique_ptr<SinkConnection> connection,
                      SinkConnector connect, RetryPolicy retry, std::string target,
                      std::shared_ptr<AppliedRows> applied = nullptr);

  size_t flush(SinkBuffer& buffer, bool resolve_held) override;
  void settle() override;

 private:
  // What a flush writes: runs of `rows` in upsert mode, every row of it in
  // append mode (no runs).
  struct Flush {
    Batch rows;
    std::vector<UpsertBuffer::Run> runs;
    bool upsert = true;
    uint64_t applied = 0;  // the rows flushed with it, see AppliedRows
  };
  // What `buffer` holds and may be written now, taken out of it; nullopt
  // if nothing.
  std::optional<Flush> take(SinkBuffer& buffer, bool resolve_held);
  // Writes `flush` on `connection`, in the transaction open there.
  void write(SinkConnection& connection, const Flush& flush);
  // Writes `flush` in a transaction of its own on connections_[next_] and
  // waits for its commit; retries as in_transaction() says, from retry
  // `first`.
  void write_and_commit(Flush&& flush, int first);
  // Reads the answer to the committing flush's COMMIT, on the other
  // connection. After a failure a retry may cure, drops the transaction
  // open on connections_[next_] (its writes could wait for the lost
  // one's locks) and writes the committing flush again: false then.
  bool settled();
  // The rows of a flush that needs them no more, as a spare batch.
  void recycle(Flush&& flush);

  StatementWriter& writer_;
  SinkConnector connect_;
  RetryPolicy retry_;
  std::string target_;
  std::shared_ptr<AppliedRows> applied_;
  bool overlap_ = true;  // false where connections share a session
  // Flushes alternate between two connections: connections_[next_] writes
  // the next; the other may be committing the last, `committing_`.
  std::unique_ptr<SinkConnection> connections_[2];
  int next_ = 0;
  std::optional<Flush> committing_;
  std::optional<Batch> spare_;
};

/// Exactly once (XaCommitter): the flushes between two barriers go into one
/// XA transaction, prepared at the barrier (its id kept in the sink's
/// state), committed from the same connection when the checkpoint completes;
/// meanwhile the next one runs on a second connection. The rows a prepared
/// transaction wrote stay with it until it commits, to be buffered again if
/// its checkpoint is aborted.
class ExactlyOnceDelivery final : public MySqlDelivery {
 public:
  /// For the sink subtask of `context`, whose rows have the columns `key`
  /// as their key (empty in append mode). `release` opens the connections
  /// close() rolls back on, when the job's own may have been cancelled.
  ExactlyOnceDelivery(StatementWriter& writer, SinkContext& context, std::vector<size_t> key,
                      SinkConnector connect, SinkConnector release, MySqlCanceller& canceller,
                      std::string target, const XaCommitter::Counters& counters);

  /// At open, on `connection`: commits the transactions the restored
  /// checkpoint lists and rolls back the others (XaCommitter::recover()),
  /// and puts into `buffer` the rows the checkpoint held that no
  /// transaction had yet.
  void recover(std::unique_ptr<SinkConnection> connection, SinkBuffer& buffer);

  size_t flush(SinkBuffer& buffer, bool resolve_held) override;
  void snapshot_state(int64_t id, const SinkBuffer& buffer) override;
  void notify_checkpoint_complete(int64_t id) override;
  void notify_checkpoint_aborted(int64_t id, SinkBuffer& buffer) override;
  void close(std::optional<int64_t> last_completed) override;
  /// The rows of its transactions not committed yet, then those of `buffer`.
  void for_each_unseen(const SinkBuffer& buffer,
                       const std::function<void(const Row&)>& each) const override;

 private:
  // The keys that prepared transactions wrote, and lock until they commit.
  UpsertBuffer::KeySet locked_keys() const;

  StatementWriter& writer_;
  SinkContext& context_;
  const std::vector<size_t> key_;
  SinkConnector release_;
  std::string target_;
  XaCommitter committer_;
  ListState<std::vector<Value>> transactions_state_;
  ListState<Row> buffer_state_;
  UpsertBuffer::KeySet locked_;   // see locked_keys()
  bool wait_for_commit_ = false;  // a write met a prepared transaction's lock
};

}  // namespace sluice
