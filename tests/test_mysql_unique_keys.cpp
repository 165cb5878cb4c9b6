// Targets with a unique key besides the sink's: the table still equals the
// changes applied in order, when one key takes another's unique value.
#include <catch2/catch.hpp>
#include <random>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"
#include "sluice/tests/unique_changes.hpp"

using namespace sluice;
using TextRows = std::vector<std::vector<std::optional<std::string>>>;

namespace {

constexpr char kCustomers[] =
    "id BIGINT PRIMARY KEY, email VARCHAR(60) COLLATE utf8mb4_unicode_ci NOT NULL, v BIGINT, "
    "UNIQUE KEY email (email)";

std::string changelog_command(const std::string& file, const testing::TestTable& table,
                              const testing::TempDir& dir) {
  return std::string(SLUICE_CLI) + " run changelog-to-mysql --set source.path=" + file +
         " --set sink.url=" + testing::test_mysql_url_text() + " --set sink.table=" + table.name() +
         " --set job.name=" + table.name() + " --set checkpoint.dir=" + dir.path().string() +
         " --set checkpoint.interval=50ms";
}

// The changes as a changelog file's lines.
std::string csv_of(const std::vector<Row>& changes) {
  std::string csv;
  for (const Row& row : changes) {
    csv += std::string(to_string(row.kind)) + "," + row.fields[0].to_string() + "," +
           row.fields[1].to_string() + "," + row.fields[2].to_string() + "\n";
  }
  return csv;
}

TextRows rows_of(const testing::UniqueEmailChanges::Table& table) {
  std::map<int64_t, std::vector<std::optional<std::string>>> by_id;
  for (const auto& [id, person] : table) {
    by_id[std::stoll(id)] = {id, person.email, std::to_string(person.v)};
  }
  TextRows rows;
  for (auto& [id, row] : by_id) rows.push_back(std::move(row));
  return rows;
}

}  // namespace

TEST_CASE("a changelog whose keys take each other's unique values leaves the table it describes",
          "[mysql]") {
  testing::TempDir dir;
  testing::TestTable table("unique_cli", kCustomers);
  const std::string max_rows = GENERATE("1", "100");
  INFO("sink.buffer-flush.max-rows=" << max_rows);
  const std::string file = dir.write("changes.csv",
                                     "op,id,email,v\n"
                                     "+I,1,a@example.com,1\n"
                                     "+I,2,b@example.com,2\n"
                                     "+I,3,c@example.com,3\n"
                                     // A key change keeping the email.
                                     "-U,1,a@example.com,1\n"
                                     "+U,5,a@example.com,1\n"
                                     // A delete, and another key taking its email.
                                     "-D,2,b@example.com,2\n"
                                     "+I,6,B@example.com,6\n"
                                     // 3 and 5 swap their emails through a third.
                                     "-U,3,c@example.com,3\n"
                                     "+U,3,parked,3\n"
                                     "-U,5,a@example.com,1\n"
                                     "+U,5,c@example.com,1\n"
                                     "-U,3,parked,3\n"
                                     "+U,3,a@example.com,3\n");
  const auto run = testing::run_command(changelog_command(file, table, dir) +
                                        " --set sink.buffer-flush.max-rows=" + max_rows + " 2>&1");
  INFO(run.output);
  REQUIRE(run.status == 0);
  const TextRows expected{
      {"3", "a@example.com", "3"}, {"5", "c@example.com", "1"}, {"6", "B@example.com", "6"}};
  CHECK(table.rows() == expected);
  // Replayed from the start (no checkpoint) onto the table that is ahead:
  // 5's +U meets 3 holding its email, and must not stop there.
  testing::TempDir again;
  const auto replay =
      testing::run_command(changelog_command(file, table, again) +
                           " --set sink.buffer-flush.max-rows=" + max_rows + " 2>&1");
  INFO(replay.output);
  REQUIRE(replay.status == 0);
  CHECK(table.rows() == expected);
}

