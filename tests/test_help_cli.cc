// Discoverability: the top-level help lists the subcommands, --version prints the version, and
// every subcommand's --help exits 0.
#include <catch2/catch.hpp>

#include "test_util.h"

using namespace specsim::test;

TEST_CASE("specsim --help lists every subcommand with one line each") {
  for (const char* flag : {"--help", "-h", "help"}) {
    const CliResult r = run_specsim({flag});
    INFO(flag);
    CHECK(r.exit_code == 0);
    for (const char* c : {"run", "bench", "replay", "sweep", "check", "calibrate", "ingest"})
      CHECK(r.out.find(std::string("\n  ") + c + " ") != std::string::npos);
  }
}

TEST_CASE("specsim --version prints the version alone") {
  const CliResult r = run_specsim({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("specsim ", 0) == 0);
  CHECK(r.out.find('\n') == r.out.size() - 1);
}

TEST_CASE("every subcommand's --help exits 0 and prints its flags") {
  for (const char* c : {"run", "bench", "replay", "sweep", "check", "calibrate", "ingest"}) {
    const CliResult r = run_specsim({c, "--help"});
    INFO(c << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--help") != std::string::npos);
  }
}
