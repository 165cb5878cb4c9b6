#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sluice/engine/data/batch.hpp"

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

/// A changelog of Debezium envelopes, one per line, {"op": "c"|"r"|"u"|"d",
/// "before": {...}, "after": {...}}, bare or inside "payload". c and r are
/// +I; u is -U (if "before" is given) then +U, or -D of the old key then +I
/// of the new one when the update changed the key; d is -D. Numbers keep
/// every digit (a DECIMAL is read from the number's text, never a double);
/// Debezium's io.debezium.time numbers are read as its Timestamp
/// (milliseconds since the epoch), Date (days) and MicroTime.
class DebeziumChangelog {
 public:
  explicit DebeziumChangelog(const Schema& schema);

  /// Appends the changes of `line` to `rows`, a batch of the schema's
  /// columns. Returns false for a tombstone, which changes nothing. Throws
  /// DataError saying what is wrong, leaving rows it began for the caller
  /// to drop (Batch::truncate()).
  bool append(std::string_view line, Batch& rows) const;

 private:
  // Appends `image` as a row of kind `kind`; returns its number.
  uint32_t append_image(RowKind kind, JsonImage& image, Batch& rows) const;
  void set_column(Batch& rows, uint32_t row, size_t c, JsonField& field) const;

  const Schema& schema_;
  const DebeziumParser parser_;
};

/// A JSON number's text without an exponent: "1.25e3" is "1250", "-5E-2" is
/// "-0.05"; a number without one comes back as it is. Throws DataError for
/// an exponent beyond ±1000.
std::string expand_exponent(std::string_view number);

}  // namespace sluice
