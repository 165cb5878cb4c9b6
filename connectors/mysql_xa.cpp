#include "connectors/mysql_xa.hpp"

#include <cstdio>
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

// Keeps gtrid within 64 bytes: "sluice|" (7) + tag (≤ 40) + "|" + epoch (16).
std::string job_tag(const std::string& job) {
  if (job.size() <= 40) return job;
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>{}(job));
  return job.substr(0, 23) + "~" + hash;
}

}  // namespace

std::string Xid::sql() const { return "X'" + hex(gtrid) + "',X'" + hex(bqual) + "'"; }

std::string Xid::where() const {
  return "gtrid = X'" + hex(gtrid) + "' AND bqual = X'" + hex(bqual) + "'";
}

XidScheme::XidScheme(const std::string& job, int subtask)
    : prefix_("sluice|" + job_tag(job) + "|"), subtask_(std::to_string(subtask)) {
  std::random_device random;
  const uint64_t epoch = (uint64_t{random()} << 32 | random()) ^
                         static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(epoch));
  epoch_ = text;
}

Xid XidScheme::next(int64_t after_checkpoint) {
  return {prefix_ + epoch_, subtask_ + "|" + std::to_string(after_checkpoint) + "|" + std::to_string(++sequence_)};
}

namespace {

// Whether gtrid is "<prefix><epoch>": the epoch holds no '|', so job "a"
// never claims job "a|b"'s transactions.
bool has_prefix(const std::string& gtrid, const std::string& prefix) {
  return gtrid.size() > prefix.size() && gtrid.compare(0, prefix.size(), prefix) == 0 &&
         gtrid.find('|', prefix.size()) == std::string::npos;
}

}  // namespace

bool XidScheme::owns(const Xid& xid) const {
  return has_prefix(xid.gtrid, prefix_) && xid.bqual.compare(0, subtask_.size() + 1, subtask_ + "|") == 0;
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

void wait_until_disconnected(MySqlConnection& connection, uint64_t id, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string sql =
      "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " + std::to_string(id);
  while (connection.query(sql).at(0).at(0) != "0") {
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("connection " + std::to_string(id) + " that prepared a transaction is still on the "
                  "server after " + std::to_string(timeout.count()) + " s; cannot commit it safely");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace sluice
