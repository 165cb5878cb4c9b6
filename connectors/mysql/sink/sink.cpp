#include "sluice/connectors/mysql/sink/sink.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "sluice/connectors/mysql/collation.hpp"
#include "sluice/connectors/mysql/sink/delivery.hpp"
#include "sluice/connectors/mysql/sink/sink_connection.hpp"
#include "sluice/connectors/mysql/sink/statement_writer.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

MySqlSinkOptions::Mode mode_of(const MySqlSinkOptions& options,
                               const std::vector<std::string>& key) {
  if (options.mode) return *options.mode;
  return key.empty() ? MySqlSinkOptions::Mode::kAppend : MySqlSinkOptions::Mode::kUpsert;
}

std::vector<size_t> key_indexes(const Schema& schema, const std::vector<std::string>& names) {
  std::vector<size_t> indexes;
  for (const auto& name : names) indexes.push_back(schema.require(name));
  return indexes;
}

// Whether the buffer must keep the order of changes across keys (see
// UpsertBuffer), because two keys might be one to the table.
bool keeps_order(const Schema& schema, const std::vector<size_t>& key) {
  return std::any_of(key.begin(), key.end(),
                     [&](size_t k) { return !is_exact_key_column(schema.column(k).type); });
}

// The table's unique keys (its primary key too) besides the sink's `key`
// whose every column the input fills: the order of different keys' writes
// matters to them. (The others' values change only as the table's defaults
// make them.)
std::vector<TableIndex> other_unique_keys(const TableInfo& table, const Schema& input,
                                          const std::vector<std::string>& key) {
  const std::set<std::string> own(key.begin(), key.end());
  std::vector<TableIndex> keys;
  for (const TableIndex& index : table.unique_keys) {
    const bool filled =
        std::all_of(index.columns.begin(), index.columns.end(),
                    [&](const std::string& c) { return input.index_of(c).has_value(); });
    if (filled && std::set<std::string>(index.columns.begin(), index.columns.end()) != own) {
      keys.push_back(index);
    }
  }
  return keys;
}

std::string describe_keys(const std::vector<TableIndex>& keys) {
  std::string out;
  for (const TableIndex& index : keys) {
    out += (out.empty() ? "" : ", ") +
           std::string(index.name == "PRIMARY" ? "PRIMARY KEY" : "UNIQUE KEY " + index.name) +
           " (" + join(index.columns) + ")";
  }
  return out;
}

enum class Trigger { kMaxRows, kSignal, kBarrier, kClose };
constexpr const char* kTriggerNames[] = {"max-rows", "signal", "barrier", "close"};

// The sink: checks the table, buffers changes (SinkBuffer) and decides when
// to flush; its MySqlDelivery writes each flush with the StatementWriter, at
// least once or exactly once.
class MySqlSink final : public Sink {
 public:
  MySqlSink(MySqlSinkOptions options, SessionConnector connect, Schema input,
            std::vector<std::string> key, MySqlSinkOptions::Mode mode)
      : options_(std::move(options)),
        connect_(std::move(connect)),
        input_(std::move(input)),
        key_names_(std::move(key)),
        key_(key_indexes(input_, key_names_)),
        target_("table '" + options_.table + "' at " + options_.url.to_string()),
        // Without a key, a delete scans for its row, and any row a
        // prepared transaction holds is in its way (ExactlyOnceDelivery).
        buffer_(input_, key_, mode == MySqlSinkOptions::Mode::kRows || keeps_order(input_, key_),
                mode == MySqlSinkOptions::Mode::kUpsert) {}

