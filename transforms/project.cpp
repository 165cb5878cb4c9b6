#include "sluice/transforms/project.hpp"

#include <algorithm>

namespace sluice {
namespace {

// Copies the kept columns of each batch, column by column.
class ProjectOperator final : public Operator {
 public:
  explicit ProjectOperator(std::vector<size_t> indexes) : indexes_(std::move(indexes)) {}
  void process_batch(Batch& rows, Collector& out) override {
    out.batch().append_columns(rows, indexes_);
    rows.clear();
  }

 private:
  std::vector<size_t> indexes_;
};

}  // namespace

Stream project(Stream input, std::string name, std::vector<std::string> columns) {
  const Schema& in = input.type().schema;
  std::vector<size_t> indexes;
  std::vector<Column> kept;
  for (const auto& column : columns) {
    if (const auto index = in.index_of(column)) {
      indexes.push_back(*index);
      kept.push_back(in.column(*index));
    }
  }
  std::vector<std::string> key = in.primary_key_names();
  const bool key_kept = std::all_of(key.begin(), key.end(), [&](const std::string& k) {
    return std::find(columns.begin(), columns.end(), k) != columns.end();
  });
  if (!key_kept) key.clear();
  StreamType output{Schema(std::move(kept), std::move(key)), input.type().mode};
  auto check = [columns](const StreamType& type) {
    std::vector<std::string> problems;
    for (const auto& column : columns) {
      if (!type.schema.index_of(column)) {
        problems.push_back("column '" + column + "' is not in its input");
      }
    }
    return problems;
  };
  return input.transform(std::move(name), {.create =
                                               [indexes](const SubtaskInfo&) {
                                                 return std::make_unique<ProjectOperator>(indexes);
                                               },
                                           .output = std::move(output),
                                           .check = check});
}

}  // namespace sluice
