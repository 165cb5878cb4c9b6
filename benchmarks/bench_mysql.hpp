#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "sluice/connectors/mysql/url.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/runtime_options.hpp"

// What the benchmarks that need a MySQL server share.
namespace sluice {

/// The server SLUICE_MYSQL_URL names.
MySqlUrl bench_url();

/// Why the benchmarks cannot reach that server (with a binlog, where
/// `binlog`), or empty when they can.
std::string no_server(bool binlog);

/// Runs `graph` with `runtime` until `caught_up()`, asked every `every`,
/// holds, then cancels it: the seconds that took. Throws, naming `what`,
/// if it did not within `limit` seconds.
double run_until(const JobGraph& graph, const RuntimeOptions& runtime,
                 const std::function<bool()>& caught_up, std::chrono::milliseconds every,
                 double limit, const std::string& what);

/// A MariaDB server of a benchmark's own, beside the one SLUICE_MYSQL_URL
/// names: initialised into a new temporary directory, reached on its
/// socket alone (no TCP port), any user let in (--skip-grant-tables), its
/// binlog off. It dies with the process that started it, and is stopped
/// and its directory removed when this is destroyed.
class ThrowawayServer {
 public:
  /// Starts it with `server_id`, which a replica needs different from its
  /// source's, and the InnoDB settings of scripts/mariadb's server. Throws
  /// Error, naming its log, if it does not start.
  explicit ThrowawayServer(int server_id);
  ~ThrowawayServer();
  ThrowawayServer(const ThrowawayServer&) = delete;
  ThrowawayServer& operator=(const ThrowawayServer&) = delete;

  /// `database` on it, as the user root.
  MySqlUrl url(const std::string& database) const;
  const std::filesystem::path& socket() const { return socket_; }
  pid_t pid() const { return pid_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path socket_;
  pid_t pid_ = -1;
};

/// CPU seconds (user and system, every thread) process `pid` has used, from
/// /proc; -1 where that cannot be read (another machine's server).
double process_cpu_seconds(pid_t pid);

/// The pid of the server `url` names when it runs on this machine (its
/// @@pid_file is readable here), else -1.
pid_t server_pid(const MySqlUrl& url);

}  // namespace sluice
