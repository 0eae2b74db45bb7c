// The other binaries: specsim-arbench and specsim-attnbench follow the command line's contract
// (one `error:` line, exit 2 on bad flags, --help exit 0 without a GPU); the MPI launcher is
// detected from a consistent size and rank, not one inherited variable.
#include <cstdlib>

#include "hostile_cases.h"
#include "util/mpi_launcher.h"

using namespace specsim::test;

TEST_CASE("arbench: bad flags are one error line and exit 2; --help exit 0") {
#ifndef SPECSIM_ARBENCH_BIN
  WARN("skipped: specsim-arbench was not built here (needs nvcc and NCCL)");
#else
  const std::string bin = SPECSIM_ARBENCH_BIN;
  const auto help = run_program(bin, {"--help"});
  count_cases();
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--datatype") != std::string::npos);
  expect_bad_input({{{"--bogus"}, "--bogus"},
                    {{"-d", "int9"}, "unknown datatype"},
                    {{"-n", "0"}, "-n must be"},
                    {{"-w", "-1"}, "-w in"},
                    {{"--mode", "lazy"}, "--mode"},
                    {{"--timeout-ms", "nan"}, "--timeout-ms"},
                    {{"-f", "inf"}, "finite"},
                    {{"--virtual-ranks", "1"}, "--virtual-ranks"},
                    {{"-g", "0"}, "-g must be"},
                    {{"-n", "abc"}, "--iters"},
                    {{"--sizes", "1x,2"}, "bad size '1x'"},
                    {{"--variant", "one-shot-ll,three-shot"}, "unknown variant 'three-shot' (--variant)"},
                    {{"--ll-threads", "48"}, "--ll-threads"}},
                   bin);
#endif
}

TEST_CASE("attnbench: takes flags; bad ones are one error line and exit 2; --help and --list need no GPU") {
#ifndef SPECSIM_ATTNBENCH_BIN
  WARN("skipped: specsim-attnbench was not built here (needs nvcc)");
#else
  const std::string bin = SPECSIM_ATTNBENCH_BIN;
  const auto help = run_program(bin, {"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--iters") != std::string::npos);
  const auto list = run_program(bin, {"--list", "--only", "deepseek"});
  count_cases(2);  // --help and --list without a GPU
  CHECK(list.exit_code == 0);
  CHECK(std::count(list.out.begin(), list.out.end(), '\n') == 3);
  expect_bad_input({{{"--bogus"}, "--bogus"},
                    {{"--iters", "0"}, "--iters"},
                    {{"--iters", "x"}, "--iters"},
                    {{"--only", "no-such-shape"}, "--only"},
                    {{"extra"}, "extra"}},
                   bin);
#endif
}

namespace {

// Sets the variables for the scope of a test and restores the environment after.
struct Env {
  std::vector<std::string> names;
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* n :
         {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "SLURM_NTASKS"})
      ::unsetenv(n);
    for (const auto& [n, v] : vars) ::setenv(n, v, 1), names.push_back(n);
  }
  ~Env() {
    for (const auto& n : names) ::unsetenv(n.c_str());
  }
};

}  // namespace

TEST_CASE("mpi launcher: one inherited variable does not make a launcher") {
  {
    Env e{{"PMI_RANK", "3"}};
    CHECK_FALSE(specsim::mpi_launcher_place());
    // Before, `replay --mpi` with a stray PMI_RANK exited 2 without a word (as a silent rank 3).
    expect_bad_input({{{"replay", "--mpi", "--bogus"}, "--bogus"}});
  }
  {
    Env e{{"PMIX_RANK", "1"}};
    CHECK_FALSE(specsim::mpi_launcher_place());
  }
  {
    Env e{{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "5"}};
    CHECK_FALSE(specsim::mpi_launcher_place());
  }
  {
    Env e{{"PMI_SIZE", "four"}, {"PMI_RANK", "0"}};
    CHECK_FALSE(specsim::mpi_launcher_place());
  }
  {
    Env e{{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "1"}};
    const auto p = specsim::mpi_launcher_place();
    REQUIRE(p);
    CHECK(p->rank == 1);
    CHECK(p->size == 4);
  }
  {
    Env e{{"SLURM_NTASKS", "2"}, {"PMIX_RANK", "0"}};
    CHECK(specsim::mpi_launcher_place());
  }
}
