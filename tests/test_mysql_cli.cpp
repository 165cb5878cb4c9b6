// changelog-to-mysql from the command line, killed and rerun.
#include <catch2/catch.hpp>
#include <functional>
#include <future>
#include <map>
#include <random>
#include <tuple>

#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/jobs/orders.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;
using TextRows = std::vector<std::vector<std::optional<std::string>>>;

namespace {

using Orders = std::map<int64_t, std::vector<Value>>;

// The orders table that the orders jobs' changelog (their defaults, `rows`
// changes, one source subtask) leaves, computed here by applying its changes
// in order, not by the job.
Orders expected_orders(uint64_t rows) {
  DatagenOptions gen;
  gen.schema = orders::schema();
  gen.rows = rows;
  gen.keys = 10'000;
  gen.insert_weight = 45;
  gen.update_weight = 45;
  gen.delete_weight = 10;
  gen.skew = DatagenOptions::Skew::kHot;
  ChangeGenerator generator(gen, 0, 1);
  Orders table;
  Row out[2];
  for (int n; (n = generator.next(out)) > 0;) {
    for (int i = 0; i < n; ++i) {
      const int64_t id = out[i].fields[0].as_bigint();
      if (out[i].kind == RowKind::kInsert || out[i].kind == RowKind::kUpdateAfter) {
        table[id] = out[i].fields;
      } else {
        table.erase(id);
      }
    }
  }
  return table;
}

// The rows of `table`, read back as values of the orders schema, by id.
Orders table_orders(const std::string& table) {
  Orders rows;
  MySqlConnection connection(testing::test_mysql_url());
  for (const auto& row : connection.query("SELECT * FROM " + quote_identifier(table))) {
    std::vector<Value> values;
    for (size_t c = 0; c < row.size(); ++c) {
      values.push_back(row[c] ? parse_value(*row[c], orders::schema().column(c).type) : Value());
    }
    rows[values[0].as_bigint()] = std::move(values);
  }
  return rows;
}

}  // namespace

TEST_CASE("changelog-to-mysql killed at random moments and rerun ends with the final state",
          "[mysql]") {
  testing::TempDir dir;
  testing::TestTable table("cli", "id BIGINT PRIMARY KEY, qty BIGINT, note VARCHAR(40)");
  // 40000 changes over 500 keys; the last change of key k sets qty = its line.
  std::string csv = "op,id,qty,note\n";
  std::map<int, std::pair<int, bool>> last;  // id -> (qty, present)
  std::mt19937 random(7);
  for (int line = 0; line < 40000; ++line) {
    const int id = static_cast<int>(random() % 500);
    const bool present = last.count(id) && last[id].second;
    if (present && random() % 5 == 0) {
      csv += "-D," + std::to_string(id) + "\n";
      last[id] = {0, false};
    } else {
      csv += std::string(present ? "+U," : "+I,") + std::to_string(id) + "," +
             std::to_string(line) + ",\"note, " + std::to_string(line) + "\"\n";
      last[id] = {line, true};
    }
  }
  TextRows expected;
  for (const auto& [id, state] : last) {
    if (state.second) {
      expected.push_back({std::to_string(id), std::to_string(state.first),
                          "note, " + std::to_string(state.first)});
    }
  }
  const std::string file = dir.write("changes.csv", csv);
  const std::string command =
      std::string(SLUICE_CLI) + " run changelog-to-mysql --set source.path=" + file +
      " --set sink.url=" + testing::test_mysql_url_text() + " --set sink.table=" + table.name() +
      " --set checkpoint.interval=100ms --set checkpoint.dir=" + dir.path().string() +
      " --set sink.buffer-flush.max-rows=300 --set source.rate=20000";
  // Kills at instants spread over a whole run (2 s at 20000 records/s, and
  // later runs resume, so a late kill may find the run finished).
  const uint64_t seed = testing::test_seed();
  INFO("kill instants drawn from seed " << seed << " (SLUICE_TEST_SEED=" << seed
                                        << " replays them)");
  std::mt19937_64 kill_random(seed);
  std::uniform_real_distribution<double> delay(0.3, 2.0);
  int kills = 0;
  for (int run = 0; run < 3; ++run) {
    const double after = delay(kill_random);
    const auto result =
        testing::run_command("timeout -s KILL " + std::to_string(after) + " " + command);
    INFO("run " << run << ", killed after " << after << " s");
    REQUIRE((result.status == 137 || result.status == 0));
    kills += result.status == 137;
  }
  CHECK(kills >= 1);
  // The last run resumes where a killed run's latest checkpoint left off; a
  // run killed before its first checkpoint, or one that finished, leaves
  // nothing to resume, and it starts over.
  const bool resumable =
      CheckpointStorage(dir.path(), "changelog-to-mysql").resumable().has_value();
  // One more run, with no in-process restart to hide behind, finishes.
  const auto finished = testing::run_command(command + " --set restart.attempts=0");
  INFO(finished.output);
  REQUIRE(finished.status == 0);
  CHECK((finished.output.find("resuming from checkpoint") != std::string::npos) == resumable);
  CHECK_THAT(finished.output, Catch::Contains("row by row or batch by batch?"));
  CHECK(table.rows() == expected);
}

