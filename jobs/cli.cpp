#include "jobs/cli.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/bench.hpp"
#include "engine/common/error.hpp"
#include "engine/graph/physical_plan.hpp"
#include "engine/runtime/executor.hpp"
#include "jobs/flink_sql.hpp"
#include "jobs/job_registry.hpp"
#include "jobs/metrics_export.hpp"
#include "jobs/metrics_server.hpp"
#include "jobs/progress.hpp"

namespace sluice {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct JobArgs {
  std::string job;
  std::vector<std::string> sets;
  std::optional<std::string> config_file;
};

void add_job_args(CLI::App* command, JobArgs& args) {
  command->add_option("JOB", args.job, "a bundled job (see `sluice list`)")->required();
  command->add_option("--set", args.sets, "set an option: --set key=value (repeatable)")
      ->allow_extra_args(false);
  command->add_option("--config", args.config_file,
                      "a file of key=value lines; --set wins over it");
}

Config job_config(const JobArgs& args) {
  return make_config(find_job(args.job).option_table(), args.config_file, args.sets);
}

void build_graph(const JobDefinition& job, const Config& config, JobGraph& graph) {
  job.build(config, graph);
  graph.check();
}

int list_jobs() {
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
                value ? spec.shown(*value).c_str() : spec.documented_default().c_str(), mark);
  }
}

int describe_job(const JobArgs& args, bool dot, const std::string& as) {
  const JobDefinition& job = find_job(args.job);
  const Config config = job_config(args);
  JobGraph graph(config.get_string("job.name"));
  if (!dot && as.empty()) {
    // The options, also when the graph cannot be built here (a job that
    // reads its schema from a database that is not reachable, an option
    // still to be set).
    std::printf("job %s: %s\n\n", job.name.c_str(), job.summary.c_str());
    try {
      build_graph(job, config, graph);
      std::fputs(build_plan(graph, RuntimeOptions::from(config)).describe(graph).c_str(), stdout);
    } catch (const std::exception& e) {
      std::printf("graph: not shown, it cannot be built with these options: %s\n", e.what());
    }
    std::puts("");
    print_options(config);
    return 0;
  }
  build_graph(job, config, graph);
  if (as == "flink-sql") {
    if (!job.flink_sql) throw ConfigError("job '" + job.name + "' has no Flink SQL translation");
    std::printf("-- %s: %s\n%s\n%s", job.name.c_str(), job.summary.c_str(),
                flink_sql::settings(config).c_str(), job.flink_sql(config, graph).c_str());
    return 0;
  }
  std::fputs(build_plan(graph, RuntimeOptions::from(config)).dot(graph).c_str(), stdout);
  return 0;
}

// Cancels `executor` on SIGINT or SIGTERM while a job runs. Construct it
// before the executor starts any thread: the signals are blocked in this
// thread, and the threads started later inherit that.
class CancelOnSignal {
 public:
  explicit CancelOnSignal(Executor& executor) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this, &executor] {
      const timespec tick{0, 100'000'000};
      while (!done_) {
        if (sigtimedwait(&signals_, nullptr, &tick) > 0) {
          spdlog::warn("cancelling the job");
          executor.cancel();
        }
      }
    });
  }
  ~CancelOnSignal() {
    done_ = true;
    thread_.join();
    pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
  }

 private:
  sigset_t signals_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

int run_job(const JobArgs& args, const std::optional<std::string>& metrics_file) {
  const JobDefinition& job = find_job(args.job);
  const Config config = job_config(args);
  const RuntimeOptions options = RuntimeOptions::from(config);
  const std::string name = config.get_string("job.name");
  if (job.prepare) job.prepare(config, name, Executor::restore_point(options, name).has_value());
  JobGraph graph(name);
  build_graph(job, config, graph);
  Executor executor(options);
  JobResult result;
  {
    std::unique_ptr<MetricsServer> server;
    if (const int64_t port = config.get_int("metrics.port"); port > 0) {
      server = std::make_unique<MetricsServer>(static_cast<unsigned short>(port), [&] {
        return prometheus_text(graph.name(), executor.metrics());
      });
      spdlog::info("metrics at http://127.0.0.1:{}/metrics", server->port());
    }
    CancelOnSignal cancel_on_signal(executor);
    ProgressLine progress(executor, graph);
    result = executor.run(graph);
  }
  if (result.status == JobResult::Status::kFailed && result.failed_operator.empty()) {
    // It could not start (the executor logged why): a configuration error
    // is a usage error.
    return holds<ConfigError>(result.exception) ? kExitUsage : kExitFailed;
  }
  print_summary(graph, result);
  if (metrics_file) {
    std::ofstream out(*metrics_file);
    out << metrics_json(graph, result).dump(2) << "\n";
    if (!out) spdlog::error("cannot write --metrics-file {}", *metrics_file);
  }
  const bool checks_passed = !job.report || job.report(config, result);
  if (result.status == JobResult::Status::kFailed) {
    spdlog::error("job {} failed: {}", graph.name(), result.error);
    // A configuration the user must change (a missing table, access denied).
    return holds<ConfigError>(result.exception) ? kExitUsage : kExitFailed;
  }
  return result.finished() && checks_passed ? 0 : kExitFailed;
}

}  // namespace

int run_cli(int argc, char** argv) {
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  CLI::App app{"Sluice: a small streaming engine that writes changelogs into MySQL"};
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION);
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "list the bundled jobs");
  JobArgs describe_args;
  bool dot = false;
  CLI::App* describe = app.add_subcommand("describe", "show a job's graph and options");
  add_job_args(describe, describe_args);
  describe->add_flag("--dot", dot, "print the graph in Graphviz dot");
  std::string describe_as;
  describe->add_option("--as", describe_as, "print the job in another form: flink-sql")
      ->check(CLI::IsMember({"flink-sql"}));
  CLI::App* options = app.add_subcommand("options", "list every option as a Markdown table");
  JobArgs run_args;
  std::optional<std::string> metrics_file;
  CLI::App* run = app.add_subcommand("run", "run a bundled job");
  add_job_args(run, run_args);
  run->add_option("--metrics-file", metrics_file, "write the final metrics as JSON to this file");
  BenchOptions bench_options;
  CLI::App* bench = app.add_subcommand("bench", "run benchmarks with same-run baselines");
  bench->add_option("NAME", bench_options.names, "benchmarks to run (default: all)");
  bench->add_flag("--quick", bench_options.quick, "fewer rows and repetitions, for a smoke run");
  bench->add_option("--json", bench_options.json_path, "also write the results as JSON");
  bench->add_option("--chart", bench_options.chart_path, "also draw them as an SVG chart");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }

  try {
    if (list->parsed()) return list_jobs();
    if (options->parsed()) {
      std::fputs(all_options().markdown().c_str(), stdout);
      return 0;
    }
    if (describe->parsed()) return describe_job(describe_args, dot, describe_as);
    if (run->parsed()) return run_job(run_args, metrics_file);
    if (bench->parsed()) return run_benchmarks(bench_options);
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
