#include "sluice/jobs/cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "sluice/benchmarks/bench.hpp"
#include "sluice/cli/job_commands.hpp"
#include "sluice/jobs/job_registry.hpp"

namespace sluice {
namespace {

int list_jobs() {
  for (const auto& job : bundled_jobs()) {
    std::printf("%-24s %s\n", job.name.c_str(), job.summary.c_str());
  }
  return 0;
}

}  // namespace

int run_sluice_cli(int argc, char** argv) {
  cli::set_up_job_process();
  CLI::App app{"Sluice: a small streaming engine that writes changelogs into MySQL"};
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION);
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "list the bundled jobs");
  std::string job_name;
  cli::JobArgs describe_args;
  CLI::App* describe = app.add_subcommand("describe", "show a job's graph and options");
  describe->add_option("JOB", job_name, "a bundled job (see 'sluice list')")->required();
  cli::add_describe_args(*describe, describe_args);
  CLI::App* options = app.add_subcommand("options", "list every option as a Markdown table");
  cli::JobArgs run_args;
  CLI::App* run = app.add_subcommand("run", "run a bundled job");
  run->add_option("JOB", job_name, "a bundled job (see 'sluice list')")->required();
  cli::add_run_args(*run, run_args);
  BenchOptions bench_options;
  CLI::App* bench = app.add_subcommand("bench", "run benchmarks with same-run baselines");
  bench->add_option("NAME", bench_options.names, "benchmarks to run (default: all)");
  bench->add_flag("--quick", bench_options.quick, "fewer rows and repetitions, for a smoke run");
  bench
      ->add_option("--runs", bench_options.runs,
                   "runs of each scenario (default: 5, or 3 with --quick)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--json", bench_options.json_path, "also write the results as JSON");
  bench->add_option("--chart", bench_options.chart_path, "also draw them as an SVG chart");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : cli::kExitUsage;
  }

  return cli::guarded([&] {
    if (list->parsed()) return list_jobs();
    if (options->parsed()) {
      std::fputs(all_options().markdown().c_str(), stdout);
      return 0;
    }
    if (describe->parsed()) {
      const JobDefinition& job = find_job(job_name);
      return cli::describe_job(job, bundled_option_table(job), describe_args);
    }
    if (run->parsed()) {
      const JobDefinition& job = find_job(job_name);
      return cli::run_job(job, bundled_option_table(job), run_args);
    }
    if (bench->parsed()) return run_benchmarks(bench_options);
    return cli::kExitUsage;
  });
}

}  // namespace sluice
