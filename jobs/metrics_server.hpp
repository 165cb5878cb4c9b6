#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace sluice {

/// Serves `render()` as Prometheus text at http://127.0.0.1:<port>/metrics
/// (any path, in fact) on a thread of its own, until destroyed.
class MetricsServer {
 public:
  /// Throws sluice::Error if the port cannot be bound. Port 0 picks a free one.
  MetricsServer(unsigned short port, std::function<std::string()> render);
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
