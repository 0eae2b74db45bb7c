// Pipeline parallelism (--pp-size): the stack's stage split, the stage hand-off's ops and bytes,
// the send priced by hand, the memory of a stage, the micro-batch, and the CLI.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/nccl_p2p.h"
#include "plan/cycle_plan.h"
#include "plan/pipeline_plan.h"
#include "scenario/hardware.h"
#include "scenario/memory_fit.h"
#include "scenario/model_spec.h"
#include "scenario/paths.h"
#include "scenario/pipeline_stages.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;

namespace {

ModelSpec deepseek_target() {
  return model_from_config(resolve_model_config("deepseek-v3", "--model-path"), "--model-path");
}

RunSpec pp_run(int tp, int pp, int batch) {
  RunSpec r;
  r.tp_size = tp, r.batch_size = batch, r.num_gpus = tp * pp;
  r.algo = SpecAlgo::None;
  r.layout.pp = pp;
  return r;
}

// The decoder layers of a phase in order, cut where a stage boundary sits: layers per stage.
std::vector<int> layers_between_boundaries(const PhasePlan& p) {
  std::vector<int> out{0};
  for (const auto& b : p.blocks) {
    const std::string n = b.name;
    if (n == "pp_stage_boundary") out.push_back(0);
    if (n == "dense_layer" || n == "moe_layer") out.back() += b.repeat;
  }
  return out;
}

}  // namespace

TEST_CASE("stage split: SGLang v0.5.2 gives the last stage the remainder, vLLM v0.11 the stages before it") {
  CHECK(pp_stage_layers(61, 2) == std::vector<int>{30, 31});
  CHECK(pp_stage_layers(61, 4) == std::vector<int>{15, 15, 15, 16});
  CHECK(pp_stage_layers(61, 2, PpSplitRule::VLLM) == std::vector<int>{31, 30});
  CHECK(pp_stage_layers(61, 4, PpSplitRule::VLLM) == std::vector<int>{15, 15, 16, 15});
  // 63 = 4 x 15 + 3: one more to partitions[-2], [-3] and [-4]
  CHECK(pp_stage_layers(63, 4, PpSplitRule::VLLM) == std::vector<int>{16, 16, 16, 15});
  CHECK(pp_stage_layers(80, 4) == std::vector<int>{20, 20, 20, 20});
  CHECK(pp_stage_layers(61, 1) == std::vector<int>{61});
  CHECK_THROWS_AS(pp_stage_layers(3, 4), InputError);
}

TEST_CASE("a stage boundary sends hidden states and residual, 1/tp each, then gathers them on the next stage") {
  const ModelSpec m = deepseek_target();
  const CyclePlan plan = build_plan(m, nullptr, pp_run(8, 2, 1));
  const PhasePlan* b = plan.find(PhaseKind::BaselineDecode);
  REQUIRE(b);
  // 61 layers as 30 + 31, the first stage holding DeepSeek's 3 dense layers
  CHECK(layers_between_boundaries(*b) == std::vector<int>{30, 31});
  CHECK(b->count_of(OpKind::SendRecv) == 2);
  // bs 1: 1 token x 7168 x 2 B (bf16) = 14336 B a tensor; each of 8 ranks sends 1792 B
  CHECK(b->comm_bytes_of(OpKind::SendRecv) == Approx(2 * 1792.0));
  // the all-gathers: the two hand-off gathers of 14336 B beside the logits all-gather
  const CyclePlan plain = build_plan(m, nullptr, pp_run(8, 1, 1));
  const PhasePlan* one = plain.find(PhaseKind::BaselineDecode);
  CHECK(b->count_of(OpKind::AllGather) == one->count_of(OpKind::AllGather) + 2);
  CHECK(b->comm_bytes_of(OpKind::AllGather) - one->comm_bytes_of(OpKind::AllGather) == Approx(2 * 14336.0));
  // the same layers and kernels otherwise: all-reduces unchanged
  CHECK(b->count_of(OpKind::AllReduce) == one->count_of(OpKind::AllReduce));
  CHECK(b->kernels() == one->kernels() + 4);

  const CyclePlan four = build_plan(m, nullptr, pp_run(8, 4, 1));
  CHECK(layers_between_boundaries(*four.find(PhaseKind::BaselineDecode)) == std::vector<int>{15, 15, 15, 16});
  CHECK(four.find(PhaseKind::BaselineDecode)->count_of(OpKind::SendRecv) == 6);
}

