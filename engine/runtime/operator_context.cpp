#include "sluice/engine/runtime/operator_context.hpp"

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/engine/graph/node_def.hpp"
#include "sluice/engine/state/state_store.hpp"

namespace sluice {

void TaskActions::add_cancel(std::function<void()> action) {
  std::lock_guard<std::mutex> lock(cancel_mutex_);
  cancel_.push_back(std::move(action));
}

void TaskActions::cancel() {
  std::lock_guard<std::mutex> lock(cancel_mutex_);
  for (const auto& action : cancel_) action();
}

void TaskActions::clear() {
  std::lock_guard<std::mutex> lock(cancel_mutex_);
  cancel_.clear();
  flush_ = nullptr;
}

TaskOperatorContext::TaskOperatorContext(const JobGraph& graph, const NodeDef& node,
                                         SubtaskInfo info, const TaskCheckpointing& checkpointing,
                                         TaskMetrics& metrics, TaskActions& actions)
    : graph_(graph),
      node_(node),
      info_(std::move(info)),
      checkpointing_(checkpointing),
      metrics_(metrics),
      actions_(actions),
      store_(saved_state().has_value(), [this] {
        return StateStore::open(checkpointing_.storage->work_dir(info_.operator_name, info_.index),
                                saved_state());
      }) {
  if (node.kind != NodeKind::kOperator) return;
  if (node.inputs.size() == 1 && node.inputs[0].partitioning == Partitioning::kHash) {
    const Schema& input = graph_.nodes()[node.inputs[0].from].output.schema;
    std::vector<size_t> key;
    for (const auto& column : node.inputs[0].key_columns) key.push_back(input.require(column));
    key_ = std::move(key);
  } else if (info_.parallelism > 1) {
    // validate() catches the operators that declare OperatorDef::keyed_state;
    // this, the others.
    keyed_state_forbidden_ = true;
  }
}

Counter& TaskOperatorContext::metric(const std::string& name, MetricKind kind) {
  return metrics_.custom(info_.operator_name + "." + name, kind);
}

void TaskOperatorContext::register_flush_action(std::function<void()> action) {
  actions_.set_flush(std::move(action));
}

void TaskOperatorContext::register_cancel_action(std::function<void()> action) {
  actions_.add_cancel(std::move(action));
}

RawValueState TaskOperatorContext::raw_value_state(const std::string& name) {
  return RawValueState(store_, name);
}

RawListState TaskOperatorContext::raw_list_state(const std::string& name) {
  return RawListState(store_, name);
}

RawKeyedValueState TaskOperatorContext::raw_keyed_value_state(const std::string& name) {
  require_keyed_input();
  return RawKeyedValueState(store_, name);
}

RawKeyedMapState TaskOperatorContext::raw_keyed_map_state(const std::string& name) {
  require_keyed_input();
  return RawKeyedMapState(store_, name);
}

std::string TaskOperatorContext::describe_position(int64_t position) const {
  // The input comes from one source, through operators with one input each.
  const NodeDef* node = &node_;
  while (node->kind != NodeKind::kSource && !node->inputs.empty()) {
    node = &graph_.nodes()[node->inputs[0].from];
  }
  if (node->kind != NodeKind::kSource || !node->source.describe_position) return "";
  return node->source.describe_position(position);
}

std::optional<int64_t> TaskOperatorContext::restored_checkpoint() const {
  return checkpointing_.restored;
}

bool TaskOperatorContext::resumed_from_older_checkpoint() const {
  const auto& restored = checkpointing_.restored;
  if (!restored) return false;
  const std::optional<int64_t> latest = checkpointing_.storage->latest();
  return latest && *latest > *restored;
}

bool TaskOperatorContext::checkpoints_enabled() const {
  return checkpointing_.coordinator != nullptr;
}

void TaskOperatorContext::request_checkpoint() {
  if (checkpointing_.coordinator != nullptr) checkpointing_.coordinator->request_checkpoint();
}

const std::string* TaskOperatorContext::current_key() const {
  if (!key_) return nullptr;
  key_wanted_ = true;
  return &current_key_;
}

void TaskOperatorContext::require_keyed_input() const {
  if (!keyed_state_forbidden_) return;
  throw ConfigError("it keeps keyed state in " + count_of(info_.parallelism, "subtask") +
                    ", but its input is not partitioned by key: put key_by(columns) before it, "
                    "so that all records of a key reach the subtask that holds its state");
}

std::optional<std::filesystem::path> TaskOperatorContext::saved_state() const {
  if (!checkpointing_.restored) return std::nullopt;
  auto dir = checkpointing_.storage->subtask_dir(*checkpointing_.restored, info_.operator_name,
                                                 info_.index);
  if (!std::filesystem::exists(dir)) return std::nullopt;
  return dir;
}

}  // namespace sluice
