#include "sluice/tests/mysql_support.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <random>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/captured_tables.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/connectors/mysql/sink/xa.hpp"

namespace sluice::testing {

std::string test_mysql_url_text() {
  const char* url = std::getenv("SLUICE_MYSQL_URL");
  if (url == nullptr) {
    FAIL(
        "SLUICE_MYSQL_URL is not set: run the tests through scripts/test, or run "
        "scripts/mariadb start and eval \"$(scripts/mariadb env)\" first");
  }
  // The tests of the binlog run a second time without TLS
  // (tests/CMakeLists.txt): its stream is read apart from the client library then.
  if (const char* mode = std::getenv("SLUICE_TEST_SSL_MODE")) {
    return std::string(url) +
           (std::string_view(url).find('?') == std::string_view::npos ? "?" : "&") +
           "ssl-mode=" + mode;
  }
  return url;
}

MySqlUrl test_mysql_url() { return MySqlUrl::parse(test_mysql_url_text()); }

void limit_lock_waits(MySqlConnection& connection) {
  connection.execute("SET SESSION lock_wait_timeout = 10, innodb_lock_wait_timeout = 10");
}

std::string unique_name(const std::string& prefix) {
  // Tests call it from several threads at once (writers of XA transactions).
  static std::mutex mutex;
  static std::mt19937_64 random(std::random_device{}());
  const std::lock_guard<std::mutex> lock(mutex);
  return prefix + "_" + std::to_string(random() % 1'000'000'000);
}

TestTable::TestTable(const std::string& prefix, const std::string& definition, const MySqlUrl& url)
    : name_(unique_name(prefix)), connection_(std::make_unique<MySqlConnection>(url)) {
  limit_lock_waits(*connection_);
  connection_->execute("CREATE TABLE " + quote_identifier(name_) + " (" + definition + ")");
}

TestTable::~TestTable() {
  try {
    connection_->execute("DROP TABLE IF EXISTS " + quote_identifier(name_));
  } catch (const std::exception&) {
    // The server may be gone (a test stopped it); nothing to drop then.
  }
}

std::vector<std::vector<std::optional<std::string>>> TestTable::rows() {
  return connection_->query("SELECT * FROM " + quote_identifier(name_) + " ORDER BY 1");
}

PreparedGuard::~PreparedGuard() {
  try {
    MySqlConnection connection(test_mysql_url());
    limit_lock_waits(connection);
    for (const Xid& xid : xa_recover(connection)) {
      if (XidScheme::of_job(xid, job_)) connection.execute("XA ROLLBACK " + xid.sql());
    }
  } catch (const std::exception&) {
    // The server may be gone (a test stopped it); nothing to roll back then.
  }
}

ScopedGlobal::ScopedGlobal(const std::string& variable, const std::string& value)
    : admin_(test_mysql_url()), variable_(variable) {
  // Kept on the connection, as a number or a string, whichever it is.
  admin_.execute("SET @sluice_was = @@global." + variable);
  admin_.execute("SET GLOBAL " + variable + " = " + value);
}

ScopedGlobal::~ScopedGlobal() {
  try {
    admin_.execute("SET GLOBAL " + variable_ + " = @sluice_was");
  } catch (const std::exception&) {
  }
}

TestDatabase::TestDatabase() : url_(test_mysql_url()) {
  // The test user may create databases named sluice_*.
  const std::string name = unique_name("sluice_test");
  MySqlConnection(url_).execute("CREATE DATABASE " + quote_identifier(name));
  url_.database = name;
}

TestDatabase::~TestDatabase() {
  try {
    MySqlConnection(url_).execute("DROP DATABASE " + quote_identifier(url_.database));
  } catch (const std::exception&) {
  }
}

Replication::Replication(const MySqlCdcOptions& options, const std::string& target)
    : graph_(target), executor_([] {
        RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
        runtime.flush_interval = std::chrono::milliseconds(20);
        return runtime;
      }()) {
  MySqlSinkOptions sink;
  sink.url = test_mysql_url();
  sink.table = target;
  graph_.source("mysql-cdc", mysql_cdc_source(options, capture_tables(options)))
      .sink("mysql", mysql_sink(sink));
  thread_ = std::thread([this] { result_ = executor_.run(graph_); });
}

Replication::~Replication() {
  if (thread_.joinable()) stop();
}

const JobResult& Replication::stop() {
  executor_.cancel();
  thread_.join();
  return result_;
}

}  // namespace sluice::testing
