#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/mysql/binlog_position.hpp"
#include "sluice/connectors/mysql/cdc/ddl.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/common/coarse_clock.hpp"
#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/row.hpp"
#include "sluice/engine/data/schema.hpp"

/// Reading a MySQL/MariaDB server's binlog as a replica does: the row
/// changes of chosen tables, in commit order, as they are read. The binlog
/// stage of the change-data-capture source.
namespace sluice {

struct BinlogDecoding;  // what one column's values become
struct BinlogEvent;     // one event, as the server sent it
class BinlogStream;     // one connection reading events
class SchemaHistory;

/// Where the server's binlog ends now (SHOW MASTER STATUS). Throws ConfigError
/// when the binlog is off, not in ROW format, or the user may not see it.
BinlogPosition current_binlog_position(MySqlConnection& connection);

/// A table whose changes are read: its name and its columns as Sluice types,
/// with what the server says of each (which tells how to read its values).
/// One without columns (nor definition) does not exist where the binlog is
/// read: dropped, or not created yet.
struct CapturedTable {
  std::string database;
  std::string table;
  Schema schema;
  std::vector<TableColumn> columns;
  /// Columns the job does not keep whose type the reader does not take:
  /// passed over, their values NULL.
  std::set<std::string> read_past;
  /// The table as SHOW CREATE TABLE writes it: what the schema history
  /// works out its columns from (SchemaHistory).
  std::string definition;
};

/// `database`.`table` as SHOW CREATE TABLE writes it.
std::string show_create_table(MySqlConnection& connection, const std::string& database,
                              const std::string& table);

/// Of a session's sql_mode (the server's bits), the modes that decide what
/// a statement does to the values a table holds rather than how it reads
/// (STRICT_ALL_TABLES, NO_ZERO_DATE, TIME_ROUND_FRACTIONAL, …), by name,
/// comma-separated: a target's change runs under them, so that values the
/// source's cut or converted with a warning, not strict, go alike there
/// rather than fail it. None for none.
std::optional<std::string> value_modes(std::optional<uint64_t> sql_mode);

/// `table` of `database` (empty: the connection's), read from
/// information_schema. Throws ConfigError for a missing table or a column
/// type the binlog reader does not take, naming it; unless `keep` names the
/// columns the job keeps and that column is not among them: it is read past.
CapturedTable capture_table(MySqlConnection& connection, const std::string& table,
                            const std::vector<std::string>& keep = {},
                            const std::string& database = "");

/// An XA transaction prepared and not yet committed or rolled back. Its
/// changes are in the binlog where it was prepared, and count when it
/// commits: a reader reads them there then.
struct PreparedXa {
  std::string xid;        ///< "formatID:gtrid length:bqual length:gtrid bqual"
  BinlogPosition start;   ///< where the events of its XA PREPARE begin
  bool captured = false;  ///< whether it changed a captured table
};

/// Where a reader starts so that every change comes out once: a position
/// between transactions, or at the start of one with some of its changes
/// given already; and the XA transactions prepared before it.
struct BinlogResume {
  BinlogPosition position;
  uint64_t given = 0;  ///< changes of the transaction at `position` that came out
  std::vector<PreparedXa> prepared;
  /// When the server made `position.file`: its FORMAT_DESCRIPTION event's
  /// time, in seconds since the epoch; 0 where not known. A binlog reset
  /// (RESET MASTER) makes files of the same names anew, and a reader
  /// started in one made at another time fails rather than read on there.
  uint32_t file_made = 0;
};

/// When the server made binlog file `file` (BinlogResume::file_made), read
/// as replica `server_id`, one no other reader has.
uint32_t binlog_file_made(const MySqlUrl& url, uint32_t server_id, const std::string& file);

/// A captured table's columns changed by ALTER TABLE, or the table made,
/// dropped or emptied (see BinlogReaderOptions::follow_schema_changes).
struct BinlogSchemaChange {
  enum class Kind {
    kColumns,    ///< ALTER TABLE
    kCreated,    ///< CREATE TABLE: `before` has no columns (or those of one dropped before)
    kDropped,    ///< DROP TABLE: `after` has no columns
    kTruncated,  ///< TRUNCATE TABLE: its rows are gone, unlogged; the columns stay
  };
  Kind kind = Kind::kColumns;
  CapturedTable before;
  CapturedTable after;
  std::string statement;
  /// Columns renamed (CHANGE old new, RENAME COLUMN old TO new).
  std::vector<std::pair<std::string, std::string>> renames;
  /// Of a RENAME TABLE, the table's other name ("db.table"), as two
  /// changes: kDropped of the old name, naming the new; then kCreated of
  /// the new (`before` the old table), naming the old.
  std::string renamed;
  /// Where the binlog has it: the end of its event.
  BinlogPosition position;
  /// When the source ran it, in microseconds since the epoch.
  int64_t ran_at = 0;
  /// The time zone of the session that ran it, as an offset from UTC then
  /// ("+05:30"), where the statement used it; empty: not used.
  std::string time_zone;
  /// Of the session's sql_mode, value_modes(); none: the event does not say.
  std::optional<std::string> sql_mode;
  /// Of a statement that changes several tables, this change's place among
  /// its changes.
  uint32_t part = 0;
  /// Where a reader starts to read the change again: its statement's start.
  BinlogResume resume_before;
};

/// A change of a captured table: +I, -U then +U, or -D, with every column,
/// held in a batch of BinlogChanges; or a change of its columns, when
/// `schema_change` is set.
struct BinlogChange {
  size_t table = 0;  ///< index into the reader's tables
  std::shared_ptr<const BinlogSchemaChange> schema_change;
  /// Of a row change: the batch of BinlogChanges that holds it, and its row there.
  uint32_t batch = 0;
  uint32_t row = 0;
  /// Where the binlog has the row: its event's start, packed
  /// (BinlogPosition::packed()); nullopt for a schema change, or where it
  /// does not pack. The batch's row has it too.
  std::optional<int64_t> position;
};

/// The changes read() appends, in order. The values of a row change are
/// decoded straight into a batch of its table's columns, with no Row
/// between: the rows of a table that follow a change of its columns go
/// into another batch. Batches are kept for reuse by clear().
class BinlogChanges {
 public:
  size_t size() const { return changes_.size(); }
  bool empty() const { return changes_.empty(); }
  const BinlogChange& operator[](size_t i) const { return changes_[i]; }
  BinlogChange& operator[](size_t i) { return changes_[i]; }
  std::vector<BinlogChange>::const_iterator begin() const { return changes_.begin(); }
  std::vector<BinlogChange>::const_iterator end() const { return changes_.end(); }

