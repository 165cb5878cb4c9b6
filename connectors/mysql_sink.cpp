#include "connectors/mysql_sink.hpp"

#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <thread>

#include "connectors/mysql_bulk_statement.hpp"
#include "connectors/mysql_connection.hpp"
#include "connectors/mysql_xa.hpp"
#include "connectors/upsert_buffer.hpp"
#include "engine/error.hpp"
#include "engine/fault_point.hpp"
#include "engine/value_codec.hpp"

namespace sluice {
namespace {

// Rows per statement: larger batches gain little and hold larger packets.
constexpr size_t kRowsPerStatement = 2000;

std::string join(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string name = text.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) names.push_back(name);
    start = comma + 1;
  }
  return names;
}

MySqlSinkOptions::Mode mode_of(const MySqlSinkOptions& options, const std::vector<std::string>& key) {
  if (options.mode) return *options.mode;
  return key.empty() ? MySqlSinkOptions::Mode::kAppend : MySqlSinkOptions::Mode::kUpsert;
}

std::vector<size_t> key_indexes(const Schema& schema, const std::vector<std::string>& names) {
  std::vector<size_t> indexes;
  for (const auto& name : names) indexes.push_back(schema.require(name));
  return indexes;
}

// Whether two values of a key column of `type` that differ as bytes are
// different keys to the table, too. Not so for a string under a collation
// that ignores case, accents or trailing spaces, nor for a double's -0.
bool is_exact_key_column(const DataType& type) {
  return type.id != TypeId::kString && type.id != TypeId::kDouble;
}

// Whether the buffer must keep the order of changes across keys (see
// UpsertBuffer), because two keys might be one to the table.
bool keeps_order(const Schema& schema, const std::vector<size_t>& key) {
  return std::any_of(key.begin(), key.end(),
                     [&](size_t k) { return !is_exact_key_column(schema.column(k).type); });
}

enum class Trigger { kMaxRows, kSignal, kBarrier, kClose };
constexpr const char* kTriggerNames[] = {"max-rows", "signal", "barrier", "close"};

// Where each exactly-once transaction leaves a row, committed with it, so
// that recovery can tell a committed transaction from a lost one.
constexpr char kMarkerTable[] = "sluice_xa_commits";

// A connection with the sink's statements prepared on it.
struct Writer {
  std::unique_ptr<MySqlConnection> connection;
  int64_t server_started = 0;  // see server_started_at()
  std::unique_ptr<BulkStatement> upsert;
  std::unique_ptr<BulkStatement> remove;
};

// An exactly-once transaction prepared at a barrier, waiting for its
// checkpoint to complete.
struct Prepared {
  int64_t checkpoint = 0;
  Xid xid;
  uint64_t connection_id = 0;
  int64_t server_started = 0;      // when the server that gave out connection_id started
  std::unique_ptr<Writer> writer;  // null after a restore: another run prepared it
  std::vector<Row> rows;           // what it wrote, in order: buffered again if rolled back
};

class MySqlSink final : public Sink {
 public:
  MySqlSink(MySqlSinkOptions options, Schema input, std::vector<std::string> key,
            MySqlSinkOptions::Mode mode)
      : options_(std::move(options)),
        input_(std::move(input)),
        key_names_(std::move(key)),
        mode_(mode),
        exactly_once_(options_.delivery == MySqlSinkOptions::Delivery::kExactlyOnce),
        key_(key_indexes(input_, key_names_)),
        keep_order_(keeps_order(input_, key_)),
        changes_(key_, keep_order_) {
    for (size_t c = 0; c < input_.size(); ++c) all_columns_.push_back(c);
  }

