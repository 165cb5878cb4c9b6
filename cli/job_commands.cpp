#include "sluice/cli/job_commands.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "sluice/cli/flink_sql.hpp"
#include "sluice/cli/metrics_export.hpp"
#include "sluice/cli/metrics_server.hpp"
#include "sluice/cli/progress.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/graph/physical_plan.hpp"

namespace sluice::cli {
namespace {

void add_config_args(CLI::App& command, JobArgs& args) {
  command.add_option("--set", args.sets, "set an option: --set key=value (repeatable)")
      ->allow_extra_args(false);
  command.add_option("--config", args.config_file, "a file of key=value lines; --set wins over it");
}

Config job_config(const OptionTable& table, const JobArgs& args) {
  return make_config(table, args.config_file, args.sets);
}

void build_graph(const JobDefinition& job, const Config& config, JobGraph& graph) {
  job.build(config, graph);
  graph.check();
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

// Cancels `executor` on SIGINT or SIGTERM while a job runs, and remembers
// which came. Construct it before anything starts a thread (the executor,
// the metrics server, a connector building the graph): the signals are
// blocked in this thread, and the threads started later inherit that, so
// that no other thread takes them with their default action.
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
        if (const int signal = sigtimedwait(&signals_, nullptr, &tick); signal > 0) {
          spdlog::warn("{}: cancelling the job", signal == SIGINT ? "SIGINT" : "SIGTERM");
          received_ = signal;
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

  /// The signal that cancelled the job, or 0.
  int received() const { return received_; }

 private:
  sigset_t signals_;
  std::atomic<bool> done_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

// The job page's address as seen from this machine.
std::string page_url(const std::string& bind, unsigned short port) {
  std::string host = bind == "0.0.0.0" || bind == "::" ? "127.0.0.1" : bind;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(port) + "/";
}

// Asks the desktop to open `url` (xdg-open), without waiting for it.
void open_in_browser(const std::string& url) {
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // Without the signals this thread blocks (see CancelOnSignal).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  char program[] = "xdg-open";
  std::string target = url;
  char* argv[] = {program, target.data(), nullptr};
  pid_t pid = 0;
  const int failed = posix_spawnp(&pid, program, &quiet, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&quiet);
  if (failed != 0) {
    spdlog::warn("--open: cannot start xdg-open ({}); open {} in a browser", std::strerror(failed),
                 url);
    return;
  }
  // Reaped when it exits, so that it leaves no zombie behind.
  std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();
}

}  // namespace

void add_run_args(CLI::App& command, JobArgs& args) {
  add_config_args(command, args);
  command.add_option("--metrics-file", args.metrics_file,
                     "write the final metrics as JSON to this file");
  command.add_flag("--open", args.open,
                   "open the job's page in a browser (on metrics.port, or a free port if it is 0)");
}

void add_describe_args(CLI::App& command, JobArgs& args) {
  add_config_args(command, args);
  CLI::Option* dot = command.add_flag("--dot", args.dot, "print the graph in Graphviz dot");
  command.add_option("--as", args.as, "print the job in another form: flink-sql")
      ->check(CLI::IsMember({"flink-sql"}))
      ->excludes(dot);
}

std::vector<OptionSpec> run_option_specs() {
  return {
      {.key = "metrics.port",
       .type = OptionType::kInteger,
       .default_value = "0",
       .doc = "serve the running job on this port: its page at /, JSON at /api/job, Prometheus "
              "text at /metrics; 0 = off"},
      {.key = "metrics.bind",
       .type = OptionType::kString,
       .default_value = "127.0.0.1",
       .doc = "the address metrics.port listens on: this machine only by default; 0.0.0.0 (or ::) "
              "for every network the machine is on"}};
}

int describe_job(const JobDefinition& job, const OptionTable& table, const JobArgs& args) {
  const Config config = job_config(table, args);
  JobGraph graph(config.get_string("job.name"));
  if (!args.dot && args.as.empty()) {
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
  if (args.as == "flink-sql") {
    const std::string query = job.flink_sql_query ? job.flink_sql_query(config) : "";
    std::printf("-- %s: %s\n%s", job.name.c_str(), job.summary.c_str(),
                flink_sql::job(graph, config, query).c_str());
    return 0;
  }
  std::fputs(build_plan(graph, RuntimeOptions::from(config)).dot(graph).c_str(), stdout);
  return 0;
}

int run_job(const JobDefinition& job, const OptionTable& table, const JobArgs& args) {
  const Config config = job_config(table, args);
  const RuntimeOptions options = RuntimeOptions::from(config);
  const std::string name = config.get_string("job.name");
  Executor executor(options);
  JobGraph graph(name);
  std::optional<PhysicalPlan> plan;
  JobResult result;
  int signal = 0;
  {
    CancelOnSignal cancel_on_signal(executor);
    if (job.prepare) job.prepare(config, name, Executor::restore_point(options, name).has_value());
    build_graph(job, config, graph);
    // What the executor will run, for the JSON; none for a graph that
    // cannot run, whose run says why.
    if (graph.validate().empty()) plan = build_plan(graph, options);
    std::unique_ptr<MetricsServer> server;
    if (const int64_t port = config.get_int("metrics.port"); port > 0 || args.open) {
      const std::string bind = config.get_string("metrics.bind");
      server =
          std::make_unique<MetricsServer>(bind, static_cast<unsigned short>(port),
                                          job_routes(graph, plan ? &*plan : nullptr, executor));
      const std::string url = page_url(bind, server->port());
      spdlog::info("the job's page: {} (JSON at {}api/job, Prometheus text at {}metrics)", url, url,
                   url);
      if (args.open) open_in_browser(url);
    }
    ProgressLine progress(executor, graph);
    // A signal while the job was being set up: it never starts.
    if (const int early = cancel_on_signal.received(); early != 0) return 128 + early;
    result = executor.run(graph);
    signal = cancel_on_signal.received();
  }
  // A configuration the user must change (a missing file or table, access
  // denied), mostly found before data flows: a usage error, no summary.
  if (result.status == JobResult::Status::kFailed && holds<ConfigError>(result.exception)) {
    print_error(result.error);
    return kExitUsage;
  }
  if (result.status == JobResult::Status::kFailed && result.failed_operator.empty()) {
    print_error(result.error);  // it could not start
    return kExitFailed;
  }
  print_summary(graph, result);
  if (args.metrics_file) {
    std::ofstream out(*args.metrics_file);
    out << metrics_json(graph, plan ? &*plan : nullptr, result).dump(2) << "\n";
    if (!out) spdlog::error("cannot write --metrics-file {}", *args.metrics_file);
  }
  const bool checks_passed = !job.report || job.report(config, result);
  if (result.status == JobResult::Status::kFailed) {
    spdlog::error("job {} failed: {}", graph.name(), result.error);
    return kExitFailed;
  }
  if (result.status == JobResult::Status::kCancelled && signal != 0) return 128 + signal;
  return result.finished() && checks_passed ? 0 : kExitFailed;
}

int guarded(const std::function<int()>& command) {
  try {
    return command();
  } catch (const ConfigError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitFailed;
  }
}

void print_error(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
}

void set_up_job_process() {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "sluice", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  // Blocks below 32 MiB (the most glibc allows) come from the heap, not a
  // mapping of their own that free() unmaps, and a heap keeps up to 64 MiB
  // free at its top. Setting both fixes them: glibc's own thresholds move
  // with what the process frees. In replication-inserts-1000 this halved the
  // job's page faults (about 2,200 a run fewer, of 7 µs each on a virtual
  // machine).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace sluice::cli