  void open(SinkContext& context) override {
    const bool exactly_once = options_.delivery == MySqlSinkOptions::Delivery::kExactlyOnce;
    context.register_cancel_action([this] { canceller_.cancel(); });
    if (exactly_once && !context.checkpoints_enabled()) {
      throw ConfigError(
          "sink.delivery=exactly-once commits at checkpoints: set checkpoint.interval above 0");
    }
    context.register_flush_action([this] { flush(Trigger::kSignal); });
    for (int t = 0; t < 4; ++t)
      flushes_[t] = &context.counter(std::string("flushes.") + kTriggerNames[t]);
    keys_flushed_ = &context.counter("keys");
    flush_micros_ = &context.counter("flush-micros");
    send_millis_ = &context.gauge("currentSendTime");
    const RetryPolicy retry = {.max_retries = options_.max_retries,
                               .backoff = options_.retry_backoff,
                               .canceller = &canceller_,
                               .retries = &context.counter("retries")};
    SinkConnector connect = [this] {
      return this->connect({.timeout = options_.socket_timeout, .canceller = &canceller_});
    };
    writer_.emplace(
        options_.table, input_, key_, buffer_.upsert(), context.subtask().index,
        StatementWriter::Counters{.upserts = &context.counter("upserts"),
                                  .deletes = &context.counter("deletes"),
                                  .statements = &context.counter("statements"),
                                  .rows_affected = &context.counter("rows-affected"),
                                  .transactions = &context.counter("transactions"),
                                  .records_send = &context.counter("numRecordsSend"),
                                  .bytes_send = &context.counter("numBytesSend"),
                                  .records_send_errors = &context.counter("numRecordsSendErrors"),
                                  .displaced = &context.counter("displaced"),
                                  .deletes_unmatched = &context.counter("deletes.unmatched"),
                                  .dead_letters = &context.counter("dead-letters"),
                                  .row_events = &context.counter("row-events"),
                                  .row_event_fallbacks = &context.counter("row-events.fallbacks")});
    if (!options_.dead_letter_table.empty()) {
      writer_->set_dead_letters({.table = options_.dead_letter_table,
                                 .job = context.subtask().job_name,
                                 .source = options_.dead_letter_source});
    }
    writer_->set_position_names(
        [&context](int64_t position) { return context.describe_position(position); });
    // Fail before any record if the table does not fit.
    std::unique_ptr<SinkConnection> connection;
    with_retries(retry, "connecting to", target_, [&](int) {
      connection = connect();
      fit_to_table(*connection, context.subtask().parallelism);
    });
    if (!exactly_once) {
      delivery_ =
          std::make_unique<AtLeastOnceDelivery>(*writer_, std::move(connection), std::move(connect),
                                                retry, target_, options_.applied_rows);
      return;
    }
    // The job's connections may have been cancelled when it ends: close()
    // rolls back on new ones.
    SinkConnector release = [this] {
      return this->connect(
          {.timeout = std::min(options_.socket_timeout, std::chrono::seconds(10))});
    };
    auto delivery = std::make_unique<ExactlyOnceDelivery>(
        *writer_, context, buffer_.upsert() ? key_ : std::vector<size_t>{}, std::move(connect),
        std::move(release), canceller_, target_,
        XaCommitter::Counters{.prepared = &context.counter("xa.prepared"),
                              .committed = &context.counter("xa.committed"),
                              .recovered = &context.counter("xa.recovered"),
                              .rolled_back = &context.counter("xa.rolled-back"),
                              .transactions = &context.counter("transactions"),
                              .prepared_checkpoint = &context.gauge("xa.prepared-checkpoint"),
                              .committed_checkpoint = &context.gauge("xa.committed-checkpoint")});
    delivery->recover(std::move(connection), buffer_);
    delivery_ = std::move(delivery);
  }

  void write(Row&& row) override {
    buffer_.add(row);
    count_records(1);
  }

  void write_batch(Batch& rows) override {
    if (options_.max_rows == 0) {
      buffer_.add(rows);
      rows.clear();
      return;
    }
    // Flush after every max_rows records, as one record at a time would.
    std::vector<uint32_t> selected;
    selected.reserve(rows.selected());
    rows.for_each([&](uint32_t i) { selected.push_back(i); });
    std::span<const uint32_t> left(selected);
    while (!left.empty()) {
      const size_t n = std::min<size_t>(left.size(), options_.max_rows - records_since_flush_);
      buffer_.add(rows, left.first(n));
      count_records(n);
      left = left.subspan(n);
    }
    rows.clear();
  }

