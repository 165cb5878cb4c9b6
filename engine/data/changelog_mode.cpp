#include "sluice/engine/data/changelog_mode.hpp"

namespace sluice {

std::string ChangelogMode::to_string() const {
  std::string out = "[";
  for (RowKind kind :
       {RowKind::kInsert, RowKind::kUpdateBefore, RowKind::kUpdateAfter, RowKind::kDelete}) {
    if (!contains(kind)) continue;
    if (out.size() > 1) out += ", ";
    out += sluice::to_string(kind);
  }
  return out + "]";
}

}  // namespace sluice
