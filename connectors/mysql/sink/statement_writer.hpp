#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/sink/row_events.hpp"
#include "sluice/connectors/mysql/sink/sink_connection.hpp"
#include "sluice/connectors/mysql/sink/upsert_buffer.hpp"
#include "sluice/engine/data/schema.hpp"
#include "sluice/engine/graph/metrics.hpp"

namespace sluice {

/// How often, and after how long, a write is tried again on a new connection.
struct RetryPolicy {
  int max_retries = 3;
  std::chrono::milliseconds backoff{100};  ///< the first wait; it doubles each time
  MySqlCanceller* canceller = nullptr;     ///< ends the waits early; none if null
  Counter* retries = nullptr;              ///< counts the retries; none if null
};

/// Fails the task with what `doing` on `target` ran into: a DataError where
/// the server refused a value, a ConfigError where the table, a column or a
/// privilege is missing (restarting would not help), else an Error.
[[noreturn]] void fail_write(const std::string& doing, const std::string& target,
                             const MySqlError& e, int retries = 0);

/// After `e` ended attempt `retry` (0 first) of `doing` on `target`: waits
/// for the next if a retry may cure it and the policy allows one, else
/// fails as fail_write() says.
void before_retry(const RetryPolicy& policy, int retry, const std::string& doing,
                  const std::string& target, const MySqlError& e);

/// Runs `attempt(retry)`, retry `first` (0: the first attempt) on. After an
/// error, before_retry(); then runs it again.
template <typename Attempt>
void with_retries(const RetryPolicy& policy, const std::string& doing, const std::string& target,
                  Attempt&& attempt, int first = 0) {
  for (int retry = first;; ++retry) {
    try {
      attempt(retry);
      return;
    } catch (const MySqlError& e) {
      before_retry(policy, retry, doing, target, e);
    }
  }
}

/// Whether two values of a key column of `type` that differ as bytes are
/// different keys to the table, too. Not so for a string under a collation
/// that ignores case, accents or trailing spaces, nor for a double's -0.
bool is_exact_key_column(const DataType& type);

/// The MySQL sink's statements: a flush's changes as upserts (`INSERT …
/// VALUES (…), (…) ON DUPLICATE KEY UPDATE`) and deletes by key (`DELETE …
/// WHERE k IN (?, ?)`; `(a=? AND b=?) OR …` for a key of several columns),
/// or plain INSERTs in append mode, in batches of at most 2000 rows and half
/// the server's max_allowed_packet (a larger one drops the connection), each
/// sent as a few array-bound statements of many rows
/// (SinkConnection::execute_bulk). `statements` counts the batches.
///
/// With another unique key on the table, an upsert first deletes the rows
/// that hold its values of that key under another key of the sink's. Changes
/// in order never meet such a row (UpsertBuffer orders them so); changes
/// replayed onto a table that is ahead of them do: the row's own later
/// change writes it again, as a replica in idempotent mode would.
class StatementWriter {
 public:
  struct Counters {
    Counter* upserts = nullptr;
    Counter* deletes = nullptr;
    Counter* statements = nullptr;  ///< batches, see above
    Counter* rows_affected = nullptr;
    Counter* transactions = nullptr;
    // Flink's standard sink metrics (FLIP-33): rows in statements the
    // server took, their bytes on the wire (the upper estimate the packet
    // budget uses), and rows in statements that failed (each attempt counts).
    Counter* records_send = nullptr;
    Counter* bytes_send = nullptr;
    Counter* records_send_errors = nullptr;
    Counter* displaced = nullptr;  ///< rows deleted for holding an upsert's unique value
    /// Deletes without a key (see append()) that found no equal row.
    Counter* deletes_unmatched = nullptr;
    Counter* dead_letters = nullptr;  ///< rows the server refused, into the dead-letter table
    Counter* row_events = nullptr;    ///< changes the server applied as row events
    /// Chunks of row events written again as statements (see set_row_events()).
    Counter* row_event_fallbacks = nullptr;
  };

  /// Where changes whose values the server refuses go instead of failing
  /// the flush (sink.on-error=dead-letter).
  struct DeadLetters {
    std::string table;   ///< in the target's database, unquoted
    std::string job;     ///< the job's name, on each row
    std::string source;  ///< the changes' source table, on each row; empty: the target's
  };

  /// `key`: the key columns' indexes in `input`; upsert or append mode;
  /// `subtask`: the sink subtask writing (for fault points).
  StatementWriter(const std::string& table, const Schema& input, const std::vector<size_t>& key,
                  bool upsert, int subtask, Counters counters);

  /// Compares the key, and the values of `unique` keys (the table's others,
  /// see above), with `table`'s columns as their types take them (BYTES with
  /// a BIT column as a number).
  void fit_to(const TableInfo& table, const Schema& input, const std::vector<TableIndex>& unique);
  /// Sizes statements for a server with this max_allowed_packet.
  void set_max_allowed_packet(uint64_t bytes) {
    max_packet_ = bytes;
    packet_budget_ = bytes / 2;
  }
  /// How a row's input position is named when the server refuses the row
  /// (SinkContext::describe_position).
  void set_position_names(std::function<std::string(int64_t position)> describe) {
    describe_position_ = std::move(describe);
  }
  /// From now on a change the server refuses for its values (MySqlError::
  /// rejects_value(): too long, out of range, a failed CHECK, …) goes into
  /// `letters.table` (dead_letter_table_sql()) in the same transaction, and
  /// the others of its statement are written.
  void set_dead_letters(DeadLetters letters) { dead_letters_ = std::move(letters); }

