#pragma once

#include "sluice/jobs/job_registry.hpp"

namespace sluice {

/// `sluice run orders-exactly-once`: generated orders written through XA
/// transactions tied to checkpoints; the table is checked at the end.
JobDefinition orders_exactly_once_job();

}  // namespace sluice
