#include "sluice/connectors/file/changelog_file.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "sluice/connectors/file/changelog_rows.hpp"
#include "sluice/connectors/file/csv_changelog.hpp"
#include "sluice/connectors/file/debezium_json.hpp"
#include "sluice/connectors/file/file_position.hpp"
#include "sluice/connectors/file/record_reader.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/fault_point.hpp"

namespace sluice {
namespace {

// Records read per poll.
constexpr int kRecordsPerPoll = 64;

class ChangelogFileSource final : public Source {
 public:
  explicit ChangelogFileSource(const ChangelogFileOptions& options)
      : options_(options),
        csv_(options.format == ChangelogFileOptions::Format::kCsv),
        reader_(options.path, csv_),
        csv_changelog_(options_.schema),
        debezium_changelog_(options_.schema) {}

  void open(OperatorContext& context) override {
    position_.emplace(context.value_state<std::vector<Value>>("position"));
    skipped_ = &context.counter("skipped");
    tombstones_ = &context.counter("tombstones");
    std::optional<FilePosition> resume;
    if (const std::optional<std::vector<Value>> saved = position_->get()) {
      resume = FilePosition::from_values(*saved);
      check_same_input(*resume, context);
    }
    if (csv_) {
      const auto header = reader_.next();
      if (!header) throw ConfigError(options_.path + ": the file is empty; expected a header");
      csv_changelog_.check_header(*header, options_.path);
    }
    if (resume) {
      reader_.seek(resume->offset, resume->line);
      spdlog::info("changelog-file {}: resuming at byte {} (line {})", options_.path,
                   reader_.offset(), reader_.line());
    }
    if (options_.on_error == ChangelogFileOptions::OnError::kSkip &&
        !options_.dead_letter.empty()) {
      dead_letter_.open(options_.dead_letter, std::ios::app);
      if (!dead_letter_)
        throw ConfigError("cannot open source.dead-letter " + options_.dead_letter);
    }
  }

  // Each record's changes go straight into the batch's columns; a record
  // that turns out malformed takes its rows out again.
  PollResult poll_next(Collector& out) override {
    Batch& rows = out.batch();
    for (int i = 0; i < kRecordsPerPoll; ++i) {
      const auto record = reader_.next();
      if (!record) return PollResult::kEndOfInput;
      if (record->text.empty()) continue;
      const uint32_t first = rows.size();
      try {
        if (csv_) {
          csv_changelog_.append(record->text, rows);
        } else if (!debezium_changelog_.append(record->text, rows)) {
          tombstones_->add(1);
        }
        check_changes(rows, first, options_.mode);
      } catch (const DataError& e) {
        rows.truncate(first);
        reject(*record, e.what());
        continue;
      }
      for (uint32_t row = first; row < rows.size(); ++row) rows.set_position(row, record->line);
    }
    return PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t) override {
    // The position, and what identifies the input it is a position in.
    position_->set(FilePosition::of(reader_).to_values());
    fault_point("file-snapshot");
    if (dead_letter_.is_open()) dead_letter_.flush();
  }

 private:
  // A checkpoint's position is a byte offset: it means something only in the
  // file it was taken on, or that file grown since. Anything else refuses.
  void check_same_input(const FilePosition& saved, const OperatorContext& context) const {
    const std::string differs = saved.differs(reader_);
    if (differs.empty()) return;
    throw ConfigError("changelog-file: checkpoint " +
                      std::to_string(context.restored_checkpoint().value_or(0)) + " of job '" +
                      context.subtask().job_name + "' was taken reading " + saved.path +
                      " up to line " + std::to_string(saved.line) + "; " +
                      FilePosition::absolute(options_.path) + " is other input (" + differs +
                      "). Use restore=none to read it from the start, or another job.name");
  }

