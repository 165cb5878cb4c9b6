#include "sluice/connectors/source_options.hpp"

namespace sluice {

OptionSpec source_rate_spec() {
  return {.key = "source.rate",
          .type = OptionType::kInteger,
          .default_value = "0",
          .doc = "records per second over all source subtasks; 0 = as fast as possible"};
}

}  // namespace sluice
