#pragma once
// One error type for bad input. The command line prints `error: <what> (<where>)` and exits 2.
#include <stdexcept>
#include <string>

namespace specsim {

/// Bad input: a missing or malformed file, an impossible shape, an out-of-range number, an
/// unsupported combination. `where` names the flag, file or field the user must fix.
class InputError : public std::runtime_error {
 public:
  InputError(std::string what, std::string where)
      : std::runtime_error(what), where_(std::move(where)) {}
  /// The flag, file or JSON field the message is about.
  const std::string& where() const { return where_; }
  /// `what (where)`, the one line the command line prints after `error: `.
  std::string line() const { return where_.empty() ? what() : std::string(what()) + " (" + where_ + ")"; }

 private:
  std::string where_;
};

}  // namespace specsim
