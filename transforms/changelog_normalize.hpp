#pragma once

#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

/// The ChangelogNormalize operator, for
/// `stream.transform("normalize", changelog_normalize())`: keyed by its
/// input's primary key, it emits a changelog of whole rows, every -D
/// included, without repeated changes. It must come before any operator
/// when the stream may carry key-only deletes (StreamType::key_only_deletes).
OperatorDef changelog_normalize();

}  // namespace sluice
