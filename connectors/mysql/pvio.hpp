#pragma once

struct st_mysql;

namespace sluice {

// What the client library's connection objects hold below its API: the
// fields are in its installed ma_pvio.h and ma_tls.h, and it has no call
// that tells them.

/// Whether the connection has bytes read from the socket and not yet
/// handed on: in the library's read-ahead cache, or decrypted by TLS.
bool has_unread_bytes(st_mysql* mysql);
/// Whether the connection uses TLS and the server's certificate chain
/// verified against the CA it was given.
bool server_certificate_verified(st_mysql* mysql);

}  // namespace sluice
