#include "sluice/connectors/mysql/cdc/source.hpp"

#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/cdc/ddl.hpp"
#include "sluice/connectors/mysql/cdc/key_order.hpp"
#include "sluice/connectors/mysql/cdc/schema_history.hpp"
#include "sluice/connectors/mysql/table_patterns.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/fault_point.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {
namespace {

enum class Phase { kSnapshot, kBinlog };

// A row's input position (Batch::position()): where the binlog has it
// (BinlogPosition::packed(), with kUncheckedRow for a change made with
// foreign_key_checks=0), or, with this bit, the binlog position a row the
// snapshot read is as of.
constexpr int64_t kSnapshotRow = int64_t{1} << 62;

// Names a row's input position in a binlog whose files are named as
// `binlog_file` is: "binlog mariadb-bin.000003:4711" (where its event
// begins), or "the snapshot at binlog mariadb-bin.000003:4711".
std::string describe_position(int64_t position, const std::string& binlog_file) {
  const BinlogPosition at =
      BinlogPosition::unpacked(position & ~(kSnapshotRow | kUncheckedRow), binlog_file);
  const std::string where = binlog_file.empty()
                                ? "binlog file " + at.file + " at " + std::to_string(at.offset)
                                : "binlog " + at.to_string();
  return (position & kSnapshotRow) != 0 ? "the snapshot at " + where : where;
}

// The name of the file the server writes its binlog to now, which names
// its files' form; empty if the server does not say (it is refused, saying
// why, when the source opens).
std::string binlog_file_name(const MySqlUrl& url) {
  try {
    MySqlConnection connection(url);
    return current_binlog_position(connection).file;
  } catch (const Error&) {
    return "";
  }
}

// What the source's checkpoint holds: what it reads, and where it is.
struct CdcState {
  static constexpr const char* kFormat = "mysql-cdc/5";
  static constexpr const char* kFormat4 = "mysql-cdc/4";  // no file_made
  static constexpr const char* kFormat3 = "mysql-cdc/3";  // no names
  static constexpr const char* kFormat2 = "mysql-cdc/2";  // no definitions

  std::string server;  // server_identity()
  // "db.t1, db.t2"; of several tables (source.tables), the patterns
  // (from mysql-cdc/4 on), and `names` the tables captured.
  std::string tables;
  Phase phase = Phase::kSnapshot;
  // The binlog phase: where the binlog goes on. The snapshot phase: the
  // place in the binlog that the rows emitted so far (the tables before
  // `table`, and its keys up to `last_key`) are as of.
  BinlogResume resume;
  size_t table = 0;
  std::vector<Value> last_key;
  // Each table's CREATE TABLE as of `resume` (CapturedTable::definition):
  // a restore reads the binlog from there with those columns.
  // Empty where the table does not exist there (dropped, or created later).
  std::vector<std::string> definitions;
  // Of several tables: each one's "db.table", as `definitions`, in the
  // order of the stream's indexes, those created since the job began last.
  std::vector<std::string> names;
  // Of several tables, in the snapshot phase: the tables the snapshot reads,
  // in the order it reads them (`table` is a place in it).
  std::vector<std::string> snapshot;

  std::vector<Value> encode() const {
    std::vector<Value> out = {Value(kFormat),
                              Value(server),
                              Value(tables),
                              Value(phase == Phase::kSnapshot ? "snapshot" : "binlog"),
                              Value(resume.position.file),
                              Value(static_cast<int64_t>(resume.position.offset)),
                              Value(static_cast<int64_t>(resume.given)),
                              Value(static_cast<int64_t>(table)),
                              Value(static_cast<int64_t>(last_key.size()))};
    out.insert(out.end(), last_key.begin(), last_key.end());
    out.emplace_back(static_cast<int64_t>(definitions.size()));
    for (const std::string& definition : definitions) out.emplace_back(definition);
    out.emplace_back(static_cast<int64_t>(names.size()));
    for (const std::string& name : names) out.emplace_back(name);
    out.emplace_back(static_cast<int64_t>(snapshot.size()));
    for (const std::string& name : snapshot) out.emplace_back(name);
    out.emplace_back(static_cast<int64_t>(resume.file_made));
    for (const PreparedXa& xa : resume.prepared) {
      out.insert(out.end(),
                 {Value(xa.xid), Value(xa.start.file), Value(static_cast<int64_t>(xa.start.offset)),
                  Value::boolean(xa.captured)});
    }
    return out;
  }

  static CdcState decode(const std::vector<Value>& saved) {
    CdcState state;
    const bool with_made = saved.at(0).as_string() == kFormat;
    const bool with_names = with_made || saved.at(0).as_string() == kFormat4;
    const bool with_definitions = with_names || saved.at(0).as_string() == kFormat3;
    if (!with_definitions && saved.at(0).as_string() != kFormat2) {
      // Taken by an earlier version: phase, file, offset, table, last key.
      state.phase = saved.at(0).as_string() == "snapshot" ? Phase::kSnapshot : Phase::kBinlog;
      state.resume.position = {saved.at(1).as_string(),
                               static_cast<uint64_t>(saved.at(2).as_bigint())};
      state.table = static_cast<size_t>(saved.at(3).as_bigint());
      state.last_key.assign(saved.begin() + 4, saved.end());
      return state;
    }
    state.server = saved.at(1).as_string();
    state.tables = saved.at(2).as_string();
    state.phase = saved.at(3).as_string() == "snapshot" ? Phase::kSnapshot : Phase::kBinlog;
    state.resume.position = {saved.at(4).as_string(),
                             static_cast<uint64_t>(saved.at(5).as_bigint())};
    state.resume.given = static_cast<uint64_t>(saved.at(6).as_bigint());
    state.table = static_cast<size_t>(saved.at(7).as_bigint());
    const auto keys = static_cast<size_t>(saved.at(8).as_bigint());
    state.last_key.assign(saved.begin() + 9, saved.begin() + 9 + static_cast<ptrdiff_t>(keys));
    size_t at = 9 + keys;
    if (with_definitions) {
      const auto count = static_cast<size_t>(saved.at(at++).as_bigint());
      for (size_t d = 0; d < count; ++d) state.definitions.push_back(saved.at(at++).as_string());
    }
    if (with_names) {
      const auto count = static_cast<size_t>(saved.at(at++).as_bigint());
      for (size_t d = 0; d < count; ++d) state.names.push_back(saved.at(at++).as_string());
      const auto read = static_cast<size_t>(saved.at(at++).as_bigint());
      for (size_t d = 0; d < read; ++d) state.snapshot.push_back(saved.at(at++).as_string());
    }
    if (with_made) state.resume.file_made = static_cast<uint32_t>(saved.at(at++).as_bigint());
    for (; at + 4 <= saved.size(); at += 4) {
      state.resume.prepared.push_back(
          {saved[at].as_string(),
           {saved[at + 1].as_string(), static_cast<uint64_t>(saved[at + 2].as_bigint())},
           saved[at + 3].as_boolean()});
    }
    return state;
  }
};

// Which server this is, whatever name or address it is reached by: its
// server_uuid (MySQL), or its server_id, host name and port (MariaDB).
std::string server_identity(MySqlConnection& connection) {
  std::map<std::string, std::string> v;
  for (const auto& row : connection.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN "
                                          "('server_uuid', 'server_id', 'hostname', 'port')")) {
    v[row.at(0).value_or("")] = row.at(1).value_or("");
  }
  if (!v["server_uuid"].empty()) return "server_uuid " + v["server_uuid"];
  return "server_id " + v["server_id"] + " on " + v["hostname"] + ":" + v["port"];
}

int64_t millis_since(std::chrono::system_clock::time_point then,
                     std::chrono::system_clock::time_point now) {
  return std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(now - then).count());
}

MySqlSchemaChange::Kind kind_of(BinlogSchemaChange::Kind kind) {
  switch (kind) {
    case BinlogSchemaChange::Kind::kCreated:
      return MySqlSchemaChange::Kind::kCreated;
    case BinlogSchemaChange::Kind::kDropped:
      return MySqlSchemaChange::Kind::kDropped;
    case BinlogSchemaChange::Kind::kTruncated:
      return MySqlSchemaChange::Kind::kTruncated;
    case BinlogSchemaChange::Kind::kColumns:
      break;
  }
  return MySqlSchemaChange::Kind::kColumns;
}

