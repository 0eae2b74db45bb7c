#pragma once
// Two error types: bad input (the user must fix a flag or a file; exit 2) and a missing piece of
// the machine (a program, a temp folder; exit 3). The command line prints `error: <what> (<where>)`.
#include <stdexcept>
#include <string>

namespace specsim {

/// Bad input: a missing or malformed file, an impossible shape, an out-of-range number, an
/// unsupported combination. `where` names the flag, file or field the user must fix.
class InputError : public std::runtime_error {
 public:
  InputError(std::string what, std::string where) : std::runtime_error(what), where_(std::move(where)) {}
  /// The flag, file or JSON field the message is about.
  const std::string& where() const { return where_; }
  /// `what (where)`, the one line the command line prints after `error: `.
  std::string line() const { return where_.empty() ? what() : std::string(what()) + " (" + where_ + ")"; }

 private:
  std::string where_;
};

/// Measurements that cannot all hold under the run's settings (a baseline faster than the modelled
/// GPU work allows, a speculative tok/s implying an impossible accept len): bad input like any
/// other, and the one kind an explanation search (explain/) may resolve by changing an assumption.
class MeasurementConflict : public InputError {
 public:
  using InputError::InputError;
};

/// The machine lacks what the run needs (gnuplot not installed, no writable temp folder): not the
/// user's input. `fix` says what to install or set.
class EnvironmentError : public std::runtime_error {
 public:
  EnvironmentError(std::string what, std::string fix) : std::runtime_error(what), fix_(std::move(fix)) {}
  /// What to install or set.
  const std::string& fix() const { return fix_; }
  /// `what (fix)`, the one line the command line prints after `error: `.
  std::string line() const { return fix_.empty() ? what() : std::string(what()) + " (" + fix_ + ")"; }

 private:
  std::string fix_;
};

}  // namespace specsim