TEST_CASE("a value the server refuses fails the job at once, without restarts", "[mysql]") {
  testing::TempDir dir;
  testing::TestTable table("refused", "id BIGINT PRIMARY KEY, note VARCHAR(3) NOT NULL");
  const std::string file = dir.write("changes.csv", "op,id,note\n+I,1,abc\n+I,2,too long\n");
  const auto result = testing::run_command(
      std::string(SLUICE_CLI) + " run changelog-to-mysql --set source.path=" + file +
      " --set sink.url=" + testing::test_mysql_url_text() + " --set sink.table=" + table.name() +
      " --set restart.attempts=3 --set restart.delay=10s --set checkpoint.dir=" +
      dir.path().string());
  INFO(result.output);
  CHECK(result.status == 1);
  CHECK_THAT(result.output,
             Catch::Contains("MySQL error 1406") &&
                 Catch::Contains("that is the change of key id=2, from line 3 of " + file) &&
                 Catch::Contains("not restarting") && !Catch::Contains("restarting (") &&
                 !Catch::Contains("retrying"));
}

TEST_CASE("a refused value anywhere in a flush of many rows is named by its own key and line",
          "[mysql]") {
  // A flush of 1003 rows goes as statements of 64 rows (15 of them), of 8
  // (5) and of 1 (3): the server counts a refused row from the start of its
  // statement. The first row, one inside a statement of 64, the first and
  // last of a statement of 8, and rows alone.
  constexpr int kRows = 1003;
  const int bad = GENERATE(1, 300, 961, 968, 1001, 1003);
  testing::TempDir dir;
  testing::TestTable table("refused_many", "id BIGINT PRIMARY KEY, note VARCHAR(3) NOT NULL");
  std::string lines = "op,id,note\n";
  for (int id = 1; id <= kRows; ++id) {
    lines += "+I," + std::to_string(id) + "," + (id == bad ? "too long" : "abc") + "\n";
  }
  const std::string file = dir.write("changes.csv", lines);
  const std::string command =
      std::string(SLUICE_CLI) + " run changelog-to-mysql --set source.path=" + file +
      " --set sink.url=" + testing::test_mysql_url_text() + " --set sink.table=" + table.name() +
      " --set sink.buffer-flush.max-rows=5000 --set checkpoint.dir=";
  const auto failed = testing::run_command(command + (dir.path() / "failed").string());
  INFO(failed.output);
  CHECK(failed.status == 1);
  CHECK_THAT(failed.output,
             Catch::Contains("that is the change of key id=" + std::to_string(bad) +
                             ", from line " + std::to_string(bad + 1) + " of " + file));
  CHECK(table.rows().empty());
  // As a dead letter, that one change: every other lands.
  const std::string letters = table.name() + "_refused";
  const auto lettered = testing::run_command(command + (dir.path() / "lettered").string() +
                                             " --set sink.on-error=dead-letter"
                                             " --set sink.dead-letter.table=" +
                                             letters);
  INFO(lettered.output);
  CHECK(lettered.status == 0);
  CHECK(table.rows().size() == kRows - 1);
  const auto keys = table.connection().query("SELECT change_key FROM " + letters);
  table.connection().execute("DROP TABLE " + letters);
  REQUIRE(keys.size() == 1);
  CHECK(keys[0][0] == "id=" + std::to_string(bad));
}

