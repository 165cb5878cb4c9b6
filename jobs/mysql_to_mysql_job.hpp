#pragma once

#include "sluice/jobs/job_registry.hpp"

namespace sluice {

/// `sluice run mysql-to-mysql`: a table's changes, read from the binlog
/// after a snapshot, replicated into another table, with either delivery.
JobDefinition mysql_to_mysql_job();

}  // namespace sluice
