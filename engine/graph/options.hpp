#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  /// Reading the options needs a value: without one (set or default) the
  /// error says the key is required (OptionBinder::read()).
  bool required = false;

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

/// The keys of an options struct, each bound once to its field: the key's
/// spec (doc, type, limits) and how the field is read from a Config and
/// shown. A key's documented default is its field's value in a
/// default-constructed `Options`, so a default is written once, in the
/// struct. RuntimeOptions and the connectors' options are read so:
///
///   static const OptionBinder<DatagenOptions> kBinder =
///       OptionBinder<DatagenOptions>()
///           .integer({.key = "source.rows", .doc = "changes to generate"},
///                    &DatagenOptions::rows)
///           .choice({.key = "source.skew", .doc = "..."}, &DatagenOptions::skew,
///                   {{"uniform", Skew::kUniform}, {"zipf", Skew::kZipf}});
///   kBinder.specs();                      // for the option table
///   kBinder.read(config, options);        // from a config
template <typename Options>
class OptionBinder {
  template <typename T>
  struct Unwrap {
    using type = T;
  };
  template <typename T>
  struct Unwrap<std::optional<T>> {
    using type = T;
  };
  /// What a field holds: T of an optional<T>.
  template <typename T>
  using Unwrapped = typename Unwrap<T>::type;

 public:
  /// The field's value in the option's syntax; empty: none to show.
  using Show = std::function<std::string(const Options&)>;
  /// Reads the key's value (it has one) into the options.
  using Read = std::function<void(const Config&, Options&)>;

  /// A key read and shown as given. Without `show` the spec's own
  /// default_value (or default_doc) stands; without `read` the key is
  /// documented here and read elsewhere (by the job, say).
  OptionBinder& bind(OptionSpec spec, Show show = nullptr, Read read = nullptr) {
    bindings_.push_back({std::move(spec), std::move(show), std::move(read)});
    return *this;
  }

  /// A whole number (any arithmetic field: `source.rate` is a double).
  template <typename Number>
  OptionBinder& integer(OptionSpec spec, Number Options::*field) {
    spec.type = OptionType::kInteger;
    const std::string key = spec.key;
    return bind(
        std::move(spec),
        [field](const Options& o) { return std::to_string(static_cast<int64_t>(o.*field)); },
        [field, key](const Config& config, Options& o) {
          o.*field = static_cast<Number>(config.get_int(key));
        });
  }

  template <typename Rep, typename Period>
  OptionBinder& duration(OptionSpec spec, std::chrono::duration<Rep, Period> Options::*field) {
    spec.type = OptionType::kDuration;
    const std::string key = spec.key;
    return bind(
        std::move(spec),
        [field](const Options& o) {
          return format_duration(std::chrono::duration_cast<std::chrono::milliseconds>(o.*field));
        },
        [field, key](const Config& config, Options& o) {
          o.*field = std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(
              config.get_duration(key));
        });
  }

  OptionBinder& boolean(OptionSpec spec, bool Options::*field) {
    spec.type = OptionType::kBoolean;
    const std::string key = spec.key;
    return bind(
        std::move(spec), [field](const Options& o) { return o.*field ? "true" : "false"; },
        [field, key](const Config& config, Options& o) { o.*field = config.get_bool(key); });
  }

  OptionBinder& text(OptionSpec spec, std::string Options::*field) {
    const std::string key = spec.key;
    return bind(
        std::move(spec), [field](const Options& o) { return o.*field; },
        [field, key](const Config& config, Options& o) { o.*field = config.get_string(key); });
  }

  /// A comma-separated list (split_list()).
  OptionBinder& list(OptionSpec spec, std::vector<std::string> Options::*field) {
    const std::string key = spec.key;
    return bind(
        std::move(spec),
        [field](const Options& o) {
          std::string out;
          for (const std::string& item : o.*field) out += (out.empty() ? "" : ", ") + item;
          return out;
        },
        [field, key](const Config& config, Options& o) {
          o.*field = split_list(config.get_string(key));
        });
  }

  /// One of `names`, each a word of the option and the value it stands
  /// for; the field may be optional (unset: nothing to show).
  template <typename Field>
  OptionBinder& choice(OptionSpec spec, Field Options::*field,
                       std::vector<std::pair<std::string, Unwrapped<Field>>> names) {
    spec.type = OptionType::kEnum;
    spec.choices.clear();
    for (const auto& [name, value] : names) spec.choices.push_back(name);
    const std::string key = spec.key;
    return bind(
        std::move(spec),
        [field, names](const Options& o) {
          for (const auto& [name, value] : names) {
            if (o.*field == value) return name;
          }
          return std::string();
        },
        [field, names, key](const Config& config, Options& o) {
          const std::string word = config.get_string(key);
          for (const auto& [name, value] : names) {
            if (name == word) o.*field = value;
          }
        });
  }

  /// The keys, with their defaults as a default-constructed Options has
  /// them (where the spec documents none itself).
  std::vector<OptionSpec> specs() const {
    const Options defaults{};
    std::vector<OptionSpec> out;
    for (const Binding& binding : bindings_) {
      OptionSpec spec = binding.spec;
      if (binding.show && spec.default_doc.empty()) spec.default_value = binding.show(defaults);
      out.push_back(std::move(spec));
    }
    return out;
  }

  /// Reads every bound key that has a value in `config` into `options`;
  /// throws ConfigError for a required key without one.
  void read(const Config& config, Options& options) const {
    for (const Binding& binding : bindings_) {
      if (binding.read && (binding.spec.required || config.find(binding.spec.key))) {
        binding.read(config, options);
      }
    }
  }

 private:
  struct Binding {
    OptionSpec spec;
    Show show;
    Read read;
  };
  std::vector<Binding> bindings_;
};

}  // namespace sluice