class MySqlCdcSource final : public Source {
 public:
  MySqlCdcSource(MySqlCdcOptions options, std::vector<CapturedTable> tables)
      : options_(std::move(options)),
        tables_(std::move(tables)),
        several_(!options_.patterns.empty()) {
    if (several_) {
      patterns_ = [patterns = TablePatterns(options_.patterns)](const std::string& database,
                                                                const std::string& table) {
        return patterns.matches(database, table);
      };
    }
    for (const CapturedTable& table : tables_) {
      snapshot_order_.push_back(orders_.size());
      orders_.emplace_back(table);
      names_ += (names_.empty() ? "" : ", ") + table.database + "." + table.table;
    }
    read_ = names_;
    if (several_) {
      read_.clear();
      for (const std::string& p : options_.patterns) read_ += (read_.empty() ? "" : ", ") + p;
    }
  }

  void open(OperatorContext& context) override {
    state_.emplace(context.value_state<std::vector<Value>>("position"));
    context.register_cancel_action([this] { canceller_.cancel(); });
    fetch_lag_ = &context.gauge("currentFetchEventTimeLag");
    emit_lag_ = &context.gauge("currentEmitEventTimeLag");
    idle_since_ = &context.milliseconds_since("sourceIdleTime");
    phase_gauge_ = &context.gauge("phase");
    binlog_file_ = &context.gauge("binlog-file");
    binlog_offset_ = &context.gauge("binlog-offset");
    context_ = &context;
    if (options_.server_id == 0) {
      const SubtaskInfo& info = context.subtask();
      options_.server_id = claim_server_id(info.job_name + "/" + info.operator_name);
    }
    checkpoints_ = context.checkpoints_enabled();
    hold_schema_changes_ = several_ && checkpoints_;
    MySqlConnection connection(options_.url, session());
    const BinlogPosition end = current_binlog_position(connection);  // checks the binlog
    server_ = server_identity(connection);
    if (const auto saved = state_->get()) {
      const CdcState state = CdcState::decode(*saved);
      check_same_source(state, context);
      if (!state.resume.position.file.empty()) {
        phase_ = state.phase;
        resume_ = state.resume;
        table_index_ = state.table;
        last_key_ = state.last_key;
        if (several_ && !state.names.empty()) {
          restore_tables(state);
        } else if (several_ && state.definitions.size() == tables_.size()) {
          restore_columns(state.definitions);
        }
        spdlog::info("mysql-cdc {}: resuming the {} at {}", names_,
                     phase_ == Phase::kSnapshot ? "snapshot" : "binlog",
                     resume_->position.to_string());
        return;
      }
      // Taken before the snapshot began (of several tables): a fresh one,
      // and the tables the job had then that are gone go from the targets.
      for (const std::string& name : state.names) {
        const bool here = std::any_of(tables_.begin(), tables_.end(),
                                      [&](const CapturedTable& t) { return name_of(t) == name; });
        if (!here && still_matched(name)) gone_.push_back(name);
      }
    }
    switch (options_.startup) {
      case MySqlCdcOptions::Startup::kInitial:
      case MySqlCdcOptions::Startup::kSnapshot:
        phase_ = Phase::kSnapshot;
        // A run that dies before its first checkpoint may have written
        // rows that the next run's snapshot no longer finds (deleted
        // meanwhile): it could not delete them from an at-least-once
        // target. So no row goes out before a checkpoint holds where the
        // snapshot began, from which a restore catches up (catch_up()).
        start_held_ = context.checkpoints_enabled();
        break;
      case MySqlCdcOptions::Startup::kLatest:
        phase_ = Phase::kBinlog;
        resume_ = BinlogResume{.position = end};
        break;
      case MySqlCdcOptions::Startup::kPosition:
        phase_ = Phase::kBinlog;
        resume_ = BinlogResume{.position = options_.position};
        break;
    }
  }

  PollResult poll_next(Collector& out) override {
    for (auto& restored : restored_columns_) out.change_schema(std::move(restored));
    restored_columns_.clear();
    phase_gauge_->set(phase_ == Phase::kSnapshot ? 1 : 2);
    if (phase_ == Phase::kSnapshot) {
      if (!snapshot_) start_snapshot(out);
      if (start_held_) return PollResult::kNothingAvailable;
      if (catch_up_) {
        catch_up(out);
      } else {
        read_chunk(out);
      }
      return PollResult::kMoreAvailable;
    }
    if (options_.startup == MySqlCdcOptions::Startup::kSnapshot) return PollResult::kEndOfInput;
    if (!reader_) reader_ = make_reader(binlog_tables_, several_);
    if (!held_.empty()) {
      if (!release_held(out)) return PollResult::kNothingAvailable;
      resume_ = reader_->resume();
      return PollResult::kMoreAvailable;
    }
    changes_.clear();
    reader_->read(changes_);
    resume_ = reader_->resume();
    const bool read = !changes_.empty();  // hold_from() takes them
    for (size_t i = 0; i < changes_.size();) {
      const BinlogChange& change = changes_[i];
      if (change.schema_change) {
        if (hold_from(i)) break;
        follow(out, change);
        ++i;
      } else {
        i = emit_rows(out, changes_, i);
      }
    }
    report_lag(*reader_, read);
    if (!read) return reader_->idle() ? PollResult::kNothingAvailable : PollResult::kMoreAvailable;
    fault_point("cdc-binlog-read");
    return PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t id) override {
    checkpointed_binlog_ = phase_ == Phase::kBinlog;
    if (!resume_) {
      // Nothing read yet: a restore starts as this run did. Of several
      // tables, it learns which the job had (see drop_gone()).
      if (!several_) {
        state_->clear();
        return;
      }
      CdcState state{.server = server_, .tables = read_, .phase = Phase::kSnapshot};
      for (const CapturedTable& table : binlog_tables_) {
        state.definitions.push_back(table.definition);
        state.names.push_back(name_of(table));
      }
      state_->set(state.encode());
      return;
    }
    if (start_held_ && !start_checkpoint_) start_checkpoint_ = id;
    if (!held_.empty() && !held_until_) held_until_ = id;
    CdcState state{.server = server_,
                   .tables = read_,
                   .phase = phase_,
                   .resume = *resume_,
                   .table = table_index_,
                   .last_key = last_key_};
    for (const CapturedTable& table : binlog_tables_) {
      state.definitions.push_back(table.definition);
      if (several_) state.names.push_back(name_of(table));
    }
    if (several_ && phase_ == Phase::kSnapshot) {
      for (size_t t : snapshot_order_) state.snapshot.push_back(name_of(binlog_tables_[t]));
    }
    state_->set(state.encode());
  }

  void notify_checkpoint_complete(int64_t id) override {
    if (checkpointed_binlog_) fault_point("cdc-binlog-checkpoint");
    if (start_held_ && start_checkpoint_ && id >= *start_checkpoint_) {
      start_held_ = false;
      spdlog::info("mysql-cdc {}: checkpoint {} holds where the snapshot began; reading it", names_,
                   id);
    }
    if (held_until_ && id >= *held_until_) released_by_ = id;
  }

 private:
  MySqlSession session() { return MySqlSession{.canceller = &canceller_}; }

