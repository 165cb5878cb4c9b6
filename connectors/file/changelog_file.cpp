#include "sluice/connectors/file/changelog_file.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "sluice/connectors/file/debezium_json.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/fault_point.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

// Records read per poll.
constexpr int kRecordsPerPoll = 64;

// One record of the file: its text without the line break, where it starts.
struct RawRecord {
  std::string text;
  int64_t line = 0;  // 1-based number of its first line
};

// Why the changelog file at `path` cannot be read: a configuration error.
std::string cannot_read(const std::string& path, int error) {
  return "source.path: cannot read the changelog file " + path + ": " + std::strerror(error);
}

// Reads records from a file, tracking the byte offset and the line number of
// the next one. A CSV record continues over line breaks inside a quoted
// field; a quote anywhere else opens nothing, so a stray one spoils only its
// own line. A UTF-8 byte order mark at the start is passed over.
class RecordReader {
 public:
  RecordReader(const std::string& path, bool csv) : path_(path), csv_(csv) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) throw ConfigError(cannot_read(path, errno));
    char bom[3];
    if (std::fread(bom, 1, 3, file_) == 3 && std::string_view(bom, 3) == "\xEF\xBB\xBF") {
      offset_ = 3;
    }
    seek(offset_, 1);
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
    CsvScan scan;
    while (true) {
      const ssize_t n = getline(&buffer_, &capacity_, file_);
      if (n < 0) {
        if (std::ferror(file_)) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
        if (record.text.empty()) return std::nullopt;
        break;  // an unclosed quote at the end of the file
      }
      offset_ += n;
      ++line_;
      const std::string_view part(buffer_, static_cast<size_t>(n));
      record.text.append(part);
      if (!csv_ || !scan.ends_quoted(part)) break;
    }
    while (!record.text.empty() && (record.text.back() == '\n' || record.text.back() == '\r')) {
      record.text.pop_back();
    }
    return record;
  }

  int64_t offset() const { return offset_; }
  int64_t line() const { return line_; }

  /// The file's size now.
  int64_t size() const {
    struct stat st;
    if (::fstat(::fileno(file_), &st) != 0) throw Error("cannot stat " + path_);
    return st.st_size;
  }

  /// A fingerprint of what the file holds before byte `end`: its first and
  /// its last few KiB there (FNV-1a), read without moving the read position.
  uint64_t fingerprint(int64_t end) const {
    constexpr int64_t kSpan = 4096;
    uint64_t hash = 14695981039346656037ull;
    std::vector<char> bytes;
    for (const int64_t from : {int64_t{0}, std::max<int64_t>(0, end - kSpan)}) {
      bytes.resize(static_cast<size_t>(std::min(kSpan, end - from)));
      const ssize_t n = ::pread(::fileno(file_), bytes.data(), bytes.size(), from);
      if (n < 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
      for (ssize_t i = 0; i < n; ++i)
        hash = (hash ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ull;
    }
    return hash;
  }

 private:
  // Follows RFC 4180's quoting across the lines of one record.
  struct CsvScan {
    bool quoted = false;       // inside a quoted field
    bool field_start = true;   // at the first character of a field
    bool just_closed = false;  // right after a quoted field's closing quote
    // Whether a quoted field is still open at the end of `line`.
    bool ends_quoted(std::string_view line) {
      for (const char c : line) {
        if (quoted) {
          if (c == '"') {
            quoted = false;
            just_closed = true;
          }
          continue;
        }
        // A quote opens a field only at its start, or right after a closing
        // one: that pair is an escaped quote ("").
        if (c == '"' && (field_start || just_closed)) {
          quoted = true;
          field_start = just_closed = false;
          continue;
        }
        field_start = c == ',';
        just_closed = false;
      }
      return quoted;
    }
  };

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
// `text` with what a terminal does not show spelled out: a byte-order
// mark, a non-breaking space, a tab, a carriage return.
std::string visible(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 3) == "\xEF\xBB\xBF") {
      out += "<BOM>";
      i += 2;
    } else if (text.substr(i, 2) == "\xC2\xA0") {
      out += "<NBSP>";
      i += 1;
    } else if (text[i] == '\t') {
      out += "<TAB>";
    } else if (text[i] == '\r') {
      out += "<CR>";
    } else {
      out += text[i];
    }
  }
  return out;
}

class RecordParser {
 public:
  RecordParser(const ChangelogFileOptions& options)
      : options_(options), debezium_(options.schema.column_names()) {}

