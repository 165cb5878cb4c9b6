#pragma once

#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

/// An operator that counts the records and sums `value_column` per key of
/// `key_columns`, keeping both in keyed state (RocksDB, saved at
/// checkpoints): `stream.transform("revenue", keyed_aggregate({"customer"},
/// "amount"))`.
///
/// Its input is hash-partitioned by `key_columns`. +I and +U rows add, -U and
/// -D rows retract. It emits the result per key as a changelog of rows
/// (key columns..., count BIGINT, sum): +I for a new key, -U then +U when a
/// key's result changes, -D when its count drops to zero. The sum has the
/// value column's type (DECIMAL widened to 38 digits); NULLs are counted but
/// not summed. validate() refuses an input with +U but no -U: an update
/// could not be retracted.
OperatorDef keyed_aggregate(std::vector<std::string> key_columns, std::string value_column);

}  // namespace sluice
