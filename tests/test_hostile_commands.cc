// Printed commands are code: a command validate prints for the user to paste is quoted for the
// shell, so a case file's value (a model name, a dtype) is one argument and runs nothing.
#include <sstream>

#include "hostile_cases.h"
#include "util/shell_quote.h"
#include "validate/case_run.h"

using namespace specsim::test;

namespace {

// The words bash reads from `command` (its first word replaced by printf), one a line.
std::vector<std::string> words_a_shell_reads(const std::string& command, const std::string& dir) {
  const std::string script = "cd \"$0\" && printf '%s\\0' " + command.substr(command.find(' ') + 1);
  const CliResult r = run_program("/bin/bash", {"-c", script, dir});
  INFO(script << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string w; std::getline(in, w, '\0');) out.push_back(w);
  return out;
}

}  // namespace

TEST_CASE("commands: validate's printed command is quoted for the shell, whatever the case file holds") {
  const std::string dir = fresh_dir();
  const std::vector<std::string> hostile = {
      "llama-3.1-8b; touch pwned",
      "$(touch pwned)",
      "`touch pwned`",
      "a'b\"c",
      "two words",
      "*",
      "line\nbreak; touch pwned",
      "back\\slash",
      "~",
      "x|touch pwned",
      "&& touch pwned",
      "",
  };
  for (const auto& v : hostile) {
    count_cases();
    specsim::PublishedCase c;
    c.zoo_model = v, c.zoo_gpu = "h200", c.zoo_topology = v, c.dtype = v, c.tp = 1, c.batch_size = 1;
    c.algorithm = "EAGLE3", c.accept_length = 2.0;
    std::string why;
    const auto run = specsim::case_run(c, why, specsim::CaseAcceptance::Stated);
    REQUIRE(run);
    const std::string cmd = specsim::case_run_command(*run);
    INFO(cmd);
    CHECK(cmd.find('\n') == std::string::npos);  // one line
    const auto words = words_a_shell_reads(cmd, dir);
    std::vector<std::string> expected = {"run"};
    expected.insert(expected.end(), run->flags.begin(), run->flags.end());
    CHECK(words == expected);
    CHECK_FALSE(exists(dir + "/pwned"));
  }
  CHECK(specsim::shell_quote("llama-3.1-8b") == "llama-3.1-8b");  // plain words stay readable
  CHECK(specsim::shell_quote("h200:nvswitch") == "h200:nvswitch");
}
