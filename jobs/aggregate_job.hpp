#pragma once

#include "sluice/jobs/job_registry.hpp"

namespace sluice {

/// `sluice run aggregate`: a changelog counted and summed per key in
/// checkpointed state, the results printed as a changelog.
JobDefinition aggregate_job();

}  // namespace sluice
