#include "sluice/connectors/file/debezium_json.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "sluice/connectors/file/changelog_rows.hpp"
#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

using Kind = JsonField::Kind;

// Turns nlohmann's SAX events into a DebeziumEvent. The number callbacks get
// the number's own text, which is what keeps DECIMALs exact; no JSON tree
// is built.
class EnvelopeReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  EnvelopeReader(const std::unordered_map<std::string, size_t>& index) : index_(index) {}

  DebeziumEvent take() {
    DebeziumEvent& chosen = payload_seen_ ? payload_ : bare_;
    chosen.tombstone = chosen.tombstone || tombstone_;
    return std::move(chosen);
  }

  bool null() override { return scalar({Kind::kNull, {}}); }
  bool boolean(bool value) override { return scalar({Kind::kBoolean, value ? "true" : "false"}); }
  bool number_integer(number_integer_t value) override {
    return scalar({Kind::kNumber, std::to_string(value)});
  }
  bool number_unsigned(number_unsigned_t value) override {
    return scalar({Kind::kNumber, std::to_string(value)});
  }
  bool number_float(number_float_t, const string_t& text) override {
    return scalar({Kind::kNumber, text});
  }
  bool string(string_t& value) override { return scalar({Kind::kString, std::move(value)}); }
  bool binary(binary_t&) override { return scalar({Kind::kComposite, {}}); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    Frame& frame = stack_.back();
    if (frame.image) {
      const auto it = index_.find(name);
      slot_ = it == index_.end() ? kIgnore : static_cast<int>(it->second);
    } else if (frame.envelope) {
      slot_ = name == "op"                                    ? kOp
              : name == "before"                              ? kBefore
              : name == "after"                               ? kAfter
              : name == "payload" && frame.envelope == &bare_ ? kPayload
                                                              : kIgnore;
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw DataError(std::string("not JSON: ") + e.what());
  }

 private:
  // What the next value means, set by the key before it.
  static constexpr int kIgnore = -1, kOp = -2, kBefore = -3, kAfter = -4, kPayload = -5;

  // An object or array being read: an envelope, an image, or something skipped.
  struct Frame {
    DebeziumEvent* envelope = nullptr;
    JsonImage* image = nullptr;
  };

  std::optional<JsonImage>* image_slot(DebeziumEvent& envelope) const {
    return slot_ == kBefore ? &envelope.before : slot_ == kAfter ? &envelope.after : nullptr;
  }

  bool scalar(JsonField field) {
    if (stack_.empty()) {
      if (field.kind != Kind::kNull) throw DataError("expected a Debezium envelope, a JSON object");
      tombstone_ = true;
      return true;
    }
    const Frame& frame = stack_.back();
    if (frame.image) {
      if (slot_ >= 0) (*frame.image)[slot_] = std::move(field);
    } else if (frame.envelope) {
      if (slot_ == kOp) {
        if (field.kind != Kind::kString) throw DataError("\"op\" must be a string");
        frame.envelope->op = std::move(field.text);
      } else if (slot_ == kPayload) {
        if (field.kind != Kind::kNull) throw DataError("\"payload\" must be an object or null");
        payload_seen_ = true;
        payload_.tombstone = true;
      } else if (image_slot(*frame.envelope) && field.kind != Kind::kNull) {
        throw DataError(std::string("\"") + (slot_ == kBefore ? "before" : "after") +
                        "\" must be an object or null");
      }
    }
    return true;
  }

  bool open(bool object) {
    if (stack_.empty()) {
      if (!object) throw DataError("expected a Debezium envelope, a JSON object");
      stack_.push_back({&bare_, nullptr});
      return true;
    }
    const Frame frame = stack_.back();
    Frame next;  // skipped unless it is one of ours
    if (frame.image) {
      if (slot_ >= 0) (*frame.image)[slot_] = {Kind::kComposite, {}};
    } else if (frame.envelope) {
      if (auto* image = image_slot(*frame.envelope)) {
        if (!object) throw DataError("\"before\" and \"after\" must be objects or null");
        image->emplace(index_.size());
        next.image = &**image;
      } else if (slot_ == kPayload) {
        if (!object) throw DataError("\"payload\" must be an object or null");
        payload_seen_ = true;
        next.envelope = &payload_;
      }
    }
    stack_.push_back(next);
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  const std::unordered_map<std::string, size_t>& index_;
  std::vector<Frame> stack_;
  int slot_ = kIgnore;
  bool tombstone_ = false;  // the line is `null`
  bool payload_seen_ = false;
  DebeziumEvent bare_;     // the envelope's keys at the top
  DebeziumEvent payload_;  // inside "payload", which wins when present
};

}  // namespace

DebeziumParser::DebeziumParser(const std::vector<std::string>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) index_.emplace(columns[i], i);
}

DebeziumEvent DebeziumParser::parse(std::string_view line) const {
  EnvelopeReader reader(index_);
  nlohmann::json::sax_parse(line, &reader);
  return reader.take();
}

DebeziumChangelog::DebeziumChangelog(const Schema& schema)
    : schema_(schema), parser_(schema.column_names()) {}

