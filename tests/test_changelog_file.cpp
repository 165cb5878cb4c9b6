#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/file/changelog_file.hpp"
#include "sluice/connectors/file/csv.hpp"
#include "sluice/connectors/file/debezium_json.hpp"
#include "sluice/engine/checkpoint/checkpoint_storage.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;

namespace {

const Schema kChangelogOrders =
    Schema::parse("id BIGINT, note STRING, amount DECIMAL(10,2), PRIMARY KEY (id)");

ChangelogFileOptions file_options(const std::string& path, ChangelogFileOptions::Format format =
                                                               ChangelogFileOptions::Format::kCsv) {
  ChangelogFileOptions options;
  options.path = path;
  options.format = format;
  options.schema = kChangelogOrders;
  return options;
}

struct FileRun {
  JobResult result;
  std::vector<Row> rows;
};

FileRun read_all(const ChangelogFileOptions& options) {
  auto collected = std::make_shared<CollectedRows>();
  JobGraph graph("file");
  graph.source("file", changelog_file_source(options)).sink("collect", collect_sink(collected));
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = std::chrono::milliseconds(0);
  FileRun run{Executor(runtime).run(graph), {}};
  run.rows = collected->rows();
  return run;
}

}  // namespace

TEST_CASE("CSV changelogs read quotes, commas, UTF-8, NULLs and key-only deletes", "[file]") {
  testing::TempDir dir;
  const std::string path = dir.write("orders.csv",
                                     "op,id,note,amount\r\n"
                                     "+I,1,\"with, comma\",10.50\r\n"
                                     "+I,2,\"she said \"\"hi\"\"\",0.01\n"
                                     "+I,3,,7\n"
                                     "+I,4,\"\",7\n"
                                     "-U,1,\"with, comma\",10.50\n"
                                     "+U,1,ünïcødé ✓,11.00\n"
                                     "+I,5,\"two\nlines\",1\n"
                                     "\n"
                                     "-D,3\n"
                                     "-D,4,,\n");
  const FileRun run = read_all(file_options(path));
  REQUIRE(run.result.finished());
  const std::vector<Row> expected = {
      Row(RowKind::kInsert, {1, "with, comma", Decimal(1050, 2)}),
      Row(RowKind::kInsert, {2, "she said \"hi\"", Decimal(1, 2)}),
      Row(RowKind::kInsert, {3, Value(), Decimal(700, 2)}),
      Row(RowKind::kInsert, {4, "", Decimal(700, 2)}),
      Row(RowKind::kUpdateBefore, {1, "with, comma", Decimal(1050, 2)}),
      Row(RowKind::kUpdateAfter, {1, "ünïcødé ✓", Decimal(1100, 2)}),
      Row(RowKind::kInsert, {5, "two\nlines", Decimal(100, 2)}),
      Row(RowKind::kDelete, {3, Value(), Value()}),
      Row(RowKind::kDelete, {4, Value(), Value()}),
  };
  CHECK(run.rows == expected);
}

TEST_CASE("a malformed line fails the job naming the file and the line", "[file]") {
  testing::TempDir dir;
  const std::string path = dir.write("bad.csv",
                                     "op,id,note,amount\n"
                                     "+I,1,a,1.00\n"
                                     "+I,2,\"two\nlines\",2.00\n"
                                     "+I,3,c,12345678901.00\n");
  const FileRun run = read_all(file_options(path));
  CHECK(run.result.status == JobResult::Status::kFailed);
  CHECK_THAT(run.result.error, Catch::Contains(path + ":5:") &&
                                   Catch::Contains("column 'amount'") &&
                                   Catch::Contains("DECIMAL(10,2)"));
  CHECK(run.rows.size() == 2);  // what came before it was delivered

  for (const char* bad :
       {"+X,1,a,1\n", "+I,1,a\n", "+I,,a,1\n", "+I,1,\"open,1\n", "+I,1,a\"b,1\n"}) {
    INFO(bad);
    const FileRun r =
        read_all(file_options(dir.write("one.csv", std::string("op,id,note,amount\n") + bad)));
    CHECK(r.result.status == JobResult::Status::kFailed);
    CHECK_THAT(r.result.error, Catch::Contains("one.csv:2:"));
  }
}

TEST_CASE("a header that does not match the schema is refused", "[file]") {
  testing::TempDir dir;
  const FileRun run = read_all(file_options(dir.write("h.csv", "op,id,amount,note\n")));
  CHECK(run.result.status == JobResult::Status::kFailed);
  CHECK_THAT(run.result.error, Catch::Contains("h.csv:1: the header must be 'op,id,note,amount'") &&
                                   Catch::Contains("field 3 is 'amount', not 'note'"));
}

