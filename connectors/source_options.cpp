#include "sluice/connectors/source_options.hpp"

namespace sluice {

OptionSpec source_rate_spec() {
  return {
      .key = "source.rate",
      .type = OptionType::kInteger,
      .default_value = "0",
      .doc =
          "records per second over all source subtasks; 0 = as fast as possible. A source "
          "that had nothing to emit for a while runs ahead of the rate by at most 100 ms of it"};
}

}  // namespace sluice
