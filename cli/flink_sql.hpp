#pragma once

#include <string>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"

/// `sluice describe JOB --as flink-sql`: the Flink SQL a user moving to a
/// cluster would write for the same job.
namespace sluice::flink_sql {

/// The job as Flink SQL: SET statements for its parallelism and
/// checkpoints, a CREATE TABLE for each table of each source and sink as
/// its connector describes it (SourceDef::flink_sql, SinkDef::flink_sql),
/// then `query` or, where it is empty, an INSERT of each sink's columns
/// from its source's table (several run as one statement set), naming the
/// operators in between that it does not translate. Throws ConfigError
/// for a source or sink without a Flink SQL table.
std::string job(const JobGraph& graph, const Config& config, const std::string& query);

}  // namespace sluice::flink_sql