  // A replica id derived from `name` (the job's and the operator's), held
  // on the server while the source runs: named locks on a connection of its
  // own, one for the name and one for the id, which the server drops with
  // the connection. Another source of the same name reading this server
  // (the same job run elsewhere) fails this one; one whose name hashes to
  // the same id makes this one take the next.
  uint32_t claim_server_id(const std::string& name) {
    claim_ = std::make_unique<MySqlConnection>(options_.url);  // idle after this: no canceller
    const auto lock = [&](const std::string& what) {
      // A lock name holds at most 64 characters.
      const auto got =
          claim_->query("SELECT GET_LOCK(" + claim_->quote(what.substr(0, 64)) + ", 0)");
      return got.at(0).at(0).value_or("0") == "1";
    };
    const size_t hash = std::hash<std::string>()(name);
    if (!lock("sluice-replica-" + std::to_string(hash) + "-" + name)) {
      throw ConfigError("mysql-cdc " + names_ +
                        ": another process already reads this server's "
                        "binlog as '" +
                        name +
                        "' (the same job.name running elsewhere?); stop it, "
                        "or give this run another job.name");
    }
    const uint32_t derived = 10'000 + static_cast<uint32_t>(hash % 1'000'000'000);
    for (uint32_t id = derived;; ++id) {
      if (!lock("sluice-server-id-" + std::to_string(id))) continue;
      if (id != derived) {
        spdlog::info("mysql-cdc {}: server id {} is another source's; reading the binlog as {}",
                     names_, derived, id);
      }
      return id;
    }
  }

  std::unique_ptr<BinlogReader> make_reader(const std::vector<CapturedTable>& tables,
                                            bool follow_schema_changes,
                                            std::set<size_t> not_captured_yet = {}) {
    return std::make_unique<BinlogReader>(
        options_.url, options_.server_id, *resume_, tables,
        BinlogReaderOptions{.canceller = &canceller_,
                            .follow_schema_changes = follow_schema_changes,
                            .new_tables = patterns_,
                            .not_captured_yet = std::move(not_captured_yet)});
  }

  // Table `t`'s columns from here on, for the stream.
  std::shared_ptr<const SchemaChange> schema_change(
      size_t t, const CapturedTable& after, const std::string& statement,
      std::vector<TableColumn> before,
      std::vector<std::pair<std::string, std::string>> renames = {},
      const BinlogPosition& position = {}, std::optional<int64_t> completed = {},
      MySqlSchemaChange::Kind kind = MySqlSchemaChange::Kind::kColumns,
      const BinlogSchemaChange* read = nullptr) const {
    auto detail = std::make_shared<MySqlSchemaChange>();
    detail->kind = kind;
    if (read) {
      detail->renamed = read->renamed;
      detail->part = read->part;
      detail->ran_at = read->ran_at;
      detail->time_zone = read->time_zone;
      detail->sql_mode = read->sql_mode;
    }
    if (!position.file.empty()) detail->position = position.to_string();
    detail->before = std::move(before);
    detail->after = after.columns;
    detail->key = after.schema.primary_key_names();
    detail->renames = std::move(renames);
    detail->collation = table_option(after.definition, "COLLATE");
    auto change = std::make_shared<SchemaChange>();
    change->table = static_cast<uint32_t>(t);
    change->after = {after.database + "." + after.table, after.schema};
    change->statement = statement;
    change->restored = position.file.empty() && detail->before.empty();
    change->completed_checkpoint = completed;
    change->detail = std::move(detail);
    return change;
  }

  // The columns a restore reads the binlog with: those of the tables as of
  // its position. Where they are not the ones the job was built with, the
  // stream learns them before any row.
  void restore_columns(const std::vector<std::string>& definitions) {
    SchemaHistory history(options_.url, &canceller_);
    for (size_t t = 0; t < tables_.size(); ++t) {
      if (definitions[t] == tables_[t].definition) continue;
      CapturedTable restored = history.table(tables_[t].database, tables_[t].table, definitions[t]);
      if (restored.schema.to_string() != tables_[t].schema.to_string()) {
        restored_columns_.push_back(
            schema_change(t, restored, "the columns as of the checkpoint", {}));
      }
      orders_[t] = KeyOrder(restored);  // its key there may not be its key now
      binlog_tables_[t] = std::move(restored);
    }
  }

  // Of several tables: the tables the checkpoint `state` captured, with
  // their definitions there, onto the stream's tables (those the job
  // matched when it was built). One the stream does not have (created
  // after the job's start, and gone since) takes the next index, and the
  // stream learns it first; one the checkpoint does not have came after
  // it, and does not exist until its CREATE TABLE, ahead in the binlog.
  //
  // Where source.tables changed since the checkpoint (as Flink CDC's
  // scan.newly-added-table.enabled allows), a table the patterns no longer
  // match is no longer read, and one they match that the checkpoint's did
  // not is read by the snapshot, after any the checkpoint had left to
  // read: absent until then (see not_captured_yet()). The others go on
  // from the checkpoint, not read again.
  void restore_tables(const CdcState& state) {
    const TablePatterns before(split_list(state.tables));
    std::vector<std::string> built;
    std::vector<size_t> newly;
    for (size_t t = 0; t < tables_.size(); ++t) {
      built.push_back(name_of(tables_[t]));
      if (std::find(state.names.begin(), state.names.end(), built[t]) != state.names.end()) {
        continue;
      }
      binlog_tables_[t] = CapturedTable{.database = tables_[t].database, .table = tables_[t].table};
      if (before.matches(tables_[t].database, tables_[t].table)) {
        spdlog::info("mysql-cdc {}: {} came after the checkpoint", names_, built[t]);
      } else {
        newly.push_back(t);
      }
    }
    SchemaHistory history(options_.url, &canceller_);
    for (size_t i = 0; i < state.names.size(); ++i) {
      const std::string& name = state.names[i];
      if (!still_matched(name)) {
        spdlog::info("mysql-cdc {}: {} is no longer matched by source.tables: not read", names_,
                     name);
        continue;
      }
      const size_t dot = name.find('.');
      CapturedTable table{.database = name.substr(0, dot), .table = name.substr(dot + 1)};
      if (!state.definitions.at(i).empty()) {
        table = history.table(table.database, table.table, state.definitions[i]);
      }
      const auto at = std::find(built.begin(), built.end(), name);
      if (at == built.end()) {
        const size_t t = binlog_tables_.size();
        binlog_tables_.push_back(table);
        orders_.emplace_back(table);
        restored_columns_.push_back(schema_change(t, table, "a table of the checkpoint", {}, {}, {},
                                                  {}, MySqlSchemaChange::Kind::kCreated));
        continue;
      }
      const size_t t = static_cast<size_t>(at - built.begin());
      if (!table.definition.empty() && table.schema.to_string() != tables_[t].schema.to_string()) {
        restored_columns_.push_back(
            schema_change(t, table, "the columns as of the checkpoint", {}));
      }
      if (!table.definition.empty()) orders_[t] = KeyOrder(table);
      binlog_tables_[t] = std::move(table);
    }
    // The snapshot's order, without the tables no longer read.
    snapshot_order_.clear();
    size_t index = 0;
    for (size_t p = 0; p < state.snapshot.size(); ++p) {
      const auto at =
          std::find_if(binlog_tables_.begin(), binlog_tables_.end(),
                       [&](const CapturedTable& t) { return name_of(t) == state.snapshot[p]; });
      if (at == binlog_tables_.end()) {
        if (p == state.table) last_key_.clear();
        continue;
      }
      if (p < state.table) ++index;
      snapshot_order_.push_back(static_cast<size_t>(at - binlog_tables_.begin()));
    }
    if (!state.snapshot.empty()) table_index_ = index;
    if (newly.empty()) return;
    if (phase_ == Phase::kBinlog) {
      phase_ = Phase::kSnapshot;
      table_index_ = 0;
      last_key_.clear();
    }
    std::string names;
    for (size_t t : newly) {
      snapshot_order_.push_back(t);
      names.append(names.empty() ? "" : ", ").append(built[t]);
    }
    spdlog::info(
        "mysql-cdc {}: source.tables was {} at the checkpoint; the tables it matches now and "
        "did not then ({}) are read by a snapshot, the others go on from {}",
        names_, state.tables, names, state.resume.position.to_string());
  }

  // Whether source.tables matches table `name` ("db.table").
  bool still_matched(const std::string& name) const {
    const size_t dot = name.find('.');
    return patterns_(name.substr(0, dot), name.substr(dot + 1));
  }

  // The tables the snapshot has yet to begin that are absent where the
  // binlog is read from: those the checkpoint did not capture (see
  // restore_tables()), or dropped. Bringing the rows read before up to
  // the snapshot, their rows are read past: the snapshot reads them
  // whole, as of its position, and the stream learns their columns there
  // (capture_unread()).
  std::set<size_t> not_captured_yet() const {
    std::set<size_t> out;
    for (size_t p = table_index_ + (last_key_.empty() ? 0 : 1); p < snapshot_order_.size(); ++p) {
      if (binlog_tables_[snapshot_order_[p]].definition.empty()) out.insert(snapshot_order_[p]);
    }
    return out;
  }

  // A checkpoint's position means something only in the binlog of the
  // server it was taken on, for the tables it was taken of.
  void check_same_source(const CdcState& saved, const OperatorContext& context) const {
    if (saved.server.empty()) return;  // taken before checkpoints recorded it
    // Of several tables, any patterns: see restore_tables().
    const bool several = several_ && !saved.names.empty();
    const std::string& reads = several ? read_ : names_;
    if (saved.server == server_ && (several || saved.tables == reads)) return;
    throw ConfigError("mysql-cdc: checkpoint " +
                      std::to_string(context.restored_checkpoint().value_or(0)) + " of job '" +
                      context.subtask().job_name + "' was taken reading " + saved.tables +
                      " of the server with " + saved.server + "; this job reads " + reads +
                      " of the server with " + server_ +
                      ". Use restore=none to start afresh with a snapshot, or another job.name");
  }

  // Binlog lag, as Flink CDC's source reports it, in milliseconds: when an
  // event came, how long after the server wrote it; when a change went
  // out, likewise; how long since one did.
  void report_lag(const BinlogReader& reader, bool emitted) {
    if (const std::optional<int64_t> packed = resume_->position.packed()) {
      binlog_file_->set(static_cast<uint64_t>(*packed) >> 32);
      binlog_offset_->set(static_cast<uint64_t>(*packed) & 0xffffffffU);
    }
    const auto now = std::chrono::system_clock::now();
    if (reader.last_event_time() != last_fetched_) {
      last_fetched_ = reader.last_event_time();
      fetch_lag_->set(static_cast<uint64_t>(millis_since(last_fetched_, now)));
    }
    if (emitted && reader.last_change_time().time_since_epoch().count() != 0) {
      emit_lag_->set(static_cast<uint64_t>(millis_since(reader.last_change_time(), now)));
      idle_since_->set(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count()));
    }
  }

  // One consistent read of the tables, and the binlog position it is at.
  // Resuming a snapshot, the rows emitted before are as of an earlier
  // position: the binlog from there to this one brings them up to it first.
  // A stream of several tables follows their columns: those the tables had
  // when the snapshot was taken (read before and after it, until no DDL
  // came between) are the ones it reads, and where they are not those the
  // job began with, the stream learns the change first.
  void start_snapshot(Collector& out) {
    // The tables too: those that are there when the snapshot begins.
    std::vector<std::string> definitions;
    std::vector<TableName> matched;
    for (;;) {
      if (several_) {
        if (!definitions_)
          definitions_ = std::make_unique<MySqlConnection>(options_.url, session());
        matched = match_tables(*definitions_, options_.patterns);
        definitions = current_definitions(matched);
      }
      scan_.reset();  // a table without a key is read again whole
      snapshot_ = std::make_unique<MySqlConnection>(options_.url, session());
      snapshot_->execute("SET SESSION time_zone = '+00:00'");  // TIMESTAMPs as the binlog has them
      snapshot_->execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      snapshot_->execute("START TRANSACTION WITH CONSISTENT SNAPSHOT");
      if (!several_) break;
      if (match_tables(*definitions_, options_.patterns) == matched &&
          current_definitions(matched) == definitions) {
        break;
      }
    }
    definitions_.reset();
    std::string file;
    uint64_t offset = 0;
    for (const auto& row : snapshot_->query("SHOW STATUS LIKE 'binlog_snapshot_%'")) {
      if (row.at(0) == "Binlog_snapshot_file") file = row.at(1).value_or("");
      if (row.at(0) == "Binlog_snapshot_position") offset = std::stoull(row.at(1).value_or("0"));
    }
    if (file.empty())
      throw ConfigError("the server gives no binlog_snapshot_file: is its binlog on?");
    const BinlogPosition at{file, offset};
    spdlog::info("mysql-cdc {}: snapshot at binlog {}", names_, at.to_string());
    estimate_snapshot();
    if (!resume_) {
      // As a replica id of its own: the source's is the reader's.
      resume_ = BinlogResume{
          .position = at,
          .file_made = binlog_file_made(options_.url, options_.server_id ^ 0x40000000U, at.file)};
      if (start_held_) context_->request_checkpoint();  // rather than wait the interval
      if (several_) {
        const std::vector<std::string> made(definitions.begin() + tables_.size(),
                                            definitions.end());
        definitions.resize(tables_.size());
        columns_now(definitions, out);
        drop_gone(out);
        tables_made_since(made_since(matched), made, out);
      }
      return;
    }
    spdlog::info("mysql-cdc {}: bringing the rows read before from binlog {} to {}", names_,
                 resume_->position.to_string(), at.to_string());
    // It follows the schema changes up to the snapshot's position.
    std::set<size_t> unread = not_captured_yet();
    for (size_t t : unread) {
      if (t < tables_.size()) unread_[t] = definitions[t];
    }
    catch_up_ = make_reader(binlog_tables_, several_, std::move(unread));
    catch_up_->stop_at(at);
  }

  // Per table of the snapshot, the rows read of those the server estimates
  // (information_schema's TABLE_ROWS, InnoDB's guess from a sample), as
  // gauges "snapshot-rows-read.<db>.<table>" and
  // "snapshot-rows-estimated.<db>.<table>" that the job's page and
  // progress line show. A table read to its end has its count as estimate;
  // a resumed snapshot counts the rows of a table it had begun from where
  // it resumes.
  struct TableProgress {
    Counter* read = nullptr;
    Counter* estimated = nullptr;
  };
  TableProgress& progress_of(size_t table) {
    auto it = progress_.find(table);
    if (it == progress_.end()) {
      const std::string name = name_of(binlog_tables_[table]);
      it = progress_
               .emplace(table, TableProgress{&context_->gauge("snapshot-rows-read." + name),
                                             &context_->gauge("snapshot-rows-estimated." + name)})
               .first;
    }
    return it->second;
  }

  void estimate_snapshot() {
    std::string tables;
    for (size_t p = 0; p < snapshot_order_.size(); ++p) {
      const CapturedTable& t = binlog_tables_[snapshot_order_[p]];
      tables += (tables.empty() ? "(" : ", (") + snapshot_->quote(t.database) + ", " +
                snapshot_->quote(t.table) + ")";
    }
    if (tables.empty()) return;
    std::map<std::string, uint64_t> rows;
    try {
      for (const auto& row : snapshot_->query(
               "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE "
               "(TABLE_SCHEMA, TABLE_NAME) IN (" +
               tables + ")")) {
        rows[row.at(0).value_or("") + "." + row.at(1).value_or("")] =
            std::stoull(row.at(2).value_or("0"));
      }
    } catch (const MySqlError& e) {
      // Only shown: the snapshot goes on without an estimate.
      spdlog::warn("mysql-cdc {}: no estimate of the snapshot's rows: {}", names_, e.message());
    }
    for (size_t p = 0; p < snapshot_order_.size(); ++p) {
      TableProgress& progress = progress_of(snapshot_order_[p]);
      const uint64_t estimate = rows[name_of(binlog_tables_[snapshot_order_[p]])];
      if (p >= table_index_) {
        progress.estimated->set(estimate);
      } else if (progress.read->get() == 0) {  // read to its end before a restore
        progress.read->set(estimate);
        progress.estimated->set(estimate);
      }
    }
  }

  // The tables of `matched` the job was not built with (made since).
  std::vector<TableName> made_since(const std::vector<TableName>& matched) const {
    std::vector<TableName> out;
    for (const TableName& name : matched) {
      const bool built = std::any_of(tables_.begin(), tables_.end(), [&](const CapturedTable& t) {
        return name_of(t) == name.to_string();
      });
      if (!built) out.push_back(name);
    }
    return out;
  }

  // Each table's CREATE TABLE now, then those of the tables of `matched`
  // made since (made_since()); empty for one dropped meanwhile.
  std::vector<std::string> current_definitions(const std::vector<TableName>& matched = {}) {
    if (!definitions_) definitions_ = std::make_unique<MySqlConnection>(options_.url, session());
    std::vector<TableName> names;
    for (const CapturedTable& table : tables_) names.push_back({table.database, table.table});
    for (const TableName& name : made_since(matched)) names.push_back(name);
    std::vector<std::string> out;
    for (const TableName& name : names) {
      try {
        out.push_back(show_create_table(*definitions_, name.database, name.table));
      } catch (const MySqlError& e) {
        if (e.code() != ER_NO_SUCH_TABLE) throw;
        out.emplace_back();
      }
    }
    return out;
  }

  // Each table's columns as `definitions` (a fresh snapshot's) say: where
  // the target has others (an earlier run that took no checkpoint may
  // have changed it), it is brought to them.
  void columns_now(const std::vector<std::string>& definitions, Collector& out) {
    SchemaHistory history(options_.url, &canceller_);
    for (size_t t = 0; t < tables_.size(); ++t) {
      std::vector<TableColumn> before = binlog_tables_[t].columns;
      if (definitions[t] == binlog_tables_[t].definition) {
        out.change_schema(schema_change(t, binlog_tables_[t], "the columns the snapshot reads",
                                        before, {}, {}, {}, MySqlSchemaChange::Kind::kFit));
        continue;
      }
      if (definitions[t].empty()) {  // read by the snapshot's order, passed over
        binlog_tables_[t] =
            CapturedTable{.database = tables_[t].database, .table = tables_[t].table};
        out.change_schema(schema_change(t, binlog_tables_[t], "dropped since the job began", before,
                                        {}, {}, {}, MySqlSchemaChange::Kind::kDropped));
        continue;
      }
      CapturedTable now = history.table(tables_[t].database, tables_[t].table, definitions[t]);
      binlog_tables_[t] = now;
      orders_[t] = KeyOrder(now);
      out.change_schema(schema_change(t, now, "the columns the snapshot reads", before, {}, {}, {},
                                      MySqlSchemaChange::Kind::kFit));
    }
  }

  // The tables gone_ (the job had them at a checkpoint taken before its
  // snapshot began, and the source has not now): new to the stream, and
  // dropped.
  void drop_gone(Collector& out) {
    for (const std::string& name : gone_) {
      const size_t t = binlog_tables_.size();
      const size_t dot = name.find('.');
      binlog_tables_.push_back({.database = name.substr(0, dot), .table = name.substr(dot + 1)});
      orders_.emplace_back(binlog_tables_.back());
      out.change_schema(schema_change(t, binlog_tables_.back(), "a table of the checkpoint", {}, {},
                                      {}, {}, MySqlSchemaChange::Kind::kCreated));
      auto dropped = std::const_pointer_cast<SchemaChange>(
          schema_change(t, binlog_tables_.back(), "gone since the checkpoint", {}, {}, {}, {},
                        MySqlSchemaChange::Kind::kDropped));
      dropped->restored = false;
      out.change_schema(std::move(dropped));
    }
    gone_.clear();
  }

  // The tables `made` since the job was built (made_since() of those the
  // patterns matched when the snapshot began), `definitions` their CREATE
  // TABLEs then (a table may be dropped or renamed since): read by the
  // snapshot too, after the others, and new to the stream.
  void tables_made_since(const std::vector<TableName>& made,
                         const std::vector<std::string>& definitions, Collector& out) {
    SchemaHistory history(options_.url, &canceller_);
    for (size_t i = 0; i < made.size(); ++i) {
      const TableName& name = made[i];
      const bool known =
          std::any_of(binlog_tables_.begin(), binlog_tables_.end(),
                      [&](const CapturedTable& t) { return name_of(t) == name.to_string(); });
      if (known || definitions[i].empty()) continue;
      const size_t t = binlog_tables_.size();
      binlog_tables_.push_back(history.table(name.database, name.table, definitions[i]));
      orders_.emplace_back(binlog_tables_.back());
      snapshot_order_.push_back(t);
      auto change = std::const_pointer_cast<SchemaChange>(
          schema_change(t, binlog_tables_.back(), "a table made since the job began", {}, {}, {},
                        {}, MySqlSchemaChange::Kind::kCreated));
      change->restored = false;
      spdlog::info("mysql-cdc {}: {} was made since the job began; read too", names_,
                   name.to_string());
      out.change_schema(std::move(change));
    }
  }

  static std::string name_of(const CapturedTable& table) {
    return table.database + "." + table.table;
  }

  // The table the snapshot reads now.
  size_t reading() const { return snapshot_order_[table_index_]; }
  // Where table `t` is in the snapshot's order; npos if the snapshot does
  // not read it (made after it began).
  size_t place_of(size_t t) const {
    const auto at = std::find(snapshot_order_.begin(), snapshot_order_.end(), t);
    return at == snapshot_order_.end() ? std::string::npos
                                       : static_cast<size_t>(at - snapshot_order_.begin());
  }

  // A schema change the binlog reader followed, into the stream.
  void follow(Collector& out, const BinlogChange& change,
              std::optional<int64_t> completed = std::nullopt) {
    const BinlogSchemaChange& c = *change.schema_change;
    bool reread = false;
    if (change.table == binlog_tables_.size()) {  // created: captured from here on
      binlog_tables_.push_back(c.after);
      orders_.emplace_back(c.after);
    }
    const bool rekeyed = c.after.schema.primary_key_names() != c.before.schema.primary_key_names();
    if (rekeyed && !c.after.definition.empty()) orders_[change.table] = KeyOrder(c.after);
    if (rekeyed && c.kind == BinlogSchemaChange::Kind::kColumns) {
      // Bringing the rows read before up to a new snapshot, a table the
      // snapshot has not read whole is keyed anew: a target ahead of the
      // checkpoint may hold its rows under their old key, which the new
      // key's changes never replace. The target is emptied of them
      // (kReread), and the new snapshot reads the table whole. The table
      // being read is read again from its start (its rows emitted so far
      // are no range of the new key), every change of it from here on
      // going out, as of a table read whole; a checkpoint keeps that as
      // the table twice in the snapshot's order.
      const size_t place = place_of(change.table);
      reread = phase_ == Phase::kSnapshot && place != std::string::npos && place >= table_index_;
      if (reread && place == table_index_ && !last_key_.empty()) {
        snapshot_order_.insert(snapshot_order_.begin() + static_cast<ptrdiff_t>(table_index_) + 1,
                               change.table);
        ++table_index_;
        last_key_.clear();
        spdlog::info(
            "mysql-cdc {}: {} keys table '{}' anew, under the snapshot: it is read again "
            "from its start",
            names_, c.statement, name_of(c.after));
      }
    }
    binlog_tables_[change.table] = c.after;
    out.change_schema(schema_change(change.table, c.after, c.statement, c.before.columns, c.renames,
                                    c.position, completed, kind_of(c.kind), &c));
    if (reread) {
      out.change_schema(schema_change(change.table, c.after, "read again whole", {}, {}, c.position,
                                      {}, MySqlSchemaChange::Kind::kReread));
    }
  }

  // Whether the schema change changes_[i] waits, with what follows it (of
  // its transaction; see held_, which takes changes_): from here on, the
  // source stands before it.
  bool hold_from(size_t i) {
    if (!hold_schema_changes_) return false;
    std::swap(held_, changes_);
    held_from_ = i;
    resume_ = held_[i].schema_change->resume_before;
    context_->request_checkpoint();
    spdlog::info("mysql-cdc {}: {} goes on once a checkpoint holds the changes before it", names_,
                 held_[i].schema_change->statement);
    return true;
  }

  // Sends the held schema changes, once their checkpoint completed; false
  // while it has not.
  bool release_held(Collector& out) {
    if (!released_by_) return false;
    for (size_t i = held_from_; i < held_.size();) {
      if (held_[i].schema_change) {
        follow(out, held_[i], released_by_);
        ++i;
      } else {
        i = emit_rows(out, held_, i);  // of the same transaction (CREATE … SELECT)
      }
    }
    held_.clear();
    held_until_.reset();
    released_by_.reset();
    return true;
  }

  // The binlog's changes to the rows emitted so far, up to the snapshot's
  // position: of the tables before the one being read, and of its keys up
  // to the last one emitted. An update's half outside them counts as an
  // insert or a delete: the snapshot reads what it left there.
  //
  // A row outside them that a change removed (a delete, or an update that
  // moved it to another key) may have gone out after the checkpoint, before
  // the crash, and be in a target that is ahead of it (at-least-once); the
  // snapshot does not find it any more. It goes out as an insert of its
  // last image and the delete of it: a target that has it loses it, one
  // that has not is as before, and keyed state adds and takes back the same.
  void catch_up(Collector& out) {
    if (!held_.empty()) {
      if (release_held(out)) caught_up_to(catch_up_->resume(), out);
      return;
    }
    changes_.clear();
    catch_up_->read(changes_);
    // The keys of the table being read, each taken with the columns the
    // table has where it stands.
    std::vector<std::vector<Value>> keys;
    std::vector<size_t> key_columns = binlog_tables_[reading()].schema.primary_key();
    for (const BinlogChange& change : changes_) {
      if (change.table != reading() || last_key_.empty()) continue;
      if (change.schema_change) {
        key_columns = change.schema_change->after.schema.primary_key();
        continue;
      }
      std::vector<Value>& key = keys.emplace_back();
      const Batch& rows = changes_.batch(change);
      for (size_t k : key_columns) key.push_back(rows.column(k).value(change.row));
    }
    const std::vector<bool> after =
        keys.empty() ? std::vector<bool>{} : orders_[reading()].after(*snapshot_, keys, last_key_);
    std::vector<bool> emitted;
    size_t at = 0;
    for (const BinlogChange& change : changes_) {
      // Tables made since the snapshot began are not in it.
      const size_t place = place_of(change.table);
      bool emit = place == std::string::npos || place < table_index_;
      if (change.table == reading() && !last_key_.empty() && !change.schema_change) {
        emit = !after[at++];
      }
      emitted.push_back(emit);
    }
    for (size_t i = 0; i < changes_.size(); ++i) {
      const size_t table = changes_[i].table;
      if (changes_[i].schema_change) {  // whatever table: the snapshot reads its new columns
        if (hold_from(i)) return;
        follow(out, changes_[i]);
        continue;
      }
      Row row = changes_.row(changes_[i]);
      // An update's two images are neighbours: read() gives whole events.
      const bool removes = row.kind == RowKind::kDelete ||
                           (row.kind == RowKind::kUpdateBefore && i + 1 < changes_.size() &&
                            key_of(table, row) != key_of(table, changes_.row(changes_[i + 1])));
      if (!emitted[i]) {
        if (!removes) continue;
        row.kind = RowKind::kInsert;
        emit(out, table, row, changes_[i].position);
        row.kind = RowKind::kDelete;
        emit(out, table, row, changes_[i].position);
        continue;
      }
      const bool half =
          (row.kind == RowKind::kUpdateBefore && (i + 1 == changes_.size() || !emitted[i + 1])) ||
          (row.kind == RowKind::kUpdateAfter && (i == 0 || !emitted[i - 1]));
      if (half) row.kind = row.kind == RowKind::kUpdateBefore ? RowKind::kDelete : RowKind::kInsert;
      emit(out, table, row, changes_[i].position);
    }
    caught_up_to(catch_up_->resume(), out);
  }

  void caught_up_to(BinlogResume resume, Collector& out) {
    resume_ = std::move(resume);
    if (catch_up_->stopped()) {
      catch_up_.reset();
      spdlog::info("mysql-cdc {}: the rows read before are as of {}; reading on", names_,
                   resume_->position.to_string());
      capture_unread(out);
    }
  }

  // Caught up: each table of not_captured_yet() that no CREATE TABLE in
  // the binlog brought, as the snapshot finds it, to be read whole. The
  // stream learns its columns. None of its rows goes out before a
  // checkpoint holds where the snapshot began: a run that dies before
  // may have written rows the next run's snapshot no longer finds, and a
  // restore of that checkpoint brings what went out up to its own
  // snapshot, the table captured.
  void capture_unread(Collector& out) {
    SchemaHistory history(options_.url, &canceller_);
    for (const auto& [t, definition] : unread_) {
      if (!binlog_tables_[t].definition.empty() || definition.empty()) continue;
      binlog_tables_[t] = history.table(tables_[t].database, tables_[t].table, definition);
      orders_[t] = KeyOrder(binlog_tables_[t]);
      auto change = std::const_pointer_cast<SchemaChange>(
          schema_change(t, binlog_tables_[t], "the columns the snapshot reads", {}, {}, {}, {},
                        MySqlSchemaChange::Kind::kFit));
      change->restored = false;
      out.change_schema(std::move(change));
      start_held_ = checkpoints_;
      start_checkpoint_.reset();
      context_->request_checkpoint();
      spdlog::info("mysql-cdc {}: {} is read by the snapshot from {}", names_,
                   name_of(binlog_tables_[t]), resume_->position.to_string());
    }
    unread_.clear();
  }

  std::vector<Value> key_of(size_t table, const Row& row) const {
    std::vector<Value> key;
    for (size_t k : binlog_tables_[table].schema.primary_key()) key.push_back(row.fields[k]);
    return key;
  }

  // Row change `changes[i]` and the row changes after it in the same batch,
  // in one append, or their batch's columns taken whole where they are all
  // it holds; returns the index of the next change.
  size_t emit_rows(Collector& out, BinlogChanges& changes, size_t i) {
    const BinlogChange& first = changes[i];
    rows_.clear();
    for (; i < changes.size() && !changes[i].schema_change && changes[i].batch == first.batch;
         ++i) {
      rows_.push_back(changes[i].row);
    }
    if (several_) out.to_table(static_cast<uint32_t>(first.table));
    if (Batch* whole = changes.whole_batch(first, rows_.size())) {
      out.batch().take(*whole);  // its columns, without a copy where nothing came before
    } else {
      out.batch().append(changes.batch(first), rows_);
    }
    return i;
  }

  // Into the stream of several tables, or of the one all tables share;
  // with where the row is (see describe_position()).
  void emit(Collector& out, size_t table, const Row& row, std::optional<int64_t> position) const {
    if (several_) out.to_table(static_cast<uint32_t>(table));
    if (position) {
      out.emit(row, *position);
    } else {
      out.emit(row);
    }
  }

  // The next chunk of the snapshot: of the table at table_index_, in key
  // order after last_key_.
  void read_chunk(Collector& out) {
    if (table_index_ == snapshot_order_.size()) {  // none left: source.tables narrowed
      end_snapshot();
      return;
    }
    if (binlog_tables_[reading()].definition.empty()) {  // dropped meanwhile
      next_table();
      return;
    }
    const CapturedTable& table = binlog_tables_[reading()];
    const Schema& schema = table.schema;
    const KeyOrder& order = orders_[reading()];
    std::string columns;
    for (size_t c = 0; c < schema.size(); ++c) {
      const std::string name = quote_identifier(schema.column(c).name);
      // A FLOAT as the double the binlog gives for it, not its shortest text.
      const bool is_float = table.columns[c].column_type.rfind("float", 0) == 0;
      const bool read_past = table.read_past.contains(schema.column(c).name);
      columns += (c ? ", " : "") + (read_past  ? "NULL"
                                    : is_float ? "CAST(" + name + " AS DOUBLE)"
                                               : name);
    }
    std::string sql = "SELECT " + columns + " FROM " + quote_identifier(table.database) + "." +
                      quote_identifier(table.table);
    // Without a key to resume at, a table is read in one scan, a chunk of
    // it at a time: no checkpoint can name a place in it, so a restore
    // reads it again whole, and its target loses whatever rows it has
    // first (an earlier run's, or this one's before a new snapshot).
    const bool keyless = !schema.has_primary_key();
    if (keyless && !scan_) {
      out.change_schema(schema_change(reading(), table, "read whole, having no key", {}, {},
                                      resume_->position, {}, MySqlSchemaChange::Kind::kReread));
    } else if (!keyless) {
      if (!last_key_.empty()) sql += " WHERE " + order.after(*snapshot_, last_key_);
      sql += " ORDER BY " + order.columns() + " LIMIT " + std::to_string(options_.chunk_rows);
    }
    if (several_) out.to_table(static_cast<uint32_t>(reading()));
    // Fields go from the result into the batch's columns, with no Row between.
    Batch& batch = out.batch();
    if (batch.schema().size() != schema.size()) {
      throw std::logic_error("mysql-cdc: " + table.table + " has " + std::to_string(schema.size()) +
                             " columns, its stream " + std::to_string(batch.schema().size()));
    }
    const std::optional<int64_t> position = resume_->position.packed();
    const auto put = [&](const MySqlResult& result, uint32_t at) {
      const auto fields = result.fields();
      for (size_t c = 0; c < fields.size(); ++c) {
        if (fields[c]) {
          set_field(batch.column(c), at, *fields[c], batch.schema().column(c).type);
        } else {
          batch.column(c).set_null(at, true);
        }
      }
      if (position) batch.set_position(at, *position | kSnapshotRow);
    };
    size_t rows = 0;
    try {
      if (keyless) {
        if (!scan_) {
          // The server waits on the scan while the stream downstream is full.
          snapshot_->execute("SET SESSION net_write_timeout = 3600");
          scan_.emplace(snapshot_->query_stream(sql));
        }
        for (; rows < options_.chunk_rows && scan_->next(); ++rows) put(*scan_, batch.add_rows(1));
        if (rows < options_.chunk_rows) scan_.reset();  // read to its end
      } else {
        MySqlResult result = snapshot_->query_result(sql);
        rows = result.size();
        for (uint32_t at = batch.add_rows(static_cast<uint32_t>(rows)); result.next(); ++at) {
          put(result, at);
        }
      }
      progress_of(reading()).read->add(rows);
    } catch (const MySqlError& e) {
      // An ALTER TABLE after the snapshot's position: the table's rows in
      // it are gone or of other columns. A new snapshot, and the binlog
      // (the ALTER in it) brings what was read up to it first.
      if (!several_ || (e.code() != ER_BAD_FIELD_ERROR && e.code() != ER_TABLE_DEF_CHANGED &&
                        e.code() != ER_NO_SUCH_TABLE)) {
        throw;
      }
      spdlog::info("mysql-cdc {}: {} changed under the snapshot ({}); taking a new one", names_,
                   table.table, e.message());
      scan_.reset();
      snapshot_.reset();
      return;
    }
    if (rows > 0 && !keyless) {
      last_key_.clear();
      for (size_t k : schema.primary_key()) {
        last_key_.push_back(batch.column(k).value(batch.size() - 1));
      }
    }
    fault_point("cdc-snapshot-chunk");
    if (rows < options_.chunk_rows) next_table();
  }

  // The next table of the snapshot; the binlog after the last.
  void next_table() {
    if (table_index_ < snapshot_order_.size()) {
      TableProgress& progress = progress_of(reading());
      progress.estimated->set(progress.read->get());
    }
    last_key_.clear();
    if (++table_index_ < snapshot_order_.size()) return;  // in the same snapshot
    end_snapshot();
  }

  void end_snapshot() {
    snapshot_->execute("COMMIT");
    snapshot_.reset();
    phase_ = Phase::kBinlog;
    table_index_ = 0;
    spdlog::info("mysql-cdc {}: snapshot read; the binlog from {}", names_,
                 resume_->position.to_string());
  }

  MySqlCdcOptions options_;
  // Whether a table not captured is one of source.tables: captured from its CREATE TABLE.
  std::function<bool(const std::string&, const std::string&)> patterns_;
  const std::vector<CapturedTable> tables_;
  const bool several_;  // a stream of several tables, not of one they share
  // The tables as the binlog is read now: their columns follow its schema
  // changes (several_ only).
  std::vector<CapturedTable> binlog_tables_ = tables_;
  std::vector<std::shared_ptr<const SchemaChange>> restored_columns_;  // to send first
  MySqlCanceller canceller_;  // declared before, so destroyed after, the connections
  std::unique_ptr<MySqlConnection> definitions_;  // reads current_definitions()
  std::vector<KeyOrder> orders_;                  // per table
  std::string names_;                             // "db.t1, db.t2"
  std::string read_;    // what checkpoints say it reads: names_, or the patterns
  std::string server_;  // server_identity()
  std::unique_ptr<MySqlConnection> claim_;  // holds the derived server id, see claim_server_id()
  std::optional<ValueState<std::vector<Value>>> state_;
  Phase phase_ = Phase::kSnapshot;
  std::optional<BinlogResume> resume_;  // unset until the snapshot began
  size_t table_index_ = 0;              // the place in snapshot_order_ the snapshot reads
  std::vector<size_t> snapshot_order_;  // the tables the snapshot reads, in order
  // Of not_captured_yet(), the CREATE TABLE of each where the snapshot
  // began (empty: none there); see capture_unread().
  std::map<size_t, std::string> unread_;
  std::vector<Value> last_key_;  // the snapshot's last key emitted there
  std::unique_ptr<MySqlConnection> snapshot_;
  // The scan of a table without a primary key being read (read_chunk()),
  // on snapshot_, and gone before it.
  std::optional<MySqlResult> scan_;
  std::unique_ptr<BinlogReader> catch_up_;
  std::unique_ptr<BinlogReader> reader_;
  BinlogChanges changes_;
  std::vector<uint32_t> rows_;  // emit_rows()'s
  Counter* fetch_lag_ = nullptr;
  Counter* emit_lag_ = nullptr;
  Counter* idle_since_ = nullptr;   // the last change emitted, read as the time since
  Counter* phase_gauge_ = nullptr;  // 1: the snapshot, 2: the binlog
  Counter* binlog_file_ = nullptr;  // the binlog position read to: the file's number
  Counter* binlog_offset_ = nullptr;
  std::map<size_t, TableProgress> progress_;  // per table of binlog_tables_
  OperatorContext* context_ = nullptr;
  std::chrono::system_clock::time_point last_fetched_{};
  bool checkpoints_ = false;          // the job takes checkpoints
  bool checkpointed_binlog_ = false;  // the last checkpoint was taken in the binlog phase
  // A fresh snapshot emits nothing until checkpoint start_checkpoint_,
  // which holds where it began, completed (see open()).
  bool start_held_ = false;
  std::optional<int64_t> start_checkpoint_;
  // With checkpoints, a schema change waits until a checkpoint taken after
  // the rows before it completed: a sink that makes it outside its
  // transactions (a DDL commits by itself) has committed everything before
  // it then, and holds nothing that would block it (a prepared XA
  // transaction blocks DDL on its tables). held_ holds it, and the changes
  // read with it (of its transaction: the rows of a CREATE … SELECT); checkpoints taken meanwhile
  // save the position before it.
  std::vector<std::string> gone_;  // see drop_gone()
  bool hold_schema_changes_ = false;
  BinlogChanges held_;
  size_t held_from_ = 0;                // the held schema change's index in held_
  std::optional<int64_t> held_until_;   // the first checkpoint taken while held
  std::optional<int64_t> released_by_;  // a checkpoint completed since
};

