#include "sluice/connectors/mysql/sink/tables_sink.hpp"

#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "sluice/connectors/mysql/binlog_position.hpp"
#include "sluice/connectors/mysql/sink/sink_connection.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/fault_point.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/engine/data/value_codec.hpp"

namespace sluice {
namespace {

// `names` backquoted, comma-separated: "`a`, `b`".
std::string quoted_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + quote_identifier(name);
  return out;
}

// Tables share a target only with the same table column, which keeps their
// keys apart.
void check_shared_targets(const std::vector<TableSchema>& tables,
                          const std::vector<MySqlTableTarget>& targets) {
  for (size_t t = 0; t < tables.size(); ++t) {
    for (size_t u = 0; u < t; ++u) {
      if (targets[u].table != targets[t].table) continue;
      if (targets[t].table_column.empty() || targets[u].table_column != targets[t].table_column) {
        throw ConfigError("tables '" + tables[u].name + "' and '" + tables[t].name +
                          "' would both be written into table '" + targets[t].table +
                          "', where their keys could collide: route them with a column for the "
                          "source table's name, which joins the key (route=PATTERN -> " +
                          targets[t].table + " (source_table))");
      }
    }
  }
}

bool same_name(const std::string& a, const std::string& b);

// Of a change the binlog has (its place in it known, so its `before` is
// the source's columns, defaults and all), column `name` of `after` as it
// was before; null if it was not, or the change is of another kind.
const TableColumn* before_of(const MySqlSchemaChange& change, const std::string& name) {
  if (change.kind != MySqlSchemaChange::Kind::kColumns || change.position.empty()) return nullptr;
  std::string was = name;
  for (const auto& [from, to] : change.renames) {
    if (to == name) was = from;
  }
  const auto found = std::find_if(change.before.begin(), change.before.end(),
                                  [&](const TableColumn& c) { return c.name == was; });
  return found == change.before.end() ? nullptr : &*found;
}

// Where the sink notes the last schema change it made to each target.
constexpr char kMadeTable[] = "`sluice_schema_changes`";
// Where the sink notes the targets it created in a run that has not yet
// completed a checkpoint: no checkpoint names their tables, so a later
// run starting afresh would not know them (see drop_leftovers()).
constexpr char kCreatedTable[] = "`sluice_created_tables`";
// Where, at least once, the rows of a table without a key are counted (AppliedRows).
constexpr char kRowsAppliedTable[] = "`sluice_rows_applied`";

// Where a schema change is, as kMadeTable has it: its place in the binlog,
// and among the changes of its statement ("mariadb-bin.000002:831#1"; the
// part is 0 when left out).
struct MadeAt {
  BinlogPosition position;
  uint32_t part = 0;

  static std::optional<MadeAt> parse(const std::string& text) {
    const size_t hash = text.find('#');
    const std::optional<BinlogPosition> position = BinlogPosition::parse(text.substr(0, hash));
    if (!position) return std::nullopt;
    MadeAt at{*position};
    if (hash != std::string::npos)
      at.part = static_cast<uint32_t>(std::stoul(text.substr(hash + 1)));
    return at;
  }
  std::string to_string() const { return position.to_string() + "#" + std::to_string(part); }
  friend auto operator<=>(const MadeAt&, const MadeAt&) = default;
};
// How long an ALTER TABLE of a target waits for the table's lock.
constexpr std::chrono::seconds kAlterLockWait{120};

// Exactly-once, each table's sink holds a connection from the start (it
// recovers its transactions there) and a second one while a checkpoint's
// transaction waits to commit and the next one is open. A server that
// cannot take the first of them would fail the job at one of its tables
// with "Too many connections": say so at once, naming the setting.
void check_connections(MySqlConnection& connection, size_t tables) {
  const auto limit = connection.query("SELECT @@max_connections");
  const auto connected = connection.query("SHOW GLOBAL STATUS LIKE 'Threads_connected'");
  if (limit.empty() || connected.empty()) return;
  const uint64_t max = std::stoull(limit.at(0).at(0).value_or("0"));
  const uint64_t used = std::stoull(connected.at(0).at(1).value_or("0"));
  const uint64_t spare = max > used ? max - used : 0;
  const std::string need =
      std::to_string(tables) + " tables need " + std::to_string(tables) + " to " +
      std::to_string(2 * tables) +
      " connections, and the server has max_connections=" + std::to_string(max) + " with " +
      std::to_string(used) + " in use";
  if (tables > spare) {
    throw ConfigError(
        "sink.delivery=exactly-once writes each table in XA transactions of its own, on a "
        "connection of its own (two while a checkpoint commits): " +
        need +
        "; raise max_connections, capture fewer tables in one job, or use "
        "sink.delivery=at-least-once, whose tables share one connection");
  }
  if (2 * tables > spare) {
    spdlog::warn(
        "mysql sink: sink.delivery=exactly-once: {}; a checkpoint that commits while every table "
        "has written may find no connection free",
        need);
  }
}

// What one table's sink sees of the engine: the sink's context, with its
// state kept under the table's name, and its own operator name, which
// keeps its XA transactions apart from the other tables'. Its counters are
// the sink's, so that they add up over the tables. The table's sink may be
// replaced (its columns changed): forget() its actions before it goes.
class TableContext final : public SinkContext {
 public:
  TableContext(SinkContext& sink, const std::string& table)
      : sink_(sink), prefix_(table + "/"), info_(sink.subtask()) {
    info_.operator_name += "/" + table;
    sink_.register_cancel_action([this] {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& cancel : cancels_) cancel();
    });
  }

  const SubtaskInfo& subtask() const override { return info_; }
  Counter& metric(const std::string& name, MetricKind kind) override {
    return sink_.metric(name, kind);
  }
  RawValueState raw_value_state(const std::string& name) override {
    return sink_.raw_value_state(prefix_ + name);
  }
  RawListState raw_list_state(const std::string& name) override {
    return sink_.raw_list_state(prefix_ + name);
  }
  RawKeyedValueState raw_keyed_value_state(const std::string& name) override {
    return sink_.raw_keyed_value_state(prefix_ + name);
  }
  RawKeyedMapState raw_keyed_map_state(const std::string& name) override {
    return sink_.raw_keyed_map_state(prefix_ + name);
  }
  const std::string* current_key() const override { return sink_.current_key(); }
  std::string describe_position(int64_t position) const override {
    return sink_.describe_position(position);
  }
  std::optional<int64_t> restored_checkpoint() const override {
    return sink_.restored_checkpoint();
  }
  bool resumed_from_older_checkpoint() const override {
    return sink_.resumed_from_older_checkpoint();
  }
  bool checkpoints_enabled() const override { return sink_.checkpoints_enabled(); }
  void request_checkpoint() override { sink_.request_checkpoint(); }
  void register_cancel_action(std::function<void()> action) override {
    std::lock_guard<std::mutex> lock(mutex_);
    cancels_.push_back(std::move(action));
  }
  void register_flush_action(std::function<void()> action) override { flush_ = std::move(action); }

  /// Runs the flush action the table's sink registered.
  void flush() const {
    if (flush_) flush_();
  }
  /// Drops what the table's sink registered, before it goes.
  void forget() {
    std::lock_guard<std::mutex> lock(mutex_);
    cancels_.clear();
    flush_ = nullptr;
  }

 private:
  SinkContext& sink_;
  const std::string prefix_;
  SubtaskInfo info_;
  std::function<void()> flush_;
  std::mutex mutex_;  // guards cancels_, which the engine runs from another thread
  std::vector<std::function<void()>> cancels_;
};

// One connection that the tables' sinks write through, at-least-once: each
// table's flush is a transaction, one after another on the sink's thread.
// Opening a connection (TLS and all) costs more than most flushes, and a
// job of a hundred tables would hold a hundred. A failure that loses the
// connection makes the next connect() open a new one.
//
// The flushes of all tables at a FlushSignal or a barrier go in one
// transaction (in_group()): a hundred tables' flush commits once. A
// table's sink retries its own statements after a lost connection or a
// deadlock, which would lose the other tables' part of the transaction:
// in a group such a failure fails the sink instead, and the job resumes
// from its checkpoint, replaying what the transaction held.
class SharedConnection {
 public:
  SharedConnection(MySqlUrl url, std::chrono::seconds timeout, MySqlCanceller& canceller)
      : url_(std::move(url)), session_{.timeout = timeout, .canceller = &canceller} {}

  /// Runs `flushes` (of several tables' sinks) in one transaction.
  template <typename F>
  void in_group(F&& flushes) {
    grouped_ = true;
    begun_ = false;
    try {
      flushes();
    } catch (...) {
      grouped_ = false;
      lost_ = true;  // whatever the transaction held is rolled back with the connection
      throw;
    }
    grouped_ = false;
    if (begun_) connection_->execute("COMMIT");
  }

  std::unique_ptr<SinkConnection> connect() {
    live();
    return std::make_unique<Handle>(*this);
  }

 private:
  // The connection, a new one if the last was lost.
  SinkConnection& live() {
    if (!connection_ || lost_) {
      connection_.reset();
      connection_ = std::make_unique<MySqlSinkConnection>(url_, session_);
      lost_ = false;
    }
    return *connection_;
  }

  // What a table's sink holds: the shared connection, whichever it is now.
  class Handle final : public SinkConnection {
   public:
    explicit Handle(SharedConnection& shared) : shared_(shared) {}