TEST_CASE("a header differing only in what cannot be seen shows the difference", "[file]") {
  testing::TempDir dir;
  // A byte-order mark, as some editors write first, is skipped.
  CHECK(read_all(file_options(dir.write("bom.csv", "\xEF\xBB\xBFop,id,note,amount\n")))
            .result.finished());
  const FileRun nbsp = read_all(file_options(dir.write("nbsp.csv", "op,id,note\xC2\xA0,amount\n")));
  CHECK_THAT(nbsp.result.error, Catch::Contains("got 'op,id,note<NBSP>,amount': field 3 is "
                                                "'note<NBSP>', not 'note'"));
  const FileRun tab = read_all(file_options(dir.write("tab.csv", "op,id,note,amount\t\n")));
  CHECK_THAT(tab.result.error, Catch::Contains("field 4 is 'amount<TAB>', not 'amount'"));
}

TEST_CASE("with on-error=skip bad lines go to the dead-letter file and are counted", "[file]") {
  testing::TempDir dir;
  ChangelogFileOptions options = file_options(dir.write("mixed.csv",
                                                        "op,id,note,amount\n"
                                                        "+I,1,a,1.00\n"
                                                        "+I,2,b,one\n"
                                                        "-D,1\n"
                                                        "?,3,c,3\n"
                                                        "+I,4,d,4.00\n"));
  options.on_error = ChangelogFileOptions::OnError::kSkip;
  options.dead_letter = (dir.path() / "dead.jsonl").string();
  options.mode = ChangelogMode::insert_only();  // so the -D line is malformed too
  const FileRun run = read_all(options);
  REQUIRE(run.result.finished());
  CHECK(run.rows == std::vector<Row>{Row(RowKind::kInsert, {1, "a", Decimal(100, 2)}),
                                     Row(RowKind::kInsert, {4, "d", Decimal(400, 2)})});
  CHECK(run.result.metrics.counter("file.skipped") == 3);
  std::ifstream in(options.dead_letter);
  std::vector<nlohmann::json> dead;
  for (std::string line; std::getline(in, line);) dead.push_back(nlohmann::json::parse(line));
  REQUIRE(dead.size() == 3);
  CHECK(dead[0]["line"] == 3);
  CHECK(dead[0]["record"] == "+I,2,b,one");
  CHECK_THAT(dead[0]["error"].get<std::string>(), Catch::Contains("column 'amount'"));
  CHECK_THAT(dead[1]["error"].get<std::string>(), Catch::Contains("insert-only"));
  CHECK(dead[2]["line"] == 5);
}

TEST_CASE("Debezium JSON envelopes become changelog rows", "[file]") {
  testing::TempDir dir;
  const std::string path = dir.write(
      "cdc.jsonl",
      R"({"op":"r","after":{"id":1,"note":"snap","amount":"10.25"}})"
      "\n"
      R"({"payload":{"op":"c","before":null,"after":{"id":2,"note":null,"amount":3.5}}})"
      "\n"
      R"({"op":"u","before":{"id":1,"note":"snap","amount":"10.25"},"after":{"id":1,"note":"new","amount":"11"}})"
      "\n"
      R"({"op":"u","after":{"id":2,"amount":"4.00"}})"
      "\n"
      R"({"op":"d","before":{"id":1}})"
      "\n");
  const FileRun run = read_all(file_options(path, ChangelogFileOptions::Format::kDebeziumJson));
  REQUIRE(run.result.finished());
  const std::vector<Row> expected = {
      Row(RowKind::kInsert, {1, "snap", Decimal(1025, 2)}),
      Row(RowKind::kInsert, {2, Value(), Decimal(350, 2)}),
      Row(RowKind::kUpdateBefore, {1, "snap", Decimal(1025, 2)}),
      Row(RowKind::kUpdateAfter, {1, "new", Decimal(1100, 2)}),
      Row(RowKind::kUpdateAfter, {2, Value(), Decimal(400, 2)}),
      Row(RowKind::kDelete, {1, Value(), Value()}),
  };
  CHECK(run.rows == expected);

  const FileRun bad = read_all(
      file_options(dir.write("bad.jsonl", "{\"op\":\"c\",\"after\":{\"id\":1}}\n{\"op\":\"x\"}\n"),
                   ChangelogFileOptions::Format::kDebeziumJson));
  CHECK_THAT(bad.result.error, Catch::Contains("bad.jsonl:2: expected op c, r, u or d"));
}