  void open(SinkContext& context) override {
    subtask_ = context.subtask().index;
    context.register_cancel_action([this] { canceller_.cancel(); });
    if (exactly_once_ && !context.checkpoints_enabled()) {
      throw ConfigError("sink.delivery=exactly-once commits at checkpoints: set checkpoint.interval above 0");
    }
    context.register_flush_action([this] { flush(Trigger::kSignal); });
    for (int t = 0; t < 4; ++t) flushes_[t] = &context.counter(std::string("flushes.") + kTriggerNames[t]);
    keys_flushed_ = &context.counter("keys");
    upserts_ = &context.counter("upserts");
    deletes_ = &context.counter("deletes");
    statements_ = &context.counter("statements");
    transactions_ = &context.counter("transactions");
    rows_affected_ = &context.counter("rows-affected");
    retries_ = &context.counter("retries");
    flush_micros_ = &context.counter("flush-micros");
    // Fail before any record if the table does not fit.
    with_retries("connecting", [&] { writer_ = make_writer(); });
    if (exactly_once_) {
      xa_prepared_ = &context.counter("xa.prepared");
      xa_committed_ = &context.counter("xa.committed");
      xa_recovered_ = &context.counter("xa.recovered");
      xa_rolled_back_ = &context.counter("xa.rolled-back");
      xids_.emplace(context.subtask().job_name, context.subtask().operator_name, subtask_);
      parallelism_ = context.subtask().parallelism;
      transactions_state_.emplace(context.list_state("xa-prepared"));
      buffer_state_.emplace(context.list_state("xa-buffered"));
      last_checkpoint_ = context.restored_checkpoint().value_or(0);
      recover();
    }
  }

  void write(Row&& row) override {
    ++records_since_flush_;
    buffer(std::move(row));
    if (options_.max_rows > 0 && records_since_flush_ >= options_.max_rows) flush(Trigger::kMaxRows);
  }

  void finish() override { flush(Trigger::kClose); }

  void snapshot_state(int64_t id) override {
    flush(Trigger::kBarrier);
    if (exactly_once_) prepare(id);
  }

  void notify_checkpoint_complete(int64_t id) override {
    if (exactly_once_) commit_up_to(id);
  }

  void notify_checkpoint_aborted(int64_t id) override {
    if (exactly_once_) roll_back_up_to(id);
  }

 private:
  // Upsert mode keeps the last change per key; append mode every row.
  void buffer(Row&& row) {
    if (mode_ == MySqlSinkOptions::Mode::kAppend) {
      appended_.push_back(std::move(row));
      return;
    }
    for (size_t k : key_) {
      if (row.fields[k].is_null()) {
        throw DataError("key column '" + input_.column(k).name + "' is NULL in " + row.to_string());
      }
    }
    changes_.add(std::move(row));
  }