TEST_CASE(
    "random changes under a second unique key, killed and rerun, leave the table they describe",
    "[mysql]") {
  const std::string delivery = GENERATE("at-least-once", "exactly-once");
  INFO("sink.delivery=" << delivery);
  testing::TempDir dir;
  testing::TestTable table("unique_random", kCustomers);
  const testing::PreparedGuard guard(table.name());
  const uint64_t seed = testing::test_seed();
  INFO("SLUICE_TEST_SEED=" << seed);
  testing::UniqueEmailChanges changes(
      {.keys = 40,
       .emails = {"a@x", "A@X", "b@x", "B@x", "c@x", "d@x", "e@x", "f@x", "g@x", "h@x", "i@x",
                  "j@x", "k@x", "l@x", "m@x", "n@x", "o@x", "p@x", "q@x", "r@x", "s@x", "t@x"},
       .case_insensitive = true},
      seed);
  std::string csv = "op,id,email,v\n";
  for (int i = 0; i < 3000; ++i) csv += csv_of(changes.next());
  const std::string command = changelog_command(dir.write("changes.csv", csv), table, dir) +
                              " --set sink.delivery=" + delivery +
                              " --set sink.buffer-flush.max-rows=50 --set source.rate=4000";
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> delay(0.3, 1.5);
  for (int run = 0; run < 2; ++run) {
    const double after = delay(random);
    const auto killed =
        testing::run_command("timeout -s KILL " + std::to_string(after) + " " + command + " 2>&1");
    INFO("run " << run << ", killed after " << after << " s: " << killed.output);
    REQUIRE((killed.status == 137 || killed.status == 0));
  }
  const auto finished = testing::run_command(command + " --set restart.attempts=0 2>&1");
  INFO(finished.output);
  REQUIRE(finished.status == 0);
  CHECK(table.rows() == rows_of(changes.table()));
}

TEST_CASE("a sink with more subtasks than a second unique key allows writes with one", "[mysql]") {
  testing::TempDir dir;
  testing::TestTable table("unique_parallel", kCustomers);
  const std::string file = dir.write("changes.csv",
                                     "op,id,email,v\n"
                                     "+I,1,a@example.com,1\n"
                                     "-U,1,a@example.com,1\n"
                                     "+U,2,a@example.com,1\n");
  const auto run =
      testing::run_command(changelog_command(file, table, dir) + " --set sink.parallelism=4 2>&1");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("UNIQUE KEY email (email) besides the sink's key (id)"));
  CHECK(table.rows() == TextRows{{"2", "a@example.com", "1"}});
}

TEST_CASE("mysql-cdc into a table with a second unique key: keys changed, emails reused, swapped",
          "[mysql][cdc]") {
  testing::TestTable source("unique_source", kCustomers);
  testing::TestTable target("unique_target", kCustomers);
  MySqlConnection& sql = source.connection();
  const std::string t = source.name();
  sql.execute("INSERT INTO " + t +
              " SELECT seq, CONCAT('user', seq, '@example.com'), seq FROM seq_1000_to_1100");
  MySqlCdcOptions options;
  options.url = testing::test_mysql_url();
  options.tables = {t};
  testing::Replication replication(options, target.name());
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));

  // The key of a row changed: its email moves with it.
  sql.execute("UPDATE " + t + " SET id = 2000 WHERE id = 1006");
  // A row deleted and another inserted with its email, in one transaction.
  sql.execute("START TRANSACTION");
  sql.execute("DELETE FROM " + t + " WHERE id = 1007");
  sql.execute("INSERT INTO " + t + " VALUES (2001, 'USER1007@example.com', 0)");
  sql.execute("COMMIT");
  // Two rows swap their emails, through a third value, in one transaction.
  sql.execute("START TRANSACTION");
  sql.execute("UPDATE " + t + " SET email = 'parked' WHERE id = 1008");
  sql.execute("UPDATE " + t + " SET email = 'user1008@example.com' WHERE id = 1009");
  sql.execute("UPDATE " + t + " SET email = 'user1009@example.com' WHERE id = 1008");
  sql.execute("COMMIT");
  // A chain: each row takes the email the one before it gave up.
  sql.execute("START TRANSACTION");
  sql.execute("UPDATE " + t + " SET email = 'chain' WHERE id = 1010");
  for (int id = 1011; id <= 1020; ++id) {
    sql.execute("UPDATE " + t + " SET email = 'user" + std::to_string(id - 1) +
                "@example.com' WHERE id = " + std::to_string(id));
  }
  sql.execute("COMMIT");
  // Many rows' keys changed at once, each keeping its email.
  sql.execute("UPDATE " + t + " SET id = id + 10000 WHERE id BETWEEN 1030 AND 1060");
  const bool equal = testing::wait_until([&] { return target.rows() == source.rows(); });
  const JobResult& result = replication.stop();
  CHECK(equal);
  CHECK(result.status == JobResult::Status::kCancelled);
}
