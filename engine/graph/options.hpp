#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// Options are `key=value` strings checked against one table of known keys.
/// Every place that reads, documents or prints options (the CLI, `describe`,
/// the README's table) works from that table, so they cannot drift apart.
/// Errors are ConfigError, naming the key and what it accepts.
namespace sluice {

enum class OptionType { kString, kInteger, kBoolean, kDuration, kSize, kEnum };

/// One known key.
struct OptionSpec {
  std::string key;
  OptionType type = OptionType::kString;
  /// The default in the option's own syntax; empty means none.
  std::string default_value;
  /// One line saying what the option does.
  std::string doc;
  /// kEnum: the accepted words.
  std::vector<std::string> choices;
  /// kEnum: also accept a whole number (as `restore` takes a checkpoint id).
  bool also_integer = false;
  /// kInteger: the smallest accepted value.
  int64_t min = 0;
  /// Said instead of default_value where the default is derived ("the job's id").
  std::string default_doc;
  /// How a value is shown (describe, logs), for values holding a secret.
  std::string (*redact)(std::string_view value) = nullptr;

  /// What a value must look like, for error messages and docs.
  std::string accepts() const;
  /// The default as documented: default_doc, else default_value, else "—".
  std::string documented_default() const;
  /// `value` as it may be shown.
  std::string shown(std::string_view value) const {
    return redact ? redact(value) : std::string(value);
  }
};

/// The keys of several connectors and of a job, as one list (what
/// JobDefinition::options takes): for example
/// `option_specs({mysql_cdc_option_specs(), mysql_sink_option_specs(), own})`.
std::vector<OptionSpec> option_specs(std::initializer_list<std::vector<OptionSpec>> groups);

/// The set of keys a job accepts: the engine's, its connectors' and its own.
class OptionTable {
 public:
  OptionTable() = default;
  explicit OptionTable(std::vector<OptionSpec> specs);

  /// This table plus `more`; a key in `more` replaces the same key here.
  OptionTable merged(const std::vector<OptionSpec>& more) const;
  /// This table with some defaults changed; throws std::logic_error on an unknown key.
  OptionTable with_defaults(const std::map<std::string, std::string>& defaults) const;

  /// This table, knowing that the keys of `elsewhere` are options of other
  /// tables: setting one is reported with what `elsewhere` says of it
  /// ("job 'aggregate' does not use it; …"), not as an unknown key.
  OptionTable with_elsewhere(std::map<std::string, std::string, std::less<>> elsewhere) const;
  /// This table, knowing that the command `command` lists its keys: an
  /// unknown key's error says so.
  OptionTable with_listing(std::string command) const;

  const OptionSpec* find(std::string_view key) const;
  /// What with_elsewhere() says of `key`, or null.
  const std::string* elsewhere(std::string_view key) const;
  /// What with_listing() gave, or empty.
  const std::string& listing() const { return listing_; }
  const std::vector<OptionSpec>& specs() const { return specs_; }

  /// A Markdown table of key, default and meaning, sorted by key.
  std::string markdown() const;

 private:
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::string, std::less<>> elsewhere_;
  std::string listing_;
};

/// Parses "250ms", "5s", "2min", "1h" or "0". Returns nullopt if malformed.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
/// Parses "1024", "512kb", "64mb", "1gb" (powers of 1024). Nullopt if malformed.
std::optional<uint64_t> parse_size(std::string_view text);
/// "1s", "250ms", "2min": the shortest exact form.
std::string format_duration(std::chrono::milliseconds d);
/// The items of a comma-separated value ("id, name"), trimmed, empty ones dropped.
std::vector<std::string> split_list(std::string_view text);

enum class OptionOrigin { kDefault, kConfigFile, kCommandLine };

/// Option values checked against a table: defaults, then a config file, then
/// `--set` assignments, each later one winning.
class Config {
 public:
  explicit Config(OptionTable table);

  /// Sets `key` to `value`; throws ConfigError naming the key if it is unknown
  /// or the value is not what it accepts.
  void set(std::string_view key, std::string_view value,
           OptionOrigin origin = OptionOrigin::kCommandLine);
  /// Reads "key=value" as given to `--set`.
  void set_assignment(std::string_view assignment);
  /// Reads a file of `key=value` lines; blank lines and lines starting with
  /// `#` are skipped, and so is a `#` comment after a value when blank
  /// space comes before it (a `#` inside a value stays). Errors name the
  /// file and line.
  void load_file(const std::string& path);

  /// The value (set or default) of a known key; nullopt when it has none.
  std::optional<std::string> find(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::chrono::milliseconds get_duration(std::string_view key) const;
  uint64_t get_size(std::string_view key) const;
  OptionOrigin origin(std::string_view key) const;

  const OptionTable& table() const { return table_; }

 private:
  const OptionSpec& spec(std::string_view key) const;
  std::string require(std::string_view key) const;

  OptionTable table_;
  std::map<std::string, std::pair<std::string, OptionOrigin>, std::less<>> values_;
};

/// Builds the config a command line asks for: `config_file` (if any) first,
/// then every `--set` assignment, so `--set` wins.
Config make_config(OptionTable table, const std::optional<std::string>& config_file,
                   const std::vector<std::string>& assignments);

}  // namespace sluice
