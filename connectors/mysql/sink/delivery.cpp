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
                                         std::string target)
    : writer_(writer),
      connection_(std::move(connection)),
      connect_(std::move(connect)),
      retry_(retry),
      target_(std::move(target)) {}

size_t AtLeastOnceDelivery::flush(SinkBuffer& buffer, bool resolve_held) {
  if (!buffer.upsert()) {
    Batch& rows = buffer.appended();
    writer_.in_transaction(connection_, connect_, retry_, target_,
                           [&](SinkConnection& c) { writer_.append(c, rows); });
    const size_t written = rows.size();
    rows.clear();
    return written;
  }
  UpsertBuffer& changes = buffer.changes();
  const std::vector<UpsertBuffer::Run> runs = changes.runs(resolve_held);
  if (runs.empty()) return 0;  // only a -U, held for its +U
  writer_.in_transaction(connection_, connect_, retry_, target_,
                         [&](SinkConnection& c) { writer_.write(c, changes.rows(), runs); });
  changes.clear();
  return row_count(runs);
}

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
// collation), everything does. The completion always comes before the
// next barrier.
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

UpsertBuffer::KeySet ExactlyOnceDelivery::locked_keys() const {
  UpsertBuffer::KeySet keys;
  if (key_.empty()) return keys;
  for (const XaCommitter::Transaction& t : committer_.prepared()) {
    for (const Row& row : t.rows) keys.insert(encode_key(row, key_));
  }
  return keys;
}

}  // namespace sluice
