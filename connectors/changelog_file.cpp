#include "connectors/changelog_file.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "connectors/source_options.hpp"
#include "engine/error.hpp"
#include "engine/value_codec.hpp"

namespace sluice {
namespace {

// Records read per poll.
constexpr int kRecordsPerPoll = 64;

// One record of the file: its text without the line break, where it starts.
struct RawRecord {
  std::string text;
  int64_t line = 0;  // 1-based number of its first line
};

// Reads records from a file, tracking the byte offset and the line number of
// the next one. A CSV record continues over line breaks inside quotes.
class RecordReader {
 public:
  RecordReader(const std::string& path, bool csv) : path_(path), csv_(csv) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) throw Error("cannot open changelog file " + path);
  }
  ~RecordReader() {
    if (file_) std::fclose(file_);
    std::free(buffer_);
  }
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  void seek(int64_t offset, int64_t line) {
    if (fseeko(file_, offset, SEEK_SET) != 0) {
      throw Error("cannot seek to byte " + std::to_string(offset) + " of " + path_);
    }
    offset_ = offset;
    line_ = line;
  }

  std::optional<RawRecord> next() {
    RawRecord record{"", line_};
    bool in_quotes = false;
    while (true) {
      const ssize_t n = getline(&buffer_, &capacity_, file_);
      if (n < 0) {
        if (record.text.empty() && !in_quotes) return std::nullopt;
        break;  // a last line without a line break, or an unclosed quote
      }
      offset_ += n;
      ++line_;
      std::string_view part(buffer_, static_cast<size_t>(n));
      if (csv_) {
        for (char c : part) in_quotes ^= c == '"';
      }
      record.text.append(part);
      if (!in_quotes) break;
    }
    while (!record.text.empty() && (record.text.back() == '\n' || record.text.back() == '\r')) {
      record.text.pop_back();
    }
    return record;
  }

  int64_t offset() const { return offset_; }
  int64_t line() const { return line_; }

 private:
  std::string path_;
  bool csv_;
  FILE* file_ = nullptr;
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
  int64_t offset_ = 0;
  int64_t line_ = 1;
};

// A CSV field: its text and whether it was quoted (an unquoted empty field is NULL).
struct CsvField {
  std::string text;
  bool quoted = false;
};

