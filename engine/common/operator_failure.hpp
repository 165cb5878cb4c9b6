#pragma once

#include <exception>
#include <string>

/// How failures travel out of a task's operators. Internal to the engine.
namespace sluice {

/// Thrown inside a task to unwind it when the job is cancelled.
struct TaskCancelled {};

/// An exception from user code, tagged with the operator it came from. Not a
/// std::exception, so that user code catching those does not catch it on its
/// way through an upstream operator of the same chain.
struct OperatorFailure {
  std::string operator_name;
  std::string message;
  std::exception_ptr cause;
};

/// Calls `f`, tagging what it throws with the operator `name`.
template <typename F>
decltype(auto) guarded(const std::string& name, F&& f) {
  try {
    return f();
  } catch (const OperatorFailure&) {
    throw;
  } catch (const TaskCancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw OperatorFailure{name, e.what(), std::current_exception()};
  } catch (...) {
    throw OperatorFailure{name, "unknown exception", std::current_exception()};
  }
}

}  // namespace sluice
