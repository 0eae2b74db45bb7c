#pragma once
// `specsim ARGS --json`, required to succeed, parsed: shared by the CLI tests that read the report.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace specsim::test {

inline nlohmann::json run_json(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.push_back("--json");
  const CliResult r = run_specsim(a);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace specsim::test
