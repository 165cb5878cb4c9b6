#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/graph/job_graph.hpp"
#include "engine/graph/options.hpp"
#include "engine/runtime/executor.hpp"

namespace sluice {

/// A bundled job that `sluice list|describe|run` knows by name: a function
/// that builds a graph from options.
struct JobDefinition {
  std::string name;
  std::string summary;
  /// The connector and job keys it reads, besides the engine's.
  std::vector<OptionSpec> options;
  /// Defaults of this job that differ from the keys' own.
  std::map<std::string, std::string> defaults;
  /// Adds the job's operators to `graph`. It may read the outside world
  /// (a table's columns) but changes nothing: describe calls it too.
  std::function<void(const Config& config, JobGraph& graph)> build;
  /// Optional: what `run` does first, outside the graph (create or empty a
  /// table); `resuming` says whether the run will resume from a checkpoint.
  std::function<void(const Config& config, const std::string& job_name, bool resuming)> prepare;
  /// Optional: prints what the job has to say once it ended, and whether
  /// its own checks passed (false makes the run exit 1).
  std::function<bool(const Config& config, const JobResult& result)> report;
  /// Optional: the job as Flink SQL tables and statements (`describe --as flink-sql`).
  std::function<std::string(const Config& config, const JobGraph& graph)> flink_sql;

  /// Every key this job accepts, with its defaults; `job.name` defaults to the job's name.
  OptionTable option_table() const;
};

/// The bundled jobs, in the order `sluice list` shows them.
const std::vector<JobDefinition>& bundled_jobs();
/// Every key of the engine and of any bundled job, with the keys' own defaults.
OptionTable all_options();
/// The job called `name`; throws ConfigError listing the jobs if there is none.
const JobDefinition& find_job(const std::string& name);

}  // namespace sluice
