#include "engine/runtime_options.hpp"

namespace sluice {

RuntimeOptions RuntimeOptions::from(const Config& config) {
  RuntimeOptions options;
  options.parallelism = static_cast<int>(config.get_int("parallelism"));
  options.flush_interval = config.get_duration("engine.flush.interval");
  options.chaining = config.get_bool("engine.chaining");
  options.batch_size = static_cast<size_t>(config.get_int("engine.batch-size"));
  options.channel_capacity = static_cast<size_t>(config.get_int("engine.channel-capacity"));
  return options;
}

}  // namespace sluice
