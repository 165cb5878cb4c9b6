#pragma once

namespace sluice {

/// The `sluice` command line: the bundled jobs, and benchmarks. Returns the
/// process exit status, as run_cli() does.
int run_sluice_cli(int argc, char** argv);

}  // namespace sluice
