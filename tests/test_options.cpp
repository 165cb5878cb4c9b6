#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/graph/options.hpp"
#include "sluice/engine/graph/runtime_options.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;
using namespace std::chrono_literals;

namespace {

OptionTable test_table() {
  return OptionTable({
      {.key = "engine.flush.interval",
       .type = OptionType::kDuration,
       .default_value = "1s",
       .doc = "flush period"},
      {.key = "sink.buffer-flush.max-rows",
       .type = OptionType::kInteger,
       .default_value = "100",
       .doc = "rows per flush"},
      {.key = "sink.max-bytes", .type = OptionType::kSize, .default_value = "1mb", .doc = "bytes"},
      {.key = "sink.delivery",
       .type = OptionType::kEnum,
       .default_value = "at-least-once",
       .doc = "guarantee",
       .choices = {"at-least-once", "exactly-once"}},
      {.key = "restore",
       .type = OptionType::kEnum,
       .default_value = "auto",
       .doc = "where from",
       .choices = {"auto", "none"},
       .also_integer = true},
      {.key = "engine.chaining",
       .type = OptionType::kBoolean,
       .default_value = "true",
       .doc = "chain"},
      {.key = "sink.table", .doc = "target table"},
  });
}

}  // namespace

TEST_CASE("durations read ms, s, min and h", "[options]") {
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("5s") == 5s);
  CHECK(parse_duration("2min") == 2min);
  CHECK(parse_duration("1h") == 1h);
  CHECK(parse_duration("0") == 0ms);
  for (const char* bad : {"", "5", "5 sec", "ms", "-1s", "1.5s", "10d"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad));
  }
  CHECK(format_duration(1500ms) == "1500ms");
  CHECK(format_duration(120s) == "2min");
}

TEST_CASE("sizes read bytes, kb, mb and gb", "[options]") {
  CHECK(parse_size("4096") == 4096);
  CHECK(parse_size("512kb") == 512 * 1024);
  CHECK(parse_size("64MB") == 64ull << 20);
  CHECK(parse_size("1gb") == 1ull << 30);
  CHECK_FALSE(parse_size("12 parsecs"));
}

TEST_CASE("a config gives defaults, then typed values that were set", "[options]") {
  Config config(test_table());
  CHECK(config.get_duration("engine.flush.interval") == 1s);
  CHECK(config.origin("engine.flush.interval") == OptionOrigin::kDefault);
  config.set("engine.flush.interval", "250ms");
  config.set("sink.buffer-flush.max-rows", "0");
  config.set("sink.max-bytes", "16kb");
  config.set("sink.delivery", "exactly-once");
  config.set("restore", "17");
  config.set("engine.chaining", "false");
  CHECK(config.get_duration("engine.flush.interval") == 250ms);
  CHECK(config.origin("engine.flush.interval") == OptionOrigin::kCommandLine);
  CHECK(config.get_int("sink.buffer-flush.max-rows") == 0);
  CHECK(config.get_size("sink.max-bytes") == 16 * 1024);
  CHECK(config.get_string("sink.delivery") == "exactly-once");
  CHECK(config.get_int("restore") == 17);
  CHECK_FALSE(config.get_bool("engine.chaining"));
  CHECK_FALSE(config.find("sink.table"));
  CHECK_THROWS_WITH(config.get_string("sink.table"),
                    Catch::Contains("option 'sink.table' is required"));
}

TEST_CASE("an unknown key is rejected, naming it and the closest known key", "[options]") {
  Config config(test_table());
  CHECK_THROWS_AS(config.set("sink.tabel", "x"), ConfigError);
  CHECK_THROWS_WITH(config.set("sink.tabel", "x"),
                    Catch::Contains("unknown option 'sink.tabel'") &&
                        Catch::Contains("did you mean 'sink.table'"));
  CHECK_THROWS_WITH(
      config.set("completely.else", "x"),
      Catch::Contains("unknown option 'completely.else'") && !Catch::Contains("did you mean"));
}

TEST_CASE("a bad value is rejected, naming the key and what it accepts", "[options]") {
  Config config(test_table());
  CHECK_THROWS_WITH(config.set("engine.flush.interval", "5 seconds"),
                    Catch::Contains("'engine.flush.interval'") && Catch::Contains("a duration") &&
                        Catch::Contains("'5 seconds'"));
  CHECK_THROWS_WITH(
      config.set("sink.buffer-flush.max-rows", "-1"),
      Catch::Contains("'sink.buffer-flush.max-rows'") && Catch::Contains("a whole number >= 0"));
  CHECK_THROWS_WITH(config.set("sink.delivery", "twice"),
                    Catch::Contains("one of at-least-once or exactly-once"));
  CHECK_THROWS_WITH(config.set("restore", "latest"),
                    Catch::Contains("auto, none or a checkpoint id"));
  CHECK_THROWS_WITH(config.set("engine.chaining", "yes"), Catch::Contains("true or false"));
  // The rejected values left the earlier ones in place.
  CHECK(config.get_duration("engine.flush.interval") == 1s);
}