  void reject(const RawRecord& record, const std::string& error) {
    const std::string where = options_.path + ":" + std::to_string(record.line);
    if (options_.on_error == ChangelogFileOptions::OnError::kFail) {
      throw DataError(where + ": " + error);
    }
    skipped_->add(1);
    spdlog::warn("changelog-file {}: skipped: {}", where, error);
    if (dead_letter_.is_open()) {
      dead_letter_ << nlohmann::json{{"file", options_.path},
                                     {"line", record.line},
                                     {"error", error},
                                     {"record", record.text}}
                          .dump()
                   << "\n";
    }
  }

  const ChangelogFileOptions options_;
  const bool csv_;
  RecordReader reader_;
  CsvChangelog csv_changelog_;
  const DebeziumChangelog debezium_changelog_;
  std::optional<ValueState<std::vector<Value>>> position_;
  Counter* skipped_ = nullptr;
  Counter* tombstones_ = nullptr;
  std::ofstream dead_letter_;
};

const OptionBinder<ChangelogFileOptions>& binder() {
  using Format = ChangelogFileOptions::Format;
  using OnError = ChangelogFileOptions::OnError;
  static const OptionBinder<ChangelogFileOptions> binder =
      OptionBinder<ChangelogFileOptions>()
          .text({.key = "source.path", .doc = "changelog-file: the file to read", .required = true},
                &ChangelogFileOptions::path)
          .choice({.key = "source.format", .doc = "changelog-file: csv or debezium-json"},
                  &ChangelogFileOptions::format,
                  {{"csv", Format::kCsv}, {"debezium-json", Format::kDebeziumJson}})
          // Read by the job, which hands the source its Schema.
          .bind({.key = "source.schema",
                 .doc = "changelog-file: the columns, e.g. id BIGINT, amount DECIMAL(10,2), "
                        "PRIMARY KEY (id)"})
          .choice({.key = "source.changelog-mode",
                   .doc = "changelog-file: the kinds a line may carry (all, or insert-only)"},
                  &ChangelogFileOptions::mode,
                  {{"all", ChangelogMode::all()}, {"insert-only", ChangelogMode::insert_only()}})
          .choice({.key = "source.on-error",
                   .doc = "changelog-file: a malformed line fails the job, or is skipped and "
                          "counted"},
                  &ChangelogFileOptions::on_error,
                  {{"fail", OnError::kFail}, {"skip", OnError::kSkip}})
          .text({.key = "source.dead-letter",
                 .doc = "changelog-file: with on-error=skip, where skipped lines go (JSON lines)"},
                &ChangelogFileOptions::dead_letter)
          .integer(source_rate_spec(), &ChangelogFileOptions::rate);
  return binder;
}

}  // namespace

std::vector<OptionSpec> changelog_file_option_specs() { return binder().specs(); }

ChangelogFileOptions ChangelogFileOptions::from(const Config& config, Schema schema) {
  ChangelogFileOptions options;
  binder().read(config, options);
  // Checked now, before the job starts; the source checks again when it opens.
  if (::access(options.path.c_str(), R_OK) != 0)
    throw ConfigError(cannot_read(options.path, errno));
  options.schema = std::move(schema);
  return options;
}

SourceDef changelog_file_source(const ChangelogFileOptions& options) {
  return SourceDef{
      // A -D line may give the key alone.
      .output = {options.schema, options.mode, options.mode.contains(RowKind::kDelete)},
      .create = [options](const SubtaskInfo&) -> std::unique_ptr<Source> {
        return std::make_unique<ChangelogFileSource>(options);
      },
      .rate = options.rate,
      .max_parallelism = 1,
      .describe_position =
          [path = options.path](int64_t line) {
            return "line " + std::to_string(line) + " of " + path;
          },
      .flink_sql =
          [path = options.path, format = options.format](const TableSchema&,
                                                         const RuntimeOptions&) {
            const bool debezium = format == ChangelogFileOptions::Format::kDebeziumJson;
            return FlinkSqlTable{
                .options = {{"connector", "filesystem"},
                            {"path", path},
                            {"format", debezium ? "debezium-json" : "csv"}},
                .note = debezium ? ""
                                 : "Sluice's CSV changelog carries an op column, which Flink's "
                                   "csv format does not read: convert the file to debezium-json."};
          },
  };
}

}  // namespace sluice
