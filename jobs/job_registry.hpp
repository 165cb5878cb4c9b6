#pragma once

#include <string>
#include <vector>

#include "engine/options.hpp"

namespace sluice {

/// A bundled job that `sluice list|describe|run` knows by name.
struct JobDefinition {
  std::string name;
  std::string summary;
  /// The job's own keys and the connector keys it uses, besides the engine's.
  std::vector<OptionSpec> options;

  /// Every key this job accepts, with `job.name` defaulting to the job's name.
  OptionTable option_table() const;
};

/// The bundled jobs, in the order `sluice list` shows them.
const std::vector<JobDefinition>& bundled_jobs();
/// The job called `name`; throws ConfigError listing the jobs if there is none.
const JobDefinition& find_job(const std::string& name);

}  // namespace sluice