  /// The batch that holds row change `change`.
  const Batch& batch(const BinlogChange& change) const { return *batches_[change.batch].rows; }
  /// Row change `change` as a Row; an empty one for a schema change.
  Row row(const BinlogChange& change) const {
    return change.schema_change ? Row() : batch(change).row(change.row);
  }

  /// Appends schema change `change` of table `table`.
  void add_schema_change(size_t table, std::shared_ptr<const BinlogSchemaChange> change);
  /// The batch that the next row of table `table`, of columns `schema`,
  /// goes into: fill row next_row(`table`) there, then add_row().
  Batch& rows_of(size_t table, const std::shared_ptr<const Schema>& schema);
  /// The row of the batch rows_of(`table`) gave last that the next row
  /// change of `table` is decoded into. Rows are added a block at a time,
  /// blocks as large as the rows filled so far, up to 64: a transaction of
  /// one row does not add a row to each column per event.
  uint32_t next_row(size_t table);
  /// Appends row next_row(`table`), filled.
  void add_row(size_t table, std::optional<int64_t> position);
  /// The batch holding row change `first` and the `n` - 1 after it, when
  /// they are every row it holds: for the caller to take them whole
  /// (Batch::take), since no other change refers to it. Null otherwise.
  Batch* whole_batch(const BinlogChange& first, size_t n);

  /// Empties it, keeping the batches' capacity.
  void clear();

