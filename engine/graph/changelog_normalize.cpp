#include "sluice/engine/graph/changelog_normalize.hpp"

namespace sluice {

void ChangelogNormalize::open(OperatorContext& context) {
  last_.emplace(context.keyed_value_state<Row>("last"));
}

void ChangelogNormalize::process_row(RowRef row, Collector& out) {
  std::optional<Row> last = last_->get();
  switch (row.kind()) {
    case RowKind::kInsert:
    case RowKind::kUpdateAfter: {
      Row now = row.to_row();
      if (last && last->fields == now.fields) return;  // nothing changed
      if (last) {
        last->kind = RowKind::kUpdateBefore;
        out.emit(*last);
        now.kind = RowKind::kUpdateAfter;
      } else {
        now.kind = RowKind::kInsert;
      }
      out.emit(now);
      last_->put(now);
      return;
    }
    case RowKind::kUpdateBefore:
      return;
    case RowKind::kDelete:
      if (!last) return;
      last->kind = RowKind::kDelete;
      out.emit(*last);
      last_->erase();
      return;
  }
}

}  // namespace sluice
