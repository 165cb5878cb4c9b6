#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
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

/// Sets (or, with nullptr, unsets) environment variable `name` for its
/// lifetime, then restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

/// What a command printed and how it exited.
struct CommandResult {
  int status = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs `command` through the shell and collects its output.
CommandResult run_command(const std::string& command);

/// A command started in the background through the shell; its output goes
/// to a file. Killed (SIGKILL) if still running when this goes.
class BackgroundCommand {
 public:
  explicit BackgroundCommand(const std::string& command);
  ~BackgroundCommand();
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;

  /// SIGKILLs it (if it still runs) and collects it: status 137 if killed.
  CommandResult kill();
  /// Sends it `signal` and waits for it to end.
  CommandResult signal(int signal);
  /// What it printed so far.
  std::string output() const;
  /// Waits for it to end by itself.
  CommandResult wait();
  /// Sends it `signal` and waits at most `deadline` (one only a hang
  /// reaches) for it to end; nullopt if it still runs.
  std::optional<CommandResult> signal_and_wait(int signal, std::chrono::seconds deadline);

 private:
  TempDir dir_;
  int pid_ = -1;
};

/// Polls `condition` until it holds or `deadline` passed (a deadline only a
/// hang reaches); returns whether it held.
bool wait_until(const std::function<bool()>& condition,
                std::chrono::seconds deadline = std::chrono::seconds(60));

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick
/// for port 0).
int free_port();

/// A seed for a test's random choices: SLUICE_TEST_SEED if set, so that a
/// failure can be replayed, else a fresh one. Print it with INFO.
uint64_t test_seed();

}  // namespace sluice::testing