TEST_CASE("at tp 1 a stage sends its whole tensors and gathers nothing") {
  const ModelSpec m = model_from_config(resolve_model_config("llama-3.1-8b", "--model-path"), "--model-path");
  const CyclePlan plan = build_plan(m, nullptr, pp_run(1, 2, 1));
  const PhasePlan* b = plan.find(PhaseKind::BaselineDecode);
  REQUIRE(b);
  CHECK(b->count_of(OpKind::SendRecv) == 2);
  CHECK(b->comm_bytes_of(OpKind::SendRecv) == Approx(2 * 4096 * 2.0));
  CHECK(b->count_of(OpKind::AllGather) == 0);
  CHECK(layers_between_boundaries(*b) == std::vector<int>{16, 16});
}

TEST_CASE("the verify forward hands off its draft tokens; the draft runs on the last stage, without sends") {
  const std::string cfg = resolve_model_config("deepseek-v3", "--model-path");
  const ModelSpec m = model_from_config(cfg, "--model-path");
  const ModelSpec d = model_from_config(zoo_draft_config(cfg, true), "draft");
  RunSpec r = pp_run(8, 2, 1);
  r.algo = SpecAlgo::NextN, r.num_steps = 2, r.topk = 1, r.num_draft_tokens = 3;
  const CyclePlan plan = build_plan(m, &d, r);
  const PhasePlan* v = plan.find(PhaseKind::Verify);
  REQUIRE(v);
  // 3 tokens x 7168 x 2 B / 8 ranks = 5376 B per rank per tensor
  CHECK(v->comm_bytes_of(OpKind::SendRecv) == Approx(2 * 5376.0));
  CHECK(plan.find(PhaseKind::DraftExtend)->count_of(OpKind::SendRecv) == 0);
  CHECK(plan.find(PhaseKind::DraftDecode)->count_of(OpKind::SendRecv) == 0);
}

TEST_CASE("with several requests a forward is one micro-batch: the batch over pp stages") {
  const ModelSpec m = deepseek_target();
  // batch 8 over 2 stages: forwards of 4 requests, 4 x 7168 x 2 B / 8 ranks a tensor
  const CyclePlan eight = build_plan(m, nullptr, pp_run(8, 2, 8));
  const PhasePlan* b = eight.find(PhaseKind::BaselineDecode);
  CHECK(b->comm_bytes_of(OpKind::SendRecv) == Approx(2 * 4 * 1792.0));
  // batch 5: the larger micro-batch, 3
  const CyclePlan five = build_plan(m, nullptr, pp_run(8, 2, 5));
  const PhasePlan* odd = five.find(PhaseKind::BaselineDecode);
  CHECK(odd->comm_bytes_of(OpKind::SendRecv) == Approx(2 * 3 * 1792.0));
}

TEST_CASE("a send within a node and across nodes, by hand") {
  const NcclSettings s;
  const Hardware one = load_hardware("h200:nvswitch", 8);
  // NCCL ring/Simple base 8.4 us + NVLink hop 3.4 us; 1 MiB at min(370 busbw, 450 link) GB/s
  CHECK(nccl_p2p_us(1048576, false, 8, one, s) == Approx(8.4 + 3.4 + 1048576 / 370e3));
  CHECK(nccl_p2p_us(1792, false, 8, one, s) == Approx(11.8 + 1792 / 370e3));
  CHECK(nccl_p2p_us(0, false, 8, one, s) == 0);
  Hardware ib = load_hardware("h200:nvswitch-ib", 16);
  set_nodes(ib, 2, "--tp-size");
  // base 8.4 + NET ring/Simple hop 14.0 + 2 x 0 (IB leaves the net latency unset); one NIC, 47 GB/s
  CHECK(nccl_p2p_us(1048576, true, 8, ib, s) == Approx(22.4 + 1048576 / 47e3));
  // 16 senders on 8 NICs: half a NIC each
  CHECK(nccl_p2p_us(1048576, true, 16, ib, s) == Approx(22.4 + 1048576 / 23.5e3));
}