TEST_CASE("a stray quote spoils only its own CSV line", "[file]") {
  testing::TempDir dir;
  ChangelogFileOptions options = file_options(dir.write("quotes.csv",
                                                        "op,id,note,amount\n"
                                                        "+I,1,a,1\n"
                                                        "+I,2,ab\"c,2\n"
                                                        "+I,3,\"x\"y,3\n"
                                                        "+I,4,\"a \"\"b\"\"\nc\",4\n"
                                                        "+I,5,e,5\n"));
  options.on_error = ChangelogFileOptions::OnError::kSkip;
  const FileRun run = read_all(options);
  REQUIRE(run.result.finished());
  // Before, the quote in line 3 opened a field that swallowed every line after it.
  CHECK(run.rows == std::vector<Row>{Row(RowKind::kInsert, {1, "a", Decimal(100, 2)}),
                                     Row(RowKind::kInsert, {4, "a \"b\"\nc", Decimal(400, 2)}),
                                     Row(RowKind::kInsert, {5, "e", Decimal(500, 2)})});
  CHECK(run.result.metrics.counter("file.skipped") == 2);
}

TEST_CASE("a byte order mark and a last line without a line break are read", "[file]") {
  testing::TempDir dir;
  const auto format =
      GENERATE(ChangelogFileOptions::Format::kCsv, ChangelogFileOptions::Format::kDebeziumJson);
  const std::string text =
      format == ChangelogFileOptions::Format::kCsv
          ? "\xEF\xBB\xBFop,id,note,amount\n+I,1,a,1\n+I,2,b,2"
          : "\xEF\xBB\xBF{\"op\":\"c\",\"after\":{\"id\":1,\"note\":\"a\",\"amount\":1}}\n"
            "{\"op\":\"c\",\"after\":{\"id\":2,\"note\":\"b\",\"amount\":2}}";
  const FileRun run = read_all(file_options(dir.write("bom", text), format));
  REQUIRE(run.result.finished());
  CHECK(run.rows == std::vector<Row>{Row(RowKind::kInsert, {1, "a", Decimal(100, 2)}),
                                     Row(RowKind::kInsert, {2, "b", Decimal(200, 2)})});
}

TEST_CASE("Debezium numbers keep every digit, tombstones are skipped, key changes split",
          "[file]") {
  testing::TempDir dir;
  ChangelogFileOptions options = file_options(
      dir.write(
          "cdc.jsonl",
          R"({"op":"c","after":{"id":1,"note":"a","amount":12345678901234567.89}})"
          "\n"
          "null\n"
          R"({"schema":{"type":"struct","payload":1},"payload":null})"
          "\n"
          R"({"op":"c","after":{"id":2,"note":"b","amount":1.5e3,"extra":{"x":[1,2]}},"source":{"db":"x"}})"
          "\n"
          R"({"op":"u","before":{"id":2,"note":"b","amount":1500},"after":{"id":3,"note":"b","amount":-25E-2}})"
          "\n"
          R"({"payload":{"op":"d","before":{"id":3}}})"
          "\n"),
      ChangelogFileOptions::Format::kDebeziumJson);
  options.schema = Schema::parse("id BIGINT, note STRING, amount DECIMAL(19,2), PRIMARY KEY (id)");
  const FileRun run = read_all(options);
  REQUIRE(run.result.finished());
  const std::vector<Row> expected = {
      Row(RowKind::kInsert, {1, "a", Decimal::parse("12345678901234567.89", 19, 2)}),
      Row(RowKind::kInsert, {2, "b", Decimal(150000, 2)}),
      // The key changed from 2 to 3: a delete of 2 and an insert of 3, not
      // an update that would leave row 2 behind.
      Row(RowKind::kDelete, {2, "b", Decimal(150000, 2)}),
      Row(RowKind::kInsert, {3, "b", Decimal(-25, 2)}),
      Row(RowKind::kDelete, {3, Value(), Value()}),
  };
  CHECK(run.rows == expected);
  CHECK(run.result.metrics.counter("file.tombstones") == 2);
  CHECK(run.result.metrics.counter("file.skipped") == 0);
}

TEST_CASE("JSON numbers written with an exponent expand exactly", "[file]") {
  CHECK(expand_exponent("12.5") == "12.5");
  CHECK(expand_exponent("1.25e3") == "1250");
  CHECK(expand_exponent("1.25E+1") == "12.5");
  CHECK(expand_exponent("-5E-2") == "-0.05");
  CHECK(expand_exponent("123e-3") == "0.123");
  CHECK(expand_exponent("7e0") == "7");
  CHECK_THROWS_AS(expand_exponent("1e99999"), DataError);
}