  void flush(Trigger trigger) {
    records_since_flush_ = 0;
    if (changes_.empty() && appended_.empty()) return;
    // A prepared transaction still holds its row locks until its checkpoint
    // completes; writing rows it locked would wait for a commit that this
    // very thread has to make. Keep buffering until then: the completion
    // comes before the next barrier, and an abort rolls it back.
    if (exactly_once_ && !prepared_.empty()) return;
    std::vector<UpsertBuffer::Run> runs;
    if (mode_ == MySqlSinkOptions::Mode::kUpsert) {
      // A held -U waits for its +U, except at a barrier and at the end.
      runs = changes_.runs(trigger == Trigger::kBarrier || trigger == Trigger::kClose);
      if (runs.empty()) return;
    }
    const auto started = std::chrono::steady_clock::now();
    if (exactly_once_) {
      // Inside the checkpoint's XA transaction: a lost connection loses the
      // whole transaction, so it fails the job, which restarts from the
      // last checkpoint instead of replaying this flush.
      write_into_transaction(runs);
    } else {
      with_retries("writing", [&] {
        if (!writer_) writer_ = make_writer();
        writer_->connection->execute("START TRANSACTION");
        write_statements(*writer_, runs);
        writer_->connection->execute("COMMIT");
        transactions_->add(1);
      });
    }
    flushes_[static_cast<int>(trigger)]->add(1);
    size_t keys = appended_.size();
    for (const UpsertBuffer::Run& run : runs) keys += run.rows.size();
    keys_flushed_->add(keys);
    flush_micros_->add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                 std::chrono::steady_clock::now() - started)
                                                 .count()));
    if (exactly_once_) {
      // Kept until its transaction commits, to write again if it is rolled back.
      for (Row& row : changes_.take()) in_transaction_.push_back(std::move(row));
      std::move(appended_.begin(), appended_.end(), std::back_inserter(in_transaction_));
    } else {
      changes_.clear();
    }
    appended_.clear();
  }

  // Runs `attempt`, and again on a new connection after an error that a
  // retry may cure, up to max_retries times with doubling waits.
  template <typename F>
  void with_retries(const char* doing, F&& attempt) {
    for (int retry = 0;; ++retry) {
      try {
        attempt();
        return;
      } catch (const MySqlError& e) {
        writer_.reset();
        if (!e.retriable() || retry >= options_.max_retries || canceller_.cancelled()) {
          fail(doing, e, retry);
        }
        const auto wait = options_.retry_backoff * (1 << std::min(retry, 6));
        spdlog::warn("mysql sink {}: {}; retrying in {} ms on a new connection", options_.table,
                     e.what(), wait.count());
        retries_->add(1);
        if (!canceller_.sleep_for(wait)) fail(doing, e, retry);
      }
    }
  }

  // Fails the task with what `doing` ran into, as a DataError or ConfigError
  // where the server refused the rows or the schema: restarting would not help.
  [[noreturn]] void fail(const std::string& doing, const MySqlError& e, int retries = 0) const {
    const std::string message =
        doing + " table '" + options_.table + "' at " + options_.url.to_string() + " failed" +
        (retries > 0 ? " after " + std::to_string(retries) + " retries" : "") + ": " + e.what();
    if (e.rejects_value()) throw DataError(message);
    if (e.rejects_configuration()) throw ConfigError(message);
    throw Error(message);
  }

  // Every connection of the sink: bounded waits, cancelled with the job.
  MySqlSession session() { return {.timeout = options_.socket_timeout, .canceller = &canceller_}; }

  std::unique_ptr<Writer> make_writer() {
    auto writer = std::make_unique<Writer>();
    writer->connection = std::make_unique<MySqlConnection>(options_.url, session());
    MySqlConnection& connection = *writer->connection;
    // No gap locks: under REPEATABLE READ a delete of an absent key locks the
    // gap, and a prepared XA transaction would hold that lock until its
    // checkpoint completes, blocking another subtask's insert into the gap.
    connection.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    // TIMESTAMP columns convert from the session's time zone: Sluice's
    // timestamps are UTC, whatever the server's default.
    connection.execute("SET SESSION time_zone = '+00:00'");
    if (exactly_once_) writer->server_started = server_started_at(connection);
    if (!table_checked_) {
      check_table(connection.describe_table(options_.table));
      if (exactly_once_) {
        connection.execute(std::string("CREATE TABLE IF NOT EXISTS ") + kMarkerTable +
                           " (gtrid VARBINARY(64) NOT NULL, bqual VARBINARY(64) NOT NULL, "
                           "PRIMARY KEY (gtrid, bqual))");
      }
      packet_budget_ = connection.max_allowed_packet() / 2;
      table_checked_ = true;
    }
    const std::string table = quote_identifier(options_.table);
    std::vector<std::string> columns, params, updates;
    std::vector<DataType> types;
    for (size_t i = 0; i < input_.size(); ++i) {
      const Column& c = input_.column(i);
      columns.push_back(quote_identifier(c.name));
      params.push_back("?");
      types.push_back(c.type);
      // An upsert writes the row's whole image: with keys that the table may
      // take for equal while their bytes differ ('abc', 'ABC'), the key's
      // spelling too, so that the last change of a key decides all of it.
      const bool in_key = std::find(key_.begin(), key_.end(), i) != key_.end();
      if (!in_key || !is_exact_key_column(c.type)) {
        updates.push_back(quote_identifier(c.name) + "=VALUES(" + quote_identifier(c.name) + ")");
      }
    }
    const bool upsert = mode_ == MySqlSinkOptions::Mode::kUpsert;
    if (upsert && updates.empty()) {
      // Every column is in the key: nothing to update, but not INSERT IGNORE,
      // which would turn a too long or wrong value into a warning.
      const std::string first = quote_identifier(input_.column(key_.front()).name);
      updates.push_back(first + "=" + first);
    }
    std::string insert =
        "INSERT INTO " + table + " (" + join(columns) + ") VALUES (" + join(params) + ")";
    if (upsert) insert += " ON DUPLICATE KEY UPDATE " + join(updates);
    writer->upsert = std::make_unique<BulkStatement>(connection, insert, types);
    if (upsert) {
      std::vector<std::string> conditions;
      std::vector<DataType> key_types;
      for (size_t k : key_) {
        conditions.push_back(quote_identifier(input_.column(k).name) + "=?");
        key_types.push_back(input_.column(k).type);
      }
      writer->remove = std::make_unique<BulkStatement>(
          connection, "DELETE FROM " + table + " WHERE " + join(conditions, " AND "), key_types);
    }
    return writer;
  }

  void check_table(const TableInfo& table) const {
    std::vector<std::string> table_columns;
    for (const auto& c : table.columns) table_columns.push_back(c.name);
    for (const auto& c : input_.columns()) {
      if (std::find(table_columns.begin(), table_columns.end(), c.name) == table_columns.end()) {
        throw ConfigError("table '" + options_.table + "' has no column '" + c.name +
                          "'; its columns are " + join(table_columns));
      }
    }
    if (mode_ != MySqlSinkOptions::Mode::kUpsert) return;
    const std::set<std::string> wanted(key_names_.begin(), key_names_.end());
    std::vector<std::vector<std::string>> keys = table.unique_keys;
    if (!table.primary_key.empty()) keys.insert(keys.begin(), table.primary_key);
    std::string described;
    for (const auto& k : keys) {
      if (std::set<std::string>(k.begin(), k.end()) == wanted) return;
      described += (described.empty() ? "" : ", ") + std::string("(") + join(k) + ")";
    }
    throw ConfigError("table '" + options_.table + "' has no PRIMARY KEY or UNIQUE KEY on exactly (" +
                      join(key_names_) + "); its keys: " + (described.empty() ? "none" : described));
  }

  // The buffered upserts and deletes, run by run, or the appended rows.
  void write_statements(Writer& writer, const std::vector<UpsertBuffer::Run>& runs) {
    if (mode_ == MySqlSinkOptions::Mode::kAppend) {
      std::vector<const Row*> rows;
      for (const Row& row : appended_) rows.push_back(&row);
      rows_affected_->add(execute_chunked(*writer.upsert, rows, all_columns_));
      upserts_->add(rows.size());
      return;
    }
    for (const UpsertBuffer::Run& run : runs) {
      rows_affected_->add(run.deletes ? execute_chunked(*writer.remove, run.rows, key_)
                                      : execute_chunked(*writer.upsert, run.rows, all_columns_));
      (run.deletes ? deletes_ : upserts_)->add(run.rows.size());
    }
  }

  // Runs `statement` over `rows` in chunks that fit the server's packet limit.
  uint64_t execute_chunked(BulkStatement& statement, const std::vector<const Row*>& rows,
                           const std::vector<size_t>& columns) {
    uint64_t affected = 0;
    size_t begin = 0;
    while (begin < rows.size()) {
      if (begin > 0) fault_point("mid-flush", subtask_);
      size_t end = begin;
      size_t bytes = 0;
      while (end < rows.size() && end - begin < kRowsPerStatement) {
        bytes += BulkStatement::wire_size(*rows[end], columns);
        if (bytes > packet_budget_ && end > begin) break;
        ++end;
      }
      affected += statement.execute(std::span(rows).subspan(begin, end - begin), columns);
      statements_->add(1);
      begin = end;
    }
    return affected;
  }

  // Exactly-once below.

  void write_into_transaction(const std::vector<UpsertBuffer::Run>& runs) {
    try {
      if (!open_xid_) begin_transaction();
      write_statements(*writer_, runs);
    } catch (const MySqlError& e) {
      fail("writing (exactly-once)", e);
    }
  }

  void begin_transaction() {
    if (!writer_) writer_ = make_writer();
    MySqlConnection& connection = *writer_->connection;
    delete_old_markers(connection);
    const Xid xid = xids_->next(last_checkpoint_);
    connection.execute("XA START " + xid.sql());
    connection.execute("INSERT INTO " + std::string(kMarkerTable) + " VALUES (" + xid.sql() + ")");
    open_xid_ = xid;
  }

  // At barrier `checkpoint`: prepares the open transaction, if any, and saves
  // what must survive a restore: the prepared transactions, and the records
  // still buffered because an earlier transaction was not committed yet.
  void prepare(int64_t checkpoint) {
    last_checkpoint_ = checkpoint;
    // From this checkpoint on, what was committed before it is not listed.
    if (!committed_.empty()) markers_to_delete_[checkpoint] = std::move(committed_);
    committed_.clear();
    if (open_xid_) {
      try {
        MySqlConnection& connection = *writer_->connection;
        connection.execute("XA END " + open_xid_->sql());
        connection.execute("XA PREPARE " + open_xid_->sql());
      } catch (const MySqlError& e) {
        fail("preparing the transaction of checkpoint " + std::to_string(checkpoint) + " in", e);
      }
      fault_point("after-prepare", subtask_);
      xa_prepared_->add(1);
      const uint64_t connection_id = writer_->connection->thread_id();
      const int64_t server_started = writer_->server_started;
      prepared_.push_back({checkpoint, *open_xid_, connection_id, server_started,
                           std::move(writer_), std::move(in_transaction_)});
      in_transaction_.clear();
      open_xid_.reset();
    }
    std::vector<std::string> entries;
    for (const Prepared& p : prepared_) {
      entries.push_back(
          encode_values({Value(p.checkpoint), Value(p.xid.gtrid), Value(p.xid.bqual),
                         Value(static_cast<int64_t>(p.connection_id)), Value(p.server_started)}));
    }
    transactions_state_->update(entries);
    std::vector<std::string> carried;
    const auto carry = [&](const Row& row) {
      std::vector<Value> values = row.fields;
      values.emplace_back(static_cast<int64_t>(row.kind));
      carried.push_back(encode_values(values));
    };
    for (const Row* row : changes_.changes()) carry(*row);
    for (const Row& row : appended_) carry(row);
    buffer_state_->update(carried);
  }

  // Completion of checkpoint n commits every transaction prepared up to n,
  // including those of aborted checkpoints before it, oldest first.
  void commit_up_to(int64_t checkpoint) {
    while (!prepared_.empty() && prepared_.front().checkpoint <= checkpoint) {
      Prepared& p = prepared_.front();
      fault_point("before-commit", subtask_);
      try {
        p.writer->connection->execute("XA COMMIT " + p.xid.sql());
      } catch (const MySqlError& e) {
        if (!e.retriable()) fail("committing " + p.xid.to_string() + " in", e);
        // Its connection died after the prepare: commit from another one.
        MySqlConnection other(options_.url, session());
        commit_elsewhere(other, p);
        p.writer.reset();
      }
      fault_point("after-commit", subtask_);
      xa_committed_->add(1);
      transactions_->add(1);
      committed_.push_back(p.xid);
      if (!writer_ && p.writer) writer_ = std::move(p.writer);  // reuse the connection
      prepared_.pop_front();
    }
    last_completed_ = checkpoint;
  }

  // Checkpoint n was aborted: a transaction prepared for it (or before it)
  // would wait for the next completed checkpoint, and meanwhile every flush
  // would have to wait too, its rows held back, lost if the next one is the
  // last. Roll it back instead and buffer its rows again, ahead of those
  // that came since: the next checkpoint's transaction writes them all.
  void roll_back_up_to(int64_t checkpoint) {
    std::vector<Row> again;
    while (!prepared_.empty() && prepared_.front().checkpoint <= checkpoint) {
      Prepared& p = prepared_.front();
      try {
        p.writer->connection->execute("XA ROLLBACK " + p.xid.sql());
      } catch (const MySqlError& e) {
        if (!e.retriable()) fail("rolling back " + p.xid.to_string() + " in", e);
        MySqlConnection other(options_.url, session());
        roll_back(other, p.xid);
        p.writer.reset();
      }
      xa_rolled_back_->add(1);
      spdlog::info("mysql sink {}: checkpoint {} aborted; rolled back {} to write its rows again",
                   options_.table, checkpoint, p.xid.to_string());
      for (Row& row : p.rows) again.push_back(std::move(row));
      if (!writer_ && p.writer) writer_ = std::move(p.writer);  // reuse the connection
      prepared_.pop_front();
    }
    if (again.empty()) return;
    if (mode_ == MySqlSinkOptions::Mode::kAppend) {
      appended_.insert(appended_.begin(), std::make_move_iterator(again.begin()),
                       std::make_move_iterator(again.end()));
      return;
    }
    UpsertBuffer rebuilt(key_, keep_order_);
    for (Row& row : again) rebuilt.add(std::move(row));
    for (const Row* row : changes_.changes()) rebuilt.add(Row(*row));
    changes_ = std::move(rebuilt);
  }

  // A committed transaction's marker is needed as long as a checkpoint that
  // recovery may restore lists the transaction: until a checkpoint taken
  // after the commit completes. Then it goes, before the next XA START.
  void delete_old_markers(MySqlConnection& connection) {
    for (auto it = markers_to_delete_.begin();
         it != markers_to_delete_.end() && it->first <= last_completed_;) {
      for (const Xid& xid : it->second) {
        // A point lookup: a scan would wait on the markers of prepared transactions.
        connection.execute("DELETE FROM " + std::string(kMarkerTable) + " WHERE " + xid.where());
      }
      it = markers_to_delete_.erase(it);
    }
  }

  // Commits a transaction prepared by a connection that is gone, and checks
  // that it did commit: right after the owner disconnects, XA COMMIT from
  // elsewhere may report OK without committing.
  void commit_elsewhere(MySqlConnection& connection, const Prepared& p) {
    wait_until_disconnected(connection, p.connection_id, p.server_started);
    const auto prepared = xa_recover(connection);
    if (std::find(prepared.begin(), prepared.end(), p.xid) != prepared.end()) {
      connection.execute("XA COMMIT " + p.xid.sql());
    }
    // Not (or no longer) prepared: it must have committed, leaving its marker.
    const auto found = connection.query("SELECT COUNT(*) FROM " + std::string(kMarkerTable) +
                                        " WHERE " + p.xid.where());
    if (found.at(0).at(0) != "1") {
      throw Error("exactly-once: transaction " + p.xid.to_string() + " of checkpoint " +
                  std::to_string(p.checkpoint) + " is neither prepared nor committed on " +
                  options_.url.to_string() + ": its writes are lost");
    }
    committed_.push_back(p.xid);
  }

  // Rolls back a transaction another connection prepared, and checks that it
  // is gone: while its owner is still going away the server may refuse or
  // ignore the rollback, so it is tried again until then.
  void roll_back(MySqlConnection& connection, const Xid& xid) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      try {
        connection.execute("XA ROLLBACK " + xid.sql());
      } catch (const MySqlError& e) {
        if (e.code() != ER_XAER_NOTA && e.code() != ER_XAER_RMFAIL) throw;
      }
      const auto prepared = xa_recover(connection);
      if (std::find(prepared.begin(), prepared.end(), xid) == prepared.end()) return;
      if (std::chrono::steady_clock::now() > deadline) {
        throw Error("exactly-once: transaction " + xid.to_string() + " is still prepared on " +
                    options_.url.to_string() + " after 60 s of rolling it back");
      }
      if (!canceller_.sleep_for(std::chrono::milliseconds(50))) {
        throw Error("exactly-once: cancelled while rolling back " + xid.to_string());
      }
    }
  }

  // After a restart: commit what the restored checkpoint lists, roll back
  // this subtask's other prepared transactions, of any earlier run (and, in
  // subtask 0, those of subtasks this run does not have).
  void recover() {
    MySqlConnection& connection = *writer_->connection;
    std::vector<Prepared> listed;
    for (const std::string& entry : transactions_state_->get()) {
      const auto v = decode_values(entry);
      listed.push_back({v.at(0).as_bigint(),
                        {v.at(1).as_string(), v.at(2).as_string()},
                        static_cast<uint64_t>(v.at(3).as_bigint()),
                        v.size() > 4 ? v.at(4).as_bigint() : 0,
                        nullptr});
    }
    for (const Prepared& p : listed) {
      commit_elsewhere(connection, p);
      xa_recovered_->add(1);
    }
    fault_point("recovery-after-commits", subtask_);
    // Its own leftovers, and subtask 0 those of subtasks that this run does
    // not have (an earlier run had a higher parallelism).
    for (const Xid& xid : xa_recover(connection)) {
      const std::optional<int> owner = xids_->subtask_of(xid);
      if (!owner || (*owner != subtask_ && !(subtask_ == 0 && *owner >= parallelism_))) continue;
      roll_back(connection, xid);
      xa_rolled_back_->add(1);
      spdlog::info("mysql sink {}: rolled back {} left prepared by an earlier run", options_.table,
                   xid.to_string());
    }
    // Records the restored checkpoint holds that no transaction had yet.
    for (const std::string& entry : buffer_state_->get()) {
      std::vector<Value> values = decode_values(entry);
      const auto kind = static_cast<RowKind>(values.back().as_bigint());
      values.pop_back();
      buffer(Row(kind, std::move(values)));
    }
  }

  const MySqlSinkOptions options_;
  const Schema input_;
  const std::vector<std::string> key_names_;
  const MySqlSinkOptions::Mode mode_;
  const bool exactly_once_;
  const std::vector<size_t> key_;
  const bool keep_order_;  // see keeps_order()
  std::vector<size_t> all_columns_;

  UpsertBuffer changes_;  // upsert mode
  std::vector<Row> appended_;
  size_t records_since_flush_ = 0;

  MySqlCanceller canceller_;  // declared before, so destroyed after, every connection it cancels
  std::unique_ptr<Writer> writer_;
  bool table_checked_ = false;
  int subtask_ = 0;
  uint64_t packet_budget_ = 1 << 20;

  // Exactly-once.
  std::optional<XidScheme> xids_;
  int parallelism_ = 1;
  std::vector<Row> in_transaction_;  // what the open transaction wrote, in order
  std::optional<ListState> transactions_state_;
  std::optional<ListState> buffer_state_;
  std::optional<Xid> open_xid_;
  std::deque<Prepared> prepared_;
  std::vector<Xid> committed_;  // since the last barrier
  std::map<int64_t, std::vector<Xid>> markers_to_delete_;  // once that checkpoint completes
  int64_t last_checkpoint_ = 0;
  int64_t last_completed_ = 0;

  Counter* flushes_[4] = {};
  Counter* keys_flushed_ = nullptr;
  Counter* upserts_ = nullptr;
  Counter* deletes_ = nullptr;
  Counter* statements_ = nullptr;
  Counter* transactions_ = nullptr;
  Counter* rows_affected_ = nullptr;
  Counter* retries_ = nullptr;
  Counter* flush_micros_ = nullptr;
  Counter* xa_prepared_ = nullptr;
  Counter* xa_committed_ = nullptr;
  Counter* xa_recovered_ = nullptr;
  Counter* xa_rolled_back_ = nullptr;
};

