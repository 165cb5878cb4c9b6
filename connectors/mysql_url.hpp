#pragma once

#include <string>
#include <string_view>

namespace sluice {

/// Where a MySQL/MariaDB server is and who logs in:
/// `mysql://USER[:PASSWORD]@HOST[:PORT]/DB` or `mysql://USER@/DB?socket=PATH`.
/// Without a password in the URL, SLUICE_MYSQL_PASSWORD supplies it. The
/// password is never printed: to_string() masks it.
struct MySqlUrl {
  std::string user;
  std::string password;
  std::string host;  ///< empty with a socket
  unsigned port = 3306;
  std::string socket;
  std::string database;

  /// Throws ConfigError saying what a URL looks like, never echoing the password.
  static MySqlUrl parse(std::string_view url);
  /// The URL with the password shown as "***".
  std::string to_string() const;
};

/// `url` as it may be shown: parsed and masked, or "(not a mysql:// URL)".
/// An option's OptionSpec::redact.
std::string redacted_mysql_url(std::string_view url);
/// SLUICE_MYSQL_URL, or "" when it is not set: the default of the options
/// that name a server.
std::string mysql_url_from_environment();

}  // namespace sluice