// Made on each call: the URL's default is SLUICE_MYSQL_URL as the
// environment has it now.
OptionBinder<MySqlCdcOptions> binder() {
  using Startup = MySqlCdcOptions::Startup;
  OptionBinder<MySqlCdcOptions> b;
  bind_mysql_url(b, "source.",
                 "mysql-cdc: the server to read, mysql://USER[:PASSWORD]@HOST[:PORT]/DB; the "
                 "user needs REPLICATION SLAVE and BINLOG MONITOR (REPLICATION CLIENT)",
                 &MySqlCdcOptions::url);
  b.list({.key = "source.table",
          .doc = "mysql-cdc: the table whose changes are read, or several of the same columns "
                 "and key, comma-separated, as one stream"},
         &MySqlCdcOptions::tables)
      .list({.key = "source.tables",
             .doc = "mysql-cdc: db.table regular expressions, comma-separated "
                    "(shop.orders_[0-9]+, shop.*): every table they match, each with its own "
                    "columns, read through one binlog connection; instead of source.table"},
            &MySqlCdcOptions::patterns)
      .bind(
          {.key = "source.server-id",
           .type = OptionType::kInteger,
           .doc = "mysql-cdc: the replica id it reads the binlog as, unique among the server's "
                  "replicas; 0 = one derived from job.name"},
          [](const MySqlCdcOptions& o) { return std::to_string(o.server_id); },
          [](const Config& config, MySqlCdcOptions& o) {
            const int64_t id = config.get_int("source.server-id");
            if (id < 0 || id > 0xffffffffLL) {
              throw ConfigError("option 'source.server-id' expects 0 to 4294967295, got " +
                                std::to_string(id));
            }
            o.server_id = static_cast<uint32_t>(id);
          })
      .bind(
          {.key = "source.startup-mode",
           .doc = "mysql-cdc: initial (a snapshot, then the binlog), snapshot (the snapshot "
                  "alone, then the job ends), latest (the binlog from its end), or a binlog "
                  "position FILE:OFFSET"},
          [](const MySqlCdcOptions& o) {
            switch (o.startup) {
              case Startup::kInitial:
                return std::string("initial");
              case Startup::kSnapshot:
                return std::string("snapshot");
              case Startup::kLatest:
                return std::string("latest");
              case Startup::kPosition:
                break;
            }
            return o.position.to_string();
          },
          [](const Config& config, MySqlCdcOptions& o) {
            const std::string startup = config.get_string("source.startup-mode");
            if (startup == "initial") {
              o.startup = Startup::kInitial;
            } else if (startup == "snapshot") {
              o.startup = Startup::kSnapshot;
            } else if (startup == "latest") {
              o.startup = Startup::kLatest;
            } else if (const auto position = BinlogPosition::parse(startup)) {
              o.startup = Startup::kPosition;
              o.position = *position;
            } else {
              throw ConfigError(
                  "option 'source.startup-mode' expects initial, snapshot, latest or "
                  "FILE:OFFSET (mariadb-bin.000002:344), got '" +
                  startup + "'");
            }
          })
      .integer(source_rate_spec(), &MySqlCdcOptions::rate)
      .integer({.key = "source.snapshot.chunk-rows",
                .doc = "mysql-cdc: rows per snapshot query, in primary-key order",
                .min = 1},
               &MySqlCdcOptions::chunk_rows);
  return b;
}

}  // namespace

