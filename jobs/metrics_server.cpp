#include "jobs/metrics_server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <utility>  // Boost 1.74's Asio needs it under C++20.

#include "engine/common/error.hpp"

namespace sluice {

namespace asio = boost::asio;
namespace http = boost::beast::http;

struct MetricsServer::State {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io};
  std::function<std::string()> render;
};

MetricsServer::MetricsServer(unsigned short port, std::function<std::string()> render)
    : state_(std::make_unique<State>()) {
  state_->render = std::move(render);
  boost::system::error_code ec;
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  state_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state_->acceptor.bind(endpoint, ec);
  if (!ec) state_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("metrics.port " + std::to_string(port) + ": cannot listen: " + ec.message());
  port_ = state_->acceptor.local_endpoint().port();
  thread_ = std::thread([state = state_.get()] {
    // One request at a time: a scrape every few seconds needs no more.
    while (true) {
      boost::system::error_code error;
      asio::ip::tcp::socket socket(state->io);
      state->acceptor.accept(socket, error);
      if (error) return;  // closed: the server is going away
      boost::beast::flat_buffer buffer;
      http::request<http::string_body> request;
      http::read(socket, buffer, request, error);
      if (error) continue;
      http::response<http::string_body> response{http::status::ok, request.version()};
      response.set(http::field::content_type, "text/plain; version=0.0.4");
      response.body() = state->render();
      response.prepare_payload();
      http::write(socket, response, error);
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, error);
    }
  });
}

MetricsServer::~MetricsServer() {
  // Shutting the listening socket down makes the blocked accept() fail.
  ::shutdown(state_->acceptor.native_handle(), SHUT_RDWR);
  thread_.join();
  boost::system::error_code ignored;
  state_->acceptor.close(ignored);
}

}  // namespace sluice
