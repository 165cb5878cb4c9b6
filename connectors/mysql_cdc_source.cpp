#include "sluice/connectors/mysql_cdc_source.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>

#include "sluice/connectors/source_options.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/fault_point.hpp"
#include "sluice/engine/data/value.hpp"

namespace sluice {
namespace {

enum class Phase { kSnapshot, kBinlog };

// "FILE:OFFSET", as BinlogPosition::to_string() writes it.
std::optional<BinlogPosition> parse_position(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  char* end = nullptr;
  const unsigned long long offset = std::strtoull(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0') return std::nullopt;
  return BinlogPosition{text.substr(0, colon), offset};
}

class MySqlCdcSource final : public Source {
 public:
  MySqlCdcSource(MySqlCdcOptions options, std::vector<CapturedTable> tables)
      : options_(std::move(options)), tables_(std::move(tables)), schema_(tables_.front().schema) {
    for (const std::string& name : schema_.primary_key_names()) {
      key_.push_back(*schema_.index_of(name));
    }
  }

  void open(OperatorContext& context) override {
    state_.emplace(context.value_state<std::vector<Value>>("position"));
    if (options_.server_id == 0) {
      const SubtaskInfo& info = context.subtask();
      options_.server_id =
          10'000 +
          static_cast<uint32_t>(std::hash<std::string>()(info.job_name + "/" + info.operator_name) %
                                1'000'000'000);
    }
    MySqlConnection connection(options_.url);
    const BinlogPosition end = current_binlog_position(connection);  // checks the binlog
    if (const auto saved = state_->get()) {
      phase_ = saved->at(0).as_string() == "snapshot" ? Phase::kSnapshot : Phase::kBinlog;
      position_ =
          BinlogPosition{saved->at(1).as_string(), static_cast<uint64_t>(saved->at(2).as_bigint())};
      table_index_ = static_cast<size_t>(saved->at(3).as_bigint());
      last_key_.assign(saved->begin() + 4, saved->end());
      spdlog::info("mysql-cdc {}: resuming the {} at {}", names(),
                   phase_ == Phase::kSnapshot ? "snapshot" : "binlog", position_->to_string());
      return;
    }
    switch (options_.startup) {
      case MySqlCdcOptions::Startup::kInitial:
      case MySqlCdcOptions::Startup::kSnapshot:
        phase_ = Phase::kSnapshot;
        break;
      case MySqlCdcOptions::Startup::kLatest:
        phase_ = Phase::kBinlog;
        position_ = end;
        break;
      case MySqlCdcOptions::Startup::kPosition:
        phase_ = Phase::kBinlog;
        position_ = options_.position;
        break;
    }
  }

  PollResult poll_next(Collector& out) override {
    if (phase_ == Phase::kSnapshot) {
      read_chunk(out);
      return PollResult::kMoreAvailable;
    }
    if (options_.startup == MySqlCdcOptions::Startup::kSnapshot) return PollResult::kEndOfInput;
    if (!reader_) {
      reader_ =
          std::make_unique<BinlogReader>(options_.url, options_.server_id, *position_, tables_);
    }
    std::optional<BinlogTransaction> transaction = reader_->next();
    position_ = reader_->resume_position();
    if (!transaction) return PollResult::kNothingAvailable;
    for (const BinlogTransaction::Change& change : transaction->changes) out.emit(change.row);
    fault_point("cdc-binlog-transaction");
    return PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t) override {
    if (!position_) {
      state_->clear();  // nothing read yet: a restore starts as this run did
      return;
    }
    std::vector<Value> saved = {
        Value(phase_ == Phase::kSnapshot ? "snapshot" : "binlog"), Value(position_->file),
        Value(static_cast<int64_t>(position_->offset)), Value(static_cast<int64_t>(table_index_))};
    saved.insert(saved.end(), last_key_.begin(), last_key_.end());
    state_->set(saved);
  }

 private:
  // "t" or "t1, t2", for messages.
  std::string names() const {
    std::string out;
    for (const CapturedTable& table : tables_) out += (out.empty() ? "" : ", ") + table.table;
    return out;
  }

  // The next chunk of the snapshot: of the table at table_index_, in key
  // order after last_key_.
  void read_chunk(Collector& out) {
    if (!snapshot_) start_snapshot();
    const CapturedTable& table = tables_[table_index_];
    const Schema& schema = schema_;
    std::string columns, keys;
    for (size_t c = 0; c < schema.size(); ++c) {
      const std::string name = quote_identifier(schema.column(c).name);
      // A FLOAT as the double the binlog gives for it, not its shortest text.
      const bool is_float = table.column_types[c].rfind("float", 0) == 0;
      columns += (c ? ", " : "") + (is_float ? "CAST(" + name + " AS DOUBLE)" : name);
    }
    for (size_t k : key_)
      keys += (keys.empty() ? "" : ", ") + quote_identifier(schema.column(k).name);
    std::string sql = "SELECT " + columns + " FROM " + quote_identifier(table.table);
    if (!last_key_.empty()) {
      std::string values;
      for (const Value& v : last_key_) {
        const std::string literal = v.type_id() == TypeId::kBoolean
                                        ? (v.as_boolean() ? "1" : "0")
                                        : snapshot_->quote(v.to_string());
        values += (values.empty() ? "" : ", ") + literal;
      }
      sql += " WHERE (" + keys + ") > (" + values + ")";
    }
    sql += " ORDER BY " + keys + " LIMIT " + std::to_string(options_.chunk_rows);
    const auto rows = snapshot_->query(sql);
    for (const auto& text : rows) {
      Row row;
      row.kind = RowKind::kInsert;
      row.fields.reserve(schema.size());
      for (size_t c = 0; c < schema.size(); ++c) {
        row.fields.push_back(text[c] ? parse_value(*text[c], schema.column(c).type) : Value());
      }
      out.emit(row);
      last_key_.clear();
      for (size_t k : key_) last_key_.push_back(row.fields[k]);
    }
    fault_point("cdc-snapshot-chunk");
    if (rows.size() < options_.chunk_rows) {
      last_key_.clear();
      if (++table_index_ < tables_.size()) return;  // the next table, in the same snapshot
      snapshot_->execute("COMMIT");
      snapshot_.reset();
      phase_ = Phase::kBinlog;
      table_index_ = 0;
      spdlog::info("mysql-cdc {}: snapshot read; the binlog from {}", names(),
                   position_->to_string());
    }
  }

  // One consistent read of the table, and the binlog position it is at.
  void start_snapshot() {
    snapshot_ = std::make_unique<MySqlConnection>(options_.url);
    snapshot_->execute("SET SESSION time_zone = '+00:00'");  // TIMESTAMPs as the binlog has them
    snapshot_->execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    snapshot_->execute("START TRANSACTION WITH CONSISTENT SNAPSHOT");
    std::string file;
    uint64_t offset = 0;
    for (const auto& row : snapshot_->query("SHOW STATUS LIKE 'binlog_snapshot_%'")) {
      if (row.at(0) == "Binlog_snapshot_file") file = row.at(1).value_or("");
      if (row.at(0) == "Binlog_snapshot_position") offset = std::stoull(row.at(1).value_or("0"));
    }
    if (file.empty())
      throw ConfigError("the server gives no binlog_snapshot_file: is its binlog on?");
    // Resuming a snapshot, the binlog still starts where the first one was
    // taken: the changes since then come again, and the table ends the same.
    if (!position_) position_ = BinlogPosition{file, offset};
    spdlog::info("mysql-cdc {}: snapshot at binlog {}", names(),
                 file + ":" + std::to_string(offset));
  }

  MySqlCdcOptions options_;
  const std::vector<CapturedTable> tables_;
  const Schema schema_;  // every table's
  std::vector<size_t> key_;
  std::optional<ValueState<std::vector<Value>>> state_;
  Phase phase_ = Phase::kSnapshot;
  std::optional<BinlogPosition> position_;  // where the binlog is read from
  size_t table_index_ = 0;                  // the table the snapshot reads
  std::vector<Value> last_key_;             // the snapshot's last key emitted there
  std::unique_ptr<MySqlConnection> snapshot_;
  std::unique_ptr<BinlogReader> reader_;
};

}  // namespace

std::vector<OptionSpec> mysql_cdc_option_specs() {
  return {
      {.key = "source.url",
       .default_value = mysql_url_from_environment(),
       .doc = "mysql-cdc: the server to read, mysql://USER[:PASSWORD]@HOST[:PORT]/DB; the user "
              "needs REPLICATION SLAVE and BINLOG MONITOR (REPLICATION CLIENT)",
       .default_doc = "SLUICE_MYSQL_URL, if set",
       .redact = redacted_mysql_url},
      {.key = "source.table",
       .doc = "mysql-cdc: the table whose changes are read, or several of the same columns "
              "and key, comma-separated"},
      {.key = "source.server-id",
       .type = OptionType::kInteger,
       .default_value = "0",
       .doc = "mysql-cdc: the replica id it reads the binlog as, unique among the server's "
              "replicas; 0 = one derived from job.name"},
      {.key = "source.startup-mode",
       .default_value = "initial",
       .doc = "mysql-cdc: initial (a snapshot, then the binlog), snapshot (the snapshot alone, "
              "then the job ends), latest (the binlog from its end), or a binlog position "
              "FILE:OFFSET"},
      source_rate_spec(),
      {.key = "source.snapshot.chunk-rows",
       .type = OptionType::kInteger,
       .default_value = "1000",
       .doc = "mysql-cdc: rows per snapshot query, in primary-key order",
       .min = 1},
  };
}

MySqlCdcOptions MySqlCdcOptions::from(const Config& config) {
  MySqlCdcOptions options;
  options.url = MySqlUrl::parse(config.get_string("source.url"));
  options.tables = split_list(config.get_string("source.table"));
  if (options.tables.empty()) throw ConfigError("option 'source.table' names no table");
  const int64_t server_id = config.get_int("source.server-id");
  if (server_id < 0 || server_id > 0xffffffffLL) {
    throw ConfigError("option 'source.server-id' expects 0 to 4294967295, got " +
                      std::to_string(server_id));
  }
  options.server_id = static_cast<uint32_t>(server_id);
  options.chunk_rows = static_cast<size_t>(config.get_int("source.snapshot.chunk-rows"));
  options.rate = static_cast<double>(config.get_int("source.rate"));
  const std::string startup = config.get_string("source.startup-mode");
  if (startup == "initial") {
    options.startup = Startup::kInitial;
  } else if (startup == "snapshot") {
    options.startup = Startup::kSnapshot;
  } else if (startup == "latest") {
    options.startup = Startup::kLatest;
  } else if (const auto position = parse_position(startup)) {
    options.startup = Startup::kPosition;
    options.position = *position;
  } else {
    throw ConfigError(
        "option 'source.startup-mode' expects initial, snapshot, latest or FILE:OFFSET "
        "(mariadb-bin.000002:344), got '" +
        startup + "'");
  }
  return options;
}

std::vector<CapturedTable> capture_tables(const MySqlCdcOptions& options) {
  MySqlConnection connection(options.url);
  std::vector<CapturedTable> tables;
  for (const std::string& table : options.tables)
    tables.push_back(capture_table(connection, table));
  return tables;
}

SourceDef mysql_cdc_source(const MySqlCdcOptions& options, std::vector<CapturedTable> tables) {
  if (tables.empty()) throw ConfigError("the mysql-cdc source has no table to read");
  const Schema& schema = tables.front().schema;
  for (const CapturedTable& table : tables) {
    if (!table.schema.has_primary_key()) {
      throw ConfigError("table '" + table.table +
                        "' has no primary key: the mysql-cdc source keys its changes by it");
    }
    if (table.schema.to_string() != schema.to_string() ||
        table.column_types != tables.front().column_types) {
      throw ConfigError(
          "tables '" + tables.front().table + "' (" + schema.to_string() + ") and '" + table.table +
          "' (" + table.schema.to_string() +
          ") differ: the tables of one mysql-cdc source need the same columns and key");
    }
  }
  return SourceDef{
      .output = {schema, ChangelogMode::all(), false},
      .create = [options, tables](const SubtaskInfo&) -> std::unique_ptr<Source> {
        return std::make_unique<MySqlCdcSource>(options, tables);
      },
      .rate = options.rate,
      .max_parallelism = 1,
  };
}

}  // namespace sluice
