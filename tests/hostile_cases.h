#pragma once
// The bad-input contract checked case by case: exit 2, one `error:` line that names the flag,
// file or field to fix, nothing on stdout, and (where the case says so) no file written.
// Every case run is tallied per class (the test's name up to its colon); with
// SPECSIM_CASE_COUNTS=FILE set the tallies are appended to FILE at exit, which
// tools/count_hostile_cases.sh sums into the counts of docs/reliability.md.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"

namespace specsim::test {

/// Cases run per class; written out at exit when SPECSIM_CASE_COUNTS names a file.
struct CaseCounts {
  std::map<std::string, int> by_class;
  ~CaseCounts() {
    if (const char* path = std::getenv("SPECSIM_CASE_COUNTS")) {
      std::ofstream out(path, std::ios::app);
      for (const auto& [name, n] : by_class) out << n << '\t' << name << '\n';
    }
  }
};
inline CaseCounts g_case_counts;

/// Counts `n` hostile cases for the running test's class.
inline void count_cases(int n = 1) {
  const std::string test = Catch::getResultCapture().getCurrentTestName();
  const std::string prefix = test.substr(0, test.find(':'));
  static const std::map<std::string, std::string> kClass = {{"plot", "gnuplot injection"},
                                                            {"json", "deep or odd JSON"},
                                                            {"resources", "resources"},
                                                            {"outputs", "output files"},
                                                            {"numbers", "numbers"},
                                                            {"check", "check baselines"},
                                                            {"check --replay", "check baselines"},
                                                            {"logs", "logs"},
                                                            {"arbench", "other binaries"},
                                                            {"attnbench", "other binaries"},
                                                            {"mpi launcher", "other binaries"},
                                                            {"fits", "degenerate fits"},
                                                            {"real logs", "real data kept"},
                                                            {"inputs kept", "inputs kept whole"},
                                                            {"scenario files", "scenario files"},
                                                            {"commands", "printed commands"},
                                                            {"streams", "streams and values"},
                                                            {"file names", "non-UTF-8 file names"}};
  const auto it = kClass.find(prefix);
  g_case_counts.by_class[it == kClass.end() ? prefix : it->second] += n;
}

/// One hostile invocation: its arguments and a piece of text the error line must hold.
struct BadCase {
  std::vector<std::string> args;
  std::string mentions;
};

/// Runs every case and checks the contract; `program` "" means specsim.
inline void expect_bad_input(const std::vector<BadCase>& cases, const std::string& program = "") {
  count_cases(static_cast<int>(cases.size()));
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

/// Whether gnuplot is on the PATH, for a test that needs it. Without it the test fails where
/// CI=true (CI installs gnuplot: its absence there is a broken job, not a skip), and elsewhere says
/// SKIP with the reason and returns false.
inline bool gnuplot_or_skip(const std::string& what) {
  if (run_program("/bin/sh", {"-c", "command -v gnuplot"}).exit_code == 0) return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true")
    FAIL("gnuplot is not installed, and CI=true: CI installs it (apt-get install gnuplot-nox); " << what);
  WARN("SKIP: gnuplot is not installed (apt-get install gnuplot-nox); " << what << " not run");
  return false;
}

}  // namespace specsim::test
