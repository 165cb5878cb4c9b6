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
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "sluice/cli/metrics_export.hpp"
#include "sluice/cli/metrics_server.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;

namespace {

std::string http_get(unsigned short port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
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

}  // namespace

TEST_CASE("the metrics server serves several clients at once and closes them when it goes",
          "[cli]") {
  auto server = std::make_unique<MetricsServer>(0, [] { return std::string("up 1\n# end\n"); });
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
  MetricsServer server(
      0, [] { return std::string("up 1\n"); }, std::chrono::milliseconds(50));
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
  MetricsServer server(0, [&] { return prometheus_text("demo", metrics); });
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
}
