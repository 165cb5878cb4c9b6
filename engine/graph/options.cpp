#include "sluice/engine/graph/options.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Splits "250ms" into 250 and "ms".
std::optional<std::pair<uint64_t, std::string>> number_and_unit(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, n);
  if (digits == 0 || ec != std::errc()) return std::nullopt;
  return std::pair{n, lower(trim(text.substr(digits)))};
}

bool valid(const OptionSpec& spec, std::string_view value) {
  switch (spec.type) {
    case OptionType::kString:
      return true;
    case OptionType::kInteger: {
      const auto v = parse_int(value);
      return v && *v >= spec.min;
    }
    case OptionType::kBoolean:
      return value == "true" || value == "false";
    case OptionType::kDuration:
      return parse_duration(value).has_value();
    case OptionType::kSize:
      return parse_size(value).has_value();
    case OptionType::kEnum:
      return std::find(spec.choices.begin(), spec.choices.end(), value) != spec.choices.end() ||
             (spec.also_integer && parse_int(value).value_or(-1) >= 0);
  }
  return false;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string OptionSpec::accepts() const {
  switch (type) {
    case OptionType::kString:
      return "text";
    case OptionType::kInteger:
      return "a whole number >= " + std::to_string(min);
    case OptionType::kBoolean:
      return "true or false";
    case OptionType::kDuration:
      return "a duration such as 250ms, 5s, 2min or 1h (0 = off)";
    case OptionType::kSize:
      return "a size such as 4096, 512kb, 64mb or 1gb";
    case OptionType::kEnum: {
      std::string out = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) {
        out += (i == 0                                     ? ""
                : i + 1 == choices.size() && !also_integer ? " or "
                                                           : ", ") +
               choices[i];
      }
      return also_integer ? out + " or a checkpoint id" : out;
    }
  }
  return "";
}

std::string OptionSpec::documented_default() const {
  if (!default_doc.empty()) return default_doc;
  return default_value.empty() ? "—" : "`" + default_value + "`";
}

OptionTable::OptionTable(std::vector<OptionSpec> specs) : specs_(std::move(specs)) {
  for (const auto& spec : specs_) {
    if (!spec.default_value.empty() && !valid(spec, spec.default_value)) {
      throw std::logic_error("option " + spec.key + " has an invalid default");
    }
  }
}

std::vector<OptionSpec> option_specs(std::initializer_list<std::vector<OptionSpec>> groups) {
  std::vector<OptionSpec> all;
  for (const auto& group : groups) all.insert(all.end(), group.begin(), group.end());
  return all;
}

OptionTable OptionTable::merged(const std::vector<OptionSpec>& more) const {
  OptionTable out = *this;
  for (const auto& spec : more) {
    auto it = std::find_if(out.specs_.begin(), out.specs_.end(),
                           [&](const OptionSpec& s) { return s.key == spec.key; });
    if (it != out.specs_.end()) {
      *it = spec;
    } else {
      out.specs_.push_back(spec);
    }
  }
  return out;
}

OptionTable OptionTable::with_defaults(const std::map<std::string, std::string>& defaults) const {
  OptionTable out = *this;
  for (const auto& [key, value] : defaults) {
    auto it = std::find_if(out.specs_.begin(), out.specs_.end(),
                           [&](const OptionSpec& s) { return s.key == key; });
    if (it == out.specs_.end()) throw std::logic_error("default for unknown option " + key);
    it->default_value = value;
    it->default_doc.clear();
  }
  return out;
}

OptionTable OptionTable::with_elsewhere(
    std::map<std::string, std::string, std::less<>> elsewhere) const {
  OptionTable out = *this;
  for (auto& [key, note] : elsewhere) {
    if (find(key) == nullptr) out.elsewhere_.insert_or_assign(key, std::move(note));
  }
  return out;
}

OptionTable OptionTable::with_listing(std::string command) const {
  OptionTable out = *this;
  out.listing_ = std::move(command);
  return out;
}

const std::string* OptionTable::elsewhere(std::string_view key) const {
  const auto it = elsewhere_.find(key);
  return it == elsewhere_.end() ? nullptr : &it->second;
}

