#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// Whether and how a connection uses TLS, as MySQL's clients name it
/// (`--ssl-mode`): not at all; if the server offers it; always; always,
/// with the server's certificate signed by the CA (`ssl-ca`); and also
/// naming the host connected to.
enum class SslMode { kDisabled, kPreferred, kRequired, kVerifyCa, kVerifyIdentity };

/// Where a MySQL/MariaDB server is and who logs in:
/// `mysql://USER[:PASSWORD]@HOST[:PORT]/DB` or `mysql://USER@/DB?socket=PATH`,
/// with TLS parameters after `?` (or `&`): `ssl-mode=disabled|preferred|
/// required|verify-ca|verify-identity`, `ssl-ca=FILE`, `ssl-cert=FILE`,
/// `ssl-key=FILE`. Without a password in the URL, SLUICE_MYSQL_PASSWORD
/// supplies it. The password is never printed: to_string() masks it.
struct MySqlUrl {
  std::string user;
  std::string password;
  std::string host;  ///< empty with a socket
  unsigned port = 3306;
  std::string socket;
  std::string database;
  /// TLS: preferred over TCP unless the URL or an option says otherwise
  /// (a unix socket never uses it).
  SslMode ssl_mode = SslMode::kPreferred;
  std::string ssl_ca;    ///< the CA that signed the server's certificate (PEM)
  std::string ssl_cert;  ///< a client certificate to present (PEM), with ssl_key
  std::string ssl_key;

  /// Throws ConfigError saying what a URL looks like, never echoing the password.
  static MySqlUrl parse(std::string_view url);
  /// The URL with the password shown as "***".
  std::string to_string() const;
};

/// Parses "disabled", "preferred", "required", "verify-ca" or
/// "verify-identity" (any case, '_' for '-'); throws ConfigError naming
/// `where` otherwise.
SslMode parse_ssl_mode(std::string_view text, const std::string& where);
std::string to_string(SslMode mode);

/// The TLS keys of a connector whose URL is `<prefix>url`: `<prefix>ssl-mode`,
/// `ssl-ca`, `ssl-cert`, `ssl-key`, each winning over the URL's parameter.
std::vector<OptionSpec> tls_option_specs(const std::string& prefix);
/// `url` with those keys of `config` applied.
MySqlUrl with_tls_options(MySqlUrl url, const Config& config, const std::string& prefix);

/// `url` as it may be shown: parsed and masked, or "(not a mysql:// URL)".
/// An option's OptionSpec::redact.
std::string redacted_mysql_url(std::string_view url);
/// SLUICE_MYSQL_URL, or "" when it is not set: the default of the options
/// that name a server.
std::string mysql_url_from_environment();

/// Binds `<prefix>url`, documented by `doc`, and its TLS keys to `field`:
/// the URL parsed, those keys applied. Its default is SLUICE_MYSQL_URL.
template <typename Options>
void bind_mysql_url(OptionBinder<Options>& binder, const std::string& prefix, std::string doc,
                    MySqlUrl Options::*field) {
  const std::string key = prefix + "url";
  binder.bind({.key = key,
               .default_value = mysql_url_from_environment(),
               .doc = std::move(doc),
               .default_doc = "SLUICE_MYSQL_URL, if set",
               .redact = redacted_mysql_url,
               .required = true},
              nullptr, [field, key, prefix](const Config& config, Options& options) {
                options.*field =
                    with_tls_options(MySqlUrl::parse(config.get_string(key)), config, prefix);
              });
  for (OptionSpec& spec : tls_option_specs(prefix)) binder.bind(std::move(spec));
}

}  // namespace sluice
