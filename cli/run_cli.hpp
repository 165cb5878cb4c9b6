#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {

/// A job as a command line runs it: a function that builds its graph from
/// options, and the options it reads. The bundled jobs are JobDefinitions;
/// so is a job of your own, run with run_cli().
struct JobDefinition {
  std::string name;
  std::string summary;
  /// The connector and job keys it reads, besides the engine's.
  std::vector<OptionSpec> options;
  /// Defaults of this job that differ from the keys' own.
  std::map<std::string, std::string> defaults;
  /// Adds the job's operators to `graph`. It may read the outside world
  /// (a table's columns) but changes nothing: describe calls it too.
  std::function<void(const Config& config, JobGraph& graph)> build;
  /// Optional: what `run` does first, outside the graph (create or empty a
  /// table); `resuming` says whether the run will resume from a checkpoint.
  std::function<void(const Config& config, const std::string& job_name, bool resuming)> prepare;
  /// Optional: prints what the job has to say once it ended, and whether
  /// its own checks passed (false makes the run exit 1).
  std::function<bool(const Config& config, const JobResult& result)> report;
  /// Optional: the job's statements in Flink SQL (`describe --as
  /// flink-sql`), where an INSERT of each sink's columns from its source is
  /// not what it does (a filter, an aggregate). The tables come from the
  /// job's sources and sinks, named as they name them (a source: after its
  /// operator).
  std::function<std::string(const Config& config)> flink_sql_query;

  /// Every key this job accepts: the engine's, `metrics.port` and its own,
  /// with its defaults; `job.name` defaults to the job's name.
  OptionTable option_table() const;
};

/// The command line of a program that runs one job, with what `sluice run`
/// gives a bundled job:
///
///     PROGRAM [run] [--set key=value]... [--config FILE] [--metrics-file FILE] [--open]
///     PROGRAM describe [--set key=value]... [--config FILE] [--dot | --as flink-sql]
///     PROGRAM options
///
/// `run` shows a progress line on a terminal and a summary at the end,
/// serves the job's page, its JSON and Prometheus metrics on `metrics.port`
/// (`--open` opens the page), and cancels the job on SIGINT or
/// SIGTERM. Returns the exit status: 0 the job finished, 1 it failed, 2 a
/// usage or configuration error (reported before the job starts where it
/// can be), 128 + the signal when a signal cancelled it (130 for SIGINT).
///
///     int main(int argc, char** argv) { return sluice::run_cli(argc, argv, my_job()); }
int run_cli(int argc, char** argv, const JobDefinition& job);

/// The same for a job that reads no options of its own beyond the engine's,
/// named after the program.
int run_cli(int argc, char** argv,
            std::function<void(const Config& config, JobGraph& graph)> build);

}  // namespace sluice
