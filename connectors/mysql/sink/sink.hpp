#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/url.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// Of a table without a key written at least once (Mode::kRows), how many
/// of its input rows the target took: each flush's transaction counts its
/// rows in the target too, in a row of `sluice_rows_applied`, so that a
/// restore can tell the rows replayed that the target has already from
/// those it has not (MySqlTablesSink), which rows without a key cannot.
struct AppliedRows {
  /// The marker row's upsert, up to its count: "INSERT INTO … VALUES
  /// ('job', 'db.table', ". See sql().
  std::string upsert;
  /// Input rows flushed so far; each flush's transaction sets the marker to it.
  uint64_t rows = 0;
  /// Rows to come that the target has already (a replay), not written again.
  uint64_t skip = 0;

  /// The statement that sets the marker to `count`.
  std::string sql(uint64_t count) const {
    return upsert + std::to_string(count) + ") ON DUPLICATE KEY UPDATE applied = VALUES(applied)";
  }
};

/// How the MySQL sink writes.
struct MySqlSinkOptions {
  /// The server and database written to. Default: SLUICE_MYSQL_URL.
  MySqlUrl url;
  /// The target table, in the URL's database. Required.
  std::string table;
  /// The columns that identify a row: the table's PRIMARY KEY or a UNIQUE KEY
  /// must have exactly these. Default (empty): the input's primary key.
  std::vector<std::string> key;
  enum class Mode {
    kUpsert,  ///< keep the last change per key; write upserts and deletes by key
    kAppend,  ///< insert every record (insert-only input, table without a key)
    /// Apply every change to a table without a key, as a replica does: +I
    /// and +U insert their row, -U and -D delete one row equal to theirs
    /// in every column (mysql-to-mysql, a source table without a key).
    kRows,
  };
  /// Default: upsert with a key, append without.
  std::optional<Mode> mode;
  enum class Delivery {
    kAtLeastOnce,  ///< each flush its own transaction; replays converge (upsert mode)
    kExactlyOnce,  ///< one XA transaction per checkpoint, committed when it completes
  };
  /// Default: at-least-once.
  Delivery delivery = Delivery::kAtLeastOnce;
  /// Input records after which the buffer is flushed; 0 = never for that
  /// reason (FlushSignal, barriers and the end still flush). Default: 100
  /// (mysql-to-mysql: kReplicationMaxRows).
  size_t max_rows = 100;
  /// max_rows of mysql-to-mysql, which applies a server's changes: an
  /// at-least-once flush is a transaction, and the target's commit costs it
  /// more than a hundred rows (updates of 500k rows: 45% more rows/s than
  /// at 100, 5% more than at 5,000; `sluice bench replication`).
  static constexpr size_t kReplicationMaxRows = 10'000;
  /// Retries of a flush after a lost connection or a deadlock. Default: 3.
  int max_retries = 3;
  /// First wait before a retry, doubling each time. Default: 100ms.
  std::chrono::milliseconds retry_backoff{100};
  /// The longest one call may wait on the server (read and write timeout):
  /// a server that does not answer within it counts as a lost connection.
  /// Default: 60 s.
  std::chrono::seconds socket_timeout{60};
  /// Subtasks writing; with more than one, the engine hash-partitions the
  /// input by the key. Default: 1.
  int parallelism = 1;
  /// Where changes whose values the server refuses (too long, out of
  /// range, a failed CHECK) go, a table of `url`'s database created when
  /// missing (dead_letter_table_sql()); empty: such a change fails the job
  /// (sink.on-error=fail). Default: empty.
  std::string dead_letter_table;
  /// The source table named on the dead letters; empty: the target.
  /// Default: empty.
  std::string dead_letter_source;
  enum class RowEvents {
    kAuto,  ///< where the server and the table take them (RowEventEncoder::fit), else statements
    kOn,    ///< fail at the start, saying why, where they do not
    kOff,   ///< statements only
  };
  /// Whether upserts and deletes go as row events, in BINLOG statements, as
  /// a replica applies them: the server does less per row than for an
  /// upsert. Default: auto.
  RowEvents row_events = RowEvents::kAuto;
  /// Whether the input is a MySQL table's rows, as mysql-to-mysql reads
  /// them: an ENUM's '' that is none of its members is then the invalid
  /// value (index 0) the source table holds, which a session not in strict
  /// mode stored, and row events write it as that. Elsewhere, and as a
  /// statement, such a '' is refused (strict mode). Default: false.
  bool input_is_table_rows = false;
  /// Of Mode::kRows at least once: where the rows flushed are counted,
  /// which the caller keeps across the sinks of the table it opens; none
  /// if null. Default: null.
  std::shared_ptr<AppliedRows> applied_rows;

  /// Reads the `sink.*` keys of mysql_sink_option_specs().
  static MySqlSinkOptions from(const Config& config);
};

std::vector<OptionSpec> mysql_sink_option_specs();

/// Whether a column of `column_type` (as the server spells it) holds
/// values of `type`. A number or a date goes into a text column as its
/// text; but text is no number to a numeric column, a time of day no date,
/// a fraction no integer, and only bytes are a geometry.
bool holds(const std::string& column_type, const DataType& type);

/// The MySQL sink, for `stream.sink(name, mysql_sink(options))`: its input
/// rows' column names are the table's, the input's primary key its key
/// unless `options.key` says otherwise, and it runs with
/// `options.parallelism` subtasks (one for a table with another unique
/// key, whose writes must keep their order). Upsert mode keeps the last change per key
/// (UpsertBuffer: +I/+U upsert, -D delete, -U a delete unless the +U of the same key follows) and
/// flushes it on max-rows, on FlushSignal, at every barrier and at the end (StatementWriter:
/// batched `INSERT … ON DUPLICATE KEY UPDATE` and `DELETE … WHERE key`), so that the table equals
/// the changes applied in order, also for string keys the table's collation takes for equal.
/// At-least-once, each flush is a transaction, replayed whole on a new
/// connection after a lost connection or a deadlock. At open the table must
/// exist with every input column and a matching key; validate() refuses
/// updates or deletes into a sink without a key.
///
/// Exactly-once (XaCommitter): the flushes between two barriers go into one
/// XA transaction, prepared at the barrier (its id kept in the sink's
/// state), committed from the same connection when the checkpoint completes;
/// meanwhile the next one runs on a second connection. A restored sink
/// commits the transactions its state lists, verified by a marker row each
/// wrote into `sluice_xa_commits`, and rolls back its other prepared
/// transactions. Checkpoints must be on: nothing is committed without them.
SinkDef mysql_sink(const MySqlSinkOptions& options);

/// Calls `each` with the changes `sink`, of mysql_sink(), has taken that
/// another connection to its table may not see yet, oldest first, as rows
/// of its input: exactly-once, those its XA transactions wrote and have not
/// committed, then those it buffers; at least once, once its last flush
/// committed, those it buffers.
void for_each_unseen(Sink& sink, const std::function<void(const Row&)>& each);

/// The sink writing into `table` as Flink's JDBC table (the password left
/// out), with a note where Flink's does not do what it does.
FlinkSqlTable jdbc_table(const MySqlSinkOptions& options, const std::string& table,
                         const RuntimeOptions& runtime);

}  // namespace sluice
