#include "jobs/job_registry.hpp"

#include "engine/error.hpp"

namespace sluice {

OptionTable JobDefinition::option_table() const {
  return OptionTable(engine_option_specs()).merged(options).with_defaults({{"job.name", name}});
}

const std::vector<JobDefinition>& bundled_jobs() {
  static const std::vector<JobDefinition> jobs = {};
  return jobs;
}

const JobDefinition& find_job(const std::string& name) {
  for (const auto& job : bundled_jobs()) {
    if (job.name == name) return job;
  }
  std::string known;
  for (const auto& job : bundled_jobs()) known += (known.empty() ? "" : ", ") + job.name;
  throw ConfigError("unknown job '" + name + "'; the bundled jobs are: " +
                    (known.empty() ? "(none)" : known));
}

}  // namespace sluice
