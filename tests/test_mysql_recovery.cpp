// The MySQL sink through lost connections, a stopped server and crashes.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "connectors/datagen.hpp"
#include "connectors/mysql_sink.hpp"
#include "engine/executor.hpp"
#include "tests/mysql_support.hpp"
#include "tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;
using TextRows = std::vector<std::vector<std::optional<std::string>>>;

namespace {

const Schema kOrders = Schema::parse(
    "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
constexpr char kOrdersTable[] =
    "id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2), status VARCHAR(20)";

DatagenOptions changelog(uint64_t rows, double rate) {
  DatagenOptions gen;
  gen.schema = kOrders;
  gen.rows = rows;
  gen.keys = 2000;
  gen.insert_weight = 50;
  gen.update_weight = 35;
  gen.delete_weight = 15;
  gen.rate = rate;
  return gen;
}

// The table the changelog leaves behind, as text rows ordered by id.
TextRows final_state(const DatagenOptions& gen, int parallelism = 1) {
  std::vector<Row> rows;
  for (int s = 0; s < parallelism; ++s) {
    ChangeGenerator generator(gen, s, parallelism);
    Row out[2];
    while (generator.next(out) > 0) {
    }
    for (Row& row : generator.current_rows()) rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.fields[0].as_bigint() < b.fields[0].as_bigint(); });
  TextRows text;
  for (const Row& row : rows) {
    auto& out = text.emplace_back();
    for (const Value& v : row.fields) out.push_back(v.is_null() ? std::nullopt : std::optional(v.to_string()));
  }
  return text;
}

JobResult run_changelog(const DatagenOptions& gen, const MySqlUrl& url, const std::string& table,
                        int sink_parallelism = 1, int max_retries = 3) {
  MySqlSinkOptions options;
  options.url = url;
  options.table = table;
  options.max_rows = 500;
  options.max_retries = max_retries;
  options.retry_backoff = 50ms;
  JobGraph graph("mysql-recovery");
  graph.source("orders", datagen_source(gen)).sink("mysql", mysql_sink(options, kOrders)).parallelism(sink_parallelism);
  RuntimeOptions runtime;
  runtime.flush_interval = 50ms;
  return Executor(runtime).run(graph);
}

}  // namespace

TEST_CASE("a sink with parallelism 2 leaves the changelog's final state", "[mysql]") {
  testing::TestTable table("parallel", kOrdersTable);
  const DatagenOptions gen = changelog(20'000, 0);
  const JobResult result = run_changelog(gen, testing::test_mysql_url(), table.name(), 2);
  REQUIRE(result.finished());
  CHECK(table.rows() == final_state(gen));
}

TEST_CASE("a sink whose connection is killed retries and ends with the final state", "[mysql]") {
  testing::TestDatabase database;
  testing::TestTable table("killed", kOrdersTable, database.url());
  const DatagenOptions gen = changelog(20'000, 10'000);
  std::atomic<bool> done{false};
  std::atomic<int> kills{0};
  std::thread killer([&] {
    MySqlConnection admin(database.url());
    const std::string ours = std::to_string(table.connection().thread_id());
    while (!done) {
      std::this_thread::sleep_for(250ms);
      // Only the sink connects to this database besides the test itself.
      for (const auto& row : admin.query("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = " +
                                         admin.quote(database.url().database) +
                                         " AND ID NOT IN (CONNECTION_ID(), " + ours + ")")) {
        try {
          admin.execute("KILL " + *row[0]);
          ++kills;
        } catch (const MySqlError&) {
          // It went away by itself meanwhile.
        }
      }
    }
  });
  const JobResult result = run_changelog(gen, database.url(), table.name(), 1, 10);
  done = true;
  killer.join();
  REQUIRE(result.finished());
  CHECK(kills >= 3);
  CHECK(result.metrics.counter("mysql.retries") >= 1);
  CHECK(table.rows() == final_state(gen));
}

TEST_CASE("with the server stopped the sink fails after its retries with the server's error",
          "[mysql][serial]") {
  testing::TempDir dir;
  const std::string port = std::to_string(testing::free_port());
  const std::string server = "SLUICE_MARIADB_DIR=" + dir.path().string() + " SLUICE_MARIADB_PORT=" + port +
                             " " + std::string(SLUICE_SOURCE_DIR) + "/scripts/mariadb ";
  REQUIRE(testing::run_command(server + "start").status == 0);
  const MySqlUrl url = MySqlUrl::parse("mysql://sluice@127.0.0.1:" + port + "/sluice");
  MySqlConnection(url).execute("CREATE TABLE orders (" + std::string(kOrdersTable) + ")");
  // The server stops once the sink has committed some rows: mid-run.
  std::thread stopper([&] {
    MySqlConnection watcher(url);
    testing::wait_until([&] { return *watcher.query("SELECT COUNT(*) FROM orders")[0][0] != "0"; });
    testing::run_command(server + "stop");
  });
  const JobResult result = run_changelog(changelog(50'000, 10'000), url, "orders", 1, 2);
  stopper.join();
  testing::run_command(server + "stop");
  CHECK(result.status == JobResult::Status::kFailed);
  CHECK_THAT(result.error, Catch::Contains("failed after 2 retries") && Catch::Contains("MySQL error 20"));
  CHECK(result.metrics.counter("mysql.retries") == 2);
}