TEST_CASE("a boundary crosses nodes where a stage's peer GPU sits on the other node") {
  PpBoundary b;
  b.tokens = 1, b.hidden = 7168, b.tp = 8, b.num_gpus = 16, b.nnodes = 2;
  CHECK(pp_boundary_block(b, 0).ops.front().inter_node);
  b.tp = 4, b.num_gpus = 16;  // 4 stages of 4: stages 0-1 on node 0, 2-3 on node 1
  CHECK_FALSE(pp_boundary_block(b, 0).ops.front().inter_node);
  CHECK(pp_boundary_block(b, 1).ops.front().inter_node);
  CHECK_FALSE(pp_boundary_block(b, 2).ops.front().inter_node);
  b.nnodes = 1;
  CHECK_FALSE(pp_boundary_block(b, 1).ops.front().inter_node);
}

TEST_CASE("memory per stage: the heaviest stage of DeepSeek-V3 on 2 x 8 H100 holds about half the model") {
  const ModelSpec m = deepseek_target();
  Hardware hw = load_hardware("h100-sxm:nvswitch-ib", 16);
  set_nodes(hw, 2, "--tp-size");
  RunSpec whole = pp_run(8, 1, 1);
  const MemoryFit one = memory_fit(m, nullptr, hw, whole, std::nullopt);
  CHECK_FALSE(one.weights_fit());  // ~671 GB of fp8 weights on 8 x 80 GB: no
  CHECK(one.pp_stage == -1);
  const MemoryFit two = memory_fit(m, nullptr, hw, pp_run(8, 2, 1), std::nullopt);
  CHECK(two.weights_fit());
  // the second stage: 31 of 58 MoE layers' experts and 31 of 61 layers' rest, plus the LM head
  CHECK(two.pp_stage == 1);
  CHECK(two.weights_gib > 0.5 * one.weights_gib);
  CHECK(two.weights_gib < 0.56 * one.weights_gib);
  // the KV cache of 31 of 61 layers
  CHECK(two.kv_gib_per_request == Approx(one.kv_gib_per_request * 31.0 / 61.0));
}

