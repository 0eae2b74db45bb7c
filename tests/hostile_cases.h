#pragma once
// The bad-input contract checked case by case: exit 2, one `error:` line that names the flag,
// file or field to fix, nothing on stdout, and (where the case says so) no file written.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace specsim::test {

/// One hostile invocation: its arguments and a piece of text the error line must hold.
struct BadCase {
  std::vector<std::string> args;
  std::string mentions;
};

/// Runs every case and checks the contract; `program` "" means specsim.
inline void expect_bad_input(const std::vector<BadCase>& cases, const std::string& program = "") {
  for (const auto& c : cases) {
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    INFO("args: " << shown);
    const CliResult r = program.empty() ? run_specsim(c.args) : run_program(program, c.args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(c.mentions) != std::string::npos);
  }
}

}  // namespace specsim::test
