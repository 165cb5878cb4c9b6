#pragma once

#include "sluice/jobs/job_registry.hpp"

namespace sluice {

/// `sluice run example`: the smallest complete job, to copy when writing one.
JobDefinition example_job();

}  // namespace sluice
