#pragma once

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

}  // namespace sluice
