// Discoverability: the top-level help lists the subcommands, --version prints the version, and
// every subcommand's --help exits 0. The subcommands are the command table's (tools/commands.h):
// a new one is checked without editing this file.
#include <catch2/catch.hpp>

#include "commands.h"
#include "test_util.h"

using namespace specsim::test;

TEST_CASE("specsim --help lists every subcommand with its line") {
  REQUIRE(specsim::cli::commands().size() >= 10);
  for (const char* flag : {"--help", "-h", "help"}) {
    const CliResult r = run_specsim({flag});
    INFO(flag);
    CHECK(r.exit_code == 0);
    for (const auto& c : specsim::cli::commands()) {
      INFO(c.name);
      CHECK(r.out.find(std::string("\n  ") + c.name + " ") != std::string::npos);
      CHECK(r.out.find(c.help) != std::string::npos);
    }
  }
}

TEST_CASE("specsim --version prints the version alone") {
  const CliResult r = run_specsim({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("specsim ", 0) == 0);
  CHECK(r.out.find('\n') == r.out.size() - 1);
}

TEST_CASE("every subcommand's --help exits 0 and prints its flags") {
  for (const auto& c : specsim::cli::commands()) {
    const CliResult r = run_specsim({c.name, "--help"});
    INFO(c.name << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--help") != std::string::npos);
    CHECK(r.out.find(std::string("specsim ") + c.name) != std::string::npos);
  }
}

TEST_CASE("an unknown subcommand is one error line and exit 2") {
  const CliResult r = run_specsim({"nosuch"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: unknown command 'nosuch' (run `specsim help` for the list)\n");
  CHECK(r.out.empty());
}
