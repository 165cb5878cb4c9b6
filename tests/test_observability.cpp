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
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "sluice/cli/metrics_export.hpp"
#include "sluice/cli/metrics_server.hpp"
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

}  // namespace

TEST_CASE("the metrics server serves several clients at once and closes them when it goes",
          "[cli]") {
  auto server = std::make_unique<MetricsServer>(
      0, metrics_route([] { return std::string("up 1\n# end\n"); }));
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
  MetricsServer server(0, metrics_route([] { return std::string("up 1\n"); }),
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
  task.counters = {{"sink.flushes.signal", 3},           {"sink.numRecordsSend", 40},
                   {"sink.currentSendTime", 7},          {"gen.currentEmitEventTimeLag", 12},
                   {"gen.currentFetchEventTimeLag", 10}, {"gen.sourceIdleTime", 2500}};
  task.blocked_ns = 1'500'000'000;
  metrics.tasks.push_back(task);
  MetricsServer server(0, metrics_route([&] { return prometheus_text("demo", metrics); }));
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
  MetricsServer server(0, {{"/metrics", "text/plain", [] { return std::string("up 1\n"); }},
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
  testing::BackgroundCommand job(std::string(SLUICE_CLI) +
                                 " run example --set source.rows=0 --set source.rate=2000"
                                 " --set checkpoint.interval=100ms --set metrics.port=" +
                                 std::to_string(port) + " --set checkpoint.dir=" +
                                 dir.path().string() + " --metrics-file " + file + " 2>&1");
  REQUIRE(testing::wait_until([&] { return job.output().find("/api/job") != std::string::npos; }));
  const auto read = [&] { return nlohmann::json::parse(body_of(http_get(port, "/api/job"))); };
  const auto first = read();
  // The counters rise while it runs.
  REQUIRE(testing::wait_until([&] {
    return read()["operators"][0]["records_out"] > first["operators"][0]["records_out"];
  }));
  const auto second = read();
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
