#include "sluice/connectors/file/csv.hpp"

#include "sluice/engine/common/error.hpp"

namespace sluice {

bool CsvScan::ends_quoted(std::string_view line) {
  for (const char c : line) {
    if (quoted_) {
      if (c == '"') {
        quoted_ = false;
        just_closed_ = true;
      }
      continue;
    }
    // A quote opens a field only at its start, or right after a closing
    // one: that pair is an escaped quote ("").
    if (c == '"' && (field_start_ || just_closed_)) {
      quoted_ = true;
      field_start_ = just_closed_ = false;
      continue;
    }
    field_start_ = c == ',';
    just_closed_ = false;
  }
  return quoted_;
}

void CsvFields::split(std::string_view record) {
  record_ = record;
  fields_.clear();
  unescaped_.clear();
  const size_t end = record.size();
  size_t i = 0;
  while (true) {
    Field& field = fields_.emplace_back();
    if (i < end && record[i] == '"') {
      field.quoted = true;
      const size_t first = ++i;
      // Up to the closing quote; a doubled one is a quote of the text.
      while (true) {
        const size_t quote = record.find('"', i);
        if (quote == std::string_view::npos) throw DataError("a quoted field is not closed");
        if (quote + 1 < end && record[quote + 1] == '"') {
          if (!field.unescaped) {
            field.unescaped = true;
            field.offset = static_cast<uint32_t>(unescaped_.size());
            unescaped_.append(record.substr(first, quote + 1 - first));
          } else {
            unescaped_.append(record.substr(i, quote + 1 - i));
          }
          i = quote + 2;
          continue;
        }
        if (field.unescaped) {
          unescaped_.append(record.substr(i, quote - i));
          field.size = static_cast<uint32_t>(unescaped_.size() - field.offset);
        } else {
          field.offset = static_cast<uint32_t>(first);
          field.size = static_cast<uint32_t>(quote - first);
        }
        i = quote + 1;
        break;
      }
      if (i == end) return;
      if (record[i] != ',')
        throw DataError("a quoted field is followed by text instead of a comma");
      ++i;
      continue;
    }
    const size_t comma = record.find(',', i);
    const size_t stop = comma == std::string_view::npos ? end : comma;
    if (record.substr(i, stop - i).find('"') != std::string_view::npos) {
      throw DataError("a quote inside an unquoted field");
    }
    field.offset = static_cast<uint32_t>(i);
    field.size = static_cast<uint32_t>(stop - i);
    if (comma == std::string_view::npos) return;
    i = comma + 1;
  }
}

}  // namespace sluice
