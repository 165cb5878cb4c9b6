#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/url.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice::testing {

/// The server that scripts/test starts: SLUICE_MYSQL_URL (and
/// SLUICE_MYSQL_PASSWORD). Fails the test, saying how to get one, if unset.
MySqlUrl test_mysql_url();
/// The same URL as text, for a command line.
std::string test_mysql_url_text();

/// Makes `connection` give up on a lock after 10 s instead of MariaDB's
/// default of a day (metadata locks) or 50 s (row locks): a failed test that
/// left a transaction prepared fails instead of hanging the suite.
void limit_lock_waits(MySqlConnection& connection);

/// A name no other test uses at the same time: `prefix` and a random suffix.
std::string unique_name(const std::string& prefix);

/// A table made for one test (`CREATE TABLE <name> (<definition>)`) and
/// dropped after it.
class TestTable {
 public:
  TestTable(const std::string& prefix, const std::string& definition,
            const MySqlUrl& url = test_mysql_url());
  ~TestTable();

  const std::string& name() const { return name_; }
  MySqlConnection& connection() { return *connection_; }
  /// Every row as text, ordered by the first column.
  std::vector<std::vector<std::optional<std::string>>> rows();

 private:
  std::string name_;
  std::unique_ptr<MySqlConnection> connection_;
};

/// Rolls back the XA transactions of `job` still prepared when it goes out
/// of scope, however the test ended. Declare it after the TestTable those
/// transactions lock, so that it goes first.
class PreparedGuard {
 public:
  explicit PreparedGuard(std::string job) : job_(std::move(job)) {}
  ~PreparedGuard();
  PreparedGuard(const PreparedGuard&) = delete;
  PreparedGuard& operator=(const PreparedGuard&) = delete;

 private:
  std::string job_;
};

/// Sets a global server variable (binlog_row_metadata, log_bin_compress)
/// while it lives, then what it was. Users' servers run with either value:
/// tests of the binlog read both. Tag such tests [serial].
class ScopedGlobal {
 public:
  ScopedGlobal(const std::string& variable, const std::string& value);
  ~ScopedGlobal();
  ScopedGlobal(const ScopedGlobal&) = delete;
  ScopedGlobal& operator=(const ScopedGlobal&) = delete;

 private:
  MySqlConnection admin_;
  std::string variable_;
};

/// A database made for one test and dropped after it; `url()` points at it.
class TestDatabase {
 public:
  TestDatabase();
  ~TestDatabase();
  const MySqlUrl& url() const { return url_; }

 private:
  MySqlUrl url_;
};

/// The tables of `options` replicated into table `target` (mysql-cdc into
/// the MySQL sink, flushing every 20 ms, no checkpoints) by a job running on
/// a thread of its own until stop(), or until this goes.
class Replication {
 public:
  Replication(const MySqlCdcOptions& options, const std::string& target);
  ~Replication();
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;
  /// Cancels the job and waits for its end.
  const JobResult& stop();

 private:
  JobGraph graph_;
  Executor executor_;
  JobResult result_;
  std::thread thread_;
};

}  // namespace sluice::testing