 private:
  struct Rows {
    std::shared_ptr<const Schema> schema;  // outlives `rows`, which points at it
    std::unique_ptr<Batch> rows;
    uint32_t filled = 0;  // its rows that hold changes; those after are blank
  };
  std::vector<BinlogChange> changes_;
  std::vector<Rows> batches_;  // the first used_ hold rows
  uint32_t used_ = 0;
  std::vector<uint32_t> open_;  // per table: the batch its rows go into, if used_ counts it
};

struct BinlogReaderOptions {
  /// How often the server says it is still there while it has nothing to
  /// send. Default: 1 s.
  std::chrono::milliseconds heartbeat{1000};
  /// The longest one read() goes on reading events, of other tables say,
  /// before it returns. Default: 50 ms.
  std::chrono::milliseconds budget{50};
  /// About how many changes one read() returns at most. Default: 1024.
  size_t max_changes = 1024;
  /// Interrupts a read() blocked on the server, from another thread. Default: none.
  MySqlCanceller* canceller = nullptr;
  /// Whether an ALTER TABLE that changes a captured table's columns is
  /// followed: its new columns, worked out by a SchemaHistory, are the
  /// ones the rows after it are read with, and read() gives the change
  /// (BinlogChange::schema_change); so are DROP and TRUNCATE of a captured
  /// table, and CREATE TABLE of one dropped before or of one `new_tables`
  /// takes (captured from there on, at the next index). A change of the
  /// primary key, and a RENAME of or to a captured table, still fail.
  /// Default: false, every DDL that changes a captured table's rows fails.
  bool follow_schema_changes = false;
  /// Whether a table that is not captured is one the job would capture
  /// (database, table): followed from its CREATE TABLE; a RENAME to its
  /// name fails the read, naming it. Default: none.
  std::function<bool(const std::string&, const std::string&)> new_tables;
  /// Tables of the list, absent where the reader starts, whose rows are
  /// read past until their CREATE TABLE rather than failing the read:
  /// tables that existed there without being captured, which a snapshot
  /// taken where the reader stops reads whole. Default: none.
  std::set<size_t> not_captured_yet;
};

/// Reads the binlog as replica `server_id` (unique among the server's
/// replicas). What comes out is the changes that committed transactions
/// made to captured tables, in commit order, as they are read: memory does
/// not grow with a transaction's size. An XA transaction's changes come out
/// when it commits (none at XA ROLLBACK), read again from where it was
/// prepared, on a second connection as replica `server_id` ^ 2^31: also
/// when that was before the reader's start, which a search back through the
/// binlog finds. Other tables' rows are skipped without
/// being decoded. DDL that changes a captured table's rows fails, with
/// its statement, unless it follows schema changes
/// (BinlogReaderOptions::follow_schema_changes); indexes (not the
/// primary key), table options and a nullable column added at the end are
/// read past, the table's changes keeping the columns it had. DDL on other
/// tables, the same name in another database too, is read past.
class BinlogReader {
 public:
  BinlogReader(const MySqlUrl& url, uint32_t server_id, BinlogResume start,
               std::vector<CapturedTable> tables, BinlogReaderOptions options = {});
  ~BinlogReader();
  BinlogReader(const BinlogReader&) = delete;
  BinlogReader& operator=(const BinlogReader&) = delete;

  /// Reads on and appends the changes to `out`, until it appended about
  /// max_changes, the budget passed, what the server sent is read (it never
  /// waits for more), the reader came to stop_at(), or it appended a schema
  /// change: nothing after the transaction of one (the rows of a
  /// CREATE TABLE … SELECT) comes with it.
  void read(BinlogChanges& out);

  /// Where a new reader would start to give what has not come out of
  /// read(), and nothing that has.
  BinlogResume resume() const;

  /// Makes read() stop between transactions at `position` (one that the
  /// server wrote: the end of a transaction, say), or at the first place
  /// between transactions after it.
  void stop_at(BinlogPosition position) { stop_at_ = std::move(position); }
  /// Whether the reader came to stop_at(); read() then reads no more.
  bool stopped() const;

  /// Whether the last read() ended because it read all the server had sent.
  bool idle() const { return idle_; }
  /// When the server wrote the last event read, and the last that changed
  /// a captured table (binlog timestamps are whole seconds); the epoch if
  /// none came yet.
  std::chrono::system_clock::time_point last_event_time() const { return last_event_time_; }
  std::chrono::system_clock::time_point last_change_time() const { return last_change_time_; }

  const std::vector<CapturedTable>& tables() const { return tables_; }

