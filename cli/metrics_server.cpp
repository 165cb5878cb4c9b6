#include "sluice/cli/metrics_server.hpp"

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <utility>  // Boost 1.74's Asio needs it under C++20.

#include "sluice/engine/common/error.hpp"

namespace sluice {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace {

struct ServerState {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io};
  std::vector<HttpRoute> routes;
  std::chrono::milliseconds idle_timeout{0};
};

// One client connection: reads a request, answers it, and reads the next
// while the client keeps the connection alive. Every read and write has a
// deadline; it owns itself through the handlers it has pending, so it ends
// when its connection closes or the io_context goes away.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(asio::ip::tcp::socket socket, const ServerState& state)
      : stream_(std::move(socket)), state_(state) {}

  void read() {
    request_ = {};
    stream_.expires_after(state_.idle_timeout);
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code error, size_t) {
                       if (error) return self->close();
                       self->respond();
                     });
  }

 private:
  void respond() {
    std::string_view path(request_.target().data(), request_.target().size());
    path = path.substr(0, path.find('?'));
    const auto route = std::find_if(state_.routes.begin(), state_.routes.end(),
                                    [&](const HttpRoute& r) { return r.path == path; });
    if (request_.method() != http::verb::get) {
      response_ = {http::status::method_not_allowed, request_.version()};
      response_.set(http::field::allow, "GET");
      response_.set(http::field::content_type, "text/plain");
      response_.body() = "this server only shows: GET\n";
    } else if (route != state_.routes.end()) {
      response_ = {http::status::ok, request_.version()};
      response_.set(http::field::content_type, route->content_type);
      response_.body() = route->render();
    } else {
      response_ = {http::status::not_found, request_.version()};
      response_.set(http::field::content_type, "text/plain");
      response_.body() = "no page at " + std::string(path) + "; there are:";
      for (const HttpRoute& r : state_.routes) response_.body() += " " + r.path;
      response_.body() += "\n";
    }
    response_.keep_alive(request_.keep_alive());
    response_.prepare_payload();
    stream_.expires_after(state_.idle_timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code error, size_t) {
                        if (error || !self->response_.keep_alive()) return self->close();
                        self->read();
                      });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  }

  beast::tcp_stream stream_;
  const ServerState& state_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

void accept(ServerState& state) {
  state.acceptor.async_accept([&state](beast::error_code error, asio::ip::tcp::socket socket) {
    if (error) return;  // closed: the server is going away
    std::make_shared<Session>(std::move(socket), state)->read();
    accept(state);
  });
}

}  // namespace

struct MetricsServer::State : ServerState {};

MetricsServer::MetricsServer(const std::string& address, unsigned short port,
                             std::vector<HttpRoute> routes, std::chrono::milliseconds idle_timeout)
    : state_(std::make_unique<State>()) {
  state_->routes = std::move(routes);
  state_->idle_timeout = idle_timeout;
  beast::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(address, ec);
  if (ec) throw ConfigError("metrics.bind '" + address + "' is not an IP address");
  const asio::ip::tcp::endpoint endpoint(ip, port);
  state_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state_->acceptor.bind(endpoint, ec);
  if (!ec) state_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw ConfigError("metrics.port " + std::to_string(port) + " on " + address +
                      ": cannot listen: " + ec.message());
  }
  port_ = state_->acceptor.local_endpoint().port();
  accept(*state_);
  thread_ = std::thread([state = state_.get()] { state->io.run(); });
}

MetricsServer::~MetricsServer() {
  // run() returns at once; destroying the io_context then destroys the
  // sessions, and with them their connections, whatever they were waiting for.
  state_->io.stop();
  thread_.join();
}

}  // namespace sluice
