#include "sluice/connectors/mysql_url.hpp"

#include <charconv>
#include <cstdlib>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

constexpr char kShape[] =
    "expected mysql://USER[:PASSWORD]@HOST[:PORT]/DB or mysql://USER@/DB?socket=PATH";

// Decodes %XX escapes, so that a password may hold '@', ':' or '/'.
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '%' && i + 2 < text.size() &&
        std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr == text.data() + i + 3) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

MySqlUrl MySqlUrl::parse(std::string_view url) {
  constexpr std::string_view kScheme = "mysql://";
  if (url.substr(0, kScheme.size()) != kScheme) throw ConfigError(std::string("sink.url: ") + kShape);
  std::string_view rest = url.substr(kScheme.size());
  const size_t at = rest.rfind('@');
  if (at == std::string_view::npos) throw ConfigError(std::string("sink.url: no user; ") + kShape);
  const std::string_view credentials = rest.substr(0, at);
  rest = rest.substr(at + 1);

  MySqlUrl out;
  const size_t colon = credentials.find(':');
  out.user = percent_decoded(credentials.substr(0, colon));
  if (colon != std::string_view::npos) {
    out.password = percent_decoded(credentials.substr(colon + 1));
  } else if (const char* env = std::getenv("SLUICE_MYSQL_PASSWORD")) {
    out.password = env;
  }
  if (out.user.empty()) throw ConfigError(std::string("sink.url: no user; ") + kShape);

  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) throw ConfigError(std::string("sink.url: no database; ") + kShape);
  const std::string_view host_port = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);
  const size_t query = path.find('?');
  out.database = std::string(path.substr(0, query));
  if (out.database.empty()) throw ConfigError(std::string("sink.url: no database; ") + kShape);
  if (query != std::string_view::npos) {
    const std::string_view parameter = path.substr(query + 1);
    if (parameter.substr(0, 7) != "socket=") {
      throw ConfigError("sink.url: unknown parameter '" + std::string(parameter) + "'; " + kShape);
    }
    out.socket = percent_decoded(parameter.substr(7));
  }
  const size_t port_colon = host_port.rfind(':');
  out.host = std::string(host_port.substr(0, port_colon));
  if (port_colon != std::string_view::npos) {
    const std::string_view port = host_port.substr(port_colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (ec != std::errc() || end != port.data() + port.size() || out.port == 0 || out.port > 65535) {
      throw ConfigError("sink.url: bad port '" + std::string(port) + "'; " + kShape);
    }
  }
  if (out.host.empty() && out.socket.empty()) {
    throw ConfigError(std::string("sink.url: no host and no socket; ") + kShape);
  }
  return out;
}

std::string MySqlUrl::to_string() const {
  std::string out = "mysql://";
  out.append(user).append(password.empty() ? "" : ":***").append("@").append(host);
  if (!host.empty()) out.append(":").append(std::to_string(port));
  out.append("/").append(database);
  if (!socket.empty()) out.append("?socket=").append(socket);
  return out;
}

std::string redacted_mysql_url(std::string_view url) {
  try {
    return MySqlUrl::parse(url).to_string();
  } catch (const ConfigError&) {
    return "(not a mysql:// URL)";
  }
}

std::string mysql_url_from_environment() {
  const char* url = std::getenv("SLUICE_MYSQL_URL");
  return url != nullptr ? url : "";
}

}  // namespace sluice
