#include "jobs/job_registry.hpp"

#include <map>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "jobs/aggregate_job.hpp"
#include "jobs/changelog_to_mysql_job.hpp"
#include "jobs/example_job.hpp"
#include "jobs/orders_demo_job.hpp"
#include "jobs/orders_exactly_once_job.hpp"

namespace sluice {

namespace {

// What `sluice run` itself reads, for every job.
std::vector<OptionSpec> cli_option_specs() {
  return {{.key = "metrics.port",
           .type = OptionType::kInteger,
           .default_value = "0",
           .doc = "serve the job's metrics in Prometheus format on this loopback port; 0 = off"}};
}

}  // namespace

OptionTable JobDefinition::option_table() const {
  auto all_defaults = defaults;
  all_defaults.emplace("job.name", name);
  // The keys only other jobs use, so that setting one says so.
  std::map<std::string, std::vector<std::string>> users;
  for (const auto& job : bundled_jobs()) {
    for (const auto& spec : job.options) users[spec.key].push_back(job.name);
  }
  std::map<std::string, std::string, std::less<>> elsewhere;
  for (const auto& [key, jobs] : users) {
    std::string list;
    for (const auto& job : jobs) list += (list.empty() ? "" : ", ") + job;
    elsewhere[key] = "job '" + name + "' does not use it (" + list + " do); `sluice describe " +
                     name + "` lists the options it takes";
  }
  return OptionTable(engine_option_specs())
      .merged(cli_option_specs())
      .merged(options)
      .with_defaults(all_defaults)
      .with_elsewhere(std::move(elsewhere));
}

const std::vector<JobDefinition>& bundled_jobs() {
  static const std::vector<JobDefinition> jobs = {
      orders_demo_job(), changelog_to_mysql_job(), orders_exactly_once_job(),
      idle_flush_job(),  aggregate_job(),          example_job()};
  return jobs;
}

OptionTable all_options() {
  OptionTable table = OptionTable(engine_option_specs()).merged(cli_option_specs());
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

}  // namespace sluice
