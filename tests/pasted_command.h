#pragma once
// A pasted launch command run as `specsim run --json --accept-len 2 [FLAGS] -- COMMAND` (on
// h200:nvswitch unless FLAGS name --hardware), and a note of its report: shared by the CLI tests
// of pasted commands.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace specsim::test {

inline CliResult paste_run(std::vector<std::string> command, std::vector<std::string> flags = {}) {
  std::vector<std::string> args = {"run", "--json", "--accept-len", "2"};
  if (std::find(flags.begin(), flags.end(), "--hardware") == flags.end())
    flags.insert(flags.end(), {"--hardware", "h200:nvswitch"});
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return run_specsim(args);
}

/// Whether one of the report's notes holds `text`.
inline bool has_note(const nlohmann::json& j, const std::string& text) {
  for (const auto& n : j["notes"])
    if (n.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

}  // namespace specsim::test