TEST_CASE("deletes of more keys than the table has rows wait on no row they do not delete",
          "[mysql]") {
  // The optimizer would scan a table of 10 rows for 60 keys, and a scan
  // waits for the lock of every row it passes: here one that another
  // transaction holds, as a prepared XA transaction would until its
  // checkpoint completes.
  const auto [definition, header, row] = GENERATE(
      std::tuple<std::string, std::string, std::function<std::string(int)>>{
          "id BIGINT PRIMARY KEY, note VARCHAR(3)", "op,id,note",
          [](int id) { return std::to_string(id) + ",abc"; }},
      std::tuple<std::string, std::string, std::function<std::string(int)>>{
          "a BIGINT, b VARCHAR(8), note VARCHAR(3), PRIMARY KEY (a, b)", "op,a,b,note",
          [](int id) { return std::to_string(id) + ",k" + std::to_string(id) + ",abc"; }});
  testing::TempDir dir;
  testing::TestTable table("delete_locked", definition);
  std::string lines = header + "\n";
  for (int id = 1; id <= 10; ++id) lines += "+I," + row(id) + "\n";
  const std::string file = dir.write("inserts.csv", lines);
  const std::string command = std::string(SLUICE_CLI) + " run changelog-to-mysql --set sink.url=" +
                              testing::test_mysql_url_text() + " --set sink.table=" + table.name() +
                              " --set sink.buffer-flush.max-rows=5000";
  const auto inserted =
      testing::run_command(command + " --set source.path=" + file +
                           " --set checkpoint.dir=" + (dir.path() / "i").string());
  REQUIRE(inserted.status == 0);
  table.connection().execute("ANALYZE TABLE " + quote_identifier(table.name()));
  MySqlConnection locker(testing::test_mysql_url());
  locker.execute("START TRANSACTION");
  const std::string first = header.substr(3, header.find(',', 3) - 3);  // "id", "a"
  locker.execute("UPDATE " + quote_identifier(table.name()) + " SET note = 'xyz' WHERE " + first +
                 " = 1");
  lines = header + "\n";
  for (int id = 2; id <= 60; ++id) lines += "-D," + row(id) + "\n";
  const std::string deletes = dir.write("deletes.csv", lines);
  std::future<testing::CommandResult> deleting = std::async(std::launch::async, [&] {
    return testing::run_command(command + " --set source.path=" + deletes +
                                " --set checkpoint.dir=" + (dir.path() / "d").string());
  });
  // Long enough for any run that does not wait; a run that waits on the
  // lock ends only once it is released.
  const bool ended_while_locked = deleting.wait_for(30s) == std::future_status::ready;
  locker.execute("ROLLBACK");
  const auto deleted = deleting.get();
  INFO(deleted.output);
  CHECK(ended_while_locked);
  CHECK(deleted.status == 0);
  CHECK(table.rows().size() == 1);
}

TEST_CASE("a password the server refuses exits 2, for the source and for the sink", "[mysql]") {
  testing::TempDir dir;
  testing::TestTable table("denied", "id BIGINT PRIMARY KEY, note VARCHAR(3)");
  const MySqlUrl server = testing::test_mysql_url();
  const std::string url = testing::test_mysql_url_text();
  const std::string denied = "mysql://" + server.user + ":wrong@" + server.host + ":" +
                             std::to_string(server.port) + "/" + server.database;
  const std::string file = dir.write("changes.csv", "op,id,note\n+I,1,abc\n");
  const std::string common =
      " --set sink.table=" + table.name() +
      " --set restart.attempts=3 --set checkpoint.dir=" + dir.path().string();
  for (const std::string& command :
       {" run changelog-to-mysql --set source.path=" + file + " --set sink.url=" + denied,
        " run mysql-to-mysql --set source.table=" + table.name() + " --set source.url=" + denied +
            " --set sink.url=" + url,
        " run mysql-to-mysql --set source.table=" + table.name() + " --set source.url=" + url +
            " --set sink.url=" + denied}) {
    INFO(command);
    const auto result =
        testing::run_command("timeout 60 " + std::string(SLUICE_CLI) + command + common + " 2>&1");
    INFO(result.output);
    CHECK(result.status == 2);
    CHECK_THAT(result.output, Catch::Contains("Access denied") && !Catch::Contains("restarting ("));
  }
}

