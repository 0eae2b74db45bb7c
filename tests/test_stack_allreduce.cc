// The serving stacks' own all-reduce (--allreduce sglang|vllm): the path each pinned release
// takes per GPU, world and size, the NCCL fallback and what the report says of it.
#include <catch2/catch.hpp>

#include "cost/allreduce_model.h"
#include "cost/stack_allreduce.h"
#include "scenario/hardware.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using Kind = StackPath::Kind;

namespace {

struct Box {
  Hardware hw;
  NcclSettings nccl;
  AllReduceChoice choice;
  Box(const std::string& spec, const std::string& backend)
      : hw(load_hardware(spec, 8)), choice(parse_allreduce(backend)) {}
  AllReduceQuery q(double bytes, int world, bool graph = true) const {
    return AllReduceQuery{bytes, world, graph, &hw, &nccl, &choice};
  }
};

}  // namespace

TEST_CASE("SGLang: one-shot below 256 KB at 8 ranks on NVLink, two-shot above, NCCL past its 8 MiB buffer") {
  const Box b("h100-sxm:nvswitch", "sglang");
  CHECK(stack_path(Stack::Sglang, b.q(43008, 8)).kind == Kind::OneShot);
  CHECK(stack_path(Stack::Sglang, b.q(300 * 1024, 8)).kind == Kind::TwoShot);
  CHECK(stack_path(Stack::Sglang, b.q(300 * 1024, 4)).kind == Kind::OneShot);  // 512 KB bound at <= 4 ranks
  CHECK(stack_path(Stack::Sglang, b.q(600 * 1024, 4)).kind == Kind::TwoShot);
  const StackPath big = stack_path(Stack::Sglang, b.q(8192.0 * 1024, 8));
  CHECK(big.kind == Kind::Nccl);
  CHECK(big.why.find("limit") != std::string::npos);
  CHECK(stack_path(Stack::Sglang, b.q(43008, 3)).kind == Kind::Nccl);  // worlds 2, 4, 6, 8 only
}

TEST_CASE("SGLang on more than two PCIe GPUs falls back to NCCL, priced as NCCL with its anchors") {
  const Box b("rtx-pro-6000:pcie-numa", "sglang");
  const StackPath p = stack_path(Stack::Sglang, b.q(43008, 8));
  CHECK(p.kind == Kind::Nccl);
  CHECK(p.why.find("more than two PCIe-only GPUs") != std::string::npos);
  const AllReduceModel& m = allreduce_model(b.choice);
  const AllReduceModel& nccl = allreduce_model(parse_allreduce("nccl"));
  CHECK(m.time_us(b.q(43008, 8)) == Approx(nccl.time_us(b.q(43008, 8))));
  CHECK(m.nccl_anchored(b.q(43008, 8)));
  CHECK(m.describe(b.q(43008, 8)).find("falls back to NCCL") != std::string::npos);
  // two PCIe GPUs keep the custom kernel (one stage)
  if (b.hw.gpu.p2p && b.hw.topo.peer_access) {
    CHECK(stack_path(Stack::Sglang, b.q(43008, 2)).kind == Kind::OneShot);
    CHECK_FALSE(m.nccl_anchored(b.q(43008, 2)));
  }
}

TEST_CASE("the stack's custom kernel: eager calls pay the copy into the IPC buffer, graphs do not") {
  const Box b("h100-sxm:nvswitch", "sglang");
  const AllReduceModel& m = allreduce_model(b.choice);
  CHECK(m.time_us(b.q(43008, 8, false)) > m.time_us(b.q(43008, 8, true)));
  CHECK(m.host_us(b.q(43008, 8, false)) == Approx(2 * b.hw.gpu.host_launch_us));
  CHECK(m.describe(b.q(43008, 8, true)).find("registered at capture") != std::string::npos);
}

TEST_CASE("--disable-custom-all-reduce: SGLang goes to NCCL, vLLM keeps torch symmetric memory") {
  const Box s("h100-sxm:nvswitch", "sglang:disable-custom");
  const StackPath p = stack_path(Stack::Sglang, s.q(43008, 8));
  CHECK(p.kind == Kind::Nccl);
  CHECK(p.why == "--disable-custom-all-reduce");
  const Box v("h100-sxm:nvswitch", "vllm:disable-custom");
  CHECK(stack_path(Stack::Vllm, v.q(43008, 8)).kind == Kind::SymmMemMultimem);
  const Box bad("h100-sxm:nvswitch", "sglang:fast");
  CHECK(allreduce_model(bad.choice).refusal(bad.q(43008, 8)).find("unknown argument") != std::string::npos);
}

