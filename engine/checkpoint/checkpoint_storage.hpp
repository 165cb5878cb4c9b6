#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

/// One operator subtask's saved state within a checkpoint.
struct SubtaskState {
  std::string operator_name;
  int subtask = 0;
  uint64_t bytes = 0;
};

/// What a completed checkpoint records; written last, atomically.
struct CheckpointMetadata {
  int64_t id = 0;
  std::string job;
  bool final = false;                      ///< taken after every source reached its end
  int64_t completed_at_ms = 0;             ///< Unix time
  std::map<std::string, int> parallelism;  ///< of every operator when it was taken
  std::vector<SubtaskState> states;        ///< the subtasks that have state

  uint64_t state_bytes() const;
};

/// The checkpoints of one job on disk:
///
///   <dir>/<job>/chk-<id>/<operator>-<subtask>/   RocksDB snapshot of that subtask
///   <dir>/<job>/chk-<id>/_metadata               JSON; present iff the checkpoint completed
///   <dir>/<job>/work/<operator>-<subtask>/       the live state of a running subtask
///   <dir>/<job>/_finished                        the id of the final checkpoint of a run
///                                                that finished
///   <dir>/<job>/LOCK                             locked while a run is under way
///                                                (JobLock); holds its pid
///
/// A checkpoint directory without _metadata is incomplete: a crash or an
/// abort left it, and it is never restored from. _metadata is written to a
/// temporary file, synced, renamed into place and the directory synced, so a
/// crash at any instant leaves the previous or the new checkpoint as latest.
class CheckpointStorage {
 public:
  CheckpointStorage(std::filesystem::path dir, std::string job);

  const std::filesystem::path& job_dir() const { return job_dir_; }
  std::filesystem::path checkpoint_dir(int64_t id) const;
  std::filesystem::path subtask_dir(int64_t id, const std::string& op, int subtask) const;
  std::filesystem::path work_dir(const std::string& op, int subtask) const;

  /// Completed checkpoints, oldest first.
  std::vector<int64_t> completed() const;
  std::optional<int64_t> latest() const;
  /// The highest id used by any checkpoint directory, complete or not.
  int64_t highest_id() const;
  /// Reads a completed checkpoint's metadata; throws sluice::Error naming the file.
  CheckpointMetadata read(int64_t id) const;
  /// Opens every snapshot of checkpoint `id` read-only; throws if one does not load.
  void verify(int64_t id) const;

  /// Marks checkpoint `metadata.id` complete by writing its metadata.
  void commit(const CheckpointMetadata& metadata) const;
  /// Records that the job finished after its final checkpoint `id`, every
  /// task having been told it completed: a later run starts afresh.
  void mark_finished(int64_t id) const;
  /// The latest completed checkpoint, unless the job finished after it.
  std::optional<int64_t> resumable() const;
  /// Removes the live state of a previous run.
  void clear_work() const;
  /// Keeps the newest `retained` completed checkpoints and removes older
  /// ones, and incomplete ones older than the newest completed one.
  void prune(int retained) const;

 private:
  std::filesystem::path job_dir_;
};

/// The job directory's LOCK, held while a run of the job is under way, so
/// that a second run of the same job.name on the same checkpoint.dir
/// refuses at once instead of sharing its state (and its binlog replica
/// id). An advisory lock (flock): the kernel drops it with the process,
/// however it ends.
class JobLock {
 public:
  /// Throws ConfigError naming the pid of the run that holds it.
  JobLock(const CheckpointStorage& storage, const std::string& job);
  ~JobLock();
  JobLock(const JobLock&) = delete;
  JobLock& operator=(const JobLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace sluice