 private:
  // A transaction (event group) being read.
  struct Group {
    BinlogPosition start;
    uint64_t changes = 0;     // of captured tables so far, given or skipped
    uint64_t skip = 0;        // how many of them came out before this reader
    bool prepare = false;     // ends with XA PREPARE: its changes count at XA COMMIT
    bool completion = false;  // XA COMMIT or XA ROLLBACK of a prepared one
    bool captured = false;    // a prepare that changed a captured table
    bool ddl = false;
    bool standalone = false;  // one statement, no COMMIT (DDL but CREATE … SELECT)
    std::string xid;
  };
  void handle(BinlogStream& stream, const BinlogEvent& event, BinlogChanges& out);
  void handle_query(BinlogStream& stream, const BinlogEvent& event, BinlogChanges& out);
  // Whether two database or table names name the same: as bytes, or in
  // either case where the server's lower_case_table_names is 1 or 2.
  bool same_name(std::string_view a, std::string_view b) const;
  // The schema history, made when first needed.
  SchemaHistory& history();
  // Time zone `zone` of DDL `statement` (QUERY's Q_TIME_ZONE_CODE; empty:
  // unused) as its offset from UTC at `timestamp`; empty: none.
  std::string utc_offset(std::string_view zone, uint32_t timestamp, const std::string& statement);
  // Fails on a change of a captured table that `statement` (run in
  // `database`) made, logged as a statement.
  void check_statement(const std::string& statement, const std::string& database,
                       BinlogStream& stream) const;
  // Follows DDL `statement` (run in `database`) that changes a captured
  // table's columns, or fails on it (see ddl_changes()).
  void check_ddl(const std::string& statement, const std::string& database, BinlogStream& stream,
                 BinlogChanges& out);
  // The ALTER TABLE `statement` of table `t`: its new columns, from now on.
  std::shared_ptr<const BinlogSchemaChange> follow(size_t t, const std::string& statement,
                                                   BinlogStream& stream);
  // CREATE TABLE `statement` (default database `database`) of table `t`
  // (dropped before), or of a table not captured yet.
  std::shared_ptr<const BinlogSchemaChange> create(std::optional<size_t> t, const DdlChange& ddl,
                                                   const std::string& statement,
                                                   const std::string& database,
                                                   BinlogStream& stream);
  // RENAME of table `t` to `to`: captured as table `as` from here on (an
  // index past the last: a new one), or, if none, gone from the stream.
  std::vector<BinlogChange> rename(size_t t, const DdlChange& to, std::optional<size_t> as,
                                   const std::string& statement, BinlogStream& stream);
  // DROP or TRUNCATE (`action`) of table `t`.
  std::shared_ptr<const BinlogSchemaChange> drop(size_t t, DdlChange::Action action,
                                                 const std::string& statement,
                                                 BinlogStream& stream);
  // Table `t` is `table` from here on, read as its columns say.
  void set_table(size_t t, CapturedTable table);
  bool absent(size_t t) const { return tables_[t].definition.empty(); }
  void complete_xa(const std::string& statement, const BinlogPosition& end);
  void read_rows(BinlogStream& stream, const BinlogEvent& event, BinlogChanges& out);
  void end_group(const BinlogPosition& end);
  // The prepare of XA transaction `xid` before start_, if the binlog has it.
  std::optional<PreparedXa> look_back_for(const std::string& xid);

  // Reads on anew, from read_, if the server's binlog ends elsewhere than
  // the main stream: it waits on a file that a reset removed, say.
  void check_not_stalled();
  // The id of the streams that read a prepare again, or back before start_.
  uint32_t side_server_id() const;

  MySqlUrl url_;
  uint32_t server_id_;
  std::vector<CapturedTable> tables_;
  std::vector<std::vector<BinlogDecoding>> decodings_;  // per table, per column
  std::vector<std::shared_ptr<const Schema>> schemas_;  // per table: tables_[t].schema
  std::unique_ptr<SchemaHistory> history_;              // following schema changes
  std::optional<uint64_t> statement_mode_;  // the sql_mode of the QUERY event being read
  BinlogReaderOptions options_;
  BinlogPosition start_;  // where this reader started
  uint64_t skip_ = 0;     // changes of the transaction at start_ given before
  std::unique_ptr<BinlogStream> main_;
  // A committed XA transaction's prepare, being read; then its commit's
  // group ends at side_end_.
  std::unique_ptr<BinlogStream> side_;
  BinlogPosition side_end_;
  BinlogPosition read_;                         // where the last whole group ended
  std::optional<Group> group_;                  // between its GTID and its end
  std::string spare_file_;                      // the last group's start's file, its storage reused
  std::map<std::string, PreparedXa> prepared_;  // by XID
  // What look_back_for() read of the binlog before start_ so far.
  struct LookBack {
    std::vector<std::string> unread;          // files not read yet, the newest last
    std::map<std::string, PreparedXa> found;  // prepares no end followed before start_
    std::set<std::string> ended;              // XIDs ended before start_, earlier prepares too
  };
  std::optional<LookBack> looking_back_;
  std::optional<BinlogPosition> stop_at_;
  bool idle_ = false;
  bool schema_changed_ = false;  // read() appended a schema change
  // A server silent for longer, heartbeats and all, is taken for lost.
  static constexpr std::chrono::seconds kSilence{60};
  CoarseClock::time_point last_arrival_;
  // Heartbeats alone for longer, the binlog's end is asked for: a stream
  // behind it is stalled (check_not_stalled()).
  static constexpr std::chrono::seconds kStalled{5};
  CoarseClock::time_point last_event_;       // not a heartbeat
  CoarseClock::time_point last_checked_;     // by check_not_stalled()
  std::unique_ptr<MySqlConnection> status_;  // what check_not_stalled() asks
  bool names_fold_case_ = false;             // see same_name()
  std::chrono::system_clock::time_point last_event_time_{};
  std::chrono::system_clock::time_point last_change_time_{};
};

}  // namespace sluice
