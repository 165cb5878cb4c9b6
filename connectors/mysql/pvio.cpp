#include "sluice/connectors/mysql/pvio.hpp"

#include <mysql.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

// ma_tls.h, which ma_pvio.h includes with HAVE_TLS, spells bytes `uchar`.
using uchar = unsigned char;
#define HAVE_TLS
#include <ma_pvio.h>

namespace sluice {
namespace {

// The OpenSSL session of a TLS connection (Debian's library uses OpenSSL), or null.
SSL* tls_session(st_mysql* mysql) {
  const MARIADB_PVIO* pvio = mysql->net.pvio;
  if (pvio == nullptr || pvio->ctls == nullptr) return nullptr;
  return static_cast<SSL*>(pvio->ctls->ssl);
}

}  // namespace

bool has_unread_bytes(st_mysql* mysql) {
  const MARIADB_PVIO* pvio = mysql->net.pvio;
  if (pvio != nullptr && pvio->cache != nullptr &&
      pvio->cache_pos < pvio->cache + pvio->cache_size) {
    return true;
  }
  SSL* tls = tls_session(mysql);
  return tls != nullptr && SSL_pending(tls) > 0;
}

bool server_certificate_verified(st_mysql* mysql) {
  SSL* tls = tls_session(mysql);
  return tls != nullptr && SSL_get_peer_certificate(tls) != nullptr &&
         SSL_get_verify_result(tls) == X509_V_OK;
}

}  // namespace sluice