const OptionSpec* OptionTable::find(std::string_view key) const {
  for (const auto& spec : specs_) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

std::string OptionTable::markdown() const {
  std::vector<const OptionSpec*> sorted;
  for (const auto& spec : specs_) sorted.push_back(&spec);
  std::sort(sorted.begin(), sorted.end(),
            [](const OptionSpec* a, const OptionSpec* b) { return a->key < b->key; });
  std::string out = "| key | default | meaning |\n|---|---|---|\n";
  for (const auto* spec : sorted) {
    out += "| `" + spec->key + "` | " + spec->documented_default() + " | " + spec->doc + " |\n";
  }
  return out;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  using namespace std::chrono;
  const auto parsed = number_and_unit(text);
  if (!parsed) return std::nullopt;
  const auto [n, unit] = *parsed;
  if (unit == "ms") return milliseconds(n);
  if (unit == "s") return seconds(n);
  if (unit == "min") return minutes(n);
  if (unit == "h") return hours(n);
  if (unit.empty() && n == 0) return milliseconds(0);
  return std::nullopt;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  const auto parsed = number_and_unit(text);
  if (!parsed) return std::nullopt;
  const auto [n, unit] = *parsed;
  if (unit.empty() || unit == "b") return n;
  if (unit == "kb") return n << 10;
  if (unit == "mb") return n << 20;
  if (unit == "gb") return n << 30;
  return std::nullopt;
}

std::string format_duration(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  if (ms == 0) return "0";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "min";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = trim(text.substr(start, comma - start));
    if (!item.empty()) items.emplace_back(item);
    start = comma + 1;
  }
  return items;
}

Config::Config(OptionTable table) : table_(std::move(table)) {}

void Config::set(std::string_view key, std::string_view value, OptionOrigin origin) {
  const OptionSpec* spec = table_.find(key);
  if (spec == nullptr) {
    if (const std::string* note = table_.elsewhere(key)) {
      throw ConfigError("option '" + std::string(key) + "': " + *note);
    }
    std::string message = "unknown option '" + std::string(key) + "'";
    const OptionSpec* closest = nullptr;
    size_t best = 4;
    for (const auto& candidate : table_.specs()) {
      const size_t d = edit_distance(key, candidate.key);
      if (d < best) {
        best = d;
        closest = &candidate;
      }
    }
    if (closest != nullptr) message += "; did you mean '" + closest->key + "'?";
    if (!table_.listing().empty()) message += " ('" + table_.listing() + "' lists the options)";
    throw ConfigError(message);
  }
  if (!valid(*spec, value)) {
    throw ConfigError("option '" + spec->key + "' expects " + spec->accepts() + ", got '" +
                      std::string(value) + "'");
  }
  values_.insert_or_assign(spec->key, std::pair{std::string(value), origin});
}

void Config::set_assignment(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    throw ConfigError("expected key=value, got '" + std::string(assignment) + "'");
  }
  set(trim(assignment.substr(0, eq)), trim(assignment.substr(eq + 1)));
}

void Config::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read config file " + path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    // A comment after the value: " # …".
    for (size_t hash = text.find('#'); hash != std::string_view::npos;
         hash = text.find('#', hash + 1)) {
      if (text[hash - 1] == ' ' || text[hash - 1] == '\t') {
        text = trim(text.substr(0, hash));
        break;
      }
    }
    const std::string where = path + ":" + std::to_string(number) + ": ";
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
      throw ConfigError(where + "expected key=value, got '" + std::string(text) + "'");
    }
    try {
      set(trim(text.substr(0, eq)), trim(text.substr(eq + 1)), OptionOrigin::kConfigFile);
    } catch (const ConfigError& e) {
      throw ConfigError(where + e.what());
    }
  }
}

const OptionSpec& Config::spec(std::string_view key) const {
  const OptionSpec* spec = table_.find(key);
  if (spec == nullptr) throw std::logic_error("reading unknown option " + std::string(key));
  return *spec;
}

std::optional<std::string> Config::find(std::string_view key) const {
  const OptionSpec& s = spec(key);
  if (auto it = values_.find(key); it != values_.end()) return it->second.first;
  if (!s.default_value.empty()) return s.default_value;
  return std::nullopt;
}

std::string Config::require(std::string_view key) const {
  if (auto value = find(key)) return *value;
  throw ConfigError("option '" + std::string(key) + "' is required (" + spec(key).doc + ")");
}

std::string Config::get_string(std::string_view key) const { return require(key); }

int64_t Config::get_int(std::string_view key) const { return *parse_int(require(key)); }

bool Config::get_bool(std::string_view key) const { return require(key) == "true"; }

std::chrono::milliseconds Config::get_duration(std::string_view key) const {
  return *parse_duration(require(key));
}

uint64_t Config::get_size(std::string_view key) const { return *parse_size(require(key)); }

OptionOrigin Config::origin(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? OptionOrigin::kDefault : it->second.second;
}

Config make_config(OptionTable table, const std::optional<std::string>& config_file,
                   const std::vector<std::string>& assignments) {
  Config config(std::move(table));
  if (config_file) config.load_file(*config_file);
  for (const auto& assignment : assignments) config.set_assignment(assignment);
  return config;
}

}  // namespace sluice
