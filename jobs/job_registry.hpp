#pragma once

#include <string>
#include <vector>

#include "sluice/cli/run_cli.hpp"

namespace sluice {

/// The bundled jobs, in the order `sluice list` shows them.
const std::vector<JobDefinition>& bundled_jobs();
/// Every key of the engine and of any bundled job, with the keys' own defaults.
OptionTable all_options();
/// The job called `name`; throws ConfigError listing the jobs if there is none.
const JobDefinition& find_job(const std::string& name);
/// The keys `sluice run NAME` takes for bundled job `job`: its option_table(),
/// knowing which keys only other bundled jobs use.
OptionTable bundled_option_table(const JobDefinition& job);

}  // namespace sluice