std::vector<CsvField> split_csv(std::string_view record) {
  std::vector<CsvField> fields(1);
  size_t i = 0;
  bool at_field_start = true;
  while (i < record.size()) {
    const char c = record[i];
    if (at_field_start && c == '"') {
      fields.back().quoted = true;
      ++i;
      while (true) {
        if (i >= record.size()) throw DataError("a quoted field is not closed");
        if (record[i] == '"') {
          if (i + 1 < record.size() && record[i + 1] == '"') {
            fields.back().text.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        fields.back().text.push_back(record[i++]);
      }
      if (i < record.size() && record[i] != ',') {
        throw DataError("a quoted field is followed by text instead of a comma");
      }
      at_field_start = false;
      continue;
    }
    if (c == ',') {
      fields.emplace_back();
      at_field_start = true;
    } else {
      if (c == '"') throw DataError("a quote inside an unquoted field");
      fields.back().text.push_back(c);
      at_field_start = false;
    }
    ++i;
  }
  return fields;
}

// Parses changelog records of one format into rows.
class RecordParser {
 public:
  RecordParser(const ChangelogFileOptions& options) : options_(options) {}

  /// Checks the CSV header.
  void check_header(const RawRecord& header) const {
    std::vector<std::string> expected = {"op"};
    for (const auto& column : options_.schema.columns()) expected.push_back(column.name);
    std::vector<std::string> names;
    for (auto& field : split_csv(header.text)) names.push_back(field.text);
    if (names != expected) {
      std::string want;
      for (const auto& n : expected) want += (want.empty() ? "" : ",") + n;
      throw ConfigError(options_.path + ":" + std::to_string(header.line) +
                        ": the header must be '" + want + "', got '" + header.text + "'");
    }
  }

  /// Appends the rows of `record` to `rows`; throws DataError saying what is wrong.
  void parse(const RawRecord& record, std::vector<Row>& rows) const {
    if (options_.format == ChangelogFileOptions::Format::kCsv) {
      rows.push_back(parse_csv(record.text));
    } else {
      parse_debezium(record.text, rows);
    }
    for (const Row& row : rows) {
      if (!options_.mode.contains(row.kind)) {
        throw DataError(std::string("a ") + std::string(to_string(row.kind)) + " change in " +
                        (options_.mode.is_insert_only() ? "an insert-only changelog"
                                                        : "a changelog of " + options_.mode.to_string()) +
                        " (source.changelog-mode)");
      }
    }
  }

 private:
  Row parse_csv(std::string_view text) const {
    const Schema& schema = options_.schema;
    std::vector<CsvField> fields = split_csv(text);
    Row row;
    row.kind = parse_row_kind(fields[0].text);
    const size_t given = fields.size() - 1;
    const bool key_only_delete = row.kind == RowKind::kDelete && given < schema.size() &&
                                 given >= key_prefix_length();
    if (given != schema.size() && !key_only_delete) {
      throw DataError("expected " + std::to_string(schema.size() + 1) + " fields (op and " +
                      std::to_string(schema.size()) + " columns), got " +
                      std::to_string(fields.size()));
    }
    row.fields.reserve(schema.size());
    for (size_t c = 0; c < schema.size(); ++c) {
      if (c >= given || (fields[c + 1].text.empty() && !fields[c + 1].quoted)) {
        row.fields.emplace_back();
        continue;
      }
      row.fields.push_back(parse_column(c, fields[c + 1].text));
    }
    check_key(row);
    return row;
  }

  void parse_debezium(std::string_view text, std::vector<Row>& rows) const {
    nlohmann::json envelope;
    try {
      envelope = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw DataError(std::string("not JSON: ") + e.what());
    }
    if (envelope.is_object() && envelope.contains("payload")) envelope = envelope["payload"];
    if (!envelope.is_object() || !envelope.contains("op") || !envelope["op"].is_string()) {
      throw DataError("expected a Debezium envelope with \"op\"");
    }
    const std::string op = envelope["op"].get<std::string>();
    const auto image = [&](const char* which) -> const nlohmann::json& {
      const auto it = envelope.find(which);
      if (it == envelope.end() || !it->is_object()) {
        throw DataError(std::string("op \"") + op + "\" needs an object in \"" + which + "\"");
      }
      return *it;
    };
    if (op == "c" || op == "r") {
      rows.push_back(json_row(RowKind::kInsert, image("after")));
    } else if (op == "u") {
      if (envelope.contains("before") && envelope["before"].is_object()) {
        rows.push_back(json_row(RowKind::kUpdateBefore, envelope["before"]));
      }
      rows.push_back(json_row(RowKind::kUpdateAfter, image("after")));
    } else if (op == "d") {
      rows.push_back(json_row(RowKind::kDelete, image("before")));
    } else {
      throw DataError("expected op c, r, u or d, got \"" + op + "\"");
    }
  }

  Row json_row(RowKind kind, const nlohmann::json& image) const {
    Row row;
    row.kind = kind;
    for (size_t c = 0; c < options_.schema.size(); ++c) {
      const auto it = image.find(options_.schema.column(c).name);
      row.fields.push_back(it == image.end() ? Value() : json_value(c, *it));
    }
    check_key(row);
    return row;
  }

  Value json_value(size_t c, const nlohmann::json& v) const {
    if (v.is_null()) return Value();
    const DataType& type = options_.schema.column(c).type;
    if (v.is_string()) return parse_column(c, v.get<std::string>());
    if (v.is_boolean() && type.id == TypeId::kBoolean) return Value::boolean(v.get<bool>());
    if (v.is_number_integer() && type.id == TypeId::kTimestamp) {
      // Debezium's io.debezium.time.Timestamp: milliseconds since the epoch.
      return Timestamp{v.get<int64_t>() * 1000};
    }
    if (v.is_number() && type.id != TypeId::kString && type.id != TypeId::kBoolean) {
      // Shortest round-trip text of the number: exact up to 15 digits.
      return parse_column(c, v.dump());
    }
    throw DataError("column '" + options_.schema.column(c).name + "' expects " + type.to_string() +
                    ", got " + v.dump());
  }

  Value parse_column(size_t c, std::string_view text) const {
    try {
      return parse_value(text, options_.schema.column(c).type);
    } catch (const DataError& e) {
      throw DataError("column '" + options_.schema.column(c).name + "': " + e.what());
    }
  }

  // How many leading columns a key-only delete must give: through the last key column.
  size_t key_prefix_length() const {
    size_t n = 1;
    for (size_t k : options_.schema.primary_key()) n = std::max(n, k + 1);
    return n;
  }

  void check_key(const Row& row) const {
    for (size_t k : options_.schema.primary_key()) {
      if (row.fields[k].is_null()) {
        throw DataError("key column '" + options_.schema.column(k).name + "' is empty");
      }
    }
  }

  const ChangelogFileOptions& options_;
};

class ChangelogFileSource final : public Source {
 public:
  explicit ChangelogFileSource(const ChangelogFileOptions& options)
      : options_(options),
        reader_(options.path, options.format == ChangelogFileOptions::Format::kCsv),
        parser_(options_) {}

  void open(OperatorContext& context) override {
    position_.emplace(context.value_state("position"));
    skipped_ = &context.counter("skipped");
    if (options_.format == ChangelogFileOptions::Format::kCsv) {
      const auto header = reader_.next();
      if (!header) throw ConfigError(options_.path + ": the file is empty; expected a header");
      parser_.check_header(*header);
    }
    if (const auto saved = position_->get()) {
      const auto values = decode_values(*saved);
      reader_.seek(values.at(0).as_bigint(), values.at(1).as_bigint());
      spdlog::info("changelog-file {}: resuming at byte {} (line {})", options_.path,
                   reader_.offset(), reader_.line());
    }
    if (options_.on_error == ChangelogFileOptions::OnError::kSkip && !options_.dead_letter.empty()) {
      dead_letter_.open(options_.dead_letter, std::ios::app);
      if (!dead_letter_) throw ConfigError("cannot open source.dead-letter " + options_.dead_letter);
    }
  }

  PollResult poll_next(Collector& out) override {
    std::vector<Row> rows;
    for (int i = 0; i < kRecordsPerPoll; ++i) {
      const auto record = reader_.next();
      if (!record) return PollResult::kEndOfInput;
      if (record->text.empty()) continue;
      rows.clear();
      try {
        parser_.parse(*record, rows);
      } catch (const DataError& e) {
        reject(*record, e.what());
        continue;
      }
      for (Row& row : rows) out.emit(std::move(row));
    }
    return PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t) override {
    position_->set(encode_values({Value(reader_.offset()), Value(reader_.line())}));
    if (dead_letter_.is_open()) dead_letter_.flush();
  }

 private:
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
  RecordReader reader_;
  RecordParser parser_;
  std::optional<ValueState> position_;
  Counter* skipped_ = nullptr;
  std::ofstream dead_letter_;
};

}  // namespace

std::vector<OptionSpec> changelog_file_option_specs() {
  return {
      {.key = "source.path", .doc = "changelog-file: the file to read"},
      {.key = "source.format",
       .type = OptionType::kEnum,
       .default_value = "csv",
       .doc = "changelog-file: csv or debezium-json",
       .choices = {"csv", "debezium-json"}},
      {.key = "source.schema",
       .doc = "changelog-file: the columns, e.g. id BIGINT, amount DECIMAL(10,2), PRIMARY KEY (id)"},
      {.key = "source.changelog-mode",
       .type = OptionType::kEnum,
       .default_value = "all",
       .doc = "changelog-file: the kinds a line may carry (all, or insert-only)",
       .choices = {"all", "insert-only"}},
      {.key = "source.on-error",
       .type = OptionType::kEnum,
       .default_value = "fail",
       .doc = "changelog-file: a malformed line fails the job, or is skipped and counted",
       .choices = {"fail", "skip"}},
      {.key = "source.dead-letter",
       .doc = "changelog-file: with on-error=skip, where skipped lines go (JSON lines)"},
      source_rate_spec(),
  };
}

ChangelogFileOptions ChangelogFileOptions::from(const Config& config, Schema schema) {
  ChangelogFileOptions options;
  options.path = config.get_string("source.path");
  options.format = config.get_string("source.format") == "csv" ? Format::kCsv : Format::kDebeziumJson;
  options.schema = std::move(schema);
  options.mode = config.get_string("source.changelog-mode") == "insert-only"
                     ? ChangelogMode::insert_only()
                     : ChangelogMode::all();
  options.on_error = config.get_string("source.on-error") == "skip" ? OnError::kSkip : OnError::kFail;
  options.dead_letter = config.find("source.dead-letter").value_or("");
  options.rate = static_cast<double>(config.get_int("source.rate"));
  return options;
}

SourceDef changelog_file_source(const ChangelogFileOptions& options) {
  return SourceDef{
      .output = {options.schema, options.mode},
      .create = [options](const SubtaskInfo&) -> std::unique_ptr<Source> {
        return std::make_unique<ChangelogFileSource>(options);
      },
      .rate = options.rate,
      .max_parallelism = 1,
  };
}

}  // namespace sluice