std::vector<OptionSpec> mysql_cdc_option_specs() { return binder().specs(); }

MySqlCdcOptions MySqlCdcOptions::from(const Config& config) {
  MySqlCdcOptions options;
  binder().read(config, options);
  if (!options.patterns.empty() && !options.tables.empty()) {
    throw ConfigError("options 'source.table' and 'source.tables' are both set: give one");
  }
  if (options.tables.empty() && options.patterns.empty()) {
    throw ConfigError("option 'source.table' (or 'source.tables') names no table");
  }
  return options;
}

std::vector<CapturedTable> capture_tables(const MySqlCdcOptions& options,
                                          const std::vector<std::string>& keep) {
  MySqlConnection connection(options.url);
  std::vector<CapturedTable> tables;
  for (const std::string& table : options.tables)
    tables.push_back(capture_table(connection, table, keep));
  if (options.patterns.empty()) return tables;
  for (const TableName& name : match_tables(connection, options.patterns)) {
    // Dropped since it was listed: the job does not have it (a CREATE
    // TABLE of it after the job's start makes it new to the stream). The
    // drop may come before its columns are read, or between that and
    // SHOW CREATE TABLE.
    const auto gone = [&] { return !connection.find_table(name.table, name.database); };
    try {
      tables.push_back(capture_table(connection, name.table, keep, name.database));
    } catch (const ConfigError&) {
      if (!gone()) throw;
    } catch (const MySqlError& e) {
      if (e.code() != ER_NO_SUCH_TABLE || !gone()) throw;
    }
  }
  if (tables.empty()) {
    std::string patterns;
    for (const std::string& p : options.patterns) patterns += (patterns.empty() ? "" : ", ") + p;
    throw ConfigError("option 'source.tables' (" + patterns + ") matches no table of the server");
  }
  return tables;
}