std::string redact_url(std::string_view url) {
  try {
    return MySqlUrl::parse(url).to_string();
  } catch (const ConfigError&) {
    return "(not a mysql:// URL)";
  }
}

}  // namespace

std::vector<OptionSpec> mysql_sink_option_specs() {
  return {
      {.key = "sink.url",
       .doc = "mysql://USER[:PASSWORD]@HOST[:PORT]/DB or mysql://USER@/DB?socket=PATH; the "
              "password may come from SLUICE_MYSQL_PASSWORD",
       .redact = redact_url},
      {.key = "sink.table", .doc = "the target table"},
      {.key = "sink.primary-key",
       .doc = "comma-separated key columns",
       .default_doc = "the table's key"},
      {.key = "sink.mode",
       .type = OptionType::kEnum,
       .doc = "upsert (last change per key) or append (insert every record)",
       .choices = {"upsert", "append"},
       .default_doc = "`upsert` with a key, else `append`"},
      {.key = "sink.delivery",
       .type = OptionType::kEnum,
       .default_value = "at-least-once",
       .doc = "at-least-once (a transaction per flush) or exactly-once (an XA transaction per "
              "checkpoint)",
       .choices = {"at-least-once", "exactly-once"}},
      {.key = "sink.buffer-flush.max-rows",
       .type = OptionType::kInteger,
       .default_value = "100",
       .doc = "input records after which the sink flushes; 0 = off"},
      {.key = "sink.max-retries",
       .type = OptionType::kInteger,
       .default_value = "3",
       .doc = "retries of a flush after a lost connection or a deadlock"},
      {.key = "sink.socket-timeout",
       .type = OptionType::kDuration,
       .default_value = "60s",
       .doc = "the longest a call may wait on the server; then it counts as a lost connection"},
      {.key = "sink.parallelism",
       .type = OptionType::kInteger,
       .doc = "subtasks of the sink; its input is hash-partitioned by the key",
       .min = 1,
       .default_doc = "`parallelism`"},
  };
}

