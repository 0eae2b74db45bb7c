// Inputs through a pipe: a model config or a hardware profile given as `<(...)` or /dev/stdin is
// read (once, and kept for the run's later reads), as a file would be.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

using nlohmann::json;
using namespace specsim::test;

namespace {

// Runs `specsim ARGS` through bash so process substitution and pipes work.
CliResult bash_specsim(const std::string& args) { return run_program("/bin/bash", {"-c", specsim_bin() + " " + args}); }

double tok_s(const std::string& out) { return json::parse(out)["scenarios"][0]["spec"]["tok_per_s"].get<double>(); }

}  // namespace

TEST_CASE("a model config and a hardware profile through pipes read as the files would") {
  const std::string cfg = models_path("llama-3.1-8b/config.json");
  const std::string common =
      " --tp-size 1 --accept-len 2 --allreduce nccl --speculative-algorithm EAGLE3 "
      "--speculative-draft-model-path llama-3.1-8b/eagle3 --json";
  const CliResult file = bash_specsim("run --model-path " + cfg + " --hardware h100-sxm:nvswitch" + common);
  REQUIRE(file.exit_code == 0);
  const CliResult piped = bash_specsim("run --model-path <(cat " + cfg + ") --hardware h100-sxm:nvswitch" + common);
  INFO(piped.err);
  REQUIRE(piped.exit_code == 0);
  CHECK(tok_s(piped.out) == Approx(tok_s(file.out)));
  const CliResult stdin_cfg =
      bash_specsim("run --model-path /dev/stdin --hardware h100-sxm:nvswitch" + common + " < " + cfg);
  INFO(stdin_cfg.err);
  REQUIRE(stdin_cfg.exit_code == 0);
  CHECK(tok_s(stdin_cfg.out) == Approx(tok_s(file.out)));
}

TEST_CASE("an empty pipe is refused naming it, not taken for a missing zoo name") {
  const CliResult r = bash_specsim("run --model-path <(true) --hardware h100-sxm:nvswitch --tp-size 1 --accept-len 2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/dev/fd/") != std::string::npos);
  CHECK(r.err.find("zoo model") == std::string::npos);
}
