#pragma once

#include <string_view>

namespace sluice {

/// A named place where crash tests may kill the process. With
/// SLUICE_FAULT=<name>:<n> in the environment, the n-th time any thread
/// reaches fault_point(<name>) the process dies of SIGKILL, as if the machine
/// had lost power there (minus the page cache). Without it, a no-op.
void fault_point(std::string_view name);

}  // namespace sluice
