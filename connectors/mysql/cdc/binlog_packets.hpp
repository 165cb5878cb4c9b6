#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

/// The packets of the client/server protocol read straight from a socket, as
/// many as have come in at each read: for a binlog stream, where the server
/// sends events back to back, in place of the client library's reading of
/// one packet at a time (its per-packet work and copies cost a fifth of
/// the binlog reader's CPU). Only for a connection without TLS or
/// compression, once the library holds no bytes it read ahead.
class PacketReader {
 public:
  /// Reads socket `fd`, which stays its owner's; a read that waits longer
  /// than `timeout` for the server fails.
  PacketReader(int fd, std::chrono::milliseconds timeout);

  /// The next packet's payload, valid until the next call. A payload of
  /// 16 MiB or more, which comes as several packets, comes whole. Throws
  /// MySqlError (CR_SERVER_LOST) when the socket fails, the server closes
  /// the connection, `timeout` passes, or a packet is out of sequence.
  std::string_view next();

  /// Whether bytes of a packet have come: read already, or on the socket.
  bool has_data() const;

 private:
  // Makes at least `n` bytes from begin_ on readable, reading as many as
  // the socket has.
  void fill(size_t n);
  // One read into the buffer's room, waiting for the server at most timeout_.
  void read_some();
  [[noreturn]] void lost(const std::string& why) const;

  const int fd_;
  const std::chrono::milliseconds timeout_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;       // the bytes read and not yet handed out
  std::optional<uint8_t> sequence_;  // the next packet's, once one came
  std::string whole_;                // a payload of several packets
};

}  // namespace sluice
