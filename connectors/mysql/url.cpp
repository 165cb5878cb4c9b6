#include "sluice/connectors/mysql/url.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <utility>
#include <vector>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

constexpr char kShape[] =
    "expected mysql://USER[:PASSWORD]@HOST[:PORT]/DB or mysql://USER@/DB?socket=PATH, "
    "parameters socket, ssl-mode, ssl-ca, ssl-cert, ssl-key joined by &";

constexpr const char* kSslModes[] = {"disabled", "preferred", "required", "verify-ca",
                                     "verify-identity"};

// Decodes %XX escapes, so that a password may hold '@', ':' or '/', and a
// database a space, '/' or '?'.
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '%' && i + 2 < text.size() &&
        std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr ==
            text.data() + i + 3) {
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
  if (url.substr(0, kScheme.size()) != kScheme)
    throw ConfigError(std::string("sink.url: ") + kShape);
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
  if (slash == std::string_view::npos)
    throw ConfigError(std::string("sink.url: no database; ") + kShape);
  const std::string_view host_port = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);
  const size_t query = path.find('?');
  out.database = percent_decoded(path.substr(0, query));
  if (out.database.empty()) throw ConfigError(std::string("sink.url: no database; ") + kShape);
  std::string_view parameters = query == std::string_view::npos ? "" : path.substr(query + 1);
  while (!parameters.empty()) {
    const size_t amp = parameters.find('&');
    const std::string_view parameter = parameters.substr(0, amp);
    parameters = amp == std::string_view::npos ? "" : parameters.substr(amp + 1);
    const size_t equals = parameter.find('=');
    const std::string_view name = parameter.substr(0, equals);
    const std::string value =
        equals == std::string_view::npos ? "" : percent_decoded(parameter.substr(equals + 1));
    if (name == "socket") {
      out.socket = value;
    } else if (name == "ssl-mode") {
      out.ssl_mode = parse_ssl_mode(value, "sink.url: ssl-mode");
    } else if (name == "ssl-ca") {
      out.ssl_ca = value;
    } else if (name == "ssl-cert") {
      out.ssl_cert = value;
    } else if (name == "ssl-key") {
      out.ssl_key = value;
    } else {
      throw ConfigError("sink.url: unknown parameter '" + std::string(parameter) + "'; " + kShape);
    }
  }
  const size_t port_colon = host_port.rfind(':');
  out.host = std::string(host_port.substr(0, port_colon));
  if (port_colon != std::string_view::npos) {
    const std::string_view port = host_port.substr(port_colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (ec != std::errc() || end != port.data() + port.size() || out.port == 0 ||
        out.port > 65535) {
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
  std::vector<std::pair<const char*, std::string>> parameters;
  if (!socket.empty()) parameters.emplace_back("socket", socket);
  if (ssl_mode != SslMode::kPreferred)
    parameters.emplace_back("ssl-mode", sluice::to_string(ssl_mode));
  if (!ssl_ca.empty()) parameters.emplace_back("ssl-ca", ssl_ca);
  if (!ssl_cert.empty()) parameters.emplace_back("ssl-cert", ssl_cert);
  if (!ssl_key.empty()) parameters.emplace_back("ssl-key", ssl_key);
  for (size_t i = 0; i < parameters.size(); ++i) {
    out.append(i == 0 ? "?" : "&")
        .append(parameters[i].first)
        .append("=")
        .append(parameters[i].second);
  }
  return out;
}

SslMode parse_ssl_mode(std::string_view text, const std::string& where) {
  std::string mode(text);
  for (char& c : mode)
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t i = 0; i < std::size(kSslModes); ++i) {
    if (mode == kSslModes[i]) return static_cast<SslMode>(i);
  }
  throw ConfigError(where + ": '" + std::string(text) +
                    "' is not one of disabled, preferred, required, verify-ca, verify-identity");
}

std::string to_string(SslMode mode) { return kSslModes[static_cast<size_t>(mode)]; }

std::vector<OptionSpec> tls_option_specs(const std::string& prefix) {
  const std::string of = "the connection to " + prefix + "url";
  return {
      {.key = prefix + "ssl-mode",
       .type = OptionType::kEnum,
       .doc = "TLS for " + of +
              ": disabled, preferred (if the server offers it), required, "
              "verify-ca (the certificate signed by ssl-ca), verify-identity (and for the host)",
       .choices = {"disabled", "preferred", "required", "verify-ca", "verify-identity"},
       .default_doc = "the URL's ssl-mode, else preferred"},
      {.key = prefix + "ssl-ca",
       .doc = "TLS: the CA certificate (PEM file) that signed the server's",
       .default_doc = "the URL's ssl-ca"},
      {.key = prefix + "ssl-cert",
       .doc = "TLS: a client certificate (PEM file) to log in with, with ssl-key",
       .default_doc = "the URL's ssl-cert"},
      {.key = prefix + "ssl-key",
       .doc = "TLS: the client certificate's private key (PEM file)",
       .default_doc = "the URL's ssl-key"}};
}

MySqlUrl with_tls_options(MySqlUrl url, const Config& config, const std::string& prefix) {
  if (const auto mode = config.find(prefix + "ssl-mode")) {
    url.ssl_mode = parse_ssl_mode(*mode, prefix + "ssl-mode");
  }
  if (const auto ca = config.find(prefix + "ssl-ca")) url.ssl_ca = *ca;
  if (const auto cert = config.find(prefix + "ssl-cert")) url.ssl_cert = *cert;
  if (const auto key = config.find(prefix + "ssl-key")) url.ssl_key = *key;
  return url;
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
