#include "sluice/cli/run_cli.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "sluice/cli/job_commands.hpp"

namespace sluice {
namespace {

std::string program_name(char** argv) { return std::filesystem::path(argv[0]).filename().string(); }

}  // namespace

OptionTable JobDefinition::option_table() const {
  auto all_defaults = defaults;
  all_defaults.emplace("job.name", name);
  return OptionTable(engine_option_specs())
      .merged(cli::run_option_specs())
      .merged(options)
      .with_defaults(all_defaults);
}

int run_cli(int argc, char** argv, const JobDefinition& job) {
  cli::set_up_job_process();
  const std::string program = program_name(argv);
  CLI::App app{job.name + ": " + job.summary, program};
  app.require_subcommand(0, 1);
  cli::JobArgs run_args;
  CLI::App* run = app.add_subcommand("run", "run the job (what " + program + " alone does)");
  cli::add_run_args(*run, run_args);
  cli::JobArgs describe_args;
  CLI::App* describe = app.add_subcommand("describe", "show the job's graph and options");
  cli::add_describe_args(*describe, describe_args);
  CLI::App* options = app.add_subcommand("options", "list every option as a Markdown table");

  // No command, or options first: run.
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto commands = {"run", "describe", "options", "-h", "--help"};
  if (args.empty() || std::find(commands.begin(), commands.end(), args.front()) == commands.end()) {
    args.insert(args.begin(), "run");
  }
  std::reverse(args.begin(), args.end());  // as CLI::App::parse takes them
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : cli::kExitUsage;
  }

  const OptionTable table = job.option_table().with_listing(program + " describe");
  return cli::guarded([&] {
    if (describe->parsed()) return cli::describe_job(job, table, describe_args);
    if (options->parsed()) {
      std::fputs(table.markdown().c_str(), stdout);
      return 0;
    }
    return cli::run_job(job, table, run_args);
  });
}

int run_cli(int argc, char** argv,
            std::function<void(const Config& config, JobGraph& graph)> build) {
  const std::string name = program_name(argv);
  return run_cli(argc, argv,
                 JobDefinition{.name = name, .summary = "a job", .build = std::move(build)});
}

}  // namespace sluice
