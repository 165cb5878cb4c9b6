#include "sluice/connectors/file/csv_changelog.hpp"

#include <algorithm>
#include <vector>

#include "sluice/connectors/file/changelog_rows.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

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

size_t key_prefix_length(const Schema& schema) {
  size_t n = 1;
  for (size_t k : schema.primary_key()) n = std::max(n, k + 1);
  return n;
}

}  // namespace

CsvChangelog::CsvChangelog(const Schema& schema)
    : schema_(schema), key_prefix_(key_prefix_length(schema)) {}

void CsvChangelog::check_header(const RawRecord& header, const std::string& path) {
  std::vector<std::string> expected = {"op"};
  for (auto& name : schema_.column_names()) expected.push_back(std::move(name));
  std::vector<std::string> names;
  fields_.split(header.text);
  for (size_t i = 0; i < fields_.size(); ++i) names.emplace_back(fields_.text(i));
  if (names == expected) return;
  std::string want;
  for (const auto& n : expected) want += (want.empty() ? "" : ",") + n;
  std::string message = path + ":" + std::to_string(header.line) + ": the header must be '" + want +
                        "', got '" + visible(header.text) + "'";
  // Name the first field that differs, with what cannot be seen shown.
  for (size_t i = 0; i < std::min(names.size(), expected.size()); ++i) {
    if (names[i] == expected[i]) continue;
    message += ": field " + std::to_string(i + 1) + " is '" + visible(names[i]) + "', not '" +
               expected[i] + "'";
    break;
  }
  throw ConfigError(message);
}

void CsvChangelog::append(std::string_view record, Batch& rows) {
  fields_.split(record);
  const RowKind kind = parse_row_kind(fields_.text(0));
  const size_t given = fields_.size() - 1;
  const bool key_only_delete =
      kind == RowKind::kDelete && given < schema_.size() && given >= key_prefix_;
  if (given != schema_.size() && !key_only_delete) {
    throw DataError("expected " + count_of(schema_.size() + 1, "field") + " (op and " +
                    count_of(schema_.size(), "column") + "), got " +
                    std::to_string(fields_.size()));
  }
  const uint32_t row = rows.add_rows(1, kind);
  for (size_t c = 0; c < schema_.size(); ++c) {
    if (c >= given || fields_.null(c + 1)) {
      rows.column(c).set_null(row, true);
    } else {
      parse_column(rows, row, c, fields_.text(c + 1));
    }
  }
}

}  // namespace sluice