  /// From now on writes upserts and deletes as row events (RowEventEncoder),
  /// in chunks as statements are, with a delete of a key the table had no
  /// row of (Run::had_row) as a statement. A chunk the encoder or the
  /// server refuses goes as statements; after a refusal other than a row
  /// found missing or present, so does everything from then on.
  void set_row_events(RowEventEncoder encoder) { row_events_ = std::move(encoder); }
  bool writes_row_events() const { return row_events_.has_value(); }

  /// Writes upsert-mode runs of `rows`' rows in their order, on
  /// `connection`, in the transaction the caller has open.
  void write(SinkConnection& connection, const Batch& rows,
             const std::vector<UpsertBuffer::Run>& runs);
  /// Inserts the rows of `rows` (append mode) likewise. Without a key,
  /// a -U or -D row deletes one row equal to it in every column
  /// (MySqlSinkOptions::Mode::kRows): a flush writes, for each image, the
  /// rows its changes add or take away in all, the deletes first.
  void append(SinkConnection& connection, const Batch& rows);

  /// Counts a transaction of its writes that the caller committed
  /// (in_transaction() counts its own).
  void committed() { counters_.transactions->add(1); }

  /// Runs `body(connection)` in a transaction of its own, on `connection`,
  /// made by `connect` if null. After an error a retry may cure, the
  /// connection is dropped and `body` runs whole again on a new one, as
  /// with_retries() says, from retry `first`. `target` names the table and
  /// server in errors.
  template <typename Body>
  void in_transaction(std::unique_ptr<SinkConnection>& connection, const SinkConnector& connect,
                      const RetryPolicy& policy, const std::string& target, Body&& body,
                      int first = 0) {
    with_retries(
        policy, "writing", target,
        [&](int retry) {
          if (retry > 0) connection.reset();
          if (!connection) connection = connect();
          connection->execute("START TRANSACTION");
          body(*connection);
          connection->execute("COMMIT");
          counters_.transactions->add(1);
        },
        first);
  }

 private:
  uint64_t execute_chunked(SinkConnection& connection, const BulkSql& statement, const Batch& batch,
                           std::span<const uint32_t> rows);
  // The run as row events, see set_row_events().
  uint64_t write_row_events(SinkConnection& connection, const Batch& batch,
                            const UpsertBuffer::Run& run);
  // Rows `rows` of `batch`, each as `kinds` says, as one BINLOG
  // statement; nullopt if the encoder refuses one.
  std::optional<std::string> encode_row_events(const Batch& batch, std::span<const uint32_t> rows,
                                               std::span<const RowEventEncoder::Kind> kinds);
  // Whether `call`, the sending of a BINLOG statement of `rows` rows or
  // the wait for its end, went through. False where the server refused the
  // statement (and undid it), which its rows' statements then decide;
  // other errors are thrown.
  template <typename Call>
  bool applied(size_t rows, Call&& call);
  // `statement` for each of `rows` alone, each refused one a dead letter.
  uint64_t execute_each(SinkConnection& connection, const BulkSql& statement, const Batch& batch,
                        std::span<const uint32_t> rows);
  // The change `row` of `batch`, which the server refused with `e`, into
  // the dead-letter table.
  void dead_letter(SinkConnection& connection, const Batch& batch, uint32_t row,
                   const MySqlError& e);
  // "id=5, name=x": the key of `row` of `batch`.
  std::string key_of(const Batch& batch, uint32_t row) const;

  BulkSql upsert_;
  BulkSql delete_;
  BulkSql delete_one_;             // without a key: one row equal to the image, see append()
  std::vector<BulkSql> displace_;  // per other unique key, see the class
  // `e` of a statement of rows `rows` of `batch`, naming the change the
  // server refused when it says which.
  MySqlError with_rejected_row(const MySqlError& e, const Batch& batch,
                               std::span<const uint32_t> rows) const;

  std::string target_;  // the table, quoted
  std::string table_;   // and as it is named
  int subtask_;
  std::vector<size_t> key_;
  Counters counters_;
  uint64_t max_packet_ = 1 << 20;
  uint64_t packet_budget_ = 1 << 19;
  std::function<std::string(int64_t position)> describe_position_;
  std::optional<DeadLetters> dead_letters_;
  std::optional<RowEventEncoder> row_events_;
};

/// The CREATE TABLE IF NOT EXISTS of dead-letter table `table` (unquoted):
/// an id, the job, the source table, the target, the change's key, kind
/// (+I, -D, …) and values, the server's error code and message, the
/// change's input position, and when it was refused.
std::string dead_letter_table_sql(const std::string& table);

}  // namespace sluice