TEST_CASE("vLLM: symmetric memory caps the custom kernel by compute capability and world") {
  const Box h("h100-sxm:nvswitch", "vllm");  // 9.0: custom below 256 KiB at 8 ranks, then multimem
  CHECK(stack_path(Stack::Vllm, h.q(200 * 1024, 8)).kind == Kind::OneShot);
  CHECK(stack_path(Stack::Vllm, h.q(300 * 1024, 8)).kind == Kind::SymmMemMultimem);
  CHECK(stack_path(Stack::Vllm, h.q(300 * 1024, 2)).kind == Kind::OneShot);        // 64 MiB cap at 2 ranks
  CHECK(stack_path(Stack::Vllm, h.q(100.0 * 1024 * 1024, 8)).kind == Kind::Nccl);  // past symm mem's 64 MiB
  const Box bw("b200:nvswitch", "vllm");  // 10.0: 1 MiB cap at 8 ranks, multimem at 6-8 ranks
  CHECK(stack_path(Stack::Vllm, bw.q(600 * 1024, 8)).kind == Kind::TwoShot);
  CHECK(stack_path(Stack::Vllm, bw.q(2.0 * 1024 * 1024, 8)).kind == Kind::SymmMemMultimem);
  CHECK(stack_path(Stack::Vllm, bw.q(3.0 * 1024 * 1024, 4)).kind == Kind::SymmMemTwoShot);
  const Box pcie("rtx-pro-6000:pcie-numa", "vllm");  // no multicast, no full NVLink: NCCL
  CHECK(stack_path(Stack::Vllm, pcie.q(43008, 8)).kind == Kind::Nccl);
}

TEST_CASE("specsim run --allreduce sglang on 8x H100 NVLink and on 8x RTX PRO 6000 PCIe") {
  // DeepSeek-V3's 671 GB of fp8 weights do not fit 8x 80 GB: Llama-3.1-70B on the H100 box, DeepSeek on H200.
  for (const auto& [model, hw] : std::vector<std::pair<std::string, std::string>>{
           {"llama-3.1-70b", "h100-sxm:nvswitch"}, {"deepseek-v3", "h200:nvswitch"}}) {
    const CliResult nv = run_specsim({"run", "--accept-len", "2.5", "--model-path", model, "--hardware", hw,
                                      "--tp-size", "8", "--allreduce", "sglang"});
    INFO(nv.err);
    REQUIRE(nv.exit_code == 0);
    CHECK(nv.out.find("== all-reduce: sglang (SGLang custom one-shot at") != std::string::npos);
  }
  const CliResult pcie = run_specsim({"run", "--accept-len", "2.5", "--model-path", "deepseek-v3", "--hardware",
                                      "rtx-pro-6000:pcie-numa", "--tp-size", "8", "--allreduce", "sglang"});
  INFO(pcie.err);
  REQUIRE(pcie.exit_code == 0);
  CHECK(pcie.out.find("SGLang falls back to NCCL: SGLang turns its custom all-reduce off on more than two PCIe-only "
                      "GPUs") != std::string::npos);
}

TEST_CASE("--disable-custom-all-reduce: the stack's row turns to NCCL (SGLang) or symm-mem (vLLM), said") {
  const std::vector<std::string> base{
      "run", "--accept-len", "2.5", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size",
      "8"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_specsim(a);
  };
  const CliResult d = with({"--disable-custom-all-reduce"});  // default backends: nccl and custom
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("== all-reduce: nccl (") != std::string::npos);
  CHECK(d.out.find("the stack's own all-reduce is off, so it runs NCCL: the nccl row") != std::string::npos);
  const CliResult s = with({"--allreduce", "sglang", "--disable-custom-all-reduce"});
  REQUIRE(s.exit_code == 0);
  CHECK(s.out.find("SGLang falls back to NCCL: --disable-custom-all-reduce") != std::string::npos);
  const CliResult v = with({"--runtime", "vllm", "--allreduce", "vllm", "--disable-custom-all-reduce"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  CHECK(v.out.find("== all-reduce: vllm:disable-custom (vLLM torch symm-mem") != std::string::npos);
}

TEST_CASE("the built-in scenario through SGLang's own all-reduce keeps its NCCL anchors") {
  const CliResult r = run_specsim({"--allreduce", "sglang"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("falls back to NCCL") != std::string::npos);
  CHECK(r.out.find("tok/s: baseline 89.5, EAGLE3 54.1") != std::string::npos);
}

TEST_CASE("the GPUs of 2026 run: B200, B300, GB200 NVL72, H20") {
  for (const auto& [model, hw] : std::vector<std::pair<std::string, std::string>>{{"deepseek-v3", "b200:nvswitch"},
                                                                                  {"deepseek-v3", "b300:nvswitch"},
                                                                                  {"deepseek-v3", "gb200:nvl72"},
                                                                                  {"llama-3.1-70b", "h20:nvswitch"}}) {
    const CliResult r =
        run_specsim({"run", "--accept-len", "2.5", "--model-path", model, "--hardware", hw, "--tp-size", "8"});
    INFO(hw << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("8x " + hw.substr(0, hw.find(':'))) != std::string::npos);
  }
}
