#include "sluice/connectors/mysql_tables_sink.hpp"

#include <spdlog/spdlog.h>

#include <exception>
#include <memory>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// What one table's sink sees of the engine: the sink's context, with its
// state kept under the table's name, and its own operator name, which
// keeps its XA transactions apart from the other tables'. Its counters are
// the sink's, so that they add up over the tables.
class TableContext final : public SinkContext {
 public:
  TableContext(SinkContext& sink, const std::string& table)
      : sink_(sink), prefix_(table + "/"), info_(sink.subtask()) {
    info_.operator_name += "/" + table;
  }

  const SubtaskInfo& subtask() const override { return info_; }
  Counter& counter(const std::string& name) override { return sink_.counter(name); }
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
  void register_cancel_action(std::function<void()> action) override {
    sink_.register_cancel_action(std::move(action));
  }
  void register_flush_action(std::function<void()> action) override { flush_ = std::move(action); }

  /// Runs the flush action the table's sink registered.
  void flush() const {
    if (flush_) flush_();
  }

 private:
  SinkContext& sink_;
  const std::string prefix_;
  SubtaskInfo info_;
  std::function<void()> flush_;
};

class MySqlTablesSink final : public Sink {
 public:
  MySqlTablesSink(MySqlSinkOptions options, std::vector<TableSchema> tables,
                  std::vector<MySqlTableTarget> targets, bool create_tables)
      : options_(std::move(options)),
        tables_(std::move(tables)),
        targets_(std::move(targets)),
        create_tables_(create_tables) {}

  void open(SinkContext& context) override {
    if (create_tables_) create_missing_tables();
    for (size_t t = 0; t < tables_.size(); ++t) {
      MySqlSinkOptions options = options_;
      options.table = targets_[t].table;
      options.key.clear();
      options.mode.reset();
      options.parallelism = 1;
      contexts_.push_back(std::make_unique<TableContext>(context, tables_[t].name));
      sinks_.push_back(mysql_sink(options, tables_[t].schema).create(contexts_.back()->subtask()));
      sinks_.back()->open(*contexts_.back());
    }
    context.register_flush_action([this] {
      for (const auto& table : contexts_) table->flush();
    });
  }

  void write(Row&&) override {
    throw std::logic_error("the MySQL sink of several tables takes batches, each of one table");
  }
  void write_batch(Batch& rows) override { sinks_.at(rows.table())->write_batch(rows); }
  void finish() override {
    for (const auto& sink : sinks_) sink->finish();
  }

  void snapshot_state(int64_t id) override {
    for (const auto& sink : sinks_) sink->snapshot_state(id);
  }
  void notify_checkpoint_complete(int64_t id) override {
    for (const auto& sink : sinks_) sink->notify_checkpoint_complete(id);
  }
  void notify_checkpoint_aborted(int64_t id) override {
    for (const auto& sink : sinks_) sink->notify_checkpoint_aborted(id);
  }
  // Every table's sink closes, whatever another's close threw.
  void close(std::optional<int64_t> last_completed) override {
    std::exception_ptr first;
    for (const auto& sink : sinks_) {
      try {
        sink->close(last_completed);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

 private:
  void create_missing_tables() {
    MySqlConnection connection(options_.url);
    for (size_t t = 0; t < tables_.size(); ++t) {
      const MySqlTableTarget& target = targets_[t];
      if (connection.find_table(target.table)) continue;
      const std::string sql = create_table_sql(quote_identifier(target.table), target.like);
      spdlog::info("mysql sink: creating table '{}' like '{}': {}", target.table, tables_[t].name,
                   sql);
      try {
        connection.execute(sql);
      } catch (const MySqlError& e) {
        // Created meanwhile by another run: it is checked like any target.
        if (e.code() != 1050) throw;  // ER_TABLE_EXISTS_ERROR
      }
    }
  }

  const MySqlSinkOptions options_;
  const std::vector<TableSchema> tables_;
  const std::vector<MySqlTableTarget> targets_;
  const bool create_tables_;
  // Per table: its sink, and the context it sees. Contexts go after the
  // sinks that hold them.
  std::vector<std::unique_ptr<TableContext>> contexts_;
  std::vector<std::unique_ptr<Sink>> sinks_;
};

}  // namespace

SinkDef mysql_tables_sink(const MySqlSinkOptions& options, const std::vector<TableSchema>& tables,
                          std::vector<MySqlTableTarget> targets, bool create_tables) {
  if (targets.size() != tables.size()) {
    throw std::logic_error("mysql_tables_sink: a target per table");
  }
  for (size_t t = 0; t < tables.size(); ++t) {
    for (size_t u = 0; u < t; ++u) {
      if (targets[u].table == targets[t].table) {
        throw ConfigError("tables '" + tables[u].name + "' and '" + tables[t].name +
                          "' would both be written into table '" + targets[t].table +
                          "'; a sink of several tables writes each into its own");
      }
    }
  }
  return SinkDef{
      .create = [options, tables, targets = std::move(targets),
                 create_tables](const SubtaskInfo&) -> std::unique_ptr<Sink> {
        return std::make_unique<MySqlTablesSink>(options, tables, targets, create_tables);
      },
      .check =
          [](const StreamType& input) {
            std::vector<std::string> problems;
            for (const TableSchema& table : input.tables) {
              if (!table.schema.has_primary_key()) {
                problems.push_back("table '" + table.name +
                                   "' has no primary key: the sink writes each table by its key");
              }
            }
            return problems;
          },
      .takes_tables = true,
  };
}

}  // namespace sluice