SourceDef mysql_cdc_source(const MySqlCdcOptions& options) {
  return mysql_cdc_source(options, capture_tables(options));
}

namespace {

// Flink CDC's mysql-cdc table of `table` ("db.table", one of a stream of
// several), or of the source's tables (empty: one stream of them all).
FlinkSqlTable flink_sql_table(const MySqlCdcOptions& source, const std::string& table) {
  FlinkSqlTable out;
  std::string database = source.url.database, names;
  if (!table.empty()) {
    const size_t dot = table.find('.');
    database = table.substr(0, dot);
    names = table.substr(dot + 1);
    out.name = "source_" + database + "_" + names;
  } else {
    // Flink CDC's table-name is a regular expression: several as alternatives.
    for (const std::string& name : source.tables) names += (names.empty() ? "" : "|") + name;
  }
  out.options = {{"connector", "mysql-cdc"},
                 {"hostname", source.url.host.empty() ? std::string("localhost") : source.url.host},
                 {"port", std::to_string(source.url.port)},
                 {"username", source.url.user},
                 {"password", "<password>"},
                 {"database-name", database},
                 {"table-name", names}};
  if (source.server_id != 0)
    out.options.emplace_back("server-id", std::to_string(source.server_id));
  switch (source.startup) {
    case MySqlCdcOptions::Startup::kInitial:
      out.options.emplace_back("scan.startup.mode", "initial");
      break;
    case MySqlCdcOptions::Startup::kSnapshot:
      out.options.emplace_back("scan.startup.mode", "snapshot");
      break;
    case MySqlCdcOptions::Startup::kLatest:
      out.options.emplace_back("scan.startup.mode", "latest-offset");
      break;
    case MySqlCdcOptions::Startup::kPosition:
      out.options.emplace_back("scan.startup.mode", "specific-offset");
      out.options.emplace_back("scan.startup.specific-offset.file", source.position.file);
      out.options.emplace_back("scan.startup.specific-offset.pos",
                               std::to_string(source.position.offset));
      break;
  }
  if (!source.patterns.empty()) {
    out.note =
        "Flink SQL tables have fixed columns: schema changes of the sources "
        "(schema.change.behavior) are not followed here.";
  }
  return out;
}

}  // namespace

