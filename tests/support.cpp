#include "sluice/tests/support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <thread>

namespace sluice::testing {

ScopedEnv::ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) saved_ = old;
  if (value != nullptr) {
    setenv(name_.c_str(), value, 1);
  } else {
    unsetenv(name_.c_str());
  }
}

ScopedEnv::~ScopedEnv() {
  if (saved_) {
    setenv(name_.c_str(), saved_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sluice-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string file = (path_ / name).string();
  std::ofstream(file) << text;
  return file;
}

BackgroundCommand::BackgroundCommand(const std::string& command) {
  const std::string shell = "exec " + command + " > " + (dir_.path() / "output").string() + " 2>&1";
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ > 0) kill();
}

CommandResult BackgroundCommand::kill() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
  return wait();
}

CommandResult BackgroundCommand::signal(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
  return wait();
}

std::string BackgroundCommand::output() const {
  std::ifstream in(dir_.path() / "output");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

CommandResult BackgroundCommand::wait() {
  CommandResult result;
  if (pid_ <= 0) return result;
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.output = output();
  return result;
}

std::optional<CommandResult> BackgroundCommand::signal_and_wait(int signal,
                                                                std::chrono::seconds deadline) {
  if (pid_ > 0) ::kill(pid_, signal);
  int status = 0;
  const bool ended =
      wait_until([&] { return pid_ <= 0 || ::waitpid(pid_, &status, WNOHANG) == pid_; }, deadline);
  if (!ended) return std::nullopt;
  CommandResult result;
  if (pid_ > 0) {
    pid_ = -1;
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  result.output = output();
  return result;
}

bool wait_until(const std::function<bool()>& condition, std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot find a free port");
  return ntohs(address.sin_port);
}

uint64_t test_seed() {
  if (const char* seed = std::getenv("SLUICE_TEST_SEED")) return std::stoull(seed);
  return std::random_device{}();
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace sluice::testing
