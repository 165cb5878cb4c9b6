#include "jobs/cli.hpp"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "jobs/job_registry.hpp"

namespace sluice {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct JobArgs {
  std::string job;
  std::vector<std::string> sets;
  std::optional<std::string> config_file;
};

void add_job_args(CLI::App* command, JobArgs& args, bool with_config_file) {
  command->add_option("JOB", args.job, "a bundled job (see `sluice list`)")->required();
  command->add_option("--set", args.sets, "set an option: --set key=value (repeatable)")
      ->allow_extra_args(false);
  if (with_config_file) {
    command->add_option("--config", args.config_file,
                        "a file of key=value lines; --set wins over it");
  }
}

Config job_config(const JobArgs& args) {
  return make_config(find_job(args.job).option_table(), args.config_file, args.sets);
}

int list_jobs() {
  if (bundled_jobs().empty()) std::puts("(no bundled jobs)");
  for (const auto& job : bundled_jobs()) {
    std::printf("%-24s %s\n", job.name.c_str(), job.summary.c_str());
  }
  return 0;
}

void print_options(const Config& config) {
  std::puts("options:");
  for (const auto& spec : config.table().specs()) {
    const auto value = config.find(spec.key);
    const char* mark = config.origin(spec.key) == OptionOrigin::kDefault ? "  (default)" : "";
    std::printf("  %-32s %s%s\n", spec.key.c_str(),
                value ? value->c_str() : spec.documented_default().c_str(), mark);
  }
}

int describe_job(const JobArgs& args) {
  const Config config = job_config(args);
  std::printf("job %s: %s\n", args.job.c_str(), find_job(args.job).summary.c_str());
  print_options(config);
  return 0;
}

int run_job(const JobArgs& args) {
  const Config config = job_config(args);
  throw ConfigError("job '" + args.job + "' cannot run yet");
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"Sluice: a small streaming engine that writes changelogs into MySQL"};
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION);
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "list the bundled jobs");
  JobArgs describe_args;
  CLI::App* describe = app.add_subcommand("describe", "show a job's graph and options");
  add_job_args(describe, describe_args, true);
  JobArgs run_args;
  CLI::App* run = app.add_subcommand("run", "run a bundled job");
  add_job_args(run, run_args, true);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }

  try {
    if (list->parsed()) return list_jobs();
    if (describe->parsed()) return describe_job(describe_args);
    if (run->parsed()) return run_job(run_args);
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitFailed;
  }
  return kExitUsage;
}

}  // namespace sluice
