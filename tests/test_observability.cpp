#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

// clang-format off
#include <utility>  // before Asio: Boost 1.74's Asio needs it under C++20.
// clang-format on

#include <boost/asio.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "sluice/cli/job_page.hpp"
#include "sluice/cli/metrics_export.hpp"
#include "sluice/cli/metrics_server.hpp"
#include "sluice/cli/progress.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;

namespace {

std::string http_get(unsigned short port, const std::string& path = "/metrics") {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string response;
  boost::system::error_code ec;
  char buf[4096];
  while (size_t n = socket.read_some(boost::asio::buffer(buf), ec)) response.append(buf, n);
  return response;
}

// A client connection to the metrics server, read with a deadline so that a
// server that never answers fails the test instead of hanging it.
class Client {
 public:
  explicit Client(unsigned short port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  }
  ~Client() { ::close(fd_); }

  void send_get(bool keep_alive) {
    const std::string request = std::string("GET /metrics HTTP/1.1\r\nHost: localhost\r\n") +
                                (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
    REQUIRE(::send(fd_, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  }
  /// What arrives until `until` holds of it, the server closes the
  /// connection (closed() is then true), or 10 s pass.
  std::string read(const std::function<bool(const std::string&)>& until) {
    std::string got;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!until(got) && std::chrono::steady_clock::now() < deadline) {
      pollfd ready{fd_, POLLIN, 0};
      if (::poll(&ready, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  /// Reads until the server closes the connection (or 10 s pass).
  std::string read_to_close() {
    return read([](const std::string&) { return false; });
  }
  bool closed() const { return closed_; }

 private:
  int fd_;
  bool closed_ = false;
};

// Whether `text` holds `n` whole responses of the metrics server.
bool has_responses(const std::string& text, size_t n) {
  size_t found = 0;
  for (size_t at = text.find("# end"); at != std::string::npos; at = text.find("# end", at + 1)) {
    ++found;
  }
  return found >= n;
}

// A server of one route, /metrics, that renders `render`.
std::vector<HttpRoute> metrics_route(std::function<std::string()> render) {
  return {{"/metrics", "text/plain; version=0.0.4", std::move(render)}};
}

// The body of an HTTP response.
std::string body_of(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

// `sluice run example` without end, 2,000 rows a second, served on `port`,
// checkpointing into `dir`, its metrics written to `file` at the end.
std::string running_example(unsigned short port, const testing::TempDir& dir,
                            const std::string& file) {
  return std::string(SLUICE_CLI) +
         " run example --set source.rows=0 --set source.rate=2000"
         " --set checkpoint.interval=100ms --set metrics.port=" +
         std::to_string(port) + " --set checkpoint.dir=" + dir.path().string() +
         " --metrics-file " + file + " 2>&1";
}

// A job started with metrics.port: its page's address, once it serves it.
std::string page_of(const testing::BackgroundCommand& job, unsigned short port) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  REQUIRE(testing::wait_until([&] { return job.output().find(url) != std::string::npos; }));
  return url;
}

nlohmann::json job_json(unsigned short port) {
  return nlohmann::json::parse(body_of(http_get(port, "/api/job")));
}

}  // namespace

TEST_CASE("the metrics server serves several clients at once and closes them when it goes",
          "[cli]") {
  auto server = std::make_unique<MetricsServer>(
      "127.0.0.1", 0, metrics_route([] { return std::string("up 1\n# end\n"); }));
  // A client that connects and says nothing, as a keep-alive scraper between scrapes.
  Client idle(server->port());
  Client scraper(server->port());
  scraper.send_get(true);
  CHECK(has_responses(scraper.read([](const std::string& s) { return has_responses(s, 1); }), 1));
  // The same connection serves the next scrape.
  scraper.send_get(false);
  const std::string second = scraper.read_to_close();
  CHECK(has_responses(second, 1));
  CHECK(scraper.closed());  // it asked for Connection: close
  // Going away closes the idle connection rather than waiting for it.
  server.reset();
  CHECK(idle.read_to_close().empty());
  CHECK(idle.closed());
}

TEST_CASE("the metrics server closes a connection idle for longer than its timeout", "[cli]") {
  MetricsServer server("127.0.0.1", 0, metrics_route([] { return std::string("up 1\n"); }),
                       std::chrono::milliseconds(50));
  Client idle(server.port());
  CHECK(idle.read_to_close().empty());
  CHECK(idle.closed());
}

TEST_CASE("the metrics server serves Prometheus text over HTTP on loopback", "[cli]") {
  JobMetrics metrics;
  TaskSnapshot task;
  task.name = "gen -> \"sink\"";
  task.operators = {{"gen", 0, 0, 42}, {"sink", 0, 42, 0}};
  task.counters = {{"sink.flushes.signal", 3},
                   {"sink.numRecordsSend", 40},
                   {"sink.currentSendTime", 7},
                   {"gen.currentEmitEventTimeLag", 12},
                   {"gen.currentFetchEventTimeLag", 10},
                   {"gen.sourceIdleTime", 2500},
                   {"gen.phase", 2}};
  task.gauges = {"gen.phase"};
  task.blocked_ns = 1'500'000'000;
  metrics.tasks.push_back(task);
  MetricsServer server("127.0.0.1", 0,
                       metrics_route([&] { return prometheus_text("demo", metrics); }));
  const std::string response = http_get(server.port());
  CHECK_THAT(response, Catch::StartsWith("HTTP/1.1 200"));
  CHECK_THAT(response, Catch::Contains("text/plain; version=0.0.4"));
  CHECK_THAT(
      response,
      Catch::Contains("sluice_records_out_total{job=\"demo\",operator=\"gen\",subtask=\"0\"} 42"));
  CHECK_THAT(response, Catch::Contains("sluice_backpressure_seconds_total{job=\"demo\",task=\"gen "
                                       "-> \\\"sink\\\"\",subtask=\"0\"} 1.5"));
  CHECK_THAT(response,
             Catch::Contains(
                 "sluice_operator_counter_total{job=\"demo\",name=\"sink.flushes.signal\"} 3"));
  // A gauge goes as one, per subtask, and not as a counter.
  CHECK_THAT(response, Catch::Contains("# TYPE sluice_operator_gauge gauge\n"
                                       "sluice_operator_gauge{job=\"demo\",name=\"gen.phase\","
                                       "subtask=\"0\"} 2\n"));
  CHECK_THAT(response,
             !Catch::Contains("sluice_operator_counter_total{job=\"demo\",name=\"gen.phase\""));
  // Flink's standard sink metrics, as Flink's Prometheus reporter names them.
  CHECK_THAT(response,
             Catch::Contains("# TYPE flink_taskmanager_job_task_operator_numRecordsSend gauge"));
  CHECK_THAT(
      response,
      Catch::Contains(
          "flink_taskmanager_job_task_operator_numRecordsSend{job_name=\"demo\","
          "task_name=\"gen -> \\\"sink\\\"\",operator_name=\"sink\",subtask_index=\"0\"} 40"));
  CHECK_THAT(
      response,
      Catch::Contains("flink_taskmanager_job_task_operator_currentSendTime{job_name=\"demo\","));
  CHECK_THAT(response, !Catch::Contains("name=\"sink.numRecordsSend\""));
  // Flink CDC's source metrics likewise.
  for (const char* lag :
       {"currentEmitEventTimeLag{", "currentFetchEventTimeLag{", "sourceIdleTime{"}) {
    CHECK_THAT(response, Catch::Contains(std::string("flink_taskmanager_job_task_operator_") + lag +
                                         "job_name=\"demo\",task_name=\"gen -> \\\"sink\\\"\","
                                         "operator_name=\"gen\",subtask_index=\"0\"}"));
  }
  // A second scrape works too.
  CHECK_THAT(http_get(server.port()), Catch::Contains("sluice_checkpoints_total"));
}

TEST_CASE("the metrics server answers a path it does not serve with a 404 naming those it does",
          "[cli]") {
  MetricsServer server("127.0.0.1", 0,
                       {{"/metrics", "text/plain", [] { return std::string("up 1\n"); }},
                        {"/api/job", "application/json", [] { return std::string("{}"); }}});
  const std::string missing = http_get(server.port(), "/nothing");
  CHECK_THAT(missing, Catch::StartsWith("HTTP/1.1 404"));
  CHECK(body_of(missing) == "no page at /nothing; there are: /metrics /api/job\n");
  const std::string json = http_get(server.port(), "/api/job?x=1");
  CHECK_THAT(json, Catch::StartsWith("HTTP/1.1 200") && Catch::Contains("application/json"));
  CHECK(body_of(json) == "{}");
}

TEST_CASE("sluice run serves the running job at /api/job as --metrics-file writes it at the end",
          "[cli]") {
  testing::TempDir dir;
  const unsigned short port = static_cast<unsigned short>(testing::free_port());
  const std::string file = (dir.path() / "metrics.json").string();
  testing::BackgroundCommand job(running_example(port, dir, file));
  page_of(job, port);
  const auto first = job_json(port);
  // The counters rise while it runs.
  REQUIRE(testing::wait_until([&] {
    return job_json(port)["operators"][0]["records_out"] > first["operators"][0]["records_out"];
  }));
  const auto second = job_json(port);
  CHECK(first["status"] == "running");
  CHECK(second["duration_s"] > first["duration_s"]);
  INFO(job.signal(SIGINT).output);
  std::ifstream in(file);
  const auto ended = nlohmann::json::parse(in);
  CHECK(ended["status"] == "cancelled");
  // The same fields and operators, so that what reads one reads the other.
  for (const auto& [key, value] : ended.items()) CHECK(second.contains(key));
  CHECK(second.size() == ended.size());
  CHECK(second["plan"] == ended["plan"]);
  REQUIRE(second["operators"].size() == ended["operators"].size());
  for (size_t i = 0; i < ended["operators"].size(); ++i) {
    CHECK(second["operators"][i]["name"] == ended["operators"][i]["name"]);
  }
}

TEST_CASE("sluice run --metrics-file writes the final metrics as JSON", "[cli]") {
  testing::TempDir dir;
  const std::string file = (dir.path() / "metrics.json").string();
  const auto result = testing::run_command(
      std::string(SLUICE_CLI) +
      " run aggregate --set source.rows=5000 --set checkpoint.interval=50ms" +
      " --set checkpoint.dir=" + dir.path().string() + " --metrics-file " + file + " > /dev/null");
  REQUIRE(result.status == 0);
  std::ifstream in(file);
  const auto json = nlohmann::json::parse(in);
  CHECK(json["status"] == "finished");
  CHECK(json["operators"][0]["name"] == "orders");
  CHECK(json["operators"][0]["records_out"] == json["operators"][1]["records_in"]);
  CHECK(json["checkpoints"].size() >= 1);
  CHECK(json["checkpoints"].back()["final"] == true);
  // The plan it ran, as `sluice describe aggregate` lists it.
  const auto& plan = json["plan"];
  REQUIRE(plan["tasks"].size() == 2);
  CHECK(plan["tasks"][0]["name"] == "orders");
  CHECK(plan["tasks"][1]["operators"] == nlohmann::json::array({"aggregate", "print"}));
  CHECK(plan["tasks"][1]["parallelism"] == 1);
  CHECK(plan["edges"] ==
        nlohmann::json::array({{{"from", 0}, {"to", 1}, {"partitioning", "hash(customer)"}}}));
}

TEST_CASE("the metrics server answers only GET: it shows, it takes nothing", "[cli]") {
  MetricsServer server("127.0.0.1", 0, {{"/", "text/html", [] { return std::string("page"); }}});
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
  const std::string request =
      "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string response;
  boost::system::error_code ec;
  char buf[4096];
  while (size_t n = socket.read_some(boost::asio::buffer(buf), ec)) response.append(buf, n);
  CHECK_THAT(response, Catch::StartsWith("HTTP/1.1 405") && Catch::Contains("Allow: GET"));
}

TEST_CASE("metrics.bind names the address the job's server listens on", "[cli]") {
  const auto bad = testing::run_command(
      std::string(SLUICE_CLI) + " run example --set source.rows=10 --set metrics.port=" +
      std::to_string(testing::free_port()) + " --set metrics.bind=localhost.example");
  CHECK(bad.status == 2);
  CHECK_THAT(bad.output, Catch::Contains("metrics.bind 'localhost.example' is not an IP address"));
  // Every interface: reached here through loopback.
  MetricsServer any("0.0.0.0", 0, {{"/", "text/html", [] { return std::string("page"); }}});
  CHECK(body_of(http_get(any.port(), "/")) == "page");
}

TEST_CASE("sluice run --open serves the job's page on a free port and opens it with xdg-open",
          "[cli]") {
  testing::TempDir dir;
  // A desktop's xdg-open, which notes what it was asked to open.
  const std::string opener =
      dir.write("xdg-open", "#!/bin/sh\necho \"$1\" > " + (dir.path() / "opened").string() + "\n");
  std::filesystem::permissions(opener, std::filesystem::perms::owner_all);
  const auto run =
      testing::run_command("(PATH=" + dir.path().string() + ":$PATH " + std::string(SLUICE_CLI) +
                           " run example --set source.rows=3000 --set "
                           "source.rate=1000 --set checkpoint.dir=" +
                           dir.path().string() + " --open 2>&1 > /dev/null)");
  REQUIRE(run.status == 0);
  std::smatch url;
  REQUIRE(
      std::regex_search(run.output, url, std::regex("the job's page: (http://127.0.0.1:\\d+/)")));
  REQUIRE(testing::wait_until([&] { return std::filesystem::exists(dir.path() / "opened"); }));
  std::ifstream opened(dir.path() / "opened");
  std::string line;
  std::getline(opened, line);
  CHECK(line == url[1].str());
}

TEST_CASE("a running job's JSON counts its restarts, names its restore, keeps its last checkpoints",
          "[cli]") {
  JobGraph graph("demo");
  JobMetrics metrics;
  metrics.restarts = 2;
  metrics.restored_from = 7;
  const auto at =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(1'765'013'088'123));
  for (int64_t id = 1; id <= 150; ++id) {
    metrics.checkpoints.push_back(
        {.id = id, .completed = id % 10 != 0, .triggered = at + std::chrono::seconds(id)});
  }
  const auto json = running_metrics_json(graph, nullptr, metrics, std::chrono::seconds(3));
  CHECK(json["restarts"] == 2);
  CHECK(json["restored_from"] == 7);
  CHECK(json["checkpoints_completed"] == 135);
  CHECK(json["checkpoints_aborted"] == 15);
  REQUIRE(json["checkpoints"].size() == kRunningCheckpoints);
  CHECK(json["checkpoints"].front()["id"] == 150 - kRunningCheckpoints + 1);
  CHECK(json["checkpoints"].back()["id"] == 150);
  CHECK(json["checkpoints"].back()["triggered"] == "2025-12-06T09:27:18.123Z");
  CHECK(json["checkpoints"].back()["completed"] == false);
}

TEST_CASE("the progress line shows a CDC snapshot as a bar with its percent and ETA", "[cli]") {
  JobMetrics metrics;
  metrics.tasks.push_back({.name = "mysql-cdc -> mysql",
                           .counters = {{"mysql-cdc.phase", 1},
                                        {"mysql-cdc.snapshot-rows-read.shop.a", 1000},
                                        {"mysql-cdc.snapshot-rows-estimated.shop.a", 1000},
                                        {"mysql-cdc.snapshot-rows-read.shop.b", 500},
                                        {"mysql-cdc.snapshot-rows-estimated.shop.b", 3000}}});
  const auto progress = snapshot_progress(metrics);
  REQUIRE(progress);
  CHECK(progress->read == 1500);
  CHECK(progress->estimated == 4000);
  CHECK(snapshot_bar(*progress, 250) == "snapshot [#######-------------]  37% ETA 10 s");
  CHECK(snapshot_bar(*progress, 0) == "snapshot [#######-------------]  37%");
  // An estimate short of what was read is no estimate: never past 100%.
  CHECK(snapshot_bar({.read = 50, .estimated = 50}, 10) ==
        "snapshot [####################] 100% ETA 0 s");
  // In the binlog phase, no bar.
  metrics.tasks[0].counters["mysql-cdc.phase"] = 2;
  CHECK_FALSE(snapshot_progress(metrics));
}

namespace {

// The page at `url` as headless Chromium shows it once its scripts ran for
// three seconds of the browser's virtual time: its DOM, serialised. A
// browser that hangs fails the test after a minute.
std::string rendered(const std::string& url) {
  testing::TempDir profile;
  const auto result = testing::run_command(
      "timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--allow-file-access-from-files "
      "--user-data-dir=" +
      profile.path().string() + " --virtual-time-budget=3000 --dump-dom '" + url + "' 2>/dev/null");
  INFO("Debian's chromium package, which scripts/setup installs, runs the page");
  REQUIRE(result.status == 0);
  return result.output;
}

// The operators the page lists, and the records each sent out.
std::map<std::string, uint64_t> operators_shown(const std::string& dom) {
  static const std::regex row(
      R"re(class="operator" data-operator="([^"]+)" data-records-in="\d+" data-records-out="(\d+)")re");
  std::map<std::string, uint64_t> out;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), row); it != std::sregex_iterator();
       ++it) {
    out[(*it)[1]] = std::stoull((*it)[2]);
  }
  return out;
}

// How often `text` occurs in `dom`.
size_t occurrences(const std::string& dom, const std::string& text) {
  size_t n = 0;
  for (size_t at = dom.find(text); at != std::string::npos; at = dom.find(text, at + 1)) ++n;
  return n;
}

// Checks that the page shows every operator of `plan`, in its graph (one box
// per task) and in its table.
void check_graph_shown(const std::string& dom, const nlohmann::json& plan) {
  const auto listed = operators_shown(dom);
  // (The page's script has the markup too, with "${" where a name goes.)
  const std::regex task_box(R"re(<g class="task" data-task="[^$])re");
  CHECK(static_cast<size_t>(std::distance(std::sregex_iterator(dom.begin(), dom.end(), task_box),
                                          std::sregex_iterator())) == plan["tasks"].size());
  for (const auto& task : plan["tasks"]) {
    for (const auto& op : task["operators"]) {
      const std::string name = op;
      INFO(name);
      CHECK(occurrences(dom, "class=\"op\" data-operator=\"" + name + "\"") == 1);
      CHECK(listed.contains(name));
    }
  }
  for (const auto& edge : plan["edges"]) {
    CHECK_THAT(dom, Catch::Contains(">" + edge["partitioning"].get<std::string>() + "</text>"));
  }
}

}  // namespace

TEST_CASE("the job's page in a browser shows every operator, rising counters and a finished run",
          "[cli][browser]") {
  testing::TempDir dir;
  const unsigned short port = static_cast<unsigned short>(testing::free_port());
  const std::string file = (dir.path() / "metrics.json").string();
  testing::BackgroundCommand job(running_example(port, dir, file));
  const std::string url = page_of(job, port);
  REQUIRE(testing::wait_until([&] { return !job_json(port)["checkpoints"].empty(); }));
  const nlohmann::json plan = job_json(port)["plan"];
  const std::string first = rendered(url);
  check_graph_shown(first, plan);
  CHECK_THAT(first, Catch::Contains("id=\"status\">running<"));
  CHECK(std::regex_search(first, std::regex(R"re(<tr class="checkpoint"><td>\d+</td>)re")));
  const std::string second = rendered(url);
  CHECK(operators_shown(second)["orders"] > operators_shown(first)["orders"]);
  // The page it served opens the run's --metrics-file once the run ended.
  const std::string served = body_of(http_get(port, "/"));
  CHECK(served == job_page());
  const std::string page = dir.write("page.html", served);
  INFO(job.signal(SIGINT).output);
  std::ifstream in(file);
  const auto ended = nlohmann::json::parse(in);
  const std::string finished = rendered("file://" + page + "?run=metrics.json");
  CHECK_THAT(finished, Catch::Contains("id=\"status\">cancelled (from a file)<"));
  check_graph_shown(finished, plan);
  CHECK(operators_shown(finished)["orders"] == ended["operators"][0]["records_out"]);
}

TEST_CASE("the job's page shows a job of one's own, built with run_cli, from its finished run",
          "[cli][browser]") {
  testing::TempDir dir;
  const std::string file = (dir.path() / "run.json").string();
  const auto run =
      testing::run_command(std::string(SLUICE_README_JOB) +
                           " --set orders=3000 --set checkpoint.dir=" + dir.path().string() +
                           " --metrics-file " + file + " > /dev/null 2>&1");
  REQUIRE(run.status == 0);
  std::ifstream in(file);
  const auto json = nlohmann::json::parse(in);
  const std::string page = dir.write("page.html", std::string(job_page()));
  const std::string dom = rendered("file://" + page + "?run=run.json");
  CHECK_THAT(dom, Catch::Contains("id=\"status\">finished (from a file)<"));
  check_graph_shown(dom, json["plan"]);
  CHECK_THAT(dom, Catch::Contains(">hash(customer)</text>"));
  CHECK(operators_shown(dom)["revenue"] == json["operators"][2]["records_out"]);
}

TEST_CASE("the job's page lists the tables a snapshot reads first and counts the rest",
          "[cli][browser]") {
  // A finished run's file, of a source 350 rows into a snapshot of 20 tables.
  nlohmann::json counters = {{"src.phase", 1}};
  for (int t = 0; t < 20; ++t) {
    const std::string name = "shop.t" + std::string(t < 10 ? "0" : "") + std::to_string(t);
    counters["src.snapshot-rows-read." + name] = t < 3 ? 100 : t == 3 ? 50 : 0;
    counters["src.snapshot-rows-estimated." + name] = 100;
  }
  const nlohmann::json run = {
      {"job", "shop"},
      {"status", "cancelled"},
      {"error", ""},
      {"duration_s", 2.0},
      {"restarts", 0},
      {"restored_from", nullptr},
      {"plan", nullptr},
      {"operators", {{{"name", "src"}, {"subtasks", 1}, {"records_in", 0}, {"records_out", 350}}}},
      {"tasks", {{{"name", "src"}, {"subtask", 0}, {"blocked_s", 0.0}, {"counters", counters}}}},
      {"checkpoints", nlohmann::json::array()},
      {"counters", counters}};
  testing::TempDir dir;
  dir.write("run.json", run.dump());
  const std::string dom =
      rendered("file://" + dir.write("page.html", std::string(job_page())) + "?run=run.json");
  CHECK_THAT(dom, Catch::Contains(">src: snapshot</h3>"));
  CHECK_THAT(dom, Catch::Contains("17% of about 2000 rows"));
  // The one being read, then eleven of those to read; the rest counted.
  const std::regex row(R"re(<tr class="snapshot-table"><td>(shop\.t\d+)</td>)re");
  std::vector<std::string> listed;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), row); it != std::sregex_iterator();
       ++it) {
    listed.push_back((*it)[1]);
  }
  REQUIRE(listed.size() == 12);
  CHECK(listed.front() == "shop.t03");
  CHECK(listed.back() == "shop.t14");
  CHECK_THAT(dom, Catch::Contains("and 8 more tables: 3 read, 5 to read"));
}

TEST_CASE("the job's page shows the MySQL sink's flushes and a CDC source's snapshot and binlog",
          "[mysql][browser]") {
  testing::TempDir dir;
  const std::string url_text = testing::test_mysql_url_text();
  SECTION("orders-demo") {
    const unsigned short port = static_cast<unsigned short>(testing::free_port());
    testing::TestTable table("page_orders",
                             "id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2), "
                             "status VARCHAR(20), updated_at DATETIME(6)");
    testing::BackgroundCommand job(
        std::string(SLUICE_CLI) + " run orders-demo --set sink.url=" + url_text +
        " --set sink.table=" + table.name() +
        " --set source.rows=0 --set source.rate=5000 --set checkpoint.interval=200ms"
        " --set metrics.port=" +
        std::to_string(port) + " --set checkpoint.dir=" + dir.path().string() + " 2>&1");
    const std::string url = page_of(job, port);
    REQUIRE(testing::wait_until(
        [&] { return job_json(port)["counters"].contains("mysql.statements"); }));
    const std::string dom = rendered(url);
    check_graph_shown(dom, job_json(port)["plan"]);
    CHECK_THAT(dom, Catch::Contains("class=\"sink\" data-operator=\"mysql\""));
    for (const char* row :
         {">flushes<", ">statements<", ">rows affected<", ">mean flush<", ">retries<"})
      CHECK_THAT(dom, Catch::Contains(row));
    job.signal(SIGINT);
  }
  SECTION("mysql-to-mysql") {
    const unsigned short port = static_cast<unsigned short>(testing::free_port());
    testing::TestTable source("page_source", "id BIGINT PRIMARY KEY, note VARCHAR(40)");
    testing::TestTable target("page_target", "id BIGINT PRIMARY KEY, note VARCHAR(40)");
    source.connection().execute("INSERT INTO " + source.name() +
                                " SELECT seq, 'before' FROM seq_1_to_500");
    testing::BackgroundCommand job(
        std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url_text +
        " --set sink.url=" + url_text + " --set source.table=" + source.name() +
        " --set sink.table=" + target.name() + " --set job.name=" + target.name() +
        " --set checkpoint.interval=100ms --set metrics.port=" + std::to_string(port) +
        " --set checkpoint.dir=" + dir.path().string() + " 2>&1");
    const std::string url = page_of(job, port);
    REQUIRE(testing::wait_until([&] { return target.rows().size() == 500; }));
    source.connection().execute("UPDATE " + source.name() + " SET note = 'after' WHERE id = 7");
    REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
    const auto json = job_json(port);
    // The source's gauges: the binlog phase, where it read to, its snapshot.
    const std::string table = testing::test_mysql_url().database + "." + source.name();
    const auto& counters = json["counters"];
    CHECK(counters["mysql-cdc.phase"] == 2);
    CHECK(counters["mysql-cdc.binlog-file"] > 0);
    CHECK(counters["mysql-cdc.binlog-offset"] > 0);
    CHECK(counters["mysql-cdc.snapshot-rows-read." + table] == 500);
    CHECK(counters["mysql-cdc.snapshot-rows-estimated." + table] == 500);
    // Prometheus is told they are gauges.
    CHECK_THAT(body_of(http_get(port)),
               Catch::Contains("sluice_operator_gauge{job=\"" + target.name() +
                               "\",name=\"mysql-cdc.phase\",subtask=\"0\"} 2"));
    const std::string dom = rendered(url);
    check_graph_shown(dom, json["plan"]);
    CHECK_THAT(dom,
               Catch::Contains("class=\"cdc\" data-operator=\"mysql-cdc\">mysql-cdc: binlog<"));
    CHECK_THAT(dom, Catch::Contains("<td>" + table + "</td><td class=\"num\">500</td>"));
    for (const char* row :
         {">binlog position<", ">lag: changes out<", ">no change for<", ">statements<"})
      CHECK_THAT(dom, Catch::Contains(row));
    job.signal(SIGINT);
  }
}

TEST_CASE("on a terminal, the progress line shows a CDC snapshot as a bar", "[mysql]") {
  testing::TempDir dir;
  testing::TestTable source("progress_source", "id BIGINT PRIMARY KEY");
  testing::TestTable target("progress_target", "id BIGINT PRIMARY KEY");
  source.connection().execute("INSERT INTO " + source.name() + " SELECT seq FROM seq_1_to_100");
  const std::string url = testing::test_mysql_url_text();
  // A fresh snapshot sends nothing before its first checkpoint, which the
  // min-pause puts an hour away: it stays at 0% as long as it runs. `script` gives it a terminal.
  testing::BackgroundCommand job(
      "script -qefc \"" + std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url +
      " --set sink.url=" + url + " --set source.table=" + source.name() +
      " --set sink.table=" + target.name() + " --set job.name=" + target.name() +
      " --set checkpoint.interval=1h --set checkpoint.min-pause=1h --set checkpoint.dir=" +
      dir.path().string() + "\" /dev/null");
  CHECK(testing::wait_until([&] {
    return job.output().find("| snapshot [--------------------]   0%") != std::string::npos;
  }));
  INFO(job.kill().output);
}
