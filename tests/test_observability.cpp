#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>  // Boost 1.74's Asio needs it under C++20.
#include <boost/asio.hpp>

#include "jobs/metrics_export.hpp"
#include "jobs/metrics_server.hpp"
#include "tests/support.hpp"

using namespace sluice;

namespace {

std::string http_get(unsigned short port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string response;
  boost::system::error_code ec;
  char buf[4096];
  while (size_t n = socket.read_some(boost::asio::buffer(buf), ec)) response.append(buf, n);
  return response;
}

}  // namespace

TEST_CASE("the metrics server serves Prometheus text over HTTP on loopback", "[cli]") {
  JobMetrics metrics;
  TaskSnapshot task;
  task.name = "gen -> \"sink\"";
  task.operators = {{"gen", 0, 0, 42}, {"sink", 0, 42, 0}};
  task.counters = {{"sink.flushes.signal", 3}};
  task.blocked_ns = 1'500'000'000;
  metrics.tasks.push_back(task);
  MetricsServer server(0, [&] { return prometheus_text("demo", metrics); });
  const std::string response = http_get(server.port());
  CHECK_THAT(response, Catch::StartsWith("HTTP/1.1 200"));
  CHECK_THAT(response, Catch::Contains("text/plain; version=0.0.4"));
  CHECK_THAT(response, Catch::Contains("sluice_records_out_total{job=\"demo\",operator=\"gen\",subtask=\"0\"} 42"));
  CHECK_THAT(response, Catch::Contains("sluice_backpressure_seconds_total{job=\"demo\",task=\"gen -> \\\"sink\\\"\",subtask=\"0\"} 1.5"));
  CHECK_THAT(response, Catch::Contains("sluice_operator_counter_total{job=\"demo\",name=\"sink.flushes.signal\"} 3"));
  // A second scrape works too.
  CHECK_THAT(http_get(server.port()), Catch::Contains("sluice_checkpoints_total"));
}

TEST_CASE("sluice run --metrics-file writes the final metrics as JSON", "[cli]") {
  testing::TempDir dir;
  const std::string file = (dir.path() / "metrics.json").string();
  const auto result = testing::run_command(std::string(SLUICE_CLI) +
                                           " run aggregate --set source.rows=5000 --set checkpoint.interval=50ms" +
                                           " --set checkpoint.dir=" + dir.path().string() + " --metrics-file " + file +
                                           " > /dev/null");
  REQUIRE(result.status == 0);
  std::ifstream in(file);
  const auto json = nlohmann::json::parse(in);
  CHECK(json["status"] == "finished");
  CHECK(json["operators"][0]["name"] == "orders");
  CHECK(json["operators"][0]["records_out"] == json["operators"][1]["records_in"]);
  CHECK(json["checkpoints"].size() >= 1);
  CHECK(json["checkpoints"].back()["final"] == true);
}
