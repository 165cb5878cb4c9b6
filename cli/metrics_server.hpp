#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace sluice {

/// What the server answers at one path.
struct HttpRoute {
  std::string path;  ///< "/metrics"
  std::string content_type;
  std::function<std::string()> render;
};

/// Serves its routes over HTTP at http://<address>:<port><path> on a thread
/// of its own, until destroyed: each GET renders the route's body anew; a
/// path it does not know is a 404 naming those it does, and any method but
/// GET a 405: it only shows. It serves any number
/// of clients at once, keeps a connection open between requests when the
/// client asks (as Prometheus does), and closes a connection that sends or
/// takes nothing for `idle_timeout`. Destroying it closes every connection
/// at once: a client never holds up the job's exit.
class MetricsServer {
 public:
  /// Listens on `address` ("127.0.0.1", "::", "0.0.0.0"); port 0 picks a
  /// free one. Throws sluice::ConfigError if it cannot listen there.
  MetricsServer(const std::string& address, unsigned short port, std::vector<HttpRoute> routes,
                std::chrono::milliseconds idle_timeout = std::chrono::seconds(10));
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  unsigned short port() const { return port_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  unsigned short port_ = 0;
  std::thread thread_;
};

}  // namespace sluice
