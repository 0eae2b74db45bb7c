// TP across nodes from the command line: the pasted SGLang multi-node command on a cluster
// topology, the report's node layout, NCCL's network terms in the all-reduce, and the refusals.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kDeepSeek16 = {"python",
                                              "-m",
                                              "sglang.launch_server",
                                              "--model-path",
                                              "deepseek-ai/DeepSeek-V3",
                                              "--tp",
                                              "16",
                                              "--nnodes",
                                              "2",
                                              "--node-rank",
                                              "0",
                                              "--dist-init-addr",
                                              "10.0.0.1:5000"};

CliResult paste(const std::vector<std::string>& flags, const std::vector<std::string>& command) {
  std::vector<std::string> args = {"run", "--accept-len", "2"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return run_specsim(args);
}

}  // namespace

TEST_CASE("SGLang's 2-node --tp 16 command runs on h200:nvswitch-ib as 2 nodes x 8") {
  const CliResult r = paste({"--hardware", "h200:nvswitch-ib"}, kDeepSeek16);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("16x h200 (2 nodes x 8) on nvswitch-ib") != std::string::npos);
  CHECK(r.out.find("across 2 nodes") != std::string::npos);  // NCCL's pair, named with the network

  const CliResult j = paste({"--json", "--hardware", "h200:nvswitch-ib"}, kDeepSeek16);
  REQUIRE(j.exit_code == 0);
  const json out = json::parse(j.out);
  CHECK(out["hardware"]["num_gpus"] == 16);
  CHECK(out["hardware"]["num_nodes"] == 2);

  // The scenario file keeps the node count (key nnodes) and runs the same.
  const std::string dir = fresh_dir(), saved = dir + "/s.json";
  const CliResult save = paste({"--hardware", "h200:nvswitch-ib", "--save-scenario", saved}, kDeepSeek16);
  REQUIRE(save.exit_code == 0);
  CHECK(json::parse(slurp(saved))["settings"]["nnodes"] == 2);
  const CliResult again = run_specsim({"run", "--scenario", saved});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("(2 nodes x 8)") != std::string::npos);

  // The same cluster over RoCE is no faster (a slower NIC, the same NCCL latencies).
  const CliResult roce = paste({"--json", "--hardware", "h200:nvswitch-roce"}, kDeepSeek16);
  REQUIRE(roce.exit_code == 0);
}

TEST_CASE("--nnodes: refused on a one-node topology, with an uneven split, and for the custom kernel") {
  const CliResult box = paste({"--hardware", "h200:nvswitch"}, kDeepSeek16);
  CHECK(box.exit_code == 2);
  CHECK(box.err.find("error: topology nvswitch is one node") != std::string::npos);
  CHECK(box.err.find("(--nnodes)") != std::string::npos);
  CHECK(box.out.empty());

  const CliResult odd = run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch-ib",
                                     "--tp-size", "3", "--nnodes", "2", "--accept-len", "2"});
  CHECK(odd.exit_code == 2);
  CHECK(odd.err.find("do not split evenly over 2 nodes (--nnodes)") != std::string::npos);

  const CliResult custom =
      run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch-ib", "--tp-size", "4",
                   "--nnodes", "2", "--allreduce", "custom", "--accept-len", "2"});
  CHECK(custom.exit_code == 2);
  CHECK(custom.err.find("does not span nodes") != std::string::npos);
  CHECK(custom.err.find("--nnodes 2") != std::string::npos);

  // The stack's own all-reduce across nodes is NCCL, as SGLang runs it.
  const CliResult stack =
      run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch-ib", "--tp-size", "4",
                   "--nnodes", "2", "--allreduce", "sglang", "--accept-len", "2"});
  INFO(stack.err);
  CHECK(stack.exit_code == 0);
  CHECK(stack.out.find("needs every rank on one node") != std::string::npos);
}
