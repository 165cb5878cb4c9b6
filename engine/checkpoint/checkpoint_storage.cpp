#include "sluice/engine/checkpoint/checkpoint_storage.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/state/state_store.hpp"

namespace fs = std::filesystem;

namespace sluice {
namespace {

constexpr char kMetadata[] = "_metadata";

// Operator names may hold any character; directory names get a safe spelling.
std::string safe_name(const std::string& name) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::optional<int64_t> id_of(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (name.rfind("chk-", 0) != 0) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t id = std::stoll(name.substr(4), &used);
    return used == name.size() - 4 ? std::optional(id) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Writes `text` to `file` so that a crash leaves the old or the new content.
void write_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error("cannot write " + tmp.string());
  }
  sync_path(tmp);
  fs::rename(tmp, file);
  sync_path(file.parent_path());
}

}  // namespace

uint64_t CheckpointMetadata::state_bytes() const {
  uint64_t total = 0;
  for (const auto& s : states) total += s.bytes;
  return total;
}

CheckpointStorage::CheckpointStorage(fs::path dir, std::string job)
    : job_dir_(std::move(dir) / safe_name(job)) {}

fs::path CheckpointStorage::checkpoint_dir(int64_t id) const {
  return job_dir_ / ("chk-" + std::to_string(id));
}

fs::path CheckpointStorage::subtask_dir(int64_t id, const std::string& op, int subtask) const {
  return checkpoint_dir(id) / (safe_name(op) + "-" + std::to_string(subtask));
}

fs::path CheckpointStorage::work_dir(const std::string& op, int subtask) const {
  return job_dir_ / "work" / (safe_name(op) + "-" + std::to_string(subtask));
}

std::vector<int64_t> CheckpointStorage::completed() const {
  std::vector<int64_t> ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(job_dir_, ec)) {
    const auto id = id_of(entry.path());
    if (id && fs::exists(entry.path() / kMetadata)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<int64_t> CheckpointStorage::latest() const {
  const auto ids = completed();
  if (ids.empty()) return std::nullopt;
  return ids.back();
}

int64_t CheckpointStorage::highest_id() const {
  int64_t highest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(job_dir_, ec)) {
    if (const auto id = id_of(entry.path())) highest = std::max(highest, *id);
  }
  return highest;
}

CheckpointMetadata CheckpointStorage::read(int64_t id) const {
  const fs::path file = checkpoint_dir(id) / kMetadata;
  std::ifstream in(file);
  if (!in)
    throw Error("checkpoint " + std::to_string(id) + " is not complete: no " + file.string());
  try {
    const auto json = nlohmann::json::parse(in);
    CheckpointMetadata m;
    m.id = json.at("id").get<int64_t>();
    m.job = json.at("job").get<std::string>();
    m.final = json.at("final").get<bool>();
    m.completed_at_ms = json.at("completed_at_ms").get<int64_t>();
    m.parallelism = json.at("parallelism").get<std::map<std::string, int>>();
    for (const auto& s : json.at("states")) {
      m.states.push_back({s.at("operator").get<std::string>(), s.at("subtask").get<int>(),
                          s.at("bytes").get<uint64_t>()});
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error("cannot read " + file.string() + ": " + e.what());
  }
}

void CheckpointStorage::verify(int64_t id) const {
  const CheckpointMetadata m = read(id);
  for (const auto& s : m.states) {
    StateStore::open_read_only(subtask_dir(id, s.operator_name, s.subtask));
  }
}

void CheckpointStorage::commit(const CheckpointMetadata& m) const {
  nlohmann::json states = nlohmann::json::array();
  for (const auto& s : m.states) {
    states.push_back({{"operator", s.operator_name}, {"subtask", s.subtask}, {"bytes", s.bytes}});
  }
  const nlohmann::json json = {{"id", m.id},
                               {"job", m.job},
                               {"final", m.final},
                               {"completed_at_ms", m.completed_at_ms},
                               {"parallelism", m.parallelism},
                               {"states", states}};
  const fs::path dir = checkpoint_dir(m.id);
  fs::create_directories(dir);
  write_atomically(dir / kMetadata, json.dump(2) + "\n");
  sync_path(job_dir_);
}

void CheckpointStorage::mark_finished(int64_t id) const {
  write_atomically(job_dir_ / "_finished", std::to_string(id) + "\n");
}

std::optional<int64_t> CheckpointStorage::resumable() const {
  const auto latest_id = latest();
  if (!latest_id) return std::nullopt;
  std::ifstream in(job_dir_ / "_finished");
  int64_t finished = 0;
  if (in >> finished && finished == *latest_id) return std::nullopt;
  return latest_id;
}

void CheckpointStorage::clear_work() const { fs::remove_all(job_dir_ / "work"); }

void CheckpointStorage::prune(int retained) const {
  const auto ids = completed();
  if (ids.empty()) return;
  const size_t keep_from = ids.size() > static_cast<size_t>(retained) ? ids.size() - retained : 0;
  const int64_t oldest_kept = ids[keep_from];
  const int64_t newest = ids.back();
  std::vector<fs::path> doomed;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(job_dir_, ec)) {
    const auto id = id_of(entry.path());
    if (!id) continue;
    // An incomplete checkpoint older than a completed one was aborted or cut
    // short by a crash: every task finished writing it before it snapshotted
    // the newer one, so it can go.
    const bool complete = fs::exists(entry.path() / kMetadata);
    if (*id < oldest_kept || (!complete && *id < newest)) doomed.push_back(entry.path());
  }
  for (const auto& dir : doomed) fs::remove_all(dir);
}

JobLock::JobLock(const CheckpointStorage& storage, const std::string& job) {
  const fs::path path = storage.job_dir() / "LOCK";
  std::error_code ignored;
  fs::create_directories(storage.job_dir(), ignored);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    std::string pid(32, '\0');
    const ssize_t n = ::pread(fd_, pid.data(), pid.size(), 0);
    pid.resize(n > 0 ? static_cast<size_t>(n) : 0);
    ::close(fd_);
    if (error != EWOULDBLOCK) {
      throw Error("cannot lock " + path.string() + ": " + std::strerror(error));
    }
    throw ConfigError("job '" + job + "' is already running" +
                      (pid.empty() ? std::string() : " as pid " + pid) +
                      ": its checkpoint directory " + storage.job_dir().string() +
                      " is in use; stop that run first, or give this one another job.name");
  }
  // The pid only informs a second run's message: a failure to write it is
  // no reason to stop.
  const std::string pid = std::to_string(::getpid());
  [[maybe_unused]] const bool written =
      ::ftruncate(fd_, 0) == 0 &&
      ::pwrite(fd_, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
}

JobLock::~JobLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace sluice
