#include "sluice/jobs/job_registry.hpp"

#include <map>
#include <string>
#include <vector>

#include "sluice/cli/job_commands.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/jobs/aggregate_job.hpp"
#include "sluice/jobs/changelog_to_mysql_job.hpp"
#include "sluice/jobs/example_job.hpp"
#include "sluice/jobs/mysql_to_mysql_job.hpp"
#include "sluice/jobs/orders_demo_job.hpp"
#include "sluice/jobs/orders_exactly_once_job.hpp"

namespace sluice {

const std::vector<JobDefinition>& bundled_jobs() {
  static const std::vector<JobDefinition> jobs = {
      orders_demo_job(), changelog_to_mysql_job(), mysql_to_mysql_job(), orders_exactly_once_job(),
      idle_flush_job(),  aggregate_job(),          example_job()};
  return jobs;
}

OptionTable all_options() {
  OptionTable table = OptionTable(engine_option_specs()).merged(cli::run_option_specs());
  for (const auto& job : bundled_jobs()) table = table.merged(job.options);
  return table;
}

const JobDefinition& find_job(const std::string& name) {
  for (const auto& job : bundled_jobs()) {
    if (job.name == name) return job;
  }
  std::string known;
  for (const auto& job : bundled_jobs()) known += (known.empty() ? "" : ", ") + job.name;
  throw ConfigError("unknown job '" + name + "'; the bundled jobs are: " + known);
}

OptionTable bundled_option_table(const JobDefinition& job) {
  // The keys only other jobs use, so that setting one says so.
  std::map<std::string, std::vector<std::string>> users;
  for (const auto& other : bundled_jobs()) {
    for (const auto& spec : other.options) users[spec.key].push_back(other.name);
  }
  const std::string describe = "sluice describe " + job.name;
  std::map<std::string, std::string, std::less<>> elsewhere;
  for (const auto& [key, jobs] : users) {
    std::string list;
    for (const auto& name : jobs) list += (list.empty() ? "" : ", ") + name;
    elsewhere[key] = "job '" + job.name + "' does not use it (" + list + " do); '" + describe +
                     "' lists the options it takes";
  }
  return job.option_table().with_elsewhere(std::move(elsewhere)).with_listing(describe);
}

}  // namespace sluice