    void execute(std::string_view sql) override {
      if (shared_.grouped_ && sql == "COMMIT") return;  // the group's, at its end
      if (shared_.grouped_ && sql == "START TRANSACTION") {
        if (std::exchange(shared_.begun_, true)) return;
      }
      call([&](SinkConnection& to) { to.execute(sql); });
    }
    void send(std::string sql) override {
      call([&](SinkConnection& to) { to.send(std::move(sql)); });
    }
    void finish() override {
      call([&](SinkConnection& to) { to.finish(); });
    }
    bool shares_session() const override { return true; }
    uint64_t execute_bulk(const BulkSql& statement, const Batch& batch,
                          std::span<const uint32_t> rows) override {
      return call([&](SinkConnection& to) { return to.execute_bulk(statement, batch, rows); });
    }
    std::optional<TableInfo> find_table(const std::string& table) override {
      return call([&](SinkConnection& to) { return to.find_table(table); });
    }
    uint64_t max_allowed_packet() override {
      return call([&](SinkConnection& to) { return to.max_allowed_packet(); });
    }
    KeyImage text_image(const TableColumn& column, uint32_t prefix) override {
      return call([&](SinkConnection& to) { return to.text_image(column, prefix); });
    }
    RowEventTarget row_event_target(const std::string& table) override {
      return call([&](SinkConnection& to) { return to.row_event_target(table); });
    }
    void xa(std::string_view, const Xid&) override { unshared(); }
    std::vector<Xid> xa_recover() override { unshared(); }
    void create_marker_table() override { unshared(); }
    void insert_marker(const Xid&) override { unshared(); }
    bool has_marker(const Xid&) override { unshared(); }
    void delete_marker(const Xid&) override { unshared(); }
    SessionId session() const override { return shared_.live().session(); }
    void wait_until_gone(const SessionId& session) override {
      call([&](SinkConnection& to) { to.wait_until_gone(session); });
    }

   private:
    template <typename F>
    auto call(F&& f) -> decltype(f(std::declval<SinkConnection&>())) {
      try {
        return f(shared_.live());
      } catch (const MySqlError& e) {
        if (e.retriable()) shared_.lost_ = true;
        if (shared_.grouped_ && e.retriable()) {
          throw Error(std::string(e.what()) +
                      " (in the transaction of several tables' flush: not retried alone)");
        }
        throw;
      }
    }
    [[noreturn]] static void unshared() {
      throw std::logic_error("a shared connection carries no XA transaction");
    }

    SharedConnection& shared_;
  };

  MySqlUrl url_;
  MySqlSession session_;
  std::unique_ptr<SinkConnection> connection_;
  bool lost_ = false;
  bool grouped_ = false;  // in in_group()
  bool begun_ = false;    // the group's transaction began
};

class MySqlTablesSink final : public Sink {
 public:
  MySqlTablesSink(MySqlSinkOptions options, std::vector<TableSchema> tables,
                  std::vector<MySqlTableTarget> targets, bool create_tables,
                  SchemaChangeBehavior behavior, std::vector<TableRoute> routes)
      : options_(std::move(options)),
        tables_(std::move(tables)),
        targets_(std::move(targets)),
        create_tables_(create_tables),
        behavior_(behavior),
        routes_(std::move(routes)) {}

  // A table's sink opens when its first rows come, with their columns
  // (which a restore may have changed); exactly-once, all open at once, to
  // recover their transactions.
  void open(SinkContext& context) override {
    context_ = &context;
    restored_ = context.restored_checkpoint().has_value();
    if (options_.delivery == MySqlSinkOptions::Delivery::kAtLeastOnce) {
      shared_.emplace(options_.url, options_.socket_timeout, canceller_);
      context.register_cancel_action([this] { canceller_.cancel(); });
    }
    prepare_targets();
    if (!restored_ && !exactly_once()) forget_rows_applied();
    sinks_.resize(tables_.size());
    opened_.resize(tables_.size());
    fitted_.resize(tables_.size());
    gone_.resize(tables_.size());
    for (const TableSchema& table : tables_) {
      contexts_.push_back(std::make_unique<TableContext>(context, table.name));
    }
    if (options_.delivery == MySqlSinkOptions::Delivery::kExactlyOnce) {
      for (size_t t = 0; t < tables_.size(); ++t) open_table(t, tables_[t].schema);
    }
    find_cascades();
    context.register_flush_action([this] {
      in_group([this] {
        for (const auto& table : contexts_) table->flush();
      });
    });
  }

  void on_schema_change(const SchemaChange& change) override {
    const size_t t = change.table;
    const auto* detail = dynamic_cast<const MySqlSchemaChange*>(change.detail.get());
    if (t >= sinks_.size()) add_table(change, detail);
    // Of the source's own making, not the user's DDL.
    const bool fit = detail != nullptr && (detail->kind == MySqlSchemaChange::Kind::kFit ||
                                           detail->kind == MySqlSchemaChange::Kind::kReread);
    if (!change.restored && !fit &&
        (behavior_ == SchemaChangeBehavior::kException || detail == nullptr)) {
      throw ConfigError("table '" + change.after.name + "' changed: " + change.statement +
                        " (schema.change.behavior=exception)");
    }
    // Exactly-once, the source sent the change once a checkpoint after the
    // rows before it completed: their transactions commit now, so that no
    // prepared one blocks the ALTER TABLE.
    if (change.completed_checkpoint) notify_checkpoint_complete(*change.completed_checkpoint);
    // The rows before the change are written under the columns they have;
    // those after it, by a sink of the new columns.
    if (sinks_[t]) {
      sinks_[t]->finish();  // every change, a -U waiting for its +U too
      sinks_[t]->close(std::nullopt);
      contexts_[t]->forget();
      sinks_[t].reset();
      fitted_[t].reset();
    }
    gone_[t] = false;
    if (!change.restored) {
      // Made again after a drop: created, if need be, as it is now.
      if (detail->kind == MySqlSchemaChange::Kind::kCreated)
        targets_[t] = target_of(change, *detail);
      fault_point("mysql-sink-before-schema-change");
      change_target(t, *detail);
      if (detail->kind == MySqlSchemaChange::Kind::kReread && !exactly_once() &&
          (!change.after.schema.has_primary_key() || (t < applied_.size() && applied_[t]))) {
        // Its rows come again, from none.
        AppliedRows& applied = *applied_rows(t);
        applied.rows = 0;
        applied.skip = 0;
        MySqlConnection(options_.url).execute(applied.sql(0));
      }
      fault_point("mysql-sink-schema-change");
    }
    // Exactly-once, every table's sink stays open, its state saved at each checkpoint.
    const bool exists = change.after.schema.size() > 0;
    if (options_.delivery == MySqlSinkOptions::Delivery::kExactlyOnce && exists) {
      open_table(t, change.after.schema);
    }
  }

  void write(Row&&) override {
    throw std::logic_error("the MySQL sink of several tables takes batches, each of one table");
  }
  void write_batch(Batch& rows) override {
    if (rows.empty()) return;
    const size_t t = rows.table();
    if (!sinks_.at(t) && !gone_[t]) open_table(t, rows.schema());
    if (t < applied_.size() && applied_[t] && applied_[t]->skip > 0) {
      // A replay's first rows without a key, which the target took before
      // (counted there with them), go no further.
      uint64_t& skip = applied_[t]->skip;
      rows.keep_if([&](uint32_t) {
        if (skip == 0) return true;
        --skip;
        return false;
      });
      if (rows.empty()) return;
    }
    if (gone_[t]) {
      rows.clear();
      return;
    }
    if (t < cascades_.size() && !cascades_[t].empty()) {
      write_cascading(t, rows);
      return;
    }
    write_rows(t, rows);
  }
  void finish() override {
    for (const auto& sink : sinks_) {
      if (sink) sink->finish();
    }
  }