namespace {

// Reads `path` with checkpoints, from checkpoint `restore` if given.
FileRun read_checkpointed(const std::string& path, const testing::TempDir& state,
                          std::optional<int64_t> restore) {
  auto collected = std::make_shared<CollectedRows>();
  JobGraph graph("file-job");
  graph.source("file", changelog_file_source(file_options(path)))
      .sink("collect", collect_sink(collected));
  RuntimeOptions runtime = RuntimeOptions::without_checkpoints();
  runtime.flush_interval = std::chrono::milliseconds(0);
  runtime.checkpoint_interval = std::chrono::hours(1);  // the final one only
  runtime.checkpoint_dir = state.path();
  runtime.restart_attempts = 2;
  if (restore) {
    runtime.restore = RuntimeOptions::Restore::kCheckpoint;
    runtime.restore_checkpoint = *restore;
  }
  FileRun run{Executor(runtime).run(graph), {}};
  run.rows = collected->rows();
  return run;
}

}  // namespace

TEST_CASE("a checkpoint resumes only the file it was taken on, or that file grown", "[file]") {
  testing::TempDir dir, state;
  const std::string header = "op,id,note,amount\n";
  const std::string path = dir.write("a.csv", header + "+I,1,a,1\n+I,2,b,2\n");
  REQUIRE(read_checkpointed(path, state, std::nullopt).result.finished());
  const int64_t id = *CheckpointStorage(state.path(), "file-job").latest();

  SECTION("the same file, grown: only the new lines") {
    dir.write("a.csv", header + "+I,1,a,1\n+I,2,b,2\n+I,3,c,3\n");
    const FileRun run = read_checkpointed(path, state, id);
    REQUIRE(run.result.finished());
    CHECK(run.rows == std::vector<Row>{Row(RowKind::kInsert, {3, "c", Decimal(300, 2)})});
  }
  SECTION("another file") {
    const FileRun run =
        read_checkpointed(dir.write("b.csv", header + "+I,7,x,1\n+I,8,y,2\n+I,9,z,3\n"), state, id);
    CHECK(run.result.status == JobResult::Status::kFailed);
    CHECK(run.result.restarts == 0);
    CHECK_THAT(run.result.error, Catch::Contains("is other input (it is another file)") &&
                                     Catch::Contains("restore=none"));
    CHECK(run.rows.empty());
  }
  SECTION("the same path, rewritten") {
    dir.write("a.csv", header + "+I,7,x,1\n+I,8,y,2\n+I,9,z,3\n");
    const FileRun run = read_checkpointed(path, state, id);
    CHECK(run.result.status == JobResult::Status::kFailed);
    CHECK_THAT(run.result.error, Catch::Contains("are not the ones read then"));
  }
  SECTION("the same path, truncated") {
    dir.write("a.csv", header + "+I,1,a,1\n");
    const FileRun run = read_checkpointed(path, state, id);
    CHECK(run.result.status == JobResult::Status::kFailed);
    CHECK_THAT(run.result.error, Catch::Contains("fewer than the"));
  }
}

TEST_CASE(
    "CSV fields split as RFC 4180 says, escaped quotes among plain fields, record after record",
    "[file]") {
  CsvFields fields;
  const auto texts = [&] {
    std::vector<std::string> out;
    for (size_t i = 0; i < fields.size(); ++i) out.emplace_back(fields.text(i));
    return out;
  };
  fields.split("+I,\"a \"\"b\"\" c\",plain,\"\"\"\",\"x,y\",,\"\"");
  CHECK(texts() == std::vector<std::string>{"+I", "a \"b\" c", "plain", "\"", "x,y", "", ""});
  CHECK(fields.quoted(1));
  CHECK_FALSE(fields.quoted(2));
  CHECK(fields.null(5));
  CHECK_FALSE(fields.null(6));  // "" is the empty string
  // The next record leaves nothing of the one before.
  fields.split("-D,\"q\"\"\",");
  CHECK(texts() == std::vector<std::string>{"-D", "q\"", ""});
  fields.split("");
  CHECK(texts() == std::vector<std::string>{""});
  for (const char* bad : {"+I,\"open", "+I,\"a\"b", "+I,a\"b"}) {
    INFO(bad);
    CHECK_THROWS_AS(fields.split(bad), DataError);
  }
}
