#pragma once

#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/checkpoint/subtask_checkpointer.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/operator.hpp"
#include "sluice/engine/runtime/task_metrics.hpp"
#include "sluice/engine/state/lazy_state_store.hpp"

/// What a task gives each operator of its chain. Internal to the engine.
namespace sluice {

/// The actions the operators of one task register: the sink's flush action,
/// which the task runs on its own thread, and cancel actions, which any
/// thread may run.
class TaskActions {
 public:
  void set_flush(std::function<void()> action) { flush_ = std::move(action); }
  /// The sink's flush action; empty if it registered none.
  const std::function<void()>& flush() const { return flush_; }
  /// Any thread.
  void add_cancel(std::function<void()> action);
  /// Any thread: runs every cancel action.
  void cancel();
  /// Before the operators go: neither action reaches them any more.
  void clear();

 private:
  std::function<void()> flush_;
  std::mutex cancel_mutex_;  // guards cancel_
  std::vector<std::function<void()>> cancel_;
};

/// The context of one operator subtask: its counters, its state (kept in a
/// store of its own that checkpoints save, opened when first used or when
/// there is restored state to carry on), its current key and the actions it
/// registers with its task.
///
/// Keyed state follows the input's partitioning: an operator whose one input
/// comes through key_by has each record's key set before it sees the record;
/// a parallel operator whose input is not keyed may keep no keyed state,
/// since a key's records would be split over its subtasks.
class TaskOperatorContext final : public SinkContext {
 public:
  /// For `node` of `graph`, subtask `info`, in a task that keeps state as
  /// `checkpointing` says; all must outlive it.
  TaskOperatorContext(const JobGraph& graph, const NodeDef& node, SubtaskInfo info,
                      const TaskCheckpointing& checkpointing, TaskMetrics& metrics,
                      TaskActions& actions);

  const SubtaskInfo& subtask() const override { return info_; }
  Counter& metric(const std::string& name, MetricKind kind) override;
  void register_flush_action(std::function<void()> action) override;
  void register_cancel_action(std::function<void()> action) override;
  RawValueState raw_value_state(const std::string& name) override;
  RawListState raw_list_state(const std::string& name) override;
  RawKeyedValueState raw_keyed_value_state(const std::string& name) override;
  RawKeyedMapState raw_keyed_map_state(const std::string& name) override;
  std::string describe_position(int64_t position) const override;
  std::optional<int64_t> restored_checkpoint() const override;
  bool resumed_from_older_checkpoint() const override;
  bool checkpoints_enabled() const override;
  void request_checkpoint() override;
  const std::string* current_key() const override;

  /// Whether its input is keyed: the current key can be set.
  bool keyed() const { return key_.has_value(); }
  /// Whether the operator reads the current key: then it takes its records
  /// one by one, each after take_key(); otherwise whole batches.
  bool wants_keys() const { return key_wanted_; }
  /// Sets the current key from the record about to be processed.
  void take_key(RowRef row) { current_key_ = encode_key(row, *key_); }

  /// The store a checkpoint saves: the one the operator used, or the restored
  /// state it never touched (opened now, so that it is carried forward rather
  /// than lost once the checkpoint it came from is pruned); null if neither.
  StateStore* store_to_snapshot() { return store_.for_read(); }

 private:
  void require_keyed_input() const;
  std::optional<std::filesystem::path> saved_state() const;

  const JobGraph& graph_;
  const NodeDef& node_;
  const SubtaskInfo info_;
  const TaskCheckpointing& checkpointing_;
  TaskMetrics& metrics_;
  TaskActions& actions_;
  std::optional<std::vector<size_t>> key_;  // the input's key_by columns
  bool keyed_state_forbidden_ = false;
  std::string current_key_;
  // Whether the operator asked for the current key (its keyed state does,
  // when it is created): only then is it set per record.
  mutable bool key_wanted_ = false;
  LazyStateStore store_;
};

}  // namespace sluice