TEST_CASE("specsim run --pp-size: the stage sends in the report and JSON; refusals") {
  const auto r =
      test::run_specsim({"run", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch-ib", "--nnodes", "2",
                         "--tp-size", "8", "--pp-size", "2", "--speculative-algorithm", "NONE", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& phases = j["scenarios"][0]["phases"];
  bool seen = false;
  for (const auto& p : phases)
    if (p["name"] == "baseline_decode") {
      seen = true;
      CHECK(p["p2p_count"] == 2);
      // across the nodes: 22.4 us + 1792 B at 47 GB/s, twice
      CHECK(p["p2p_us"].get<double>() == Approx(2 * (22.4 + 1792 / 47e3)));
    }
  CHECK(seen);

  const auto text = test::run_specsim({"run", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch-ib",
                                       "--nnodes", "2", "--tp-size", "8", "--pp-size", "2", "--accept-len", "2.5"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("stage sends") != std::string::npos);
  CHECK(text.out.find("target layers 30/31 by SGLang's rule") != std::string::npos);
  CHECK(text.out.find("SGLang v0.5.2 refuses speculative decoding with --pp-size") != std::string::npos);

  // 16 GPUs on one 8-GPU node
  const auto big = test::run_specsim({"run", "--model-path", "deepseek-v3", "--tp-size", "8", "--pp-size", "2"});
  CHECK(big.exit_code == 2);
  CHECK(big.err.find("16 GPUs do not fit") != std::string::npos);
  // SGLang refuses speculative decoding with pipeline stages
  const auto spec = test::run_specsim({"run", "--hardware", "h200:nvswitch-ib", "--", "python", "-m",
                                       "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8",
                                       "--pp-size", "2", "--nnodes", "2", "--speculative-algorithm", "EAGLE"});
  CHECK(spec.exit_code == 2);
  CHECK(spec.err.find("SGLang v0.5.2 refuses --pp-size 2 with speculative decoding") != std::string::npos);
  // a pasted SGLang command with pipeline stages and plain decoding runs
  const auto plain =
      test::run_specsim({"run", "--hardware", "h200:nvswitch-ib", "--", "python", "-m", "sglang.launch_server",
                         "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--pp-size", "2", "--nnodes", "2"});
  INFO(plain.err);
  CHECK(plain.exit_code == 0);
  // more stages than layers
  const auto many =
      test::run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch-ib", "--nnodes", "8",
                         "--tp-size", "1", "--pp-size", "64", "--speculative-algorithm", "NONE"});
  CHECK(many.exit_code == 2);
  CHECK(many.err.find("pipeline stages") != std::string::npos);
}

TEST_CASE("the 16x H200 MTP case is scored on 2 nodes over InfiniBand with its command's layout") {
  const auto r = test::run_specsim({"validate", "--case", "lmsys-blog-mtp-deepseek-v3-16xh200"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("h200:nvswitch-ib") != std::string::npos);
  CHECK(r.out.find("--nnodes 2") != std::string::npos);
  CHECK(r.out.find("--enable-dp-attention") != std::string::npos);
  CHECK(r.out.find("not predicted") == std::string::npos);
  const auto j = test::run_specsim({"validate", "--json"});
  REQUIRE(j.exit_code == 0);
  int scored = 0;
  const auto all = nlohmann::json::parse(j.out);
  for (const auto& c : all.at("cases")) {
    const std::string id = c.at("id");
    if (id.rfind("lmsys-blog-mtp-deepseek-v3-16xh200", 0) != 0) continue;
    INFO(id);
    CHECK(c.at("skipped").is_null());
    CHECK(c.at("predicted").at("spec_tok_s").get<double>() > 0);
    ++scored;
  }
  CHECK(scored == 2);
}

TEST_CASE("an EAGLE-3 draft whose 56 heads do not divide tp 16 is refused with SGLang's reason") {
  const auto r = test::run_specsim({"run", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch-ib", "--nnodes",
                                    "2", "--tp-size", "16", "--accept-len", "2.5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("draft num_attention_heads (56) is not divisible by tp 16") != std::string::npos);
  CHECK(r.err.find("LlamaAttention") != std::string::npos);
  // the NextN (MTP) draft has the target's 128 heads: it runs at tp 16
  const auto mtp =
      test::run_specsim({"run", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch-ib", "--nnodes", "2",
                         "--tp-size", "16", "--speculative-algorithm", "NEXTN", "--accept-len", "2.5"});
  INFO(mtp.err);
  CHECK(mtp.exit_code == 0);
}

TEST_CASE("--pp-size round-trips through a scenario file, and the GPU replay refuses it") {
  const std::string dir = test::fresh_dir();
  const auto save =
      test::run_specsim({"run", "--model-path", "llama-3.1-70b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "4",
                         "--pp-size", "2", "--speculative-algorithm", "NONE", "--save-scenario", dir + "/s.yaml"});
  INFO(save.err);
  REQUIRE(save.exit_code == 0);
  CHECK(test::slurp(dir + "/s.yaml").find("pp_size") != std::string::npos);
  const auto load = test::run_specsim({"run", "--scenario", dir + "/s.yaml"});
  INFO(load.err);
  REQUIRE(load.exit_code == 0);
  CHECK(load.out.find("layout: tp 4, pp 2 (micro-batch 1)") != std::string::npos);
  const auto replay = test::run_specsim({"replay", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch",
                                         "--tp-size", "1", "--pp-size", "2", "--speculative-algorithm", "NONE"});
  CHECK(replay.exit_code == 2);
  CHECK(replay.err.find("(--pp-size)") != std::string::npos);
}