  /// Checks the CSV header.
  void check_header(const RawRecord& header) const {
    std::vector<std::string> expected = {"op"};
    for (auto& name : options_.schema.column_names()) expected.push_back(std::move(name));
    std::vector<std::string> names;
    for (auto& field : split_csv(header.text)) names.push_back(field.text);
    if (names != expected) {
      std::string want;
      for (const auto& n : expected) want += (want.empty() ? "" : ",") + n;
      std::string message = options_.path + ":" + std::to_string(header.line) +
                            ": the header must be '" + want + "', got '" + visible(header.text) +
                            "'";
      // Name the first field that differs, with what cannot be seen shown.
      for (size_t i = 0; i < std::min(names.size(), expected.size()); ++i) {
        if (names[i] == expected[i]) continue;
        message += ": field " + std::to_string(i + 1) + " is '" + visible(names[i]) + "', not '" +
                   expected[i] + "'";
        break;
      }
      throw ConfigError(message);
    }
  }

  /// Appends the rows of `record` to `rows`; throws DataError saying what is
  /// wrong. Returns false for a Debezium tombstone, which changes nothing.
  bool parse(const RawRecord& record, std::vector<Row>& rows) const {
    if (options_.format == ChangelogFileOptions::Format::kCsv) {
      rows.push_back(parse_csv(record.text));
    } else if (!parse_debezium(record.text, rows)) {
      return false;
    }
    for (const Row& row : rows) {
      if (!options_.mode.contains(row.kind)) {
        throw DataError(std::string("a ") + std::string(to_string(row.kind)) + " change in " +
                        (options_.mode.is_insert_only()
                             ? "an insert-only changelog"
                             : "a changelog of " + options_.mode.to_string()) +
                        " (source.changelog-mode)");
      }
    }
    return true;
  }

