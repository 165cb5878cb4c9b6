#include "sluice/connectors/mysql/sink/xa.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <thread>

namespace sluice {
namespace {

std::string hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// `name`, or if it is longer than `max` bytes or holds the separator '|', a
// prefix of it and a hash. Keeps gtrid within 64 bytes: "sluice|" (7) + job
// tag (≤ 40) + "|" + epoch (16); bqual: sink tag (≤ 24) + "|" + subtask,
// checkpoint and sequence.
std::string tag(const std::string& name, size_t max) {
  if (name.size() <= max && name.find('|') == std::string::npos) return name;
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>{}(name));
  std::string prefix = name.substr(0, max - 17);
  std::replace(prefix.begin(), prefix.end(), '|', '~');
  return prefix + "~" + hash;
}

std::string job_tag(const std::string& job) { return tag(job, 40); }

}  // namespace

std::string Xid::sql() const { return "X'" + hex(gtrid) + "',X'" + hex(bqual) + "'"; }

std::string Xid::where() const {
  return "gtrid = X'" + hex(gtrid) + "' AND bqual = X'" + hex(bqual) + "'";
}

XidScheme::XidScheme(const std::string& job, const std::string& sink, int subtask)
    : prefix_("sluice|" + job_tag(job) + "|"), sink_(tag(sink, 24) + "|"), subtask_(subtask) {
  std::random_device random;
  const uint64_t epoch =
      (uint64_t{random()} << 32 | random()) ^
      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(epoch));
  epoch_ = text;
}

Xid XidScheme::next(int64_t after_checkpoint) {
  return {prefix_ + epoch_, sink_ + std::to_string(subtask_) + "|" +
                                std::to_string(after_checkpoint) + "|" +
                                std::to_string(++sequence_)};
}

namespace {

// Whether gtrid is "<prefix><epoch>": the epoch holds no '|', so job "a"
// never claims job "a|b"'s transactions.
bool has_prefix(const std::string& gtrid, const std::string& prefix) {
  return gtrid.size() > prefix.size() && gtrid.compare(0, prefix.size(), prefix) == 0 &&
         gtrid.find('|', prefix.size()) == std::string::npos;
}

}  // namespace

bool XidScheme::owns(const Xid& xid) const { return subtask_of(xid) == subtask_; }

std::optional<int> XidScheme::subtask_of(const Xid& xid) const {
  if (!has_prefix(xid.gtrid, prefix_) || xid.bqual.compare(0, sink_.size(), sink_) != 0)
    return std::nullopt;
  int subtask = 0;
  const char* begin = xid.bqual.data() + sink_.size();
  const char* end = xid.bqual.data() + xid.bqual.size();
  const auto [next, error] = std::from_chars(begin, end, subtask);
  if (error != std::errc() || next == begin || next == end || *next != '|') return std::nullopt;
  return subtask;
}

bool XidScheme::of_job(const Xid& xid, const std::string& job) {
  return has_prefix(xid.gtrid, "sluice|" + job_tag(job) + "|");
}

std::vector<Xid> xa_recover(MySqlConnection& connection) {
  std::vector<Xid> xids;
  // formatID, gtrid_length, bqual_length, data (gtrid and bqual together).
  for (const auto& row : connection.query("XA RECOVER")) {
    const size_t gtrid_length = std::stoul(row.at(1).value());
    const std::string& data = row.at(3).value();
    xids.push_back({data.substr(0, gtrid_length), data.substr(gtrid_length)});
  }
  return xids;
}

int64_t server_started_at(MySqlConnection& connection) {
  return std::stoll(
      connection
          .query("SELECT UNIX_TIMESTAMP() - VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                 "WHERE VARIABLE_NAME = 'UPTIME'")
          .at(0)
          .at(0)
          .value());
}

void wait_until_disconnected(MySqlConnection& connection, uint64_t id, int64_t server_started,
                             std::chrono::seconds timeout) {
  // Two readings of one start time differ by the second Uptime ticked at most.
  if (server_started != 0 && std::abs(server_started_at(connection) - server_started) > 2) return;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string sql =
      "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " + std::to_string(id);
  while (connection.query(sql).at(0).at(0) != "0") {
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("connection " + std::to_string(id) +
                  " that prepared a transaction is still on the "
                  "server after " +
                  std::to_string(timeout.count()) + " s; cannot commit it safely");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace sluice