TEST_CASE("orders-exactly-once commits its XA transactions and finds the table matching",
          "[mysql][xa]") {
  testing::TempDir dir;
  const std::string table = testing::unique_name("orders_xa");
  const testing::PreparedGuard guard(table);  // the job is named after its table
  const auto result = testing::run_command(
      std::string(SLUICE_CLI) +
      " run orders-exactly-once --set sink.url=" + testing::test_mysql_url_text() +
      " --set sink.table=" + table + " --set job.name=" + table + " --set source.rows=20000" +
      " --set checkpoint.interval=200ms --set checkpoint.dir=" + dir.path().string());
  const Orders actual = table_orders(table);
  MySqlConnection(testing::test_mysql_url())
      .execute("DROP TABLE IF EXISTS " + quote_identifier(table));
  INFO(result.output);
  CHECK(result.status == 0);
  // The table against the changelog applied here, not the job's own verdict.
  const Orders expected = expected_orders(20'000);
  REQUIRE(expected.size() > 1000);
  CHECK(actual == expected);
  CHECK_THAT(result.output,
             Catch::Matches("(.|\\n)*XA transactions +([0-9]+) prepared, \\2 committed(.|\\n)*"));
}

TEST_CASE("orders-demo answers batch by batch and finds its table matching", "[mysql]") {
  testing::TempDir dir;
  const std::string table = testing::unique_name("orders_rt");
  const auto result =
      testing::run_command(std::string(SLUICE_CLI) + " run orders-demo --set sink.url=" +
                           testing::test_mysql_url_text() + " --set sink.table=" + table +
                           " --set source.rows=20000 --set checkpoint.dir=" + dir.path().string());
  const Orders actual = table_orders(table);
  MySqlConnection(testing::test_mysql_url())
      .execute("DROP TABLE IF EXISTS " + quote_identifier(table));
  INFO(result.output);
  CHECK(result.status == 0);
  // The table against the changelog applied here, not the job's own verdict.
  const Orders expected = expected_orders(20'000);
  REQUIRE(expected.size() > 1000);
  CHECK(actual == expected);
  CHECK_THAT(result.output, Catch::Contains("row by row or batch by batch?") &&
                                Catch::Contains("per flush, on average"));
}

TEST_CASE("idle-flush shows rows visible within the flush interval, and not with it off",
          "[mysql]") {
  const std::string table = testing::unique_name("orders_idle");
  const std::string command =
      std::string(SLUICE_CLI) + " run idle-flush --set sink.url=" + testing::test_mysql_url_text() +
      " --set sink.table=" + table + " --set idle.bursts=2 --set idle.gap=1500ms";
  const auto ticking = testing::run_command(command + " --set engine.flush.interval=200ms");
  // The ticks alone, without the source's own flush when it runs dry.
  const auto timer_only = testing::run_command(
      command + " --set engine.flush.interval=200ms --set engine.flush.on-idle=false");
  const auto silent = testing::run_command(command + " --set engine.flush.interval=0");
  MySqlConnection(testing::test_mysql_url())
      .execute("DROP TABLE IF EXISTS " + quote_identifier(table));
  CHECK(ticking.status == 0);
  CHECK_THAT(ticking.output,
             Catch::Matches("(.|\\n)*burst 1: 5 orders, visible in [a-z_0-9]+ after [0-9]+ ms of "
                            "silence \\(engine.flush.interval=200 ms\\)(.|\\n)*"));
  CHECK(timer_only.status == 0);
  CHECK_THAT(timer_only.output, Catch::Contains("burst 1: 5 orders, visible in") &&
                                    Catch::Contains("burst 2: 5 orders, visible in"));
  CHECK(silent.status == 0);
  CHECK_THAT(silent.output, Catch::Contains("burst 1: 5 orders, still not in") &&
                                Catch::Contains("burst 2: 5 orders, still not in"));
}

TEST_CASE("describe --as flink-sql prints the tables and the INSERT, without the password",
          "[cli]") {
  const auto result = testing::run_command(std::string(SLUICE_CLI) +
                                           " describe orders-demo --as flink-sql --set "
                                           "sink.url=mysql://app:s3cret@db.example:3306/shop");
  CHECK(result.status == 0);
  CHECK_THAT(result.output, Catch::Contains("'connector' = 'jdbc'") &&
                                Catch::Contains("'url' = 'jdbc:mysql://db.example:3306/shop'") &&
                                Catch::Contains("PRIMARY KEY (`id`) NOT ENFORCED") &&
                                Catch::Contains("INSERT INTO `orders_rt`") &&
                                !Catch::Contains("s3cret"));
}
