#include "sluice/connectors/mysql/cdc/binlog_packets.hpp"

#include <errmsg.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sluice/connectors/mysql/connection.hpp"

namespace sluice {
namespace {

constexpr size_t kPacketHeader = 4;            // a payload's length (3 bytes), its sequence number
constexpr size_t kLongestPayload = 0xffffff;   // a payload this long goes on in the next packet
constexpr size_t kReadRoom = 256 * 1024;       // what a read is given, at least a quarter of it
constexpr size_t kBufferKept = 4 * kReadRoom;  // a buffer grown past it shrinks when empty

}  // namespace

PacketReader::PacketReader(int fd, std::chrono::milliseconds timeout)
    : fd_(fd), timeout_(timeout), buffer_(kReadRoom) {}

std::string_view PacketReader::next() {
  if (begin_ == end_ && buffer_.size() > kBufferKept) {  // after a large event
    buffer_.resize(kReadRoom);
    buffer_.shrink_to_fit();
  }
  whole_.clear();
  for (bool several = false;;) {
    fill(kPacketHeader);
    const auto* header = reinterpret_cast<const uint8_t*>(buffer_.data() + begin_);
    const size_t length = header[0] | size_t{header[1]} << 8 | size_t{header[2]} << 16;
    if (sequence_ && header[3] != *sequence_) {
      lost("packets out of order (packet " + std::to_string(header[3]) + " where " +
           std::to_string(*sequence_) + " was next)");
    }
    sequence_ = static_cast<uint8_t>(header[3] + 1);
    fill(kPacketHeader + length);
    const std::string_view payload(buffer_.data() + begin_ + kPacketHeader, length);
    begin_ += kPacketHeader + length;
    if (!several && length < kLongestPayload) return payload;
    whole_.append(payload);
    several = true;
    if (length < kLongestPayload) return whole_;
  }
}

bool PacketReader::has_data() const {
  if (end_ > begin_) return true;
  pollfd socket{.fd = fd_, .events = POLLIN};
  return ::poll(&socket, 1, 0) > 0;
}

void PacketReader::fill(size_t n) {
  if (begin_ == end_) begin_ = end_ = 0;
  while (end_ - begin_ < n) {
    if (buffer_.size() - begin_ < n || buffer_.size() - end_ < kReadRoom / 4) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (buffer_.size() < n) buffer_.resize(std::max(n, 2 * buffer_.size()));
    }
    read_some();
  }
}

void PacketReader::read_some() {
  for (;;) {
    const ssize_t got = ::recv(fd_, buffer_.data() + end_, buffer_.size() - end_, MSG_DONTWAIT);
    if (got > 0) {
      end_ += static_cast<size_t>(got);
      return;
    }
    if (got == 0) lost("the server closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) lost(std::strerror(errno));
    pollfd socket{.fd = fd_, .events = POLLIN};
    const int ready = ::poll(&socket, 1, static_cast<int>(timeout_.count()));
    if (ready == 0) {
      lost("nothing came for " + std::to_string(timeout_.count()) + " ms");
    }
    if (ready < 0 && errno != EINTR) lost(std::strerror(errno));
  }
}

void PacketReader::lost(const std::string& why) const {
  throw MySqlError(CR_SERVER_LOST, "Lost connection to server: " + why);
}

}  // namespace sluice
