#define CATCH_CONFIG_RUNNER
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <system_error>

// Every test process keeps the default checkpoint.dir (under XDG_STATE_HOME)
// to itself, and the CLI runs it starts with it: tests run side by side,
// and a job name runs once at a time in a directory.
int main(int argc, char* argv[]) {
  std::string dir = (std::filesystem::temp_directory_path() / "sluice-tests-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return 1;
  setenv("XDG_STATE_HOME", dir.c_str(), 1);
  const int failed = Catch::Session().run(argc, argv);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return failed;
}
