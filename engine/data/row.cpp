#include "sluice/engine/data/row.hpp"

#include "sluice/engine/common/error.hpp"

namespace sluice {

std::string_view to_string(RowKind kind) {
  switch (kind) {
    case RowKind::kInsert:
      return "+I";
    case RowKind::kUpdateBefore:
      return "-U";
    case RowKind::kUpdateAfter:
      return "+U";
    case RowKind::kDelete:
      return "-D";
  }
  return "?";
}

RowKind parse_row_kind(std::string_view text) {
  if (text == "+I") return RowKind::kInsert;
  if (text == "-U") return RowKind::kUpdateBefore;
  if (text == "+U") return RowKind::kUpdateAfter;
  if (text == "-D") return RowKind::kDelete;
  throw DataError("expected a row kind (+I, -U, +U or -D), got '" + std::string(text) + "'");
}

std::string Row::to_string() const {
  std::string out(sluice::to_string(kind));
  out += '[';
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ", ";
    fields[i].append_to(out);
  }
  out += ']';
  return out;
}

void Row::throw_null(const std::string& column) const {
  throw DataError("column '" + column + "' is NULL in " + to_string() +
                  "; test it with is_null() first");
}

}  // namespace sluice
