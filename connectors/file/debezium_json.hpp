#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice {

/// A field of a row image as the JSON spelled it. Numbers keep their text,
/// so that a DECIMAL with more digits than a double holds arrives unchanged.
struct JsonField {
  enum class Kind { kAbsent, kNull, kBoolean, kNumber, kString, kComposite };
  Kind kind = Kind::kAbsent;
  std::string text;  ///< the string's value, the number's text, "true"/"false"
};

/// A row image ("before" or "after"), one field per column of the schema.
using JsonImage = std::vector<JsonField>;

/// One Debezium change event.
struct DebeziumEvent {
  /// A `null` line, or an envelope whose payload is null: Debezium writes one
  /// after every delete (for log compaction); it changes nothing.
  bool tombstone = false;
  std::string op;                   ///< empty when the envelope has none
  std::optional<JsonImage> before;  ///< nullopt when absent or null
  std::optional<JsonImage> after;
};

/// Reads Debezium envelopes, bare or inside "payload", for a fixed list of
/// columns: fields of other names, and every other key of the envelope
/// ("source", "ts_ms", "schema", ...), are passed over without being built.
class DebeziumParser {
 public:
  explicit DebeziumParser(const std::vector<std::string>& columns);

  /// Parses one line; throws DataError if it is not JSON or not an envelope.
  DebeziumEvent parse(std::string_view line) const;

 private:
  std::unordered_map<std::string, size_t> index_;
};

/// A JSON number's text without an exponent: "1.25e3" is "1250", "-5E-2" is
/// "-0.05"; a number without one comes back as it is. Throws DataError for
/// an exponent beyond ±1000.
std::string expand_exponent(std::string_view number);

}  // namespace sluice
