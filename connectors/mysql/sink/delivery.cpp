#include "sluice/connectors/mysql/sink/delivery.hpp"

#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include "sluice/engine/data/value_codec.hpp"

namespace sluice {
namespace {

size_t row_count(const std::vector<UpsertBuffer::Run>& runs) {
  size_t rows = 0;
  for (const UpsertBuffer::Run& run : runs) rows += run.rows.size();
  return rows;
}

// Whether `e` is a row lock the transaction could not get.
bool is_lock_conflict(const MySqlError& e) {
  return e.code() == ER_LOCK_WAIT_TIMEOUT || e.code() == ER_LOCK_DEADLOCK;
}

}  // namespace

AtLeastOnceDelivery::AtLeastOnceDelivery(StatementWriter& writer,
                                         std::unique_ptr<SinkConnection> connection,
                                         SinkConnector connect, RetryPolicy retry,
                                         std::string target, std::shared_ptr<AppliedRows> applied)
    : writer_(writer),
      connect_(std::move(connect)),
      retry_(retry),
      target_(std::move(target)),
      applied_(std::move(applied)),
      overlap_(!connection->shares_session()) {
  connections_[0] = std::move(connection);
}

size_t AtLeastOnceDelivery::flush(SinkBuffer& buffer, bool resolve_held) {
  std::optional<Flush> flush = take(buffer, resolve_held);
  if (!flush) return 0;
  const size_t written = flush->upsert ? row_count(flush->runs) : flush->rows.size();
  if (!overlap_) {
    write_and_commit(std::move(*flush), 0);
    return written;
  }
  std::unique_ptr<SinkConnection>& connection = connections_[next_];
  try {
    if (!connection) connection = connect_();
    connection->execute("START TRANSACTION");
    write(*connection, *flush);
    if (!settled()) {
      write_and_commit(std::move(*flush), 0);
      return written;
    }
    connection->send("COMMIT");
  } catch (const MySqlError& e) {
    connection.reset();  // and the transaction with it
    settle();
    before_retry(retry_, 0, "writing", target_, e);
    write_and_commit(std::move(*flush), 1);
    return written;
  }
  committing_ = std::move(flush);
  next_ = 1 - next_;
  return written;
}

void AtLeastOnceDelivery::settle() { settled(); }

std::optional<AtLeastOnceDelivery::Flush> AtLeastOnceDelivery::take(SinkBuffer& buffer,
                                                                    bool resolve_held) {
  const auto spare = [&](const Batch& like) {
    Batch batch = spare_ ? std::move(*spare_) : Batch(like.schema());
    spare_.reset();
    batch.clear();
    return batch;
  };
  if (!buffer.upsert()) {
    Batch& appended = buffer.appended();
    if (appended.size() == 0) return std::nullopt;
    if (applied_) applied_->rows += appended.size();
    return Flush{.rows = std::exchange(appended, spare(appended)),
                 .upsert = false,
                 .applied = applied_ ? applied_->rows : 0};
  }
  UpsertBuffer& changes = buffer.changes();
  std::vector<UpsertBuffer::Run> runs = changes.runs(resolve_held);
  if (runs.empty()) return std::nullopt;  // only a -U, held for its +U
  return Flush{.rows = changes.hand_over(spare(changes.rows())), .runs = std::move(runs)};
}

void AtLeastOnceDelivery::write(SinkConnection& connection, const Flush& flush) {
  if (flush.upsert) {
    writer_.write(connection, flush.rows, flush.runs);
  } else {
    writer_.append(connection, flush.rows);
  }
  if (applied_) connection.execute(applied_->sql(flush.applied));
}

void AtLeastOnceDelivery::write_and_commit(Flush&& flush, int first) {
  writer_.in_transaction(
      connections_[next_], connect_, retry_, target_,
      [&](SinkConnection& connection) { write(connection, flush); }, first);
  recycle(std::move(flush));
}

bool AtLeastOnceDelivery::settled() {
  if (!committing_) return true;
  Flush last = std::move(*committing_);
  committing_.reset();
  std::unique_ptr<SinkConnection>& connection = connections_[1 - next_];
  try {
    connection->finish();
  } catch (const MySqlError& e) {
    connection.reset();
    connections_[next_].reset();
    before_retry(retry_, 0, "writing", target_, e);
    write_and_commit(std::move(last), 1);
    return false;
  }
  writer_.committed();
  recycle(std::move(last));
  return true;
}

void AtLeastOnceDelivery::recycle(Flush&& flush) { spare_ = std::move(flush.rows); }

ExactlyOnceDelivery::ExactlyOnceDelivery(StatementWriter& writer, SinkContext& context,
                                         std::vector<size_t> key, SinkConnector connect,
                                         SinkConnector release, MySqlCanceller& canceller,
                                         std::string target, const XaCommitter::Counters& counters)
    : writer_(writer),
      context_(context),
      key_(std::move(key)),
      release_(std::move(release)),
      target_(std::move(target)),
      committer_(std::move(connect),
                 XidScheme(context.subtask().job_name, context.subtask().operator_name,
                           context.subtask().index),
                 context.subtask().index, context.subtask().parallelism,
                 context.restored_checkpoint().value_or(0), target_, canceller, counters),
      transactions_state_(context.list_state<std::vector<Value>>("xa-prepared")),
      buffer_state_(context.list_state<Row>("xa-buffered")) {}

void ExactlyOnceDelivery::recover(std::unique_ptr<SinkConnection> connection, SinkBuffer& buffer) {
  try {
    connection->create_marker_table();
    committer_.recover(transactions_state_.get(), std::move(connection),
                       context_.resumed_from_older_checkpoint());
  } catch (const MySqlError& e) {
    fail_write("recovering the transactions of", target_, e);
  }
  for (const Row& row : buffer_state_.get()) buffer.add(row);
}

// While a transaction is prepared, its row locks stay until its checkpoint
// completes, and a write that waits for one of them would wait for a
// commit that this very thread has to make: keys it wrote stay buffered
// until then, and with keys whose bytes do not tell equality (a
// collation), or without a key, everything does. The completion always
// comes before the next barrier.
size_t ExactlyOnceDelivery::flush(SinkBuffer& buffer, bool resolve_held) {
  const bool prepared = !committer_.prepared().empty();
  if (prepared && (buffer.keeps_order() || wait_for_commit_)) return 0;
  std::vector<UpsertBuffer::Run> runs;
  if (buffer.upsert()) {
    runs = buffer.changes().runs(resolve_held, prepared ? &locked_ : nullptr);
    if (runs.empty()) return 0;
  }
  try {
    SinkConnection& connection = committer_.open();
    if (buffer.upsert()) {
      writer_.write(connection, buffer.changes().rows(), runs);
    } else {
      writer_.append(connection, buffer.appended());
    }
  } catch (const MySqlError& e) {
    // Inside a checkpoint's transaction a lost connection loses the whole
    // transaction: the job restarts from the last checkpoint. A lock that
    // a prepared transaction holds (on another unique key, say) only
    // means waiting for its commit: write it all again after that.
    if (!(prepared && is_lock_conflict(e))) fail_write("writing (exactly-once)", target_, e);
    spdlog::info("mysql sink {}: {}; writing again once checkpoint {} commits", target_, e.what(),
                 committer_.prepared().back().checkpoint);
    buffer.add_before(committer_.abandon_open());
    wait_for_commit_ = true;
    return 0;
  }
  // Kept until the transaction commits, to write again if it is rolled back.
  if (!buffer.upsert()) {
    const size_t rows = buffer.appended().size();
    committer_.wrote(buffer.appended().rows());
    buffer.appended().clear();
    return rows;
  }
  const size_t keys = row_count(runs);
  committer_.wrote(buffer.changes().take());
  return keys;
}

void ExactlyOnceDelivery::snapshot_state(int64_t id, const SinkBuffer& buffer) {
  committer_.prepare(id);
  locked_ = locked_keys();
  transactions_state_.update(committer_.state());
  // What no transaction holds yet: only rows held back behind a prepared
  // transaction's locks, when its checkpoint has not completed.
  buffer_state_.update(buffer.rows());
}

void ExactlyOnceDelivery::notify_checkpoint_complete(int64_t id) {
  committer_.commit_up_to(id);
  locked_ = locked_keys();
  if (committer_.prepared().empty()) wait_for_commit_ = false;
}

void ExactlyOnceDelivery::notify_checkpoint_aborted(int64_t id, SinkBuffer& buffer) {
  // The transactions prepared for it (or before) would wait for the next
  // completed checkpoint, their rows held back, and with them every row
  // their locks hold: roll them back and buffer their rows again, ahead of
  // those that came since; the next checkpoint's transaction writes them.
  buffer.add_before(committer_.roll_back_up_to(id));
  locked_ = locked_keys();
  if (committer_.prepared().empty()) wait_for_commit_ = false;
}

void ExactlyOnceDelivery::close(std::optional<int64_t> last_completed) {
  committer_.release(last_completed, release_);
}

void ExactlyOnceDelivery::for_each_unseen(const SinkBuffer& buffer,
                                          const std::function<void(const Row&)>& each) const {
  committer_.for_each_uncommitted(each);
  MySqlDelivery::for_each_unseen(buffer, each);
}

UpsertBuffer::KeySet ExactlyOnceDelivery::locked_keys() const {
  UpsertBuffer::KeySet keys;
  if (key_.empty()) return keys;
  for (const XaCommitter::Transaction& t : committer_.prepared()) {
    for (const Row& row : t.rows) keys.insert(encode_key(row, key_));
  }
  return keys;
}

}  // namespace sluice