TEST_CASE("an assignment from --set wins over the --config file", "[options]") {
  testing::TempDir dir;
  const std::string file = dir.write("job.conf",
                                     "# a comment\n"
                                     "\n"
                                     "engine.flush.interval = 5s\n"
                                     "sink.table=orders\n");
  const Config config = make_config(test_table(), file, {"engine.flush.interval=100ms"});
  CHECK(config.get_duration("engine.flush.interval") == 100ms);
  CHECK(config.origin("engine.flush.interval") == OptionOrigin::kCommandLine);
  CHECK(config.get_string("sink.table") == "orders");
  CHECK(config.origin("sink.table") == OptionOrigin::kConfigFile);
}

TEST_CASE("a config file takes a # comment after a value, and keeps a # inside one", "[options]") {
  testing::TempDir dir;
  const std::string file = dir.write("job.conf",
                                     "engine.flush.interval = 5s # how often the sink flushes\n"
                                     "sink.table=orders#2\t# the table\n");
  const Config config = make_config(test_table(), file, {});
  CHECK(config.get_duration("engine.flush.interval") == 5s);
  CHECK(config.get_string("sink.table") == "orders#2");
}

TEST_CASE("an unknown key's error says which command lists the keys, when told", "[options]") {
  Config config(test_table().with_listing("my_job describe"));
  CHECK_THROWS_WITH(config.set("sink.tabel", "x"),
                    Catch::Contains("did you mean 'sink.table'?") &&
                        Catch::EndsWith("('my_job describe' lists the options)"));
}

TEST_CASE("checkpoint.dir defaults to the user's state directory", "[options]") {
  {
    testing::ScopedEnv state("XDG_STATE_HOME", "/srv/state");
    CHECK(default_checkpoint_dir() == "/srv/state/sluice");
    CHECK(RuntimeOptions{}.checkpoint_dir == "/srv/state/sluice");
    // The option has no value of its own: the field's default stands.
    CHECK(RuntimeOptions::from(Config(OptionTable(engine_option_specs()))).checkpoint_dir ==
          "/srv/state/sluice");
  }
  testing::ScopedEnv home("HOME", "/home/ada");
  {
    testing::ScopedEnv state("XDG_STATE_HOME", nullptr);
    CHECK(default_checkpoint_dir() == "/home/ada/.local/state/sluice");
  }
  {
    // A relative XDG_STATE_HOME is not valid: ignored.
    testing::ScopedEnv state("XDG_STATE_HOME", "state");
    CHECK(default_checkpoint_dir() == "/home/ada/.local/state/sluice");
  }
}

TEST_CASE("a config file error names the file and the line", "[options]") {
  testing::TempDir dir;
  const std::string file = dir.write("bad.conf", "sink.table=orders\nengine.flush.interval=soon\n");
  CHECK_THROWS_WITH(make_config(test_table(), file, {}),
                    Catch::Contains(file + ":2:") && Catch::Contains("'engine.flush.interval'"));
  const std::string no_equals = dir.write("no-equals.conf", "sink.table orders\n");
  CHECK_THROWS_WITH(make_config(test_table(), no_equals, {}),
                    Catch::Contains(no_equals + ":1:") && Catch::Contains("key=value"));
  CHECK_THROWS_WITH(make_config(test_table(), "/nonexistent/sluice.conf", {}),
                    Catch::Contains("/nonexistent/sluice.conf"));
}

TEST_CASE("the option table renders as a sorted Markdown table", "[options]") {
  const std::string md = test_table().markdown();
  CHECK(md.find("| `engine.chaining` | `true` | chain |") != std::string::npos);
  CHECK(md.find("| `sink.table` | — | target table |") != std::string::npos);
  CHECK(md.find("engine.chaining") < md.find("engine.flush.interval"));
}

TEST_CASE("RuntimeOptions{} holds the defaults the engine's option keys show", "[options]") {
  const Config defaults{OptionTable(engine_option_specs())};
  CHECK(RuntimeOptions::from(defaults) == RuntimeOptions{});
  CHECK(defaults.get_duration("checkpoint.interval") == RuntimeOptions{}.checkpoint_interval);
  CHECK(defaults.get_string("restore") == "auto");
}

TEST_CASE("every engine option key sets a RuntimeOptions field", "[options]") {
  for (const OptionSpec& spec : engine_option_specs()) {
    if (spec.key == "job.name") continue;  // names the graph, not a field
    INFO(spec.key);
    // A value other than the default, in the option's own syntax.
    std::string other;
    switch (spec.type) {
      case OptionType::kInteger:
        other = std::to_string(std::stoll(spec.default_value) + 1);
        break;
      case OptionType::kDuration:
        other = format_duration(*parse_duration(spec.default_value) + 1000ms);
        break;
      case OptionType::kBoolean:
        other = spec.default_value.empty() ? (kDebugBuild ? "false" : "true")
                                           : (spec.default_value == "true" ? "false" : "true");
        break;
      case OptionType::kEnum:
        other =
            spec.default_value == spec.choices.front() ? spec.choices.back() : spec.choices.front();
        break;
      case OptionType::kString:
      case OptionType::kSize:
        other = spec.default_value + "1";
        break;
    }
    REQUIRE(other != spec.default_value);
    Config config{OptionTable(engine_option_specs())};
    config.set(spec.key, other);
    CHECK_FALSE(RuntimeOptions::from(config) == RuntimeOptions{});
  }
}

