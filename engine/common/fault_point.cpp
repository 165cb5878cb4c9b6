#include "sluice/engine/common/fault_point.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace sluice {
namespace {

struct Fault {
  std::string name;
  int subtask = -1;  // any
  long at = 1;
  std::atomic<long> reached{0};
};

// Reads SLUICE_FAULT=<name>[@<subtask>][:<n>] once.
Fault* configured_fault() {
  static Fault* fault = []() -> Fault* {
    const char* spec = std::getenv("SLUICE_FAULT");
    if (spec == nullptr) return nullptr;
    std::string text(spec);
    auto* f = new Fault;
    if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
      f->at = std::atol(text.c_str() + colon + 1);
      text.resize(colon);
    }
    if (const size_t at = text.rfind('@'); at != std::string::npos) {
      f->subtask = std::atoi(text.c_str() + at + 1);
      text.resize(at);
    }
    f->name = text;
    return f;
  }();
  return fault;
}

}  // namespace

void fault_point(std::string_view name, int subtask) {
  Fault* fault = configured_fault();
  if (fault == nullptr || fault->name != name) return;
  if (fault->subtask >= 0 && fault->subtask != subtask) return;
  if (fault->reached.fetch_add(1) + 1 == fault->at) ::kill(::getpid(), SIGKILL);
}

}  // namespace sluice