MySqlSinkOptions MySqlSinkOptions::from(const Config& config) {
  MySqlSinkOptions options;
  options.url = MySqlUrl::parse(config.get_string("sink.url"));
  options.table = config.get_string("sink.table");
  if (const auto key = config.find("sink.primary-key")) options.key = split_names(*key);
  if (const auto mode = config.find("sink.mode")) options.mode = *mode == "append" ? Mode::kAppend : Mode::kUpsert;
  options.max_rows = static_cast<size_t>(config.get_int("sink.buffer-flush.max-rows"));
  options.max_retries = static_cast<int>(config.get_int("sink.max-retries"));
  options.socket_timeout = std::max(
      std::chrono::seconds(1),
      std::chrono::duration_cast<std::chrono::seconds>(config.get_duration("sink.socket-timeout")));
  options.delivery = config.get_string("sink.delivery") == "exactly-once" ? Delivery::kExactlyOnce
                                                                          : Delivery::kAtLeastOnce;
  options.parallelism = static_cast<int>(config.get_int(config.find("sink.parallelism") ? "sink.parallelism"
                                                                                         : "parallelism"));
  return options;
}

SinkDef mysql_sink(const MySqlSinkOptions& options, const Schema& input) {
  const std::vector<std::string> key = options.key.empty() ? input.primary_key_names() : options.key;
  const MySqlSinkOptions::Mode mode = mode_of(options, key);
  SinkDef def;
  def.create = [options, input, key, mode](const SubtaskInfo&) -> std::unique_ptr<Sink> {
    return std::make_unique<MySqlSink>(options, input, key, mode);
  };
  if (mode == MySqlSinkOptions::Mode::kUpsert) def.key_columns = key;
  def.check = [key, mode](const StreamType& in) {
    std::vector<std::string> problems;
    if (mode == MySqlSinkOptions::Mode::kUpsert && key.empty()) {
      problems.push_back("upsert mode needs a key: declare a primary key for the sink");
    }
    if (mode == MySqlSinkOptions::Mode::kAppend && !in.mode.is_insert_only()) {
      problems.push_back(key.empty() ? "declare a primary key for the sink when the input contains "
                                       "update/delete (the input has " + in.mode.to_string() + ")"
                                     : "append mode takes inserts only; the input has " +
                                           in.mode.to_string());
    }
    return problems;
  };
  return def;
}

}  // namespace sluice

namespace sluice {

SinkHandle add_mysql_sink(Stream input, const std::string& name, const MySqlSinkOptions& options) {
  SinkHandle sink = input.sink(name, mysql_sink(options, input.type().schema));
  sink.parallelism(options.parallelism);
  return sink;
}

}  // namespace sluice
