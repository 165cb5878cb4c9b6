#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sluice/cli/run_cli.hpp"

/// The commands that run and describe one job, shared by `sluice` (for a
/// bundled job) and run_cli() (for a job of one's own).
namespace sluice::cli {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

/// What `run` and `describe` take besides the job.
struct JobArgs {
  std::vector<std::string> sets;
  std::optional<std::string> config_file;
  std::optional<std::string> metrics_file;  // run
  bool open = false;                        // run: open the job's page in a browser
  bool dot = false;                         // describe
  std::string as;                           // describe
};

/// Adds --set, --config, --metrics-file and --open to `command`.
void add_run_args(CLI::App& command, JobArgs& args);
/// Adds --set, --config, --dot and --as to `command`.
void add_describe_args(CLI::App& command, JobArgs& args);

/// What `metrics.port`, `metrics.bind` and the other keys that `run` itself reads are.
std::vector<OptionSpec> run_option_specs();

/// Prints the graph of `job` and its options in `table`, also when the
/// graph cannot be built (a job that reads a table's columns from a server
/// that is not there); or the graph alone, as dot or Flink SQL.
int describe_job(const JobDefinition& job, const OptionTable& table, const JobArgs& args);
/// Runs `job` with the options `args` set in `table`: progress line,
/// metrics endpoint, cancelling on signals, summary, exit status.
int run_job(const JobDefinition& job, const OptionTable& table, const JobArgs& args);

/// Runs `command`: a ConfigError it throws is a usage error (exit 2),
/// anything else a failure (exit 1), printed without the log's timestamp.
int guarded(const std::function<int()>& command);
/// "error: `message`" on stderr, as a usage error is shown.
void print_error(const std::string& message);
/// What a job's process sets up before anything else:
/// - the commands' log: on stderr, as every diagnostic (the progress line,
///   the summary, errors), so that stdout holds only what a job or command
///   outputs (the print sink's rows, a listing); lines of time, level,
///   message;
/// - malloc keeping the memory a task frees for the task's next use of it.
///   Tasks fill and clear buffers of megabytes (a sink's flush buffer, a
///   source's batches) over and over; by default glibc gives such memory
///   back to the kernel and each refill takes it again page by page, a page
///   fault every 4 KiB.
void set_up_job_process();

}  // namespace sluice::cli
