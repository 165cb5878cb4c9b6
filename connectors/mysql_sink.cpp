#include "connectors/mysql_sink.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <thread>
#include <unordered_map>

#include "connectors/mysql_bulk_statement.hpp"
#include "connectors/mysql_connection.hpp"
#include "engine/error.hpp"
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

enum class Trigger { kMaxRows, kSignal, kBarrier, kClose };
constexpr const char* kTriggerNames[] = {"max-rows", "signal", "barrier", "close"};

class MySqlSink final : public Sink {
 public:
  MySqlSink(MySqlSinkOptions options, Schema input, std::vector<std::string> key,
            MySqlSinkOptions::Mode mode)
      : options_(std::move(options)), input_(std::move(input)), key_names_(std::move(key)), mode_(mode) {
    for (const auto& k : key_names_) key_.push_back(input_.require(k));
    for (size_t c = 0; c < input_.size(); ++c) all_columns_.push_back(c);
  }

  void open(SinkContext& context) override {
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
    with_retries("connecting", [&] { connect(); });
  }

  void write(Row&& row) override {
    ++records_since_flush_;
    if (mode_ == MySqlSinkOptions::Mode::kAppend) {
      appended_.push_back(std::move(row));
    } else if (row.kind != RowKind::kUpdateBefore) {
      for (size_t k : key_) {
        if (row.fields[k].is_null()) {
          throw DataError("key column '" + input_.column(k).name + "' is NULL in " + row.to_string());
        }
      }
      const bool deleted = row.kind == RowKind::kDelete;
      std::string key = encode_key(row, key_);
      buffer_.insert_or_assign(std::move(key), Pending{std::move(row), deleted});
    }
    if (options_.max_rows > 0 && records_since_flush_ >= options_.max_rows) flush(Trigger::kMaxRows);
  }

  void finish() override { flush(Trigger::kClose); }
  void snapshot_state(int64_t) override { flush(Trigger::kBarrier); }

 private:
  struct Pending {
    Row row;
    bool deleted;
  };

