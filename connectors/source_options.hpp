#pragma once

#include "engine/options.hpp"

namespace sluice {

/// `source.rate`, which every source reads.
OptionSpec source_rate_spec();

}  // namespace sluice
