#pragma once

#include <exception>
#include <stdexcept>
#include <string>

/// Errors in Sluice are exceptions of this small hierarchy. Library code throws
/// them; a task catches whatever its operators throw at the task boundary and
/// the executor reports the first one; the CLI maps them to exit codes.
namespace sluice {

/// Base of every error Sluice throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad option, option file, job name or graph: the user must change the
/// configuration. The CLI exits with status 2.
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// Input data that does not fit its type or format (a value, a line).
class DataError : public Error {
 public:
  using Error::Error;
};

/// Whether `error` holds an exception of type `E` (or one derived from it).
template <typename E>
bool holds(const std::exception_ptr& error) {
  if (!error) return false;
  try {
    std::rethrow_exception(error);
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
}

/// Whether `error` would happen again however often the job restarted: a
/// ConfigError or a DataError, which the input or the configuration must
/// change to cure. Anything else (a lost connection, a deadlock, an I/O error,
/// an exception of user code) may pass, and is worth a restart.
inline bool is_permanent(const std::exception_ptr& error) {
  return holds<ConfigError>(error) || holds<DataError>(error);
}

}  // namespace sluice