bool DebeziumChangelog::append(std::string_view line, Batch& rows) const {
  DebeziumEvent event = parser_.parse(line);
  if (event.tombstone) return false;
  const std::string& op = event.op;
  if (op.empty()) throw DataError("expected a Debezium envelope with \"op\"");
  const auto image = [&](std::optional<JsonImage>& given, const char* which) -> JsonImage& {
    if (!given) throw DataError("op \"" + op + "\" needs an object in \"" + which + "\"");
    return *given;
  };
  if (op == "c" || op == "r") {
    append_image(RowKind::kInsert, image(event.after, "after"), rows);
  } else if (op == "u") {
    JsonImage& after_image = image(event.after, "after");
    if (!event.before) {
      append_image(RowKind::kUpdateAfter, after_image, rows);
      return true;
    }
    const uint32_t before = append_image(RowKind::kUpdateBefore, *event.before, rows);
    const uint32_t after = append_image(RowKind::kUpdateAfter, after_image, rows);
    for (size_t k : schema_.primary_key()) {
      if (rows.column(k).value(before) == rows.column(k).value(after)) continue;
      // The key changed: the old row goes, a new one comes.
      rows.set_kind(before, RowKind::kDelete);
      rows.set_kind(after, RowKind::kInsert);
      break;
    }
  } else if (op == "d") {
    append_image(RowKind::kDelete, image(event.before, "before"), rows);
  } else {
    throw DataError("expected op c, r, u or d, got \"" + op + "\"");
  }
  return true;
}

uint32_t DebeziumChangelog::append_image(RowKind kind, JsonImage& image, Batch& rows) const {
  const uint32_t row = rows.add_rows(1, kind);
  for (size_t c = 0; c < image.size(); ++c) set_column(rows, row, c, image[c]);
  return row;
}

void DebeziumChangelog::set_column(Batch& rows, uint32_t row, size_t c, JsonField& v) const {
  if (v.kind == Kind::kAbsent || v.kind == Kind::kNull) {
    rows.column(c).set_null(row, true);
    return;
  }
  const DataType& type = schema_.column(c).type;
  if (v.kind == Kind::kString) return parse_column(rows, row, c, v.text);
  if (v.kind == Kind::kBoolean && type.id == TypeId::kBoolean) {
    return rows.column(c).set_value(row, Value::boolean(v.text == "true"));
  }
  if (v.kind == Kind::kNumber && v.text.find_first_of(".eE") == std::string::npos) {
    // Debezium's io.debezium.time types: Timestamp in milliseconds since
    // the epoch, Date in days, MicroTime in microseconds.
    if (type.id == TypeId::kTimestamp) {
      return rows.column(c).set_value(row, Timestamp{std::stoll(v.text) * 1000});
    }
    if (type.id == TypeId::kDate) {
      return rows.column(c).set_value(row, Date{static_cast<int32_t>(std::stol(v.text))});
    }
    if (type.id == TypeId::kTime) return rows.column(c).set_value(row, Time{std::stoll(v.text)});
  }
  if (v.kind == Kind::kNumber && type.id != TypeId::kString && type.id != TypeId::kBoolean) {
    // The number's own text, never a double's: a DECIMAL keeps every digit.
    return parse_column(rows, row, c,
                        type.id == TypeId::kDecimal ? expand_exponent(v.text) : v.text);
  }
  throw DataError("column '" + schema_.column(c).name + "' expects " + type.to_string() + ", got " +
                  (v.kind == Kind::kComposite ? "an object or array" : v.text));
}

std::string expand_exponent(std::string_view number) {
  const size_t e = number.find_first_of("eE");
  if (e == std::string_view::npos) return std::string(number);
  std::string_view mantissa = number.substr(0, e);
  std::string_view exponent_text = number.substr(e + 1);
  const bool negative = !mantissa.empty() && mantissa.front() == '-';
  if (negative) mantissa.remove_prefix(1);
  const bool exponent_negative = !exponent_text.empty() && exponent_text.front() == '-';
  if (!exponent_text.empty() && (exponent_text.front() == '-' || exponent_text.front() == '+')) {
    exponent_text.remove_prefix(1);
  }
  if (exponent_text.empty() || exponent_text.size() > 4) {
    throw DataError("the number " + std::string(number) + " has an exponent beyond ±1000");
  }
  int64_t exponent = std::stoll(std::string(exponent_text));
  if (exponent > 1000)
    throw DataError("the number " + std::string(number) + " has an exponent beyond ±1000");
  if (exponent_negative) exponent = -exponent;
  const size_t point = mantissa.find('.');
  std::string digits(mantissa.substr(0, point));
  if (point != std::string_view::npos) digits += mantissa.substr(point + 1);
  // Where the point goes within `digits`.
  const int64_t whole =
      static_cast<int64_t>(point == std::string_view::npos ? mantissa.size() : point) + exponent;
  std::string out = negative ? "-" : "";
  if (whole <= 0) {
    out += "0." + std::string(static_cast<size_t>(-whole), '0') + digits;
  } else if (static_cast<size_t>(whole) >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(whole) - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(whole)) + "." +
           digits.substr(static_cast<size_t>(whole));
  }
  return out;
}

}  // namespace sluice
