#pragma once
// Which program a pasted launch command runs, found past what wraps it: environment assignments,
// `env`, `nohup`, `docker run OPTIONS IMAGE`, the Python interpreter's own options, and a shell
// pipe or redirection after it. Only SGLang's and vLLM's servers are read; any other program is
// refused by name.
#include <cstddef>
#include <string>
#include <vector>

namespace specsim {

struct CommandProgram {
  std::string stack = "sglang";    ///< "sglang" or "vllm" (flags alone read as SGLang's)
  std::vector<std::string> env;    ///< NAME=VALUE: before the program, after `env`, docker's -e
  std::vector<std::string> words;  ///< the program as pasted (python3 -m sglang.launch_server)
  std::vector<std::string> args;   ///< what follows the program, up to a shell operator
  bool model_positional = false;   ///< `vllm serve MODEL`: the first word of args may be the model
  std::vector<std::string> notes;  ///< what was skipped or cut, in words
};

/// Splits `tokens` into wrappers, program and arguments; InputError naming `where` for a program
/// that is not SGLang's or vLLM's server (another engine, a benchmark script, a file name).
CommandProgram find_program(const std::vector<std::string>& tokens, const std::string& where);

}  // namespace specsim
