#include "engine/graph/runtime_options.hpp"

namespace sluice {

RuntimeOptions RuntimeOptions::from(const Config& config) {
  RuntimeOptions options;
  options.parallelism = static_cast<int>(config.get_int("parallelism"));
  options.flush_interval = config.get_duration("engine.flush.interval");
  options.chaining = config.get_bool("engine.chaining");
  if (config.find("engine.check-rows")) options.check_rows = config.get_bool("engine.check-rows");
  options.batch_size = static_cast<size_t>(config.get_int("engine.batch-size"));
  options.channel_capacity = static_cast<size_t>(config.get_int("engine.channel-capacity"));
  options.checkpoint_interval = config.get_duration("checkpoint.interval");
  options.checkpoint_timeout = config.get_duration("checkpoint.timeout");
  options.checkpoint_min_pause = config.get_duration("checkpoint.min-pause");
  options.checkpoints_retained = static_cast<int>(config.get_int("checkpoint.retained"));
  options.checkpoint_dir = config.get_string("checkpoint.dir");
  const std::string restore = config.get_string("restore");
  if (restore == "auto") {
    options.restore = Restore::kLatest;
  } else if (restore == "none") {
    options.restore = Restore::kNone;
  } else {
    options.restore = Restore::kCheckpoint;
    options.restore_checkpoint = config.get_int("restore");
  }
  options.restart_attempts = static_cast<int>(config.get_int("restart.attempts"));
  options.restart_delay = config.get_duration("restart.delay");
  return options;
}

}  // namespace sluice
