#include "sluice/engine/graph/runtime_options.hpp"

#include <cstdlib>
#include <functional>
#include <string>

namespace sluice {
namespace {

using Restore = RuntimeOptions::Restore;

const OptionBinder<RuntimeOptions>& binder() {
  static const OptionBinder<RuntimeOptions> all =
      OptionBinder<RuntimeOptions>()
          .integer(
              {.key = "parallelism", .doc = "default number of subtasks per operator", .min = 1},
              &RuntimeOptions::parallelism)
          .duration({.key = "engine.flush.interval",
                     .doc = "period of the FlushSignals injected at the sources; 0 = off"},
                    &RuntimeOptions::flush_interval)
          .boolean({.key = "engine.flush.on-idle",
                    .doc = "a source that has read all there is for now also emits a FlushSignal, "
                           "once, if it emitted records since its last (with engine.flush.interval "
                           "on)"},
                   &RuntimeOptions::flush_on_idle)
          .boolean({.key = "engine.chaining",
                    .doc = "run operators on forward edges of equal parallelism in one task"},
                   &RuntimeOptions::chaining)
          .boolean(
              {.key = "engine.check-rows",
               .doc = "check every record an operator emits against its declared changelog mode "
                      "(costs a little per record; column types and DECIMAL precisions are "
                      "always checked)",
               .default_doc = "on in debug builds, else off"},
              &RuntimeOptions::check_rows)
          .integer({.key = "engine.batch-size",
                    .doc = "records per batch handed from one task to the next",
                    .min = 1},
                   &RuntimeOptions::batch_size)
          .integer({.key = "engine.channel-capacity",
                    .doc = "batches a channel holds before its producer blocks",
                    .min = 1},
                   &RuntimeOptions::channel_capacity)
          .duration({.key = "checkpoint.interval", .doc = "time between checkpoints; 0 = off"},
                    &RuntimeOptions::checkpoint_interval)
          .bind(
              {.key = "checkpoint.dir",
               .doc = "where checkpoints and live state go, under a folder per job.name",
               .default_doc = "$XDG_STATE_HOME/sluice, else ~/.local/state/sluice"},
              [](const RuntimeOptions& o) { return o.checkpoint_dir.string(); },
              [](const Config& config, RuntimeOptions& o) {
                o.checkpoint_dir = config.get_string("checkpoint.dir");
              })
          .duration({.key = "checkpoint.timeout",
                     .doc = "a checkpoint not complete after this long is aborted"},
                    &RuntimeOptions::checkpoint_timeout)
          .duration({.key = "checkpoint.min-pause",
                     .doc = "least time between the end of a checkpoint and the start of the next"},
                    &RuntimeOptions::checkpoint_min_pause)
          .integer(
              {.key = "checkpoint.retained", .doc = "completed checkpoints kept on disk", .min = 1},
              &RuntimeOptions::checkpoints_retained)
          .bind(
              {.key = "restore",
               .type = OptionType::kEnum,
               .doc =
                   "resume from the latest checkpoint of job.name (auto), start fresh (none), or "
                   "resume from the given checkpoint id",
               .choices = {"auto", "none"},
               .also_integer = true},
              [](const RuntimeOptions& o) {
                switch (o.restore) {
                  case Restore::kNone:
                    return std::string("none");
                  case Restore::kLatest:
                    return std::string("auto");
                  case Restore::kCheckpoint:
                    break;
                }
                return std::to_string(o.restore_checkpoint);
              },
              [](const Config& config, RuntimeOptions& o) {
                const std::string restore = config.get_string("restore");
                if (restore == "auto") {
                  o.restore = Restore::kLatest;
                } else if (restore == "none") {
                  o.restore = Restore::kNone;
                } else {
                  o.restore = Restore::kCheckpoint;
                  o.restore_checkpoint = config.get_int("restore");
                }
              })
          .integer(
              {.key = "restart.attempts",
               .doc = "in-process restarts of a failed job, from the latest checkpoint this run "
                      "completed or the one it started from; a failure that would repeat is not "
                      "restarted"},
              &RuntimeOptions::restart_attempts)
          .duration({.key = "restart.delay", .doc = "wait before a restart"},
                    &RuntimeOptions::restart_delay);
  return all;
}

}  // namespace

std::filesystem::path default_checkpoint_dir() {
  // A relative XDG_STATE_HOME is invalid and ignored, as the XDG spec says.
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/') {
    return std::filesystem::path(state) / "sluice";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return std::filesystem::path(home) / ".local" / "state" / "sluice";
  }
  return "./sluice-state";
}

RuntimeOptions RuntimeOptions::without_checkpoints() {
  RuntimeOptions options;
  options.checkpoint_interval = std::chrono::milliseconds(0);
  options.restore = Restore::kNone;
  options.restart_attempts = 0;
  return options;
}

RuntimeOptions RuntimeOptions::from(const Config& config) {
  RuntimeOptions options;
  binder().read(config, options);  // a key without a default (engine.check-rows) may have no value
  return options;
}

const std::vector<OptionSpec>& engine_option_specs() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> out = {{.key = "job.name",
                                    .doc = "names the job's checkpoints and transactions",
                                    .default_doc = "the job's id"}};
    // A default that depends on the build or the user is documented, not shown.
    for (OptionSpec& spec : binder().specs()) out.push_back(std::move(spec));
    return out;
  }();
  return specs;
}

}  // namespace sluice
