#include "sluice/transforms/changelog_normalize.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/graph/operator.hpp"

namespace sluice {
namespace {

// Flink's ChangelogNormalize: keeps the last full row of each key in keyed
// state (its input is keyed by the primary key) and emits a changelog
// whose every row is whole. +I and +U become +I for a new key, or -U of
// the row kept and +U of the new one; a change equal to the row kept is
// dropped, as is a -U (the +U after it carries the change); a -D becomes
// -D of the row kept, and a -D of a key it never saw is dropped.
class ChangelogNormalize final : public Operator {
 public:
  void open(OperatorContext& context) override;
  void process_row(RowRef row, Collector& out) override;

 private:
  std::optional<KeyedValueState<Row>> last_;
};

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

}  // namespace

OperatorDef changelog_normalize() {
  return {.for_input = [](const StreamType& input) -> OperatorDef {
    return {.create = [](const SubtaskInfo&) { return std::make_unique<ChangelogNormalize>(); },
            .output = StreamType{input.schema, ChangelogMode::all(), false},
            .check =
                [](const StreamType& in) {
                  std::vector<std::string> problems;
                  if (!in.schema.has_primary_key()) {
                    problems.push_back(
                        "normalize keys its state by the primary key; its input has none");
                  }
                  return problems;
                },
            .keyed_state = true,
            .key_by = input.schema.primary_key_names(),
            .takes_key_only_deletes = true};
  }};
}

}  // namespace sluice