  void finish() override { flush(Trigger::kClose); }

  void close(std::optional<int64_t> last_completed) override {
    if (delivery_) delivery_->close(last_completed);
  }

  void snapshot_state(int64_t id) override {
    flush(Trigger::kBarrier);
    delivery_->snapshot_state(id, buffer_);
  }

  void notify_checkpoint_complete(int64_t id) override {
    delivery_->notify_checkpoint_complete(id);
  }

  // See sluice::for_each_unseen().
  void for_each_unseen(const std::function<void(const Row&)>& each) {
    if (!delivery_) return;
    delivery_->settle();
    delivery_->for_each_unseen(buffer_, each);
  }

  void notify_checkpoint_aborted(int64_t id) override {
    delivery_->notify_checkpoint_aborted(id, buffer_);
  }

 private:
  std::unique_ptr<SinkConnection> connect(const MySqlSession& session) const {
    if (connect_) return connect_(session);
    return std::make_unique<MySqlSinkConnection>(options_.url, session);
  }

  // Counts records written, flushing after every max_rows.
  void count_records(size_t n) {
    records_since_flush_ += n;
    if (options_.max_rows > 0 && records_since_flush_ >= options_.max_rows)
      flush(Trigger::kMaxRows);
  }

  void flush(Trigger trigger) {
    records_since_flush_ = 0;
    const auto started = std::chrono::steady_clock::now();
    // A held -U waits for its +U, except at a barrier and at the end.
    const bool resolve_held = trigger == Trigger::kBarrier || trigger == Trigger::kClose;
    const size_t keys = buffer_.empty() ? 0 : delivery_->flush(buffer_, resolve_held);
    // Only a flush for max-rows, while changes stream in, may leave its
    // commit running as the next records come (AtLeastOnceDelivery).
    if (trigger != Trigger::kMaxRows) delivery_->settle();
    if (keys == 0) return;
    flushes_[static_cast<int>(trigger)]->add(1);
    keys_flushed_->add(keys);
    const auto took = std::chrono::steady_clock::now() - started;
    flush_micros_->add(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
    send_millis_->set(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  }

  // Checks on `connection` that the table takes every row the input can
  // bring, and fits the buffer and the writer to it.
  void fit_to_table(SinkConnection& connection, int parallelism) {
    if (!options_.dead_letter_table.empty()) {
      connection.execute(dead_letter_table_sql(options_.dead_letter_table));
    }
    const std::optional<TableInfo> table = connection.find_table(options_.table);
    if (!table) {
      throw ConfigError(
          "table '" + options_.table + "' does not exist in database '" + options_.url.database +
          "'; create it, for example:\n  " +
          create_table_sql(options_.table, input_,
                           buffer_.upsert() ? key_names_ : std::vector<std::string>{}) +
          ";");
    }
    check_table(*table);
    std::vector<TableIndex> others;
    if (buffer_.upsert()) {
      others = other_unique_keys(*table, input_, key_names_);
      buffer_.set_unique_keys(buffer_keys(others, *table, connection, parallelism));
    }
    writer_->fit_to(*table, input_, others);
    writer_->set_max_allowed_packet(connection.max_allowed_packet());
    if (buffer_.upsert() && options_.row_events != MySqlSinkOptions::RowEvents::kOff) {
      use_row_events(connection, *table);
    }
  }

  // Writes with row events where the table takes them (sink.row-events).
  void use_row_events(SinkConnection& connection, const TableInfo& table) {
    std::string why_not;
    std::optional<RowEventEncoder> encoder = RowEventEncoder::fit(
        connection.row_event_target(options_.table), options_.table, table, input_, key_, why_not);
    if (encoder) {
      spdlog::debug("mysql sink {}: writing row events", target_);
      if (options_.input_is_table_rows) encoder->keep_invalid_enum_values();
      writer_->set_row_events(std::move(*encoder));
    } else if (options_.row_events == MySqlSinkOptions::RowEvents::kOn) {
      throw ConfigError("sink.row-events=on, but " + target_ + " takes no row events: " + why_not +
                        "; set sink.row-events=auto or off");
    } else {
      spdlog::info("mysql sink {}: writing statements, not row events: {}", target_, why_not);
    }
  }

  // The table's other unique keys, as the buffer orders writes by them.
  std::vector<UpsertBuffer::UniqueKey> buffer_keys(const std::vector<TableIndex>& others,
                                                   const TableInfo& table,
                                                   SinkConnection& connection,
                                                   int parallelism) const {
    if (!others.empty() && parallelism > 1) {
      throw ConfigError("table '" + options_.table + "' has " + describe_keys(others) +
                        " besides the sink's key (" + join(key_names_) +
                        "): one subtask must write its changes, in order; set sink.parallelism=1");
    }
    std::vector<UpsertBuffer::UniqueKey> keys;
    for (const TableIndex& index : others) {
      UpsertBuffer::UniqueKey& key = keys.emplace_back();
      for (size_t i = 0; i < index.columns.size(); ++i) {
        const size_t at = input_.require(index.columns[i]);
        const TableColumn* column = table.column(index.columns[i]);
        const TypeId type = input_.column(at).type.id;
        const uint32_t prefix = index.prefixes[i];
        KeyImage image;
        if (type == TypeId::kString && column != nullptr && holds_text(*column)) {
          image = connection.text_image(*column, prefix);
        } else if (prefix > 0 && (type == TypeId::kString || type == TypeId::kBytes)) {
          image = [prefix](std::string_view value) { return std::string(value.substr(0, prefix)); };
        }
        key.columns.push_back(at);
        key.images.push_back(std::move(image));
      }
    }
    return keys;
  }

  // Fails unless every row the input can bring fits the table: its every
  // column there, of a type that holds it, and the table's other columns
  // filled by the server.
  void check_table(const TableInfo& table) const {
    std::vector<std::string> table_columns;
    for (const auto& c : table.columns) table_columns.push_back(c.name);
    const std::string where = "table '" + options_.table + "' at " + options_.url.to_string();
    for (const auto& c : input_.columns()) {
      const TableColumn* column = table.column(c.name);
      if (column == nullptr) {
        throw ConfigError(where + " has no column '" + c.name + "'; its columns are " +
                          join(table_columns));
      }
      if (!holds(column->column_type, c.type)) {
        throw ConfigError(where + ": column '" + c.name + "' is " + column->column_type +
                          ", which cannot hold the input's " + c.type.to_string() +
                          "; change the column's type, or the job's");
      }
    }
    for (const TableColumn& column : table.columns) {
      if (!column.filled_by_server && !input_.index_of(column.name)) {
        throw ConfigError(where + ": column '" + column.name +
                          "' is NOT NULL without a default, "
                          "and the input does not fill it (its columns are " +
                          join(input_.column_names()) + "); give it a default, or fill it");
      }
    }
    if (!buffer_.upsert()) return;
    const std::set<std::string> wanted(key_names_.begin(), key_names_.end());
    std::string described;
    for (const TableIndex& k : table.unique_keys) {
      if (std::set<std::string>(k.columns.begin(), k.columns.end()) == wanted) return;
      described += (described.empty() ? "" : ", ") + std::string("(") + join(k.columns) + ")";
    }
    throw ConfigError("table '" + options_.table +
                      "' has no PRIMARY KEY or UNIQUE KEY on exactly (" + join(key_names_) +
                      "); its keys: " + (described.empty() ? "none" : described));
  }

  const MySqlSinkOptions options_;
  const SessionConnector connect_;  // null: to options_.url
  const Schema input_;
  const std::vector<std::string> key_names_;
  const std::vector<size_t> key_;
  const std::string target_;  // "table 't' at mysql://…", for messages

  SinkBuffer buffer_;
  size_t records_since_flush_ = 0;

  MySqlCanceller canceller_;  // declared before, so destroyed after, every connection it cancels
  std::optional<StatementWriter> writer_;
  std::unique_ptr<MySqlDelivery> delivery_;  // after the writer it writes with

  Counter* flushes_[4] = {};
  Counter* keys_flushed_ = nullptr;
  Counter* flush_micros_ = nullptr;
  Counter* send_millis_ = nullptr;  // Flink's currentSendTime: the last flush, a gauge
};

// Made on each call: the URL's default is SLUICE_MYSQL_URL as the
// environment has it now.
OptionBinder<MySqlSinkOptions> binder() {
  using Mode = MySqlSinkOptions::Mode;
  using Delivery = MySqlSinkOptions::Delivery;
  OptionBinder<MySqlSinkOptions> b;
  bind_mysql_url(
      b, "sink.",
      "mysql://USER[:PASSWORD]@HOST[:PORT]/DB (localhost too is TCP) or "
      "mysql://USER@/DB?socket=PATH, %XX decoded in each part; the password may come from "
      "SLUICE_MYSQL_PASSWORD",
      &MySqlSinkOptions::url);
  b.text({.key = "sink.table", .doc = "the target table"}, &MySqlSinkOptions::table)
      .list({.key = "sink.primary-key",
             .doc = "comma-separated key columns",
             .default_doc = "the table's key"},
            &MySqlSinkOptions::key)
      .choice({.key = "sink.mode",
               .doc = "upsert (last change per key) or append (insert every record)",
               .default_doc = "upsert with a key, else append"},
              &MySqlSinkOptions::mode, {{"upsert", Mode::kUpsert}, {"append", Mode::kAppend}})
      .choice({.key = "sink.delivery",
               .doc = "at-least-once (a transaction per flush) or exactly-once (an XA "
                      "transaction per checkpoint)"},
              &MySqlSinkOptions::delivery,
              {{"at-least-once", Delivery::kAtLeastOnce}, {"exactly-once", Delivery::kExactlyOnce}})
      .integer({.key = "sink.buffer-flush.max-rows",
                .doc = "input records after which the sink flushes; 0 = off"},
               &MySqlSinkOptions::max_rows)
      .integer({.key = "sink.max-retries",
                .doc = "retries of a flush after a lost connection or a deadlock"},
               &MySqlSinkOptions::max_retries)
      .duration({.key = "sink.socket-timeout",
                 .doc = "the longest a call may wait on the server; then it counts as a lost "
                        "connection"},
                &MySqlSinkOptions::socket_timeout)
      .bind({.key = "sink.on-error",
             .type = OptionType::kEnum,
             .default_value = "fail",
             .doc = "a change whose values the server refuses (too long, out of range, a failed "
                    "CHECK): fail (the job fails, naming it) or dead-letter (it goes into "
                    "sink.dead-letter.table, and the job goes on)",
             .choices = {"fail", "dead-letter"}},
            nullptr,
            [](const Config& config, MySqlSinkOptions& options) {
              if (config.get_string("sink.on-error") == "dead-letter") {
                options.dead_letter_table = config.get_string("sink.dead-letter.table");
              }
            })
      // Read with sink.on-error.
      .bind({.key = "sink.dead-letter.table",
             .default_value = "sluice_dead_letters",
             .doc = "with sink.on-error=dead-letter: the table of sink.url's database, created "
                    "when missing, that takes the refused changes (job, source table, target, "
                    "key, kind, values, the server's error, the input position)"})
      .choice({.key = "sink.row-events",
               .doc = "upserts and deletes as row events in BINLOG statements, as a MariaDB "
                      "replica applies them (less work for the server than statements; needs "
                      "the BINLOG REPLAY privilege): auto (where the server and the table take "
                      "them, else statements), on (fail where they do not) or off"},
              &MySqlSinkOptions::row_events,
              {{"auto", MySqlSinkOptions::RowEvents::kAuto},
               {"on", MySqlSinkOptions::RowEvents::kOn},
               {"off", MySqlSinkOptions::RowEvents::kOff}})
      .integer({.key = "sink.parallelism",
                .doc = "subtasks of the sink; its input is hash-partitioned by the key",
                .min = 1,
                .default_doc = "as parallelism"},
               &MySqlSinkOptions::parallelism);
  return b;
}

}  // namespace

bool holds(const std::string& column_type, const DataType& type) {
  const std::string kind = column_type.substr(0, column_type.find_first_of("( "));
  const auto is = [&](std::initializer_list<std::string_view> kinds) {
    return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
  };
  const auto one_of = [&](std::initializer_list<TypeId> ids) {
    return std::find(ids.begin(), ids.end(), type.id) != ids.end();
  };
  if (is({"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year"})) {
    return one_of({TypeId::kBigint, TypeId::kBoolean}) ||
           (type.id == TypeId::kDecimal && type.scale == 0);
  }
  if (is({"decimal", "numeric", "float", "double", "real"})) {
    return one_of({TypeId::kBigint, TypeId::kBoolean, TypeId::kDecimal, TypeId::kDouble});
  }
  if (is({"bit"})) return one_of({TypeId::kBigint, TypeId::kBoolean, TypeId::kBytes});
  if (is({"date"})) return type.id == TypeId::kDate;
  if (is({"datetime", "timestamp"})) return one_of({TypeId::kDate, TypeId::kTimestamp});
  if (is({"time"})) return type.id == TypeId::kTime;
  if (is({"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
          "multipolygon", "geometrycollection"})) {
    return type.id == TypeId::kBytes;
  }
  return true;  // text, binary, ENUM, SET, JSON, UUID, INET6
}

std::vector<OptionSpec> mysql_sink_option_specs() { return binder().specs(); }

MySqlSinkOptions MySqlSinkOptions::from(const Config& config) {
  MySqlSinkOptions options;
  binder().read(config, options);
  options.socket_timeout = std::max(std::chrono::seconds(1), options.socket_timeout);
  if (!config.find("sink.parallelism")) {
    options.parallelism = static_cast<int>(config.get_int("parallelism"));
  }
  return options;
}

namespace {

// With more than one subtask: what the target table's collations take the
// key's text to be equal by, so that keys equal to it reach one subtask.
std::vector<KeyImage> key_images(const MySqlSinkOptions& options, const Schema& input,
                                 const std::vector<std::string>& key) {
  const bool text_key = std::any_of(key.begin(), key.end(), [&](const std::string& name) {
    const auto at = input.index_of(name);
    return at && input.column(*at).type.id == TypeId::kString;
  });
  if (options.parallelism <= 1 || !text_key) return {};
  MySqlConnection connection(options.url);
  const std::optional<TableInfo> table = connection.find_table(options.table);
  if (!table) return {};  // the sink says so when it opens
  std::vector<KeyImage> images;
  for (const std::string& name : key) {
    const TableColumn* column = table->column(name);
    images.push_back(column != nullptr && holds_text(*column)
                         ? collation_image(connection, column->charset, column->collation)
                         : KeyImage());
  }
  return images;
}

// The sink for rows of `input`, written by `options.parallelism` subtasks.
SinkDef sink_for(const MySqlSinkOptions& options, const SessionConnector& connect,
                 const Schema& input) {
  const std::vector<std::string> key =
      options.key.empty() ? input.primary_key_names() : options.key;
  const MySqlSinkOptions::Mode mode = mode_of(options, key);
  SinkDef def;
  def.create = [options, connect, input, key, mode](const SubtaskInfo&) -> std::unique_ptr<Sink> {
    return std::make_unique<MySqlSink>(options, connect, input, key, mode);
  };
  def.waits_on_io = true;  // on the server, for every statement
  def.parallelism = options.parallelism;
  if (mode == MySqlSinkOptions::Mode::kUpsert) {
    def.key_columns = key;
    // A server that is not options.url's is asked nothing here.
    if (!connect) def.key_images = key_images(options, input, key);
  }
  def.check = [key, mode](const StreamType& in) {
    std::vector<std::string> problems;
    if (mode == MySqlSinkOptions::Mode::kUpsert && key.empty()) {
      problems.push_back("upsert mode needs a key: declare a primary key for the sink");
    }
    if (mode == MySqlSinkOptions::Mode::kRows && !key.empty()) {
      problems.push_back("a sink that applies rows takes no key; it has " + join(key));
    }
    if (mode == MySqlSinkOptions::Mode::kAppend && !in.mode.is_insert_only()) {
      problems.push_back(key.empty() ? "declare a primary key for the sink when the input contains "
                                       "update/delete (the input has " +
                                           in.mode.to_string() + ")"
                                     : "append mode takes inserts only; the input has " +
                                           in.mode.to_string());
    }
    return problems;
  };
  return def;
}

// The subtasks that write rows of `input`: the options' parallelism, but
// one for a table with another unique key, whose writes must keep their
// order. (A server not reachable now is the open's to report.)
int writers(const MySqlSinkOptions& options, const Schema& input) {
  if (options.parallelism <= 1) return options.parallelism;
  const std::vector<std::string> key =
      options.key.empty() ? input.primary_key_names() : options.key;
  std::vector<TableIndex> others;
  try {
    MySqlConnection connection(options.url);
    const std::optional<TableInfo> table = connection.find_table(options.table);
    if (table && mode_of(options, key) == MySqlSinkOptions::Mode::kUpsert) {
      others = other_unique_keys(*table, input, key);
    }
  } catch (const MySqlError&) {
  }
  if (others.empty()) return options.parallelism;
  spdlog::warn(
      "mysql sink: table '{}' has {} besides the sink's key ({}): one subtask writes it, in "
      "order (not {})",
      options.table, describe_keys(others), join(key), options.parallelism);
  return 1;
}

}  // namespace

SinkDef mysql_sink(const MySqlSinkOptions& options) { return mysql_sink(options, nullptr); }

void for_each_unseen(Sink& sink, const std::function<void(const Row&)>& each) {
  auto* mysql = dynamic_cast<MySqlSink*>(&sink);
  if (mysql == nullptr) throw std::logic_error("for_each_unseen() of a sink not of mysql_sink()");
  mysql->for_each_unseen(each);
}

SinkDef mysql_sink(const MySqlSinkOptions& options, SessionConnector connect) {
  if (options.table.empty()) {
    throw ConfigError("option 'sink.table' is required (the target table)");
  }
  SinkDef def;
  def.for_input = [options, connect](const StreamType& input) {
    MySqlSinkOptions effective = options;
    // A server that is not options.url's is asked nothing here.
    if (!connect) effective.parallelism = writers(options, input.schema);
    SinkDef sink = sink_for(effective, connect, input.schema);
    sink.flink_sql = [options](const TableSchema&, const RuntimeOptions& runtime) {
      return jdbc_table(options, options.table, runtime);
    };
    return sink;
  };
  return def;
}

FlinkSqlTable jdbc_table(const MySqlSinkOptions& options, const std::string& table,
                         const RuntimeOptions& runtime) {
  const MySqlUrl& url = options.url;
  FlinkSqlTable out{
      .name = table,
      .options = {
          {"connector", "jdbc"},
          {"url", "jdbc:mysql://" + (url.host.empty() ? std::string("localhost") : url.host) + ":" +
                      std::to_string(url.port) + "/" + url.database},
          {"table-name", table},
          {"username", url.user},
          {"password", "<password>"},
          {"sink.buffer-flush.max-rows", std::to_string(options.max_rows)},
          {"sink.buffer-flush.interval", format_duration(runtime.flush_interval)},
          {"sink.max-retries", std::to_string(options.max_retries)}}};
  if (options.parallelism > 1) {
    out.options.emplace_back("sink.parallelism", std::to_string(options.parallelism));
  }
  if (options.delivery == MySqlSinkOptions::Delivery::kExactlyOnce) {
    out.note =
        "sink.delivery=exactly-once: Flink's JDBC table sink is at-least-once; XA needs the "
        "DataStream JdbcSink.exactlyOnceSink.";
  }
  return out;
}

}  // namespace sluice