  void flush(Trigger trigger) {
    records_since_flush_ = 0;
    if (buffer_.empty() && appended_.empty()) return;
    const auto started = std::chrono::steady_clock::now();
    with_retries("writing", [&] { write_transaction(); });
    flushes_[static_cast<int>(trigger)]->add(1);
    keys_flushed_->add(mode_ == MySqlSinkOptions::Mode::kAppend ? appended_.size() : buffer_.size());
    flush_micros_->add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                 std::chrono::steady_clock::now() - started)
                                                 .count()));
    buffer_.clear();
    appended_.clear();
  }

  // Runs `attempt`, and again on a new connection after an error that a
  // retry may cure, up to max_retries times with doubling waits.
  template <typename F>
  void with_retries(const char* doing, F&& attempt) {
    for (int retry = 0;; ++retry) {
      try {
        if (!connection_) connect();
        attempt();
        return;
      } catch (const MySqlError& e) {
        drop_connection();
        if (!e.retriable() || retry >= options_.max_retries) {
          throw Error(std::string(doing) + " table '" + options_.table + "' at " +
                      options_.url.to_string() + " failed" +
                      (retry > 0 ? " after " + std::to_string(retry) + " retries" : "") + ": " +
                      e.what());
        }
        const auto wait = options_.retry_backoff * (1 << std::min(retry, 6));
        spdlog::warn("mysql sink {}: {}; retrying in {} ms on a new connection", options_.table,
                     e.what(), wait.count());
        if (retries_) retries_->add(1);
        std::this_thread::sleep_for(wait);
      }
    }
  }

  void drop_connection() {
    upsert_.reset();
    delete_.reset();
    connection_.reset();
  }

  void connect() {
    connection_ = std::make_unique<MySqlConnection>(options_.url);
    check_table(connection_->describe_table(options_.table));
    packet_budget_ = connection_->max_allowed_packet() / 2;
    const std::string table = quote_identifier(options_.table);
    std::vector<std::string> columns, params, updates;
    std::vector<DataType> types;
    for (const auto& c : input_.columns()) {
      columns.push_back(quote_identifier(c.name));
      params.push_back("?");
      types.push_back(c.type);
      if (std::find(key_names_.begin(), key_names_.end(), c.name) == key_names_.end()) {
        updates.push_back(quote_identifier(c.name) + "=VALUES(" + quote_identifier(c.name) + ")");
      }
    }
    std::string insert = "INSERT " + std::string(mode_ == MySqlSinkOptions::Mode::kUpsert && updates.empty() ? "IGNORE " : "") +
                         "INTO " + table + " (" + join(columns) + ") VALUES (" + join(params) + ")";
    if (mode_ == MySqlSinkOptions::Mode::kUpsert && !updates.empty()) {
      insert += " ON DUPLICATE KEY UPDATE " + join(updates);
    }
    upsert_ = std::make_unique<BulkStatement>(*connection_, insert, types);
    if (mode_ == MySqlSinkOptions::Mode::kUpsert) {
      std::vector<std::string> conditions;
      std::vector<DataType> key_types;
      for (size_t k : key_) {
        conditions.push_back(quote_identifier(input_.column(k).name) + "=?");
        key_types.push_back(input_.column(k).type);
      }
      delete_ = std::make_unique<BulkStatement>(
          *connection_, "DELETE FROM " + table + " WHERE " + join(conditions, " AND "), key_types);
    }
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

  void write_transaction() {
    std::vector<const Row*> upserts, deletes;
    if (mode_ == MySqlSinkOptions::Mode::kAppend) {
      for (const Row& row : appended_) upserts.push_back(&row);
    } else {
      for (const auto& [key, pending] : buffer_) (pending.deleted ? deletes : upserts).push_back(&pending.row);
    }
    connection_->execute("START TRANSACTION");
    uint64_t affected = execute_chunked(*upsert_, upserts, all_columns_);
    if (!deletes.empty()) affected += execute_chunked(*delete_, deletes, key_);
    connection_->execute("COMMIT");
    transactions_->add(1);
    upserts_->add(upserts.size());
    deletes_->add(deletes.size());
    rows_affected_->add(affected);
  }

  // Runs `statement` over `rows` in chunks that fit the server's packet limit.
  uint64_t execute_chunked(BulkStatement& statement, const std::vector<const Row*>& rows,
                           const std::vector<size_t>& columns) {
    uint64_t affected = 0;
    size_t begin = 0;
    while (begin < rows.size()) {
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

  const MySqlSinkOptions options_;
  const Schema input_;
  const std::vector<std::string> key_names_;
  const MySqlSinkOptions::Mode mode_;
  std::vector<size_t> key_;
  std::vector<size_t> all_columns_;

  std::unordered_map<std::string, Pending> buffer_;
  std::vector<Row> appended_;
  size_t records_since_flush_ = 0;

  std::unique_ptr<MySqlConnection> connection_;
  std::unique_ptr<BulkStatement> upsert_;
  std::unique_ptr<BulkStatement> delete_;
  uint64_t packet_budget_ = 1 << 20;

  Counter* flushes_[4] = {};
  Counter* keys_flushed_ = nullptr;
  Counter* upserts_ = nullptr;
  Counter* deletes_ = nullptr;
  Counter* statements_ = nullptr;
  Counter* transactions_ = nullptr;
  Counter* rows_affected_ = nullptr;
  Counter* retries_ = nullptr;
  Counter* flush_micros_ = nullptr;
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
      {.key = "sink.buffer-flush.max-rows",
       .type = OptionType::kInteger,
       .default_value = "100",
       .doc = "input records after which the sink flushes; 0 = off"},
      {.key = "sink.max-retries",
       .type = OptionType::kInteger,
       .default_value = "3",
       .doc = "retries of a flush after a lost connection or a deadlock"},
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
