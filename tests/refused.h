#pragma once
// `specsim ARGS` refused as bad input: exit 2, one `error: ` line holding `text`. Shared by the
// CLI tests of refusals.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace specsim::test {

inline void check_refused(const std::vector<std::string>& args, const std::string& text) {
  const CliResult r = run_specsim(args);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find(text) != std::string::npos);
}

}  // namespace specsim::test