TEST_CASE("a key another table uses is reported with what that table says of it", "[options]") {
  const OptionTable table =
      test_table()
          .with_elsewhere({{"source.url", "this job reads no database"},
                           {"sink.table", "ignored: this table has the key"}})
          .with_defaults({{"sink.table", "t"}});  // keeps what with_elsewhere said
  Config config(table);
  CHECK_THROWS_WITH(config.set("source.url", "x"),
                    Catch::Equals("option 'source.url': this job reads no database"));
  config.set("sink.table", "orders");
  CHECK(config.get_string("sink.table") == "orders");
  CHECK_THROWS_WITH(config.set("source.urll", "x"),
                    Catch::Contains("unknown option 'source.urll'"));
}

namespace {

struct BoundOptions {
  enum class Color { kRed, kBlue };
  int64_t rows = 7;
  std::chrono::seconds timeout{90};
  bool fast = false;
  std::string name = "plain";
  std::vector<std::string> key = {"a", "b"};
  Color color = Color::kBlue;
  std::optional<Color> tint;
  std::string path;
};

OptionBinder<BoundOptions> bound_options() {
  using Color = BoundOptions::Color;
  OptionBinder<BoundOptions> binder;
  binder.integer({.key = "t.rows", .doc = "rows"}, &BoundOptions::rows)
      .duration({.key = "t.timeout", .doc = "timeout"}, &BoundOptions::timeout)
      .boolean({.key = "t.fast", .doc = "fast"}, &BoundOptions::fast)
      .text({.key = "t.name", .doc = "name"}, &BoundOptions::name)
      .list({.key = "t.key", .doc = "key"}, &BoundOptions::key)
      .choice({.key = "t.color", .doc = "color"}, &BoundOptions::color,
              {{"red", Color::kRed}, {"blue", Color::kBlue}})
      .choice({.key = "t.tint", .doc = "tint", .default_doc = "none"}, &BoundOptions::tint,
              {{"red", Color::kRed}, {"blue", Color::kBlue}})
      .text({.key = "t.path", .doc = "path", .required = true}, &BoundOptions::path);
  return binder;
}

}  // namespace

TEST_CASE("an option binder documents each field's default and reads keys into fields",
          "[options]") {
  const OptionBinder<BoundOptions> binder = bound_options();
  const std::vector<OptionSpec> specs = binder.specs();
  std::map<std::string, OptionSpec> by_key;
  for (const OptionSpec& spec : specs) by_key[spec.key] = spec;
  // The defaults are the struct's, in each option's syntax.
  CHECK(by_key.at("t.rows").default_value == "7");
  CHECK(by_key.at("t.rows").type == OptionType::kInteger);
  CHECK(by_key.at("t.timeout").default_value == "90s");
  CHECK(by_key.at("t.fast").default_value == "false");
  CHECK(by_key.at("t.name").default_value == "plain");
  CHECK(by_key.at("t.key").default_value == "a, b");
  CHECK(by_key.at("t.color").default_value == "blue");
  CHECK(by_key.at("t.color").choices == std::vector<std::string>{"red", "blue"});
  CHECK(by_key.at("t.tint").documented_default() == "none");
  CHECK(by_key.at("t.path").default_value.empty());

  Config config{OptionTable(specs)};
  config.set("t.path", "/data");
  BoundOptions read;
  binder.read(config, read);  // the defaults read back as they are
  CHECK(read.rows == 7);
  CHECK(read.timeout == std::chrono::seconds(90));
  CHECK(read.key == std::vector<std::string>{"a", "b"});
  CHECK(read.color == BoundOptions::Color::kBlue);
  CHECK(!read.tint);
  CHECK(read.path == "/data");

  config.set("t.rows", "12");
  config.set("t.timeout", "2min");
  config.set("t.fast", "true");
  config.set("t.name", "other");
  config.set("t.key", "x, y ,z");
  config.set("t.color", "red");
  config.set("t.tint", "blue");
  binder.read(config, read);
  CHECK(read.rows == 12);
  CHECK(read.timeout == std::chrono::seconds(120));
  CHECK(read.fast);
  CHECK(read.name == "other");
  CHECK(read.key == std::vector<std::string>{"x", "y", "z"});
  CHECK(read.color == BoundOptions::Color::kRed);
  CHECK(read.tint == BoundOptions::Color::kBlue);
}

TEST_CASE("an option binder refuses to read without a required key, naming it", "[options]") {
  const OptionBinder<BoundOptions> binder = bound_options();
  const Config config{OptionTable(binder.specs())};
  BoundOptions read;
  CHECK_THROWS_WITH(binder.read(config, read),
                    Catch::Contains("option 't.path' is required") && Catch::Contains("path"));
}
