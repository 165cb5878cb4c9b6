#pragma once

#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// `source.rate`, which every source reads.
OptionSpec source_rate_spec();

}  // namespace sluice