 private:
  Row parse_csv(std::string_view text) const {
    const Schema& schema = options_.schema;
    std::vector<CsvField> fields = split_csv(text);
    Row row;
    row.kind = parse_row_kind(fields[0].text);
    const size_t given = fields.size() - 1;
    const bool key_only_delete =
        row.kind == RowKind::kDelete && given < schema.size() && given >= key_prefix_length();
    if (given != schema.size() && !key_only_delete) {
      throw DataError("expected " + count_of(schema.size() + 1, "field") + " (op and " +
                      count_of(schema.size(), "column") + "), got " +
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

  bool parse_debezium(std::string_view text, std::vector<Row>& rows) const {
    DebeziumEvent event = debezium_.parse(text);
    if (event.tombstone) return false;
    const std::string& op = event.op;
    if (op.empty()) throw DataError("expected a Debezium envelope with \"op\"");
    const auto image = [&](std::optional<JsonImage>& given, const char* which) -> JsonImage& {
      if (!given) throw DataError("op \"" + op + "\" needs an object in \"" + which + "\"");
      return *given;
    };
    if (op == "c" || op == "r") {
      rows.push_back(json_row(RowKind::kInsert, image(event.after, "after")));
    } else if (op == "u") {
      Row after = json_row(RowKind::kUpdateAfter, image(event.after, "after"));
      if (event.before) {
        Row before = json_row(RowKind::kUpdateBefore, *event.before);
        if (!same_key(before, after)) {
          // The key changed: the old row goes, a new one comes.
          before.kind = RowKind::kDelete;
          after.kind = RowKind::kInsert;
        }
        rows.push_back(std::move(before));
      }
      rows.push_back(std::move(after));
    } else if (op == "d") {
      rows.push_back(json_row(RowKind::kDelete, image(event.before, "before")));
    } else {
      throw DataError("expected op c, r, u or d, got \"" + op + "\"");
    }
    return true;
  }

  bool same_key(const Row& a, const Row& b) const {
    for (size_t k : options_.schema.primary_key()) {
      if (!(a.fields[k] == b.fields[k])) return false;
    }
    return true;
  }

  Row json_row(RowKind kind, JsonImage& image) const {
    Row row;
    row.kind = kind;
    row.fields.reserve(image.size());
    for (size_t c = 0; c < image.size(); ++c) row.fields.push_back(json_value(c, image[c]));
    check_key(row);
    return row;
  }

  Value json_value(size_t c, JsonField& v) const {
    using Kind = JsonField::Kind;
    if (v.kind == Kind::kAbsent || v.kind == Kind::kNull) return Value();
    const DataType& type = options_.schema.column(c).type;
    if (v.kind == Kind::kString) return parse_column(c, v.text);
    if (v.kind == Kind::kBoolean && type.id == TypeId::kBoolean)
      return Value::boolean(v.text == "true");
    if (v.kind == Kind::kNumber && v.text.find_first_of(".eE") == std::string::npos) {
      // Debezium's io.debezium.time types: Timestamp in milliseconds since
      // the epoch, Date in days, MicroTime in microseconds.
      if (type.id == TypeId::kTimestamp) return Timestamp{std::stoll(v.text) * 1000};
      if (type.id == TypeId::kDate) return Date{static_cast<int32_t>(std::stol(v.text))};
      if (type.id == TypeId::kTime) return Time{std::stoll(v.text)};
    }
    if (v.kind == Kind::kNumber && type.id != TypeId::kString && type.id != TypeId::kBoolean) {
      // The number's own text, never a double's: a DECIMAL keeps every digit.
      return parse_column(c, type.id == TypeId::kDecimal ? expand_exponent(v.text) : v.text);
    }
    throw DataError("column '" + options_.schema.column(c).name + "' expects " + type.to_string() +
                    ", got " + (v.kind == Kind::kComposite ? "an object or array" : v.text));
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
  const DebeziumParser debezium_;
};

class ChangelogFileSource final : public Source {
 public:
  explicit ChangelogFileSource(const ChangelogFileOptions& options)
      : options_(options),
        reader_(options.path, options.format == ChangelogFileOptions::Format::kCsv),
        parser_(options_) {}

  void open(OperatorContext& context) override {
    position_.emplace(context.value_state<std::vector<Value>>("position"));
    skipped_ = &context.counter("skipped");
    tombstones_ = &context.counter("tombstones");
    const std::optional<std::vector<Value>> resume = position_->get();
    if (resume) check_same_input(*resume, context);
    if (options_.format == ChangelogFileOptions::Format::kCsv) {
      const auto header = reader_.next();
      if (!header) throw ConfigError(options_.path + ": the file is empty; expected a header");
      parser_.check_header(*header);
    }
    if (resume) {
      reader_.seek(resume->at(0).as_bigint(), resume->at(1).as_bigint());
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

  PollResult poll_next(Collector& out) override {
    std::vector<Row> rows;
    for (int i = 0; i < kRecordsPerPoll; ++i) {
      const auto record = reader_.next();
      if (!record) return PollResult::kEndOfInput;
      if (record->text.empty()) continue;
      rows.clear();
      try {
        if (!parser_.parse(*record, rows)) tombstones_->add(1);
      } catch (const DataError& e) {
        reject(*record, e.what());
        continue;
      }
      for (const Row& row : rows) out.emit(row, record->line);
    }
    return PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t) override {
    // The position, and what identifies the input it is a position in.
    const int64_t offset = reader_.offset();
    position_->set({Value(offset), Value(reader_.line()), Value(absolute_path()),
                    Value(reader_.size()),
                    Value(static_cast<int64_t>(reader_.fingerprint(offset)))});
    fault_point("file-snapshot");
    if (dead_letter_.is_open()) dead_letter_.flush();
  }

 private:
  std::string absolute_path() const {
    return std::filesystem::absolute(options_.path).lexically_normal().string();
  }

  // A checkpoint's position is a byte offset: it means something only in the
  // file it was taken on, or that file grown since. Anything else refuses.
  void check_same_input(const std::vector<Value>& saved, const OperatorContext& context) const {
    if (saved.size() < 5) return;  // taken before checkpoints recorded the input
    const int64_t offset = saved[0].as_bigint();
    const std::string& path = saved[2].as_string();
    const int64_t size = saved[3].as_bigint();
    std::string differs;
    if (path != absolute_path()) {
      differs = "it is another file";
    } else if (reader_.size() < size) {
      differs = "it holds " + count_of(reader_.size(), "byte") + ", fewer than the " +
                std::to_string(size) + " it held then";
    } else if (static_cast<int64_t>(reader_.fingerprint(offset)) != saved[4].as_bigint()) {
      differs = "its first " + count_of(offset, "byte") + " are not the ones read then";
    }
    if (differs.empty()) return;
    throw ConfigError(
        "changelog-file: checkpoint " + std::to_string(context.restored_checkpoint().value_or(0)) +
        " of job '" + context.subtask().job_name + "' was taken reading " + path + " up to line " +
        std::to_string(saved[1].as_bigint()) + "; " + absolute_path() + " is other input (" +
        differs + "). Use restore=none to read it from the start, or another job.name");
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
  RecordReader reader_;
  RecordParser parser_;
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
  };
}

}  // namespace sluice