SourceDef mysql_cdc_source(const MySqlCdcOptions& options, std::vector<CapturedTable> tables) {
  if (tables.empty()) throw ConfigError("the mysql-cdc source has no table to read");
  // Of several tables, one without a key goes as its rows' images (its
  // snapshot read whole, see read_chunk()), for a sink that applies them
  // as a replica does.
  for (const CapturedTable& table : tables) {
    if (!table.schema.has_primary_key() && options.patterns.empty()) {
      throw ConfigError("table '" + table.database + "." + table.table +
                        "' has no primary key: the mysql-cdc source keys its changes by it "
                        "(source.tables takes tables without one)");
    }
  }
  const auto create = [options, tables](const SubtaskInfo&) -> std::unique_ptr<Source> {
    return std::make_unique<MySqlCdcSource>(options, tables);
  };
  const auto describe = [binlog_file = binlog_file_name(options.url)](int64_t position) {
    return describe_position(position, binlog_file);
  };
  const auto flink_sql = [options](const TableSchema& table, const RuntimeOptions&) {
    return flink_sql_table(options, table.name);
  };
  if (!options.patterns.empty()) {
    StreamType output{.mode = ChangelogMode::all()};
    for (const CapturedTable& table : tables)
      output.tables.push_back({table.database + "." + table.table, table.schema});
    return SourceDef{.output = std::move(output),
                     .create = create,
                     .rate = options.rate,
                     .max_parallelism = 1,
                     .describe_position = describe,
                     .flink_sql = flink_sql};
  }
  const Schema& schema = tables.front().schema;
  const auto types = [](const CapturedTable& table) {
    std::vector<std::string> out;
    for (const TableColumn& column : table.columns) out.push_back(column.column_type);
    return out;
  };
  for (const CapturedTable& table : tables) {
    if (table.schema.to_string() != schema.to_string() || types(table) != types(tables.front())) {
      throw ConfigError(
          "tables '" + tables.front().table + "' (" + schema.to_string() + ") and '" + table.table +
          "' (" + table.schema.to_string() +
          ") differ: the tables of one mysql-cdc source need the same columns and key");
    }
  }
  return SourceDef{
      .output = {schema, ChangelogMode::all(), false},
      .create = create,
      .rate = options.rate,
      .max_parallelism = 1,
      .describe_position = describe,
      .flink_sql = flink_sql,
  };
}

}  // namespace sluice
