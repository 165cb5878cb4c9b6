#pragma once

#include <string_view>

namespace sluice {

/// A named place where crash tests may kill the process. With
/// SLUICE_FAULT=<name>[@<subtask>][:<n>] in the environment, the n-th time
/// (default: the first) fault_point(<name>) is reached — by any thread, or
/// with @<subtask> only by that subtask (0-based) — the process dies of
/// SIGKILL, as if the machine had lost power there (minus the page cache).
/// Without it, a no-op.
///
/// The points: in the checkpoint coordinator "checkpoint-before-commit"
/// (every task saved its snapshot, the metadata is not written yet),
/// "checkpoint-after-commit" (written, no task told yet) and
/// "final-checkpoint-after-commit" (the same for the final checkpoint); in
/// the changelog-file source "file-snapshot" (its position saved, the
/// snapshot not yet taken); in the mysql-cdc source "cdc-snapshot-chunk"
/// and "cdc-binlog-read" (a chunk, or changes read from the binlog,
/// emitted), "cdc-binlog-checkpoint" (a checkpoint taken in the binlog
/// phase completed); in the
/// MySQL sink "mid-flush", "after-prepare",
/// "before-commit", "after-commit" and "recovery-after-commits" (listed
/// transactions committed, leftovers not yet rolled back); in the sink of
/// several tables "mysql-sink-before-schema-change" and
/// "mysql-sink-schema-change" (a schema change of the source's about to be
/// made to its target, and made).
void fault_point(std::string_view name, int subtask = -1);

}  // namespace sluice
