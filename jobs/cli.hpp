#pragma once

namespace sluice {

/// The `sluice` command line. Returns the process exit status: 0 the job
/// finished, 1 it failed, 2 a usage or configuration error.
int run_cli(int argc, char** argv);

}  // namespace sluice
