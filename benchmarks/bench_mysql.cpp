#include "sluice/benchmarks/bench_mysql.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "sluice/benchmarks/bench.hpp"
#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {

MySqlUrl bench_url() { return MySqlUrl::parse(std::getenv("SLUICE_MYSQL_URL")); }

std::string no_server(bool binlog) {
  const char* url = std::getenv("SLUICE_MYSQL_URL");
  if (url == nullptr) return "no server: set SLUICE_MYSQL_URL (eval \"$(scripts/mariadb env)\")";
  try {
    MySqlConnection connection(MySqlUrl::parse(url));
    if (binlog) current_binlog_position(connection);
  } catch (const std::exception& e) {
    return std::string(binlog ? "no server with a binlog: " : "no server: ") + e.what();
  }
  return "";
}

double run_until(const JobGraph& graph, const RuntimeOptions& runtime,
                 const std::function<bool()>& caught_up, std::chrono::milliseconds every,
                 double limit, const std::string& what) {
  Executor executor(runtime);
  const auto began = std::chrono::steady_clock::now();
  JobResult result;
  std::thread job([&] { result = executor.run(graph); });
  double seconds = 0;
  while (seconds == 0 && seconds_since(began) < limit) {
    if (caught_up()) seconds = seconds_since(began);
    std::this_thread::sleep_for(every);
  }
  executor.cancel();
  job.join();
  if (seconds == 0) throw std::runtime_error(what + " did not catch up: " + result.error);
  return seconds;
}

namespace {

std::filesystem::path make_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sluice-server-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw Error("cannot make a directory " + pattern);
  return pattern;
}

bool as_root() { return ::geteuid() == 0; }

}  // namespace

ThrowawayServer::ThrowawayServer(int server_id) : dir_(make_directory()), socket_(dir_ / "sock") {
  // Its temporary tables in a directory of its own, not the /tmp that other
  // servers, started and killed beside it, use too (see scripts/mariadb).
  const std::filesystem::path data = dir_ / "data", log = dir_ / "server.log", tmp = dir_ / "tmp";
  std::filesystem::create_directory(tmp);
  const std::string install = "TMPDIR=" + tmp.string() +
                              " mariadb-install-db --no-defaults --datadir=" + data.string() +
                              (as_root() ? " --user=root" : "") +
                              " --auth-root-authentication-method=normal --skip-test-db > " +
                              (dir_ / "install.log").string() + " 2>&1";
  if (std::system(install.c_str()) != 0) {
    throw Error("initialising a second MariaDB server failed; see " +
                (dir_ / "install.log").string());
  }
  std::vector<std::string> args = {"mariadbd",
                                   "--no-defaults",
                                   "--datadir=" + data.string(),
                                   "--socket=" + socket_.string(),
                                   "--pid-file=" + (dir_ / "pid").string(),
                                   "--log-error=" + log.string(),
                                   "--tmpdir=" + tmp.string(),
                                   "--skip-networking",
                                   "--skip-grant-tables",
                                   "--server-id=" + std::to_string(server_id),
                                   "--innodb-buffer-pool-size=256M",
                                   "--innodb-log-file-size=64M",
                                   "--max-connections=500",
                                   "--character-set-server=utf8mb4",
                                   "--collation-server=utf8mb4_unicode_ci"};
  if (as_root()) args.push_back("--user=root");
  pid_ = ::fork();
  if (pid_ < 0) throw Error("cannot fork a MariaDB server");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no server outlives the benchmark
    // What it prints before its error log is open goes there too, not
    // into the benchmark's output.
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  const auto began = std::chrono::steady_clock::now();
  for (;;) {
    try {
      MySqlConnection probe(url("mysql"));
      return;
    } catch (const MySqlError&) {
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw Error("a second MariaDB server exited while starting; see " + log.string());
    }
    if (std::chrono::steady_clock::now() - began > std::chrono::seconds(30)) {
      throw Error("a second MariaDB server did not answer within 30 s; see " + log.string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

ThrowawayServer::~ThrowawayServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 600 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (::kill(pid_, 0) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

MySqlUrl ThrowawayServer::url(const std::string& database) const {
  return MySqlUrl::parse("mysql://root@/" + database + "?socket=" + socket_.string());
}

double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (pid <= 0 || !std::getline(in, stat)) return -1;
  // After "pid (comm) ": state is field 3; utime and stime are 14 and 15.
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int at = 3; at <= 15 && fields >> field; ++at) {
    if (at >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

pid_t server_pid(const MySqlUrl& url) {
  MySqlConnection connection(url);
  const auto file = connection.query("SELECT @@pid_file").at(0).at(0);
  std::ifstream in(file.value_or(""));
  pid_t pid = -1;
  if (!(in >> pid) || process_cpu_seconds(pid) < 0) return -1;
  return pid;
}

}  // namespace sluice
