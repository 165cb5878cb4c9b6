#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace sluice::testing {

/// A fresh directory under the system's temporary directory, removed with
/// everything in it when this goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

/// What a command printed and how it exited.
struct CommandResult {
  int status = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs `command` through the shell and collects its output.
CommandResult run_command(const std::string& command);

/// A seed for a test's random choices: SLUICE_TEST_SEED if set, so that a
/// failure can be replayed, else a fresh one. Print it with INFO.
uint64_t test_seed();

}  // namespace sluice::testing
