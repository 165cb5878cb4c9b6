#include "engine/fault_point.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace sluice {
namespace {

struct Fault {
  std::string name;
  long at = 0;
  std::atomic<long> reached{0};
};

Fault* configured_fault() {
  static Fault* fault = [] () -> Fault* {
    const char* spec = std::getenv("SLUICE_FAULT");
    if (spec == nullptr) return nullptr;
    const std::string text(spec);
    const size_t colon = text.rfind(':');
    auto* f = new Fault;
    f->name = text.substr(0, colon);
    f->at = colon == std::string::npos ? 1 : std::atol(text.c_str() + colon + 1);
    return f;
  }();
  return fault;
}

}  // namespace

void fault_point(std::string_view name) {
  Fault* fault = configured_fault();
  if (fault == nullptr || fault->name != name) return;
  if (fault->reached.fetch_add(1) + 1 == fault->at) ::kill(::getpid(), SIGKILL);
}

}  // namespace sluice
