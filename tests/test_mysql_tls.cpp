// TLS to the throwaway server, which speaks it with a certificate for IP
// 127.0.0.1 from a CA of its own (scripts/mariadb, SLUICE_MARIADB_TLS_DIR).
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/tests/mysql_support.hpp"
#include "sluice/tests/support.hpp"

using namespace sluice;

namespace {

std::string tls_file(const std::string& name) {
  const char* dir = std::getenv("SLUICE_MARIADB_TLS_DIR");
  if (dir == nullptr) FAIL("SLUICE_MARIADB_TLS_DIR is not set: eval \"$(scripts/mariadb env)\"");
  return std::string(dir) + "/" + name;
}

MySqlUrl url_with(SslMode mode, const std::string& ca = "") {
  MySqlUrl url = testing::test_mysql_url();
  url.ssl_mode = mode;
  url.ssl_ca = ca;
  return url;
}

// The TLS version of the connection's session; empty without TLS.
std::string tls_version(MySqlConnection& connection) {
  return connection.query("SHOW SESSION STATUS LIKE 'Ssl_version'").at(0).at(1).value_or("");
}

}  // namespace

TEST_CASE("ssl-mode decides whether a connection uses TLS and what it verifies", "[mysql][tls]") {
  {
    MySqlConnection plain(url_with(SslMode::kDisabled));
    CHECK(tls_version(plain).empty());
  }
  for (const SslMode mode : {SslMode::kPreferred, SslMode::kRequired}) {
    INFO(to_string(mode));
    MySqlConnection connection(url_with(mode));
    CHECK_THAT(tls_version(connection), Catch::StartsWith("TLS"));
  }
  for (const SslMode mode : {SslMode::kVerifyCa, SslMode::kVerifyIdentity}) {
    INFO(to_string(mode));
    MySqlConnection verified(url_with(mode, tls_file("ca.pem")));
    CHECK_THAT(tls_version(verified), Catch::StartsWith("TLS"));
    // A CA that signed no certificate of the server's, or none at all.
    CHECK_THROWS_AS(MySqlConnection(url_with(mode, tls_file("other-ca.pem"))), Error);
    CHECK_THROWS_AS(MySqlConnection(url_with(mode)), Error);
  }
  // The certificate names 127.0.0.1 only: another name for the same host
  // passes verify-ca and fails verify-identity.
  MySqlUrl by_name = url_with(SslMode::kVerifyCa, tls_file("ca.pem"));
  by_name.host = "localhost";
  { MySqlConnection chain_only(by_name); }
  by_name.ssl_mode = SslMode::kVerifyIdentity;
  CHECK_THROWS_AS(MySqlConnection(by_name), Error);
}

TEST_CASE("a client certificate logs in a user that requires one", "[mysql][tls]") {
  MySqlUrl url = url_with(SslMode::kVerifyIdentity, tls_file("ca.pem"));
  url.user = url.user + "_x509";
  CHECK_THROWS_AS(MySqlConnection(url), ConfigError);  // access denied without one
  url.ssl_cert = tls_file("client-cert.pem");
  url.ssl_key = tls_file("client-key.pem");
  MySqlConnection connection(url);
  CHECK_THAT(tls_version(connection), Catch::StartsWith("TLS"));
}

TEST_CASE("a URL takes TLS parameters and shows them", "[mysql][tls]") {
  const MySqlUrl url = MySqlUrl::parse(
      "mysql://u:pw@db:3307/shop?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/ca.pem&ssl-cert=/"
      "c.pem&ssl-key=/k.pem");
  CHECK(url.ssl_mode == SslMode::kVerifyIdentity);
  CHECK(url.ssl_ca == "/etc/ca.pem");
  CHECK(url.ssl_cert == "/c.pem");
  CHECK(url.ssl_key == "/k.pem");
  CHECK(url.to_string() ==
        "mysql://u:***@db:3307/shop?ssl-mode=verify-identity&ssl-ca=/etc/ca.pem&ssl-cert=/"
        "c.pem&ssl-key=/k.pem");
  CHECK(MySqlUrl::parse("mysql://u@db/shop").ssl_mode == SslMode::kPreferred);
  CHECK_THROWS_WITH(MySqlUrl::parse("mysql://u@db/shop?ssl-mode=always"),
                    Catch::Contains("'always' is not one of disabled"));
}

TEST_CASE("mysql-to-mysql over verified TLS at both ends: snapshot, binlog, options",
          "[mysql][tls][cdc]") {
  testing::TempDir dir;
  testing::TestTable source("tls_source", "id BIGINT PRIMARY KEY, note VARCHAR(40)");
  testing::TestTable target("tls_target", "id BIGINT PRIMARY KEY, note VARCHAR(40)");
  MySqlConnection& sql = source.connection();
  sql.execute("INSERT INTO " + source.name() + " SELECT seq, CONCAT('n', seq) FROM seq_1_to_500");
  const std::string url = testing::test_mysql_url_text();
  const auto command = [&](const std::string& ca) {
    return std::string(SLUICE_CLI) + " run mysql-to-mysql --set source.url=" + url +
           " --set sink.url=" + url + " --set source.table=" + source.name() +
           " --set sink.table=" + target.name() + " --set job.name=" + target.name() +
           " --set checkpoint.dir=" + dir.path().string() +
           " --set checkpoint.interval=50ms --set engine.flush.interval=20ms"
           " --set source.ssl-mode=verify-identity --set sink.ssl-mode=verify-identity"
           " --set source.ssl-ca=" +
           ca + " --set sink.ssl-ca=" + ca;
  };
  // A CA that did not sign the server's certificate: exit 2, before anything.
  const auto refused =
      testing::run_command("timeout 60 " + command(tls_file("other-ca.pem")) + " 2>&1");
  INFO(refused.output);
  CHECK(refused.status == 2);
  CHECK(target.rows().empty());
  testing::BackgroundCommand job(command(tls_file("ca.pem")));
  REQUIRE(testing::wait_until([&] { return target.rows() == source.rows(); }));
  // The binlog over TLS: many small transactions, and a large one, all
  // arriving, with no wait for a heartbeat between them.
  for (int i = 0; i < 200; ++i) {
    sql.execute("UPDATE " + source.name() + " SET note = 'u" + std::to_string(i) +
                "' WHERE id = " + std::to_string(1 + i % 500));
  }
  sql.execute("UPDATE " + source.name() + " SET note = CONCAT(note, '!')");
  CHECK(testing::wait_until([&] { return target.rows() == source.rows(); }));
  const auto ended = job.signal_and_wait(SIGINT, std::chrono::seconds(30));
  REQUIRE(ended);
  INFO(ended->output);
  CHECK(ended->status == 130);
}