  void snapshot_state(int64_t id) override {
    in_group([&] {
      for (const auto& sink : sinks_) {
        if (sink) sink->snapshot_state(id);
      }
    });
    // Every row is flushed and committed now.
    for (size_t t = 0; t < applied_.size(); ++t) {
      if (applied_[t]) rows_applied_state(t).set(static_cast<int64_t>(applied_[t]->rows));
    }
  }
  void notify_checkpoint_complete(int64_t id) override {
    for (const auto& sink : sinks_) {
      if (sink) sink->notify_checkpoint_complete(id);
    }
    // The checkpoint names every table the job has: a restore knows them.
    if (!checkpointed_ && noted_created_) {
      MySqlConnection connection(options_.url);
      connection.execute(std::string("DELETE FROM ") + kCreatedTable +
                         " WHERE job = " + connection.quote(context_->subtask().job_name));
    }
    checkpointed_ = true;
  }
  void notify_checkpoint_aborted(int64_t id) override {
    for (const auto& sink : sinks_) {
      if (sink) sink->notify_checkpoint_aborted(id);
    }
  }
  // Every table's sink closes, whatever another's close threw.
  void close(std::optional<int64_t> last_completed) override {
    std::exception_ptr first;
    for (const auto& sink : sinks_) {
      try {
        if (sink) sink->close(last_completed);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

 private:
  bool exactly_once() const {
    return options_.delivery == MySqlSinkOptions::Delivery::kExactlyOnce;
  }

  ValueState<int64_t> rows_applied_state(size_t t) {
    return contexts_[t]->value_state<int64_t>("rows-applied");
  }

  // A fresh run counts afresh: an earlier run's counts of this job's tables
  // (one that went on with restore=none, say) say nothing of this one's,
  // even of a table whose count starts only after a checkpoint.
  void forget_rows_applied() {
    MySqlConnection connection(options_.url);
    try {
      connection.execute(std::string("DELETE FROM ") + kRowsAppliedTable +
                         " WHERE job = " + connection.quote(context_->subtask().job_name));
    } catch (const MySqlError& e) {
      if (e.code() != 1146) throw;  // ER_NO_SUCH_TABLE: none counted
    }
  }

  // Of table t, without a key and written at least once: its rows counted
  // (AppliedRows), from the count its target has in a restored run, which
  // may be ahead of the checkpoint's: the rows replayed up to it are there
  // already. A fresh run counts from none (forget_rows_applied()).
  std::shared_ptr<AppliedRows> applied_rows(size_t t) {
    if (applied_.size() <= t) applied_.resize(t + 1);
    if (applied_[t]) return applied_[t];
    MySqlConnection connection(options_.url);
    // By source table: tables merged into one target count apart. The
    // count goes on over the table's life in the job, dropped and made
    // again, as the replay's rows do.
    connection.execute(std::string("CREATE TABLE IF NOT EXISTS ") + kRowsAppliedTable +
                       " (job VARCHAR(255) NOT NULL, source_table VARCHAR(129) NOT NULL, applied "
                       "BIGINT UNSIGNED NOT NULL, PRIMARY KEY (job, source_table))");
    const std::string job = connection.quote(contexts_[t]->subtask().job_name);
    const std::string table = connection.quote(tables_[t].name);
    auto applied = std::make_shared<AppliedRows>();
    applied->upsert =
        std::string("INSERT INTO ") + kRowsAppliedTable + " VALUES (" + job + ", " + table + ", ";
    if (restored_) {
      const auto found = connection.query(std::string("SELECT applied FROM ") + kRowsAppliedTable +
                                          " WHERE job = " + job + " AND source_table = " + table);
      const uint64_t there = found.empty() ? 0 : std::stoull(found[0][0].value_or("0"));
      const auto checkpointed = static_cast<uint64_t>(rows_applied_state(t).get().value_or(0));
      applied->rows = there;
      applied->skip = there > checkpointed ? there - checkpointed : 0;
      if (applied->skip > 0) {
        spdlog::info(
            "mysql sink: table '{}' (without a key) took {} rows after the checkpoint, which the "
            "replay brings again: they are not written twice",
            targets_[t].table, applied->skip);
      }
    }
    applied_[t] = applied;
    return applied;
  }

  // ---- what foreign keys' ON DELETE and ON UPDATE actions do ----
  //
  // A parent row deleted, or its referenced columns updated, changes the
  // rows of other tables that refer to it (ON DELETE CASCADE, ON UPDATE SET
  // NULL, …), and the binlog logs none of those changes: a replica's own
  // foreign keys make them. The sink makes them to the child's target as
  // the server made them to the child: once the child's changes before are
  // written, its target's rows that refer to the parent's old values are
  // deleted, or take the new values or NULL, a deleted child's own
  // children first, as deep as InnoDB goes. A replay after a failure meets
  // a target ahead of it: what a cascade deletes or changes there that came
  // after the parent's change comes again after it in the replay too; but
  // a cascade two tables deep finds the middle table's rows as they are
  // later (gone, say), and one that moves a child's key may move a row that
  // came later: those rows can stay as they are.
  //
  // Exactly-once, the target holds none of that: each table's transaction
  // is its own, on a connection of its own, and a prepared one's rows are
  // seen by no other until its checkpoint completes. There the changes a
  // foreign key makes go as changes of the child's (cascade_as_rows()),
  // which its sink writes and commits as any other.
  struct Cascade {
    size_t child = 0;
    ForeignKey key;
  };
  static constexpr int kCascadeDepth = 15;  // InnoDB's limit
  static constexpr size_t kParentsPerStatement = 1000;

  // The child tables' foreign keys with an action, by parent table.
  void find_cascades() {
    cascades_.assign(tables_.size(), {});
    for (size_t c = 0; c < targets_.size(); ++c) {
      for (const ForeignKey& key : targets_[c].foreign_keys) {
        if (key.on_delete == ForeignKey::Action::kNone &&
            key.on_update == ForeignKey::Action::kNone) {
          continue;
        }
        for (size_t p = 0; p < tables_.size(); ++p) {
          if (tables_[p].name != key.parent_database + "." + key.parent_table) continue;
          const bool keyless = exactly_once() && !tables_[c].schema.has_primary_key();
          if (keyless || !targets_[c].table_column.empty()) {
            spdlog::warn(
                "mysql sink: table '{}' has a foreign key on ({}) to '{}' whose ON DELETE or ON "
                "UPDATE action changes its rows unlogged; the sink does not make those changes "
                "{}",
                tables_[c].name, join(key.columns), tables_[p].name,
                keyless ? "to a table without a primary key with sink.delivery=exactly-once"
                        : "to a target of merged tables");
            continue;
          }
          cascades_[p].push_back({c, key});
        }
      }
    }
  }

  // Gives table t's sink `rows`, as the columns its target takes.
  void write_rows(size_t t, Batch& rows) {
    if (!fitted_[t]) {
      sinks_[t]->write_batch(rows);
      return;
    }
    Fitted& fitted = *fitted_[t];
    fitted.take(rows);
    sinks_[t]->write_batch(fitted.rows);
  }

  // Writes `rows` of parent table p, its children changed first. A table
  // that refers to itself has the rows before each delete or update
  // written before its cascade, which may change them. `depth`: of a
  // cascade's own changes (exactly-once), how deep.
  void write_cascading(size_t p, Batch& rows, int depth = 0) {
    std::vector<uint32_t> all;
    all.reserve(rows.selected());
    rows.for_each([&](uint32_t row) { all.push_back(row); });
    const std::span<const uint32_t> selected(all);
    const bool itself = std::any_of(cascades_[p].begin(), cascades_[p].end(),
                                    [&](const Cascade& c) { return c.child == p; });
    if (!itself) {
      cascade_from(p, rows, selected, depth);
      write_rows(p, rows);
      return;
    }
    size_t begin = 0;
    for (size_t k = 0; k < all.size(); ++k) {
      const RowKind kind = rows.kind(all[k]);
      if (kind != RowKind::kDelete && kind != RowKind::kUpdateAfter) continue;
      if (k > begin) {
        Batch before(rows.schema());
        before.append(rows, selected.subspan(begin, k - begin));
        write_rows(p, before);
      }
      // An update's -U, written before, with its +U.
      const size_t first = kind == RowKind::kUpdateAfter && k > 0 ? k - 1 : k;
      cascade_from(p, rows, selected.subspan(first, k + 1 - first), depth);
      begin = k;
    }
    Batch rest(rows.schema());
    rest.append(rows, selected.subspan(begin));
    rows.clear();
    write_rows(p, rest);
  }

  // Makes to parent table p's children what its changes `selected` of
  // `rows` do to them, before p's target takes those.
  void cascade_from(size_t p, const Batch& rows, std::span<const uint32_t> selected, int depth) {
    // The server refuses a change that cascades deeper: rows still found
    // there are those of a cycle, which the levels above change.
    if (depth == kCascadeDepth) return;
    for (const Cascade& cascade : cascades_[p]) {
      const ForeignKey& key = cascade.key;
      std::vector<size_t> at;
      for (const std::string& column : key.parent_columns) {
        const std::optional<size_t> i = rows.schema().index_of(column);
        if (!i) break;
        at.push_back(*i);
      }
      if (at.size() != key.parent_columns.size()) continue;
      // The referenced values of each row, or nullopt where one is NULL
      // (which refers to no parent).
      const auto values = [&](uint32_t row) -> std::optional<std::vector<Value>> {
        std::vector<Value> out;
        for (size_t i : at) {
          if (rows.column(i).is_null(row)) return std::nullopt;
          out.push_back(rows.column(i).value(row));
        }
        return out;
      };
      // In the order of the changes: deletes in a row, a statement for up
      // to kParentsPerStatement of them.
      std::vector<std::vector<Value>> deleted;
      const auto cascade_deletes = [&] {
        if (deleted.empty()) return;
        if (exactly_once()) {
          cascade_as_rows(cascade, p, deleted, std::nullopt, depth);
        } else {
          std::string parents;
          for (const std::vector<Value>& tuple : deleted)
            parents += (parents.empty() ? "" : ", ") + parent_literals(p, key, tuple);
          on_parents_deleted(cascade, "(" + parents + ")", 0);
        }
        deleted.clear();
      };
      std::optional<uint32_t> before;  // a -U, until its +U
      for (const uint32_t row : selected) {
        const RowKind kind = rows.kind(row);
        // Changed with foreign_key_checks=0: the parent's rows alone.
        if (const auto position = rows.position(row); position && *position & kUncheckedRow) {
          before.reset();
          continue;
        }
        if (kind == RowKind::kDelete && key.on_delete != ForeignKey::Action::kNone) {
          if (auto old = values(row)) {
            deleted.push_back(std::move(*old));
            if (deleted.size() == kParentsPerStatement) cascade_deletes();
          }
        }
        if (kind == RowKind::kUpdateAfter && before && key.on_update != ForeignKey::Action::kNone) {
          auto old = values(*before);
          auto now = values(row);
          if (old && now != old) {
            cascade_deletes();
            if (exactly_once()) {
              cascade_as_rows(cascade, p, {*old}, now, depth);
            } else {
              on_parent_updated(cascade, p, parent_literals(p, key, *old), now);
            }
          }
        }
        before = kind == RowKind::kUpdateBefore ? std::optional<uint32_t>(row) : std::nullopt;
      }
      cascade_deletes();
    }
  }

  // The referenced values `tuple` of parent table p's, as SQL: "(1, 'a')".
  // Opens the cascading connection, once a change cascades.
  std::string parent_literals(size_t p, const ForeignKey& key, const std::vector<Value>& tuple) {
    MySqlConnection& sql = cascading().connection();
    std::string out;
    for (size_t i = 0; i < tuple.size(); ++i) {
      const TableColumn* column = targets_[p].like.column(key.parent_columns[i]);
      out += (i ? ", " : "(") +
             (column ? sql_literal(sql, tuple[i], *column) : sql.quote(tuple[i].to_string()));
    }
    return out + ")";
  }

  // Exactly-once: makes what the change of parents of table p whose
  // referenced values were `parents` does to the child's rows, as changes
  // of the child's, written after the child's changes before them: a
  // delete (`now` nullopt, ON DELETE) or an update to `now` (of one
  // parent; an empty tuple where a value is NULL) of each row that refers
  // to one of them. A rollback of the child's transaction writes them
  // again, and a restore comes to them again from the same rows as of the
  // same checkpoint. `depth`: the parents', in a cascade.
  void cascade_as_rows(const Cascade& cascade, size_t p,
                       const std::vector<std::vector<Value>>& parents,
                       const std::optional<std::optional<std::vector<Value>>>& now, int depth) {
    const size_t c = cascade.child;
    if (!sinks_[c]) return;  // gone
    const ForeignKey& key = cascade.key;
    const ForeignKey::Action action = now ? key.on_update : key.on_delete;
    std::vector<Row> rows = referring_rows(cascade, p, parents);
    if (rows.empty()) return;
    std::vector<size_t> columns;  // the key's, in the child's rows
    for (const std::string& column : key.columns) columns.push_back(*opened_[c].index_of(column));
    Batch changes(opened_[c]);
    for (Row& row : rows) {
      if (action == ForeignKey::Action::kCascade && !now) {
        row.kind = RowKind::kDelete;
        changes.append(row);
        continue;
      }
      row.kind = RowKind::kUpdateBefore;
      changes.append(row);
      row.kind = RowKind::kUpdateAfter;
      for (size_t i = 0; i < columns.size(); ++i) {
        const bool to_null = action == ForeignKey::Action::kSetNull || !now || !*now;
        row.fields[columns[i]] = to_null ? Value() : (**now)[i];
      }
      changes.append(row);
    }
    write_cascading(c, changes, depth + 1);
  }

  // Exactly-once: the rows of the child's target that refer to parents of
  // table p whose referenced values `parents` lists, as the target will
  // hold them once the child's sink committed what it has taken: as the
  // target holds them now, each key's changes the sink has not committed
  // applied.
  std::vector<Row> referring_rows(const Cascade& cascade, size_t p,
                                  const std::vector<std::vector<Value>>& parents) {
    const size_t c = cascade.child;
    const Schema& schema = opened_[c];
    const ForeignKey& key = cascade.key;
    std::vector<size_t> columns;  // the foreign key's, in the child's rows
    for (const std::string& column : key.columns) {
      if (const std::optional<size_t> i = schema.index_of(column)) columns.push_back(*i);
    }
    // Its sink writes other columns than its rows have, or a schema change
    // since the job began dropped or renamed the key's.
    if (fitted_[c] || columns.size() < key.columns.size()) {
      spdlog::warn(
          "mysql sink: the foreign key of '{}' on ({}) no longer fits its target: its action is "
          "not made there",
          tables_[c].name, join(key.columns));
      return {};
    }
    flush_table(c);
    // The target's rows, as the committed transactions left them.
    Batch found(schema);
    std::string names;
    for (size_t i = 0; i < schema.size(); ++i)
      names += (i ? ", " : "") + quote_identifier(schema.column(i).name);
    for (size_t first = 0; first < parents.size(); first += kParentsPerStatement) {
      std::string list;
      for (size_t i = first; i < std::min(parents.size(), first + kParentsPerStatement); ++i)
        list += (i > first ? ", " : "") + parent_literals(p, key, parents[i]);
      MySqlResult result = cascading().connection().query_result(
          "SELECT " + names + " FROM " + quote_identifier(targets_[c].table) + " WHERE " +
          refers_to(key, "(" + list + ")"));
      for (uint32_t at = found.add_rows(static_cast<uint32_t>(result.size())); result.next();
           ++at) {
        const auto fields = result.fields();
        for (size_t i = 0; i < fields.size(); ++i) {
          if (fields[i]) {
            set_field(found.column(i), at, *fields[i], schema.column(i).type);
          } else {
            found.column(i).set_null(at, true);
          }
        }
      }
    }
    // Each key's last change not committed, of the keys found and of
    // those whose changes refer to a parent: whose values the child's
    // columns take for equal to a parent's (text by their collation).
    std::vector<KeyImage> images(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      const TableColumn* column = targets_[c].like.column(key.columns[i]);
      if (column && holds_text(*column) && schema.column(columns[i]).type.id == TypeId::kString)
        images[i] = cascading().text_image(*column, 0);
    }
    const auto image = [&](const auto& value_at) {
      std::string out;
      for (size_t i = 0; i < images.size(); ++i) {
        const Value& value = value_at(i);
        const std::string part = images[i] ? images[i](value.as_string())
                                           : encode_key(Row(RowKind::kInsert, {value}), {0});
        out += std::to_string(part.size()) + ":" + part;
      }
      return out;
    };
    std::unordered_set<std::string> wanted;  // the parents' values, as image() gives them
    for (const std::vector<Value>& tuple : parents)
      wanted.insert(image([&](size_t i) -> const Value& { return tuple[i]; }));
    const auto refers = [&](const Row& row) {
      if (row.kind == RowKind::kDelete || row.kind == RowKind::kUpdateBefore) return false;
      return std::none_of(columns.begin(), columns.end(),
                          [&](size_t i) { return row.fields[i].is_null(); }) &&
             wanted.contains(
                 image([&](size_t i) -> const Value& { return row.fields[columns[i]]; }));
    };
    const std::vector<size_t>& primary_key = schema.primary_key();
    std::unordered_map<std::string, std::optional<Row>> last;  // by key
    for (uint32_t i = 0; i < found.size(); ++i)
      last.emplace(encode_key(found.row(i), primary_key), std::nullopt);
    for_each_unseen(*sinks_[c], [&](const Row& row) {
      std::string k = encode_key(row, primary_key);
      if (auto at = last.find(k); at != last.end()) {
        at->second = row;
      } else if (refers(row)) {
        last.emplace(std::move(k), row);
      }
    });
    std::vector<Row> out;
    for (uint32_t i = 0; i < found.size(); ++i) {
      Row row = found.row(i);
      row.kind = RowKind::kInsert;
      if (!last.at(encode_key(row, primary_key))) out.push_back(std::move(row));
    }
    for (auto& [key_of, change] : last) {
      if (change && refers(*change)) out.push_back(std::move(*change));
    }
    return out;
  }

  // Makes to the child's target what the update of the parent whose
  // referenced values were `old` (a tuple) to `now` (nullopt: one is NULL) does.
  void on_parent_updated(const Cascade& cascade, size_t p, const std::string& old,
                         const std::optional<std::vector<Value>>& now) {
    flush_table(cascade.child);
    const ForeignKey& key = cascade.key;
    MySqlConnection& sql = cascading().connection();
    std::string set;
    for (size_t i = 0; i < key.columns.size(); ++i) {
      const TableColumn* column = targets_[p].like.column(key.parent_columns[i]);
      const bool to_null = key.on_update == ForeignKey::Action::kSetNull || !now || !column;
      set += (i ? ", " : "") + quote_identifier(key.columns[i]) + " = " +
             (to_null ? "NULL" : sql_literal(sql, (*now)[i], *column));
    }
    // A replay meets a target ahead of it, where the rows may have their
    // new values already: those left with the old ones are the same rows
    // as of before, which no parent has after the update.
    const std::string target = quote_identifier(targets_[cascade.child].table);
    const std::string where = refers_to(key, "(" + old + ")");
    run_cascade(cascade, "UPDATE IGNORE " + target + " SET " + set + " WHERE " + where);
    run_cascade(cascade, "DELETE FROM " + target + " WHERE " + where);
  }

  // Makes to the child's target what the deletion of the parents whose
  // referenced values `parents` lists (a list of tuples, or a query) does.
  void on_parents_deleted(const Cascade& cascade, const std::string& parents, int depth) {
    // The server refuses a delete that cascades deeper: rows still found
    // there are those of a cycle (a row that refers to itself, say), which
    // the levels above delete.
    if (depth == kCascadeDepth) return;
    flush_table(cascade.child);
    const ForeignKey& key = cascade.key;
    const std::string target = quote_identifier(targets_[cascade.child].table);
    const std::string where = refers_to(key, parents);
    if (key.on_delete == ForeignKey::Action::kSetNull) {
      std::string set;
      for (const std::string& column : key.columns)
        set += (set.empty() ? "" : ", ") + quote_identifier(column) + " = NULL";
      run_cascade(cascade, "UPDATE " + target + " SET " + set + " WHERE " + where);
      return;
    }
    // Its own children first, while its rows are there to name them (a
    // derived table: the server reads a table a statement changes only
    // so); none where it has no such rows, however often it refers to
    // itself.
    if (!cascades_[cascade.child].empty() &&
        cascading()
            .connection()
            .query("SELECT 1 FROM " + target + " WHERE " + where + " LIMIT 1")
            .empty()) {
      return;
    }
    for (const Cascade& next : cascades_[cascade.child]) {
      if (next.key.on_delete == ForeignKey::Action::kNone) continue;
      on_parents_deleted(next,
                         "(SELECT * FROM (SELECT " + quoted_names(next.key.parent_columns) +
                             " FROM " + target + " WHERE " + where + ") AS parents)",
                         depth + 1);
    }
    run_cascade(cascade, "DELETE FROM " + target + " WHERE " + where);
  }

  // Runs a cascade's statement. One that a schema change since the job
  // began made wrong (a column renamed, a table dropped) is left out, said.
  void run_cascade(const Cascade& cascade, const std::string& statement) {
    try {
      cascading().connection().execute(statement);
    } catch (const MySqlError& e) {
      if (e.code() != ER_BAD_FIELD_ERROR && e.code() != ER_NO_SUCH_TABLE) throw;
      spdlog::warn(
          "mysql sink: the foreign key of '{}' on ({}) no longer fits its target ({}): "
          "its action is not made there",
          tables_[cascade.child].name, join(cascade.key.columns), e.what());
    }
  }

  // "(a, b) IN parents": the child's rows that refer to `parents`.
  static std::string refers_to(const ForeignKey& key, const std::string& parents) {
    return "(" + quoted_names(key.columns) + ") IN " + parents;
  }

  // Writes and commits what table t's sink holds.
  void flush_table(size_t t) {
    if (sinks_[t]) contexts_[t]->flush();
  }

  // The connection cascades go through, in the sink's session.
  MySqlSinkConnection& cascading() {
    if (!cascading_) {
      cascading_ = std::make_unique<MySqlSinkConnection>(
          options_.url, MySqlSession{.timeout = options_.socket_timeout, .canceller = &canceller_});
    }
    return *cascading_;
  }

  // Runs `flushes` in one transaction where the tables share a connection.
  template <typename F>
  void in_group(F&& flushes) {
    if (shared_) {
      shared_->in_group(std::forward<F>(flushes));
    } else {
      flushes();
    }
  }

  // Opens table t's sink, for rows of `schema`; or, in a restored run whose
  // target this sink has dropped or renamed (a replay of the changes before
  // that), takes the table for gone until its next schema change: the
  // target has those changes, and the replay comes to the DROP or RENAME,
  // made already.
  void open_table(size_t t, const Schema& schema) {
    if (restored_) {
      MySqlConnection connection(options_.url);
      if (!connection.find_table(targets_[t].table) && !made_changes(connection, t).empty()) {
        spdlog::info(
            "mysql sink: table '{}' of '{}' is gone, dropped or renamed by this job after its "
            "checkpoint: the changes replayed before that are not written again",
            targets_[t].table, tables_[t].name);
        gone_[t] = true;
        return;
      }
    }
    sinks_[t] = table_sink(t, schema);
    opened_[t] = schema;
  }

  // The key of table t's target in kMadeTable, and the place in the binlog
  // of the last schema change this sink made to it: none, if none.
  std::string made_key(MySqlConnection& connection, size_t t) const {
    return "job = " + connection.quote(contexts_[t]->subtask().job_name) +
           " AND target = " + connection.quote(targets_[t].table);
  }
  std::vector<std::vector<std::optional<std::string>>> made_changes(MySqlConnection& connection,
                                                                    size_t t) const {
    try {
      return connection.query(std::string("SELECT position FROM ") + kMadeTable + " WHERE " +
                              made_key(connection, t));
    } catch (const MySqlError& e) {
      if (e.code() == 1146) return {};  // ER_NO_SUCH_TABLE: none made
      throw;
    }
  }

  // Table t's sink, for rows of `schema`, open.
  //
  // A restored run replays the changes after its checkpoint onto a target
  // that may be ahead of it in its columns too: a column a replayed ALTER
  // TABLE drops or renames is gone there already, or of the type it changes
  // it to. Those changes are written to the columns the target has that
  // hold them (the values of the others are the target's already, as the
  // replayed ALTER made them, or its to drop), until the replay reaches the
  // ALTER, which the target has and is not made again. Exactly-once, a
  // restored run opens every table first with the columns the job was
  // built with, which an ALTER read after the checkpoint and not yet made
  // may have put ahead of the target: the columns as of the checkpoint
  // come before any row, and open it again.
  std::unique_ptr<Sink> table_sink(size_t t, const Schema& schema) {
    MySqlSinkOptions options = options_;
    options.table = targets_[t].table;
    options.dead_letter_source = tables_[t].name;
    options.key.clear();
    options.mode.reset();
    options.parallelism = 1;
    std::vector<size_t> columns;
    std::vector<Column> kept;
    std::optional<TableInfo> target;
    // Where the target may not have changed as its source did, its rows
    // are written into the columns it has that fit.
    const bool fit =
        behavior_ == SchemaChangeBehavior::kTryEvolve || behavior_ == SchemaChangeBehavior::kIgnore;
    if (restored_ || fit) target = MySqlConnection(options_.url).find_table(options.table);
    for (size_t c = 0; c < schema.size(); ++c) {
      if (target) {
        const TableColumn* there = target->column(schema.column(c).name);
        if (there == nullptr || !holds(there->column_type, schema.column(c).type)) continue;
      }
      columns.push_back(c);
      kept.push_back(schema.column(c));
    }
    if (columns.size() < schema.size()) {
      spdlog::info(
          "mysql sink: table '{}' has not all the columns of '{}' of their types (an ALTER "
          "TABLE dropped, renamed or changed them after the checkpoint, or "
          "schema.change.behavior left them out): writing those it has that hold them",
          options.table, tables_[t].name);
    }
    std::vector<std::string> key = schema.primary_key_names();
    std::optional<Value> name;
    if (const std::string& column = targets_[t].table_column; !column.empty()) {
      kept.push_back({column, DataType::string()});
      if (!key.empty()) key.push_back(column);
      name = Value(tables_[t].name);
    }
    // Keyed anew after the checkpoint: the rows replayed before that
    // change (none, if the source held it back to a checkpoint) are written
    // by the target's key.
    bool rekeyed = false;
    if (target && !std::equal(key.begin(), key.end(), target->primary_key.begin(),
                              target->primary_key.end(), same_name)) {
      const bool kept_key =
          !target->primary_key.empty() &&
          std::all_of(target->primary_key.begin(), target->primary_key.end(),
                      [&](const std::string& k) {
                        return std::any_of(kept.begin(), kept.end(),
                                           [&](const Column& c) { return same_name(c.name, k); });
                      });
      // Or it has no key now (made again without one, say): the changes
      // go as rows without a key, as they did when it had none.
      if (kept_key || target->primary_key.empty()) {
        spdlog::info(
            "mysql sink: table '{}' is keyed anew after the checkpoint: the changes "
            "replayed are written {}",
            options.table, target->primary_key.empty() ? "as rows without a key" : "by its key");
        key = target->primary_key;
        rekeyed = true;
      }
    }
    const Schema* written = &schema;
    if (columns.size() < schema.size() || name || rekeyed) {
      fitted_[t] = std::make_unique<Fitted>(Schema(std::move(kept), std::move(key)),
                                            std::move(columns), std::move(name));
      written = &fitted_[t]->schema;
    }
    SessionConnector connect;
    if (shared_) connect = [this](const MySqlSession&) { return shared_->connect(); };
    options.parallelism = 1;  // the subtask of this sink writes all of the table
    if (!written->has_primary_key()) {
      options.mode = MySqlSinkOptions::Mode::kRows;
      if (!exactly_once()) options.applied_rows = applied_rows(t);
    }
    std::unique_ptr<Sink> sink = mysql_sink(options, std::move(connect))
                                     .for_input({.schema = *written})
                                     .create(contexts_[t]->subtask());
    try {
      sink->open(*contexts_[t]);
    } catch (...) {
      contexts_[t]->forget();  // what it registered goes with it
      throw;
    }
    return sink;
  }

  // Table t, new to the stream (created in the source after the job
  // began): its target, where routes_ send it.
  void add_table(const SchemaChange& change, const MySqlSchemaChange* detail) {
    if (change.table != sinks_.size() || detail == nullptr ||
        detail->kind != MySqlSchemaChange::Kind::kCreated) {
      throw Error("table '" + change.after.name + "' is new to the stream (" + change.statement +
                  "): not followed");
    }
    targets_.push_back(target_of(change, *detail));
    tables_.push_back(change.after);
    check_shared_targets(tables_, targets_);
    contexts_.push_back(std::make_unique<TableContext>(*context_, change.after.name));
    sinks_.emplace_back();
    opened_.emplace_back();
    fitted_.emplace_back();
    gone_.push_back(false);
  }

  // The target of the table `change` made, like it, where routes_ send it.
  MySqlTableTarget target_of(const SchemaChange& change, const MySqlSchemaChange& detail) const {
    TableInfo like;
    like.columns = detail.after;
    like.primary_key = change.after.schema.primary_key_names();
    like.collation = detail.collation;
    const size_t dot = change.after.name.find('.');
    return route_target(
        routes_, {change.after.name.substr(0, dot), change.after.name.substr(dot + 1)}, like);
  }

  // Makes `change` to table t's target, unless the target has a later one
  // already (a replay after a restore): each change made is noted, with its
  // place in the binlog, in the target's database (kMadeTable).
  void change_target(size_t t, const MySqlSchemaChange& change) {
    MySqlConnection connection(options_.url);
    const std::string& name = targets_[t].table;
    std::optional<TableInfo> target = connection.find_table(name);
    using Kind = MySqlSchemaChange::Kind;
    if (!target && change.kind != Kind::kCreated && change.kind != Kind::kDropped) {
      throw ConfigError("table '" + name + "' is gone from " + options_.url.to_string());
    }
    // Where the change is: its place in the binlog, and among the changes
    // of its statement (RENAME TABLE a TO b, b TO a changes one target twice).
    const std::optional<MadeAt> at =
        MadeAt::parse(change.position + "#" + std::to_string(change.part));
    // A transaction that holds the table (a user's, say) makes the ALTER
    // wait for its lock: a while, not for ever (the server's default is a year).
    connection.execute("SET SESSION lock_wait_timeout = " + std::to_string(kAlterLockWait.count()));
    // Read again: whatever the target has of the table goes, every time.
    if (at && change.kind != Kind::kReread) {
      connection.execute(std::string("CREATE TABLE IF NOT EXISTS ") + kMadeTable +
                         " (job VARCHAR(255) NOT NULL, target VARCHAR(64) NOT NULL, position "
                         "VARCHAR(255) NOT NULL, PRIMARY KEY (job, target))");
      const auto made = made_changes(connection, t);
      if (!made.empty()) {
        const std::optional<MadeAt> last = MadeAt::parse(made[0][0].value_or(""));
        if (last && *at <= *last) {
          spdlog::info("mysql sink: table '{}' has the change at {} already (up to {})", name,
                       at->to_string(), last->to_string());
          return;
        }
      }
    }
    if (change.kind == Kind::kCreated && !change.renamed.empty()) {
      move_target(connection, t, change);
      target = connection.find_table(name);
    }
    // Noted before it is created, as in prepare_targets().
    if (!target && change.kind == Kind::kCreated) note_created(connection, name);
    const std::vector<std::string> statements = target_statements(connection, t, target, change);
    // As of when, in the time zone where and under the sql_mode with which
    // the source ran it, as a replica runs it; then back to the sink's own
    // session.
    std::vector<std::string> as_source, own;
    if (change.ran_at != 0 && !statements.empty()) {
      char when[32];
      std::snprintf(when, sizeof when, "%lld.%06lld",
                    static_cast<long long>(change.ran_at / 1'000'000),
                    static_cast<long long>(change.ran_at % 1'000'000));
      as_source.push_back(std::string("TIMESTAMP = ") + when);
      own.emplace_back("TIMESTAMP = DEFAULT");
    }
    if (!change.time_zone.empty() && !statements.empty()) {
      as_source.push_back("time_zone = " + connection.quote(change.time_zone));
      own.push_back(std::string("time_zone = ") + kSinkTimeZone);
    }
    if (change.sql_mode && change.kind == Kind::kColumns && !statements.empty()) {
      std::string modes = kSessionSqlModeBase;
      if (!change.sql_mode->empty()) modes += "," + *change.sql_mode;
      as_source.push_back("sql_mode = " + connection.quote(modes));
      own.push_back("sql_mode = " + connection.quote(kSessionSqlMode));
    }
    if (!as_source.empty()) connection.execute("SET " + join(as_source, ", "));
    try {
      for (const std::string& sql : statements) run_refusable(connection, sql);
    } catch (const std::exception&) {
      if (!own.empty()) {
        try {
          connection.execute("SET " + join(own, ", "));
        } catch (const MySqlError&) {
          // The connection broke: it goes with the error.
        }
      }
      throw;
    }
    if (!own.empty()) connection.execute("SET " + join(own, ", "));
    if (at && change.kind != Kind::kReread) {
      connection.execute(std::string("REPLACE INTO ") + kMadeTable + " VALUES (" +
                         connection.quote(contexts_[t]->subtask().job_name) + ", " +
                         connection.quote(name) + ", " + connection.quote(at->to_string()) + ")");
    }
  }

  // Table t, made by renaming table `change.renamed`: the renamed table's
  // rows go from its target to t's. Targets of their own are renamed;
  // otherwise the rows are copied, and then deleted from the old target
  // (dropped, unless other tables share it). Run again after a crash in
  // the middle, it finishes the move.
  void move_target(MySqlConnection& connection, size_t t, const MySqlSchemaChange& change) {
    const auto from_at = std::find_if(tables_.begin(), tables_.end(), [&](const TableSchema& x) {
      return x.name == change.renamed;
    });
    if (from_at == tables_.end()) {
      throw std::logic_error("mysql sink: renamed table '" + change.renamed + "' unknown");
    }
    const MySqlTableTarget& from = targets_[static_cast<size_t>(from_at - tables_.begin())];
    const MySqlTableTarget& to = targets_[t];
    const std::optional<TableInfo> old = connection.find_table(from.table);
    if (!old) return;
    const auto run = [&](const std::string& sql) {
      spdlog::info("mysql sink: {}", sql);
      connection.execute(sql);
    };
    const std::string old_name = quote_identifier(from.table);
    const std::string new_name = quote_identifier(to.table);
    const std::string of_table = from.table_column.empty()
                                     ? std::string()
                                     : " WHERE " + quote_identifier(from.table_column) + " = " +
                                           connection.quote(change.renamed);
    if (from.table == to.table) {
      if (!to.table_column.empty()) {
        run("UPDATE " + new_name + " SET " + quote_identifier(to.table_column) + " = " +
            connection.quote(tables_[t].name) + of_table);
      }
      return;
    }
    std::optional<TableInfo> now = connection.find_table(to.table);
    if (!now && from.table_column.empty() && to.table_column.empty()) {
      run("RENAME TABLE " + old_name + " TO " + new_name);
      return;
    }
    if (!now) {
      run(create_table_sql(new_name, to.like));
      now = connection.find_table(to.table);
    }
    std::string columns;
    for (const TableColumn& column : now->columns) {
      if (column.name == to.table_column || old->column(column.name) == nullptr ||
          column.name == from.table_column) {
        continue;
      }
      columns += (columns.empty() ? "" : ", ") + quote_identifier(column.name);
    }
    const std::string into =
        to.table_column.empty() ? columns : columns + ", " + quote_identifier(to.table_column);
    const std::string values =
        to.table_column.empty() ? columns : columns + ", " + connection.quote(tables_[t].name);
    run("REPLACE INTO " + new_name + " (" + into + ") SELECT " + values + " FROM " + old_name +
        of_table);
    run(from.table_column.empty() ? "DROP TABLE " + old_name
                                  : "DELETE FROM " + old_name + of_table);
  }

  // Runs `sql`, a change of a target; under kTryEvolve, one the server
  // refuses is left out.
  void run_refusable(MySqlConnection& connection, const std::string& sql) const {
    spdlog::info("mysql sink: {}", sql);
    try {
      connection.execute(sql);
    } catch (const MySqlError& e) {
      if (behavior_ != SchemaChangeBehavior::kTryEvolve || e.retriable()) throw;
      spdlog::warn("mysql sink: refused, left out (schema.change.behavior=try_evolve): {}: {}", sql,
                   e.what());
      context_->counter("schema-changes-refused").add(1);
    }
  }

  // What makes `change` to table t's target, which is `target` now (none:
  // missing).
  std::vector<std::string> target_statements(MySqlConnection& connection, size_t t,
                                             const std::optional<TableInfo>& target,
                                             const MySqlSchemaChange& change) const {
    const std::string name = quote_identifier(targets_[t].table);
    const bool evolve =
        behavior_ == SchemaChangeBehavior::kEvolve || behavior_ == SchemaChangeBehavior::kTryEvolve;
    const bool ignore = behavior_ == SchemaChangeBehavior::kIgnore;
    const std::string& column = targets_[t].table_column;
    const auto altering = [&](const MySqlSchemaChange& columns) {
      std::vector<std::string> out;
      for (const std::string& clause : target_alterations(*target, columns, behavior_)) {
        out.push_back("ALTER TABLE " + name + " " + clause);
      }
      return out;
    };
    switch (change.kind) {
      case MySqlSchemaChange::Kind::kCreated:
        if (!target) {
          if (!create_tables_) {
            throw ConfigError("table '" + tables_[t].name + "' was created (" +
                              "and sink.create-tables is off): its target '" + targets_[t].table +
                              "' does not exist");
          }
          return {create_table_sql(name, targets_[t].like)};
        }
        if (ignore) return {};
        return altering(change);  // from the columns the target has
      case MySqlSchemaChange::Kind::kDropped:
        // A target other tables share stays, as under lenient; a renamed
        // table's goes with it (move_target()).
        if (!evolve || !column.empty() || !target || !change.renamed.empty()) return {};
        return {"DROP TABLE " + name};
      case MySqlSchemaChange::Kind::kReread:
      case MySqlSchemaChange::Kind::kTruncated:
        if (!evolve && change.kind == MySqlSchemaChange::Kind::kTruncated) return {};
        if (!column.empty()) {
          return {"DELETE FROM " + name + " WHERE " + quote_identifier(column) + " = " +
                  connection.quote(tables_[t].name)};
        }
        return {"TRUNCATE TABLE " + name};
      case MySqlSchemaChange::Kind::kFit: {
        if (behavior_ == SchemaChangeBehavior::kException || ignore) return {};  // as it is
        MySqlSchemaChange fit = change;
        fit.before.clear();
        for (const TableColumn& c : target->columns) {  // whatever they are, its own name aside
          if (c.name != column) fit.before.push_back(c);
        }
        return altering(fit);
      }
      case MySqlSchemaChange::Kind::kColumns:
        break;
    }
    if (ignore) return {};
    const std::vector<std::string> numbered = numbering(connection, t, target, change);
    std::vector<std::string> out = altering(change);
    // Numbered before a key is made of them.
    const auto keyed = std::find_if(out.begin(), out.end(), [](const std::string& sql) {
      return sql.find(" PRIMARY KEY") != std::string::npos;
    });
    out.insert(keyed, numbered.begin(), numbered.end());
    if (std::optional<std::string> update = generated_values(connection, t, change)) {
      out.push_back(std::move(*update));
    }
    return out;
  }

  // The rows of table t were numbered by each AUTO_INCREMENT column that
  // `change` adds, in the order of the table's key then (of its rows, for
  // a table without one), with no row in the binlog: statements that
  // number the target's rows so, whose column is a plain one. A table
  // without a key is numbered in the order of the target's rows, which is
  // the source's unless rows were updated, each then written anew.
  std::vector<std::string> numbering(MySqlConnection& connection, size_t t,
                                     const std::optional<TableInfo>& target,
                                     const MySqlSchemaChange& change) const {
    std::vector<std::string> out;
    if (change.before.empty() || change.position.empty() || !target) return out;
    for (const TableColumn& c : change.after) {
      if (!c.auto_increment || before_of(change, c.name) != nullptr) continue;
      std::vector<std::string> key;
      for (const std::string& k : target->primary_key) key.push_back(quote_identifier(k));
      if (key.empty()) {
        spdlog::warn(
            "mysql sink: the ALTER TABLE at {} numbers the rows of '{}', which has no key: its "
            "target's rows are numbered in their order there, the source's unless rows were "
            "updated",
            change.position, tables_[t].name);
      }
      std::string update = "UPDATE " + quote_identifier(targets_[t].table) + " SET " +
                           quote_identifier(c.name) + " = (@sluice_row := @sluice_row + 1)";
      if (const std::string& column = targets_[t].table_column; !column.empty()) {
        update += " WHERE " + quote_identifier(column) + " = " + connection.quote(tables_[t].name);
      }
      if (!key.empty()) update += " ORDER BY " + join(key, ", ");
      out.push_back("SET @sluice_row := 0");
      out.push_back(std::move(update));
    }
    return out;
  }

  // The rows of table t got the values of the generated columns that
  // `change` adds, or computes anew, with no row in the binlog: an UPDATE
  // that gives them to the target's rows, whose columns are plain ones.
  // Replayed, it computes the same. None for a change the binlog does not
  // have (a restore's, which says what the columns are rather than how
  // they changed).
  std::optional<std::string> generated_values(MySqlConnection& connection, size_t t,
                                              const MySqlSchemaChange& change) const {
    if (change.before.empty() || change.position.empty()) return std::nullopt;
    std::vector<std::string> sets;
    for (const TableColumn& c : change.after) {
      if (c.generated_sql.empty()) continue;
      const TableColumn* was = before_of(change, c.name);
      if (was != nullptr && was->generated_sql == c.generated_sql) continue;
      sets.push_back(quote_identifier(c.name) + " = " + c.generated_sql);
    }
    if (sets.empty()) return std::nullopt;
    std::string sql = "UPDATE " + quote_identifier(targets_[t].table) + " SET " + join(sets, ", ");
    if (const std::string& column = targets_[t].table_column; !column.empty()) {
      sql += " WHERE " + quote_identifier(column) + " = " + connection.quote(tables_[t].name);
    }
    return sql;
  }

  // Each target as its source table is when the job starts: created when
  // missing (with create_tables_). Starting afresh, an existing one (made
  // by an earlier run that never took a checkpoint, or by hand) is brought
  // to the source's columns as a change from its own to those would be,
  // as behavior_ says. A restore leaves them as they are: they may be ahead.
  // Exactly-once, the server must have a connection for each table first.
  void prepare_targets() {
    MySqlConnection connection(options_.url);
    if (options_.delivery == MySqlSinkOptions::Delivery::kExactlyOnce) {
      check_connections(connection, tables_.size());
    }
    if (!restored_) drop_leftovers(connection);
    for (size_t t = 0; t < tables_.size(); ++t) {
      const MySqlTableTarget& target = targets_[t];
      if (const std::optional<TableInfo> found = connection.find_table(target.table)) {
        if (restored_ || behavior_ == SchemaChangeBehavior::kException ||
            behavior_ == SchemaChangeBehavior::kIgnore) {
          continue;
        }
        MySqlSchemaChange start;
        start.before = found->columns;
        start.after = target.like.columns;
        start.collation = target.like.collation;
        start.key = target.like.primary_key;
        for (const std::string& clause : target_alterations(*found, start, behavior_)) {
          spdlog::info("mysql sink: table '{}' is brought to the columns of '{}'", target.table,
                       tables_[t].name);
          run_refusable(connection, "ALTER TABLE " + quote_identifier(target.table) + " " + clause);
        }
        continue;
      }
      if (!create_tables_) continue;
      const std::string sql = create_table_sql(quote_identifier(target.table), target.like);
      spdlog::info("mysql sink: creating table '{}' like '{}': {}", target.table, tables_[t].name,
                   sql);
      // Noted first: a run killed between the two leaves a note of a
      // table it may not have created (drop_leftovers() drops it if it
      // exists), never a table it created without a note.
      note_created(connection, target.table);
      try {
        connection.execute(sql);
      } catch (const MySqlError& e) {
        // Created meanwhile by another run: it is checked like any target.
        if (e.code() != 1050) throw;  // ER_TABLE_EXISTS_ERROR
      }
    }
  }

  // Notes that this run created `target`, until a checkpoint completes.
  void note_created(MySqlConnection& connection, const std::string& target) {
    if (checkpointed_ || restored_) return;  // a checkpoint names its table
    if (!noted_created_) {
      connection.execute(std::string("CREATE TABLE IF NOT EXISTS ") + kCreatedTable +
                         " (job VARCHAR(255) NOT NULL, target VARCHAR(64) NOT NULL, "
                         "PRIMARY KEY (job, target))");
      noted_created_ = true;
    }
    connection.execute(std::string("REPLACE INTO ") + kCreatedTable + " VALUES (" +
                       connection.quote(context_->subtask().job_name) + ", " +
                       connection.quote(target) + ")");
  }

  // Starting afresh: the targets an earlier run of the job created and
  // that no table of this one has (their tables dropped or renamed in the
  // source since: that run was stopped before any checkpoint named them)
  // go, under kEvolve and kTryEvolve, as the source's DROP TABLE would
  // have taken them.
  void drop_leftovers(MySqlConnection& connection) {
    std::vector<std::vector<std::optional<std::string>>> created;
    const std::string job = connection.quote(context_->subtask().job_name);
    try {
      created = connection.query(std::string("SELECT target FROM ") + kCreatedTable +
                                 " WHERE job = " + job);
    } catch (const MySqlError& e) {
      if (e.code() == 1146) return;  // ER_NO_SUCH_TABLE: none noted
      throw;
    }
    const bool evolve =
        behavior_ == SchemaChangeBehavior::kEvolve || behavior_ == SchemaChangeBehavior::kTryEvolve;
    for (const auto& row : created) {
      const std::string target = row.at(0).value_or("");
      const bool ours = std::any_of(targets_.begin(), targets_.end(),
                                    [&](const auto& to) { return same_name(to.table, target); });
      if (ours) continue;
      if (evolve) {
        spdlog::info(
            "mysql sink: table '{}', created by a run of this job stopped before its first "
            "checkpoint, has no source table now: dropped",
            target);
        connection.execute("DROP TABLE IF EXISTS " + quote_identifier(target));
      }
      connection.execute(std::string("DELETE FROM ") + kCreatedTable + " WHERE job = " + job +
                         " AND target = " + connection.quote(target));
    }
    noted_created_ = !created.empty();
  }

  const MySqlSinkOptions options_;
  // Per table, as the stream's indexes: those created in the source after
  // the job began come last (add_table()).
  std::vector<TableSchema> tables_;
  std::vector<MySqlTableTarget> targets_;
  const bool create_tables_;
  const SchemaChangeBehavior behavior_;
  const std::vector<TableRoute> routes_;
  SinkContext* context_ = nullptr;
  MySqlCanceller canceller_;  // of shared_
  // At-least-once, the connection every table's sink writes through.
  std::optional<SharedConnection> shared_;
  // Per table: its sink, and the context it sees. Contexts go after the
  // sinks that hold them.
  std::vector<std::unique_ptr<TableContext>> contexts_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::vector<Schema> opened_;  // the columns of the rows each sink takes
  // A table's sink writing other columns than its rows have (table_sink()):
  // fewer, and the source table's name after them.
  struct Fitted {
    Fitted(Schema written, std::vector<size_t> of_rows, std::optional<Value> table_name)
        : schema(std::move(written)), columns(std::move(of_rows)), name(std::move(table_name)) {}
    // Moves `from`'s rows into `rows`, as the columns written.
    void take(Batch& from) {
      if (!name) {
        rows.append_columns(from, columns);
      } else {
        from.for_each([&](uint32_t i) {
          Row row;
          row.kind = from.kind(i);
          for (size_t c : columns) row.fields.push_back(from.column(c).value(i));
          row.fields.push_back(*name);
          rows.append(row);
        });
      }
      from.clear();
    }
    Schema schema;                // the columns written
    std::vector<size_t> columns;  // of the rows, in order
    std::optional<Value> name;    // the last column's, if set
    Batch rows{schema};
  };
  std::vector<std::unique_ptr<Fitted>> fitted_;
  std::vector<std::vector<Cascade>> cascades_;  // by parent table
  std::unique_ptr<MySqlSinkConnection> cascading_;
  // A table whose target this sink dropped or renamed after the checkpoint
  // the run resumed from, until its next schema change (open_table()).
  std::vector<bool> gone_;
  // Per table without a key, at least once: its rows counted (applied_rows()).
  std::vector<std::shared_ptr<AppliedRows>> applied_;
  bool restored_ = false;       // the run resumed from a checkpoint
  bool checkpointed_ = false;   // a checkpoint of this run completed
  bool noted_created_ = false;  // kCreatedTable holds targets of this job
};

// Whether column names `a` and `b` name the same column (names are
// case-insensitive).
bool same_name(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// The column named `name` in `columns`, or npos.
size_t find_column(const std::vector<TableColumn>& columns, const std::string& name) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (same_name(columns[i].name, name)) return i;
  }
  return std::string::npos;
}

bool same_definition(const TableColumn& a, const TableColumn& b) {
  return a.column_type == b.column_type && a.charset == b.charset && a.collation == b.collation &&
         a.nullable == b.nullable && a.invisible == b.invisible;
}

}  // namespace

std::vector<std::string> target_alterations(const TableInfo& target,
                                            const MySqlSchemaChange& change,
                                            SchemaChangeBehavior behavior) {
  constexpr size_t npos = std::string::npos;
  const bool lenient = behavior == SchemaChangeBehavior::kLenient;
  std::vector<std::string> out;
  std::vector<std::string> nullable;  // lenient: after the key, which may have held them
  std::vector<TableColumn> now = target.columns;  // as the clauses so far leave it
  std::vector<std::string> key = target.primary_key;
  const auto rename_in_key = [&](const std::string& from, const std::string& to) {
    for (std::string& k : key) {
      if (same_name(k, from)) k = to;
    }
  };
  for (const auto& [from, to] : change.renames) {
    const size_t at = find_column(now, from);
    if (at == npos || find_column(now, to) != npos) continue;
    out.push_back("RENAME COLUMN " + quote_identifier(from) + " TO " + quote_identifier(to));
    now[at].name = to;
    rename_in_key(from, to);
  }
  for (const TableColumn& column : change.before) {
    const bool renamed = std::any_of(change.renames.begin(), change.renames.end(),
                                     [&](const auto& r) { return r.first == column.name; });
    if (renamed || find_column(change.after, column.name) != npos) continue;
    const size_t at = find_column(now, column.name);
    if (at == npos) continue;
    if (!lenient) {
      out.push_back("DROP COLUMN " + quote_identifier(now[at].name));
      std::erase_if(key, [&](const std::string& k) { return same_name(k, now[at].name); });
      now.erase(now.begin() + static_cast<std::ptrdiff_t>(at));
    } else if (!now[at].nullable) {
      now[at].nullable = true;  // rows written from now on leave it NULL
      nullable.push_back("MODIFY COLUMN " + column_sql(now[at]));
    }
  }
  std::string previous;
  for (const TableColumn& column : change.after) {
    TableColumn wanted = column;
    const size_t at = find_column(now, column.name);
    const std::string position =
        previous.empty() ? " FIRST" : " AFTER " + quote_identifier(previous);
    const size_t after_previous = previous.empty() ? 0 : find_column(now, previous) + 1;
    if (at == npos) {
      // As the source added it, default and all, so that the rows there
      // take the values they took in the source.
      out.push_back("ADD COLUMN " + column_sql(wanted) + position);
      now.insert(now.begin() + static_cast<std::ptrdiff_t>(after_previous), wanted);
    } else {
      const bool moved = !lenient && at != after_previous;
      if (!same_definition(now[at], wanted) || moved) {
        out.push_back("MODIFY COLUMN " + column_sql(wanted) + (moved ? position : ""));
        now.erase(now.begin() + static_cast<std::ptrdiff_t>(at));
        const size_t to = previous.empty() ? 0 : find_column(now, previous) + 1;
        now.insert(now.begin() + static_cast<std::ptrdiff_t>(moved ? to : std::min(at, now.size())),
                   wanted);
      } else if (const TableColumn* was = before_of(change, column.name);
                 was != nullptr && was->default_sql != column.default_sql) {
        // Its DEFAULT alone (the target's own is not read: a change of the
        // binlog's, replayed, sets it again).
        out.push_back("ALTER COLUMN " + quote_identifier(column.name) +
                      (column.default_sql.empty() ? std::string(" DROP DEFAULT")
                                                  : " SET DEFAULT " + column.default_sql));
      }
    }
    previous = column.name;
  }
  // The source's key, and after it the target's own key columns (a table
  // column of merged shards); none for a source without a key, whose rows
  // may repeat.
  std::vector<std::string> wanted = change.key;
  if (!wanted.empty()) {
    for (const std::string& k : target.primary_key) {
      const auto named = [&](const std::string& name) { return same_name(name, k); };
      const bool of_source = find_column(change.after, k) != npos ||
                             find_column(change.before, k) != npos ||
                             std::any_of(change.renames.begin(), change.renames.end(),
                                         [&](const auto& r) { return named(r.first); });
      if (!of_source && std::none_of(wanted.begin(), wanted.end(), named)) wanted.push_back(k);
    }
  }
  if (!std::equal(key.begin(), key.end(), wanted.begin(), wanted.end(), same_name)) {
    const std::string columns = quoted_names(wanted);
    out.push_back(wanted.empty() ? "DROP PRIMARY KEY"
                  : key.empty()  ? "ADD PRIMARY KEY (" + columns + ")"
                                 : "DROP PRIMARY KEY, ADD PRIMARY KEY (" + columns + ")");
  }
  out.insert(out.end(), nullable.begin(), nullable.end());
  if (!change.collation.empty() && change.collation != target.collation) {
    out.push_back("COLLATE=" + change.collation);  // of the columns added later
  }
  return out;
}

SchemaChangeBehavior schema_change_behavior(const std::string& name) {
  using enum SchemaChangeBehavior;
  static const std::vector<std::pair<std::string, SchemaChangeBehavior>> kNames = {
      {"lenient", kLenient}, {"evolve", kEvolve},       {"try_evolve", kTryEvolve},
      {"ignore", kIgnore},   {"exception", kException},
  };
  for (const auto& [text, behavior] : kNames) {
    if (text == name) return behavior;
  }
  throw ConfigError("schema.change.behavior: no behavior '" + name +
                    "' (lenient, evolve, try_evolve, ignore, exception)");
}

SinkDef mysql_tables_sink(const MySqlSinkOptions& options, const std::vector<TableSchema>& tables,
                          std::vector<MySqlTableTarget> targets, bool create_tables,
                          SchemaChangeBehavior behavior, std::vector<TableRoute> routes) {
  if (targets.size() != tables.size()) {
    throw std::logic_error("mysql_tables_sink: a target per table");
  }
  check_shared_targets(tables, targets);
  return SinkDef{
      .create = [options, tables, targets = std::move(targets), create_tables, behavior,
                 routes](const SubtaskInfo&) -> std::unique_ptr<Sink> {
        return std::make_unique<MySqlTablesSink>(options, tables, targets, create_tables, behavior,
                                                 routes);
      },
      .takes_tables = true,
      .waits_on_io = true,  // on the server, for every statement
      // A target per route; the first table routed there gives its columns.
      .flink_sql =
          [options, routes](const TableSchema& table, const RuntimeOptions& runtime) {
            const size_t dot = table.name.find('.');
            const RoutedTable routed =
                route_table(routes, {table.name.substr(0, dot), table.name.substr(dot + 1)});
            FlinkSqlTable out = jdbc_table(options, routed.target, runtime);
            out.schema = table.schema;
            if (!routed.table_column.empty()) {
              std::vector<Column> columns = table.schema.columns();
              columns.push_back({routed.table_column, DataType::string()});
              std::vector<std::string> key = table.schema.primary_key_names();
              if (!key.empty()) key.push_back(routed.table_column);
              out.schema = Schema(std::move(columns), std::move(key));
              out.constant_column = routed.table_column;
              out.constant = table.name;
            }
            return out;
          },
  };
}

}  // namespace sluice
