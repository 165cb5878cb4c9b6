#pragma once

#include <optional>

#include "sluice/engine/graph/operator.hpp"

namespace sluice {

/// Flink's ChangelogNormalize: keeps the last full row of each key in keyed
/// state (its input is keyed by the primary key) and emits a changelog
/// whose every row is whole. +I and +U become +I for a new key, or -U of
/// the row kept and +U of the new one; a change equal to the row kept is
/// dropped, as is a -U (the +U after it carries the change); a -D becomes
/// -D of the row kept, and a -D of a key it never saw is dropped. Built by
/// Stream::normalize().
class ChangelogNormalize final : public Operator {
 public:
  void open(OperatorContext& context) override;
  void process_row(RowRef row, Collector& out) override;

 private:
  std::optional<KeyedValueState<Row>> last_;
};

}  // namespace sluice
