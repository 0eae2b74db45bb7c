// SGLang's FA3 backend priced as FA3's own paged-KV kernel (models/kernels/fa3_attention.json):
// when SGLang runs FA3, which attention ops the plan marks, what they cost, which shapes keep the
// profile's terms, and that a broken price file is refused.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "broken_model_file.h"
#include "cost/compute_cost.h"
#include "cost/fa3_attention_cost.h"
#include "engine/op_cost.h"
#include "engine/phase_timer.h"
#include "plan/cycle_plan.h"
#include "scenario/hardware.h"
#include "scenario/paths.h"
#include "scenario/resolve.h"
#include "spec_run.h"
#include "test_util.h"
#include "util/json_io.h"

using namespace specsim;
using specsim::test::kernel_of;
using specsim::test::op_named;
using specsim::test::spec_run;
using specsim::test::zoo_plan;

namespace {

// The resolved run of `model` on `hardware` under SGLang, with `extra` (key, value) pairs: runtime,
// attention_backend, tp.
RunSpec fa3_test_resolved(const std::string& model, const std::string& hardware,
                          const std::vector<std::string>& extra = {}) {
  RunArgs a;
  a.model_path = model;
  a.hardware = hardware;
  a.accept_len = 2.0;
  for (std::size_t i = 0; i + 1 < extra.size(); i += 2) {
    if (extra[i] == "runtime") a.runtime = extra[i + 1];
    if (extra[i] == "attention_backend") a.attention_backend = extra[i + 1];
    if (extra[i] == "tp") a.tp_size = std::stoi(extra[i + 1]);
  }
  return resolve_scenario(a).run;
}

/// `specsim run` of DeepSeek-V3's MTP chain at TP 8 on H200s: SGLang's FA3 MLA path.
std::vector<std::string> fa3_test_mla_command() {
  return {"run",
          "--model-path",
          "deepseek-v3",
          "--tp-size",
          "8",
          "--hardware",
          "h200:nvswitch",
          "--speculative-algorithm",
          "NEXTN",
          "--accept-len",
          "2"};
}

RunSpec fa3_test_chain() {
  RunSpec r = spec_run(1, 1, 3, 1, 4);
  r.algo = SpecAlgo::Eagle3;
  return r;
}

}  // namespace

TEST_CASE("SGLang runs FA3 on Hopper for an MHA model where its FA3 list or the command says so, and for MLA models") {
  CHECK(fa3_test_resolved("llama-3.1-8b", "h200:nvswitch").fa3_attention);
  CHECK(fa3_test_resolved("qwen3-30b-a3b", "h100-sxm:nvswitch").fa3_attention);
  CHECK(fa3_test_resolved("llama-3.1-8b", "h200:nvswitch", {"attention_backend", "fa3"}).fa3_attention);
  // MLA models: FA3 on Hopper by default (model_runner.py) or named
  CHECK(fa3_test_resolved("deepseek-v3", "h200:nvswitch", {"tp", "8"}).fa3_attention);
  CHECK(fa3_test_resolved("kimi-k2", "h200:nvswitch", {"tp", "8", "attention_backend", "fa3"}).fa3_attention);
  // named FlashInfer, another GPU generation, AMD, vLLM, gpt-oss: not this kernel
  CHECK_FALSE(fa3_test_resolved("llama-3.1-8b", "h200:nvswitch", {"attention_backend", "flashinfer"}).fa3_attention);
  CHECK_FALSE(
      fa3_test_resolved("deepseek-v3", "h200:nvswitch", {"tp", "8", "attention_backend", "flashinfer"}).fa3_attention);
  CHECK_FALSE(fa3_test_resolved("llama-3.1-8b", "b200:nvswitch").fa3_attention);
  CHECK_FALSE(fa3_test_resolved("deepseek-v3", "b200:nvswitch", {"tp", "8"}).fa3_attention);
  CHECK_FALSE(fa3_test_resolved("deepseek-v3", "mi300x:xgmi", {"tp", "8"}).fa3_attention);
  CHECK_FALSE(fa3_test_resolved("llama-3.1-8b", "a100-sxm:nvswitch").fa3_attention);
  CHECK_FALSE(fa3_test_resolved("llama-3.1-8b", "h200:nvswitch", {"runtime", "vllm"}).fa3_attention);
  CHECK_FALSE(fa3_test_resolved("deepseek-v3", "h200:nvswitch", {"tp", "8", "runtime", "vllm"}).fa3_attention);
  CHECK_FALSE(fa3_test_resolved("gpt-oss-20b", "h200:nvswitch").fa3_attention);
}

TEST_CASE("on SGLang's FA3 backend every phase of a chain runs FA3's kernel; a tree's draft phases FlashInfer's") {
  RunSpec chain = fa3_test_chain();
  chain.fa3_attention = true;
  const CyclePlan c = zoo_plan("llama-3.1-8b", chain);
  for (PhaseKind k : {PhaseKind::DraftDecode, PhaseKind::Verify, PhaseKind::DraftExtend, PhaseKind::BaselineDecode})
    CHECK(kernel_of(c, k, "attention") == AttentionKernel::Fa3);
  // what the price reads: requests (n), query heads a KV head (k), query tokens (m)
  const Op& v = op_named(c, PhaseKind::Verify, "attention");
  CHECK(v.m == 4);
  CHECK(v.n == 1);
  CHECK(v.k == 4);                                                 // 32 query heads over 8 KV heads
  CHECK(op_named(c, PhaseKind::DraftExtend, "attention").m == 4);  // steps + 1

  // a tree (SGLang's default: FlashInfer with a custom mask) keeps FlashInfer's kernels for the
  // speculative phases; plain decode stays on FA3, the server's backend without speculation
  RunSpec tree = spec_run(1, 1, 3, 3, 6);
  tree.algo = SpecAlgo::Eagle3;
  tree.fa3_attention = true, tree.custom_mask_tree = true;
  const CyclePlan t = zoo_plan("llama-3.1-8b", tree);
  CHECK(kernel_of(t, PhaseKind::Verify, "attention") == AttentionKernel::FlashInferPrefill);
  CHECK(kernel_of(t, PhaseKind::DraftDecode, "attention") == AttentionKernel::FlashInferDecode);
  CHECK(kernel_of(t, PhaseKind::BaselineDecode, "attention") == AttentionKernel::Fa3);

  // an fp8 KV cache: the measured kernel with the cache's own bytes (an assumption; before, the
  // profile's terms priced it 4.6x cheaper on DeepSeek); a head dim it was not measured at (64,
  // gpt-oss) keeps the profile's terms
  RunSpec fp8 = chain;
  fp8.kv_cache_bytes = 1;
  CHECK(kernel_of(zoo_plan("llama-3.1-8b", fp8), PhaseKind::Verify, "attention") == AttentionKernel::Fa3);
  RunSpec plain = spec_run(1, 1, 1, 1, 1);
  plain.algo = SpecAlgo::None;
  plain.fa3_attention = true;
  CHECK(kernel_of(zoo_plan("gpt-oss-20b", plain), PhaseKind::BaselineDecode, "attention") == AttentionKernel::Roofline);
}

TEST_CASE("FA3's kernel costs its measured terms, scaled to another GPU's bandwidth and peak") {
  // the shipped coefficients and reference GPU, read here apart from the engine's reader
  const nlohmann::json j = read_json_file(models_dir() + "/kernels/fa3_attention.json");
  const auto& terms = j["fa3"]["terms"];
  auto price = [&](double mb, double gflop) {
    return terms["fixed_us"].get<double>() + terms["us_per_mb"].get<double>() * mb +
           terms["us_per_gflop"].get<double>() * gflop;
  };
  const double ref_bw = j["reference_mem_bw_gbps"]["value"].get<double>();
  const double ref_tflops = j["reference_bf16_tflops"]["value"].get<double>();
  const Hardware h200 = load_hardware("h200:nvswitch", 1), h20 = load_hardware("h20:nvswitch", 1);
  // one request's 4-token verify layer of Llama-3.1-8B over 8k cached tokens: 34 MB of KV, 0.54 GFLOP
  Op op;
  op.kind = OpKind::Attention;
  op.m = 4, op.n = 1, op.k = 4, op.bytes = 34e6, op.flops = 0.54e9;
  const double roofline = compute_us(op, h200.gpu);
  op.attention_kernel = AttentionKernel::Fa3;
  const double fa3 = compute_us(op, h200.gpu);
  CHECK(fa3 == Approx(price(34, 0.54)));
  CHECK(fa3 == Approx(fa3_attention_us(op, h200.gpu)));
  // measured 21.6 us at this shape (traces/attnbench/fa3-kernels-h200-2026-12-03/fa3-kernels.log);
  // the profile's terms (the replay's own kernel) give about 3.3 us + 34 MB at 3.4 TB/s
  CHECK(fa3 == Approx(21.6).epsilon(0.1));
  CHECK(fa3 > roofline);
  // the H20: less bandwidth than the H200 and a sixth of its bf16 peak, so both terms scale
  const double bw = ref_bw / h20.gpu.mem_bw_gbps, pk = ref_tflops / h20.gpu.peak_bf16_tflops;
  REQUIRE(pk > 2);
  CHECK(compute_us(op, h20.gpu) == Approx(price(34 * bw, 0.54 * pk)));
  // the replay's prediction (price_stack_attention off): the profile's roofline
  GpuProfile off = h200.gpu;
  off.price_stack_attention = false;
  CHECK(compute_us(op, off) == Approx(roofline));
}

TEST_CASE("an MLA model's attention on SGLang's FA3 backend is FA3's absorbed MLA call, its merge inside it") {
  // DeepSeek-V3's MTP chain at TP 8: 16 query heads a rank over the one latent KV head
  RunSpec chain = spec_run(8, 1, 3, 1, 4);
  chain.algo = SpecAlgo::NextN;
  chain.fa3_attention = true;
  const CyclePlan c = zoo_plan("deepseek-v3", chain);
  for (PhaseKind k : {PhaseKind::Verify, PhaseKind::BaselineDecode}) {
    CHECK(kernel_of(c, k, "mla_attention") == AttentionKernel::Fa3Mla);
    CHECK(kernel_of(c, k, "mla_split_merge") == AttentionKernel::Fa3Mla);
  }
  // the zoo's EAGLE-3 draft for it (MHA, head dim 128) runs the same backend: FA3's paged-KV kernel
  for (PhaseKind k : {PhaseKind::DraftDecode, PhaseKind::DraftExtend})
    CHECK(kernel_of(c, k, "attention") == AttentionKernel::Fa3);
  // its NextN draft (one MLA layer) the absorbed call; a tree's prefix pass too (the tree's own
  // second pass keeps the profile's terms)
  const std::string cfg = resolve_model_config("deepseek-v3", "--model-path");
  const ModelSpec target = model_from_config(cfg, "--model-path");
  const ModelSpec nextn = model_from_config(zoo_draft_config(cfg, true), "draft");
  REQUIRE(nextn.has_mla);
  for (PhaseKind k : {PhaseKind::DraftDecode, PhaseKind::DraftExtend})
    CHECK(kernel_of(build_plan(target, &nextn, chain), k, "mla_attention") == AttentionKernel::Fa3Mla);
  RunSpec tree = spec_run(8, 1, 3, 2, 6);
  tree.algo = SpecAlgo::NextN;
  tree.fa3_attention = true, tree.fa3_tree_attention = true;
  const CyclePlan t = build_plan(target, &nextn, tree);
  for (PhaseKind k : {PhaseKind::DraftDecode, PhaseKind::Verify}) {
    CHECK(kernel_of(t, k, "mla_attention") == AttentionKernel::Fa3Mla);
    CHECK(kernel_of(t, k, "tree_attention") == AttentionKernel::Roofline);
  }
  const Op& v = op_named(c, PhaseKind::Verify, "mla_attention");
  CHECK(v.m == 4);
  CHECK(v.n == 1);
  CHECK(v.k == 16);
  // the profile's terms where FA3 is not the backend; an fp8 KV cache takes the measured call
  RunSpec other = chain;
  other.fa3_attention = false;
  CHECK(kernel_of(zoo_plan("deepseek-v3", other), PhaseKind::Verify, "mla_attention") == AttentionKernel::Roofline);
  CHECK(kernel_of(zoo_plan("deepseek-v3", other), PhaseKind::Verify, "mla_split_merge") == AttentionKernel::Roofline);
  RunSpec fp8 = chain;
  fp8.kv_cache_bytes = 1;
  CHECK(kernel_of(zoo_plan("deepseek-v3", fp8), PhaseKind::Verify, "mla_attention") == AttentionKernel::Fa3Mla);
  {  // with fewer bytes to read, a little faster, not the profile's terms' 4.6x
    const Hardware h200 = load_hardware("h200:nvswitch", 8);
    const CyclePlan pb = zoo_plan("deepseek-v3", chain), p8 = zoo_plan("deepseek-v3", fp8);
    const double bf16_us = compute_us(op_named(pb, PhaseKind::Verify, "mla_attention"), h200.gpu);
    const double fp8_us = compute_us(op_named(p8, PhaseKind::Verify, "mla_attention"), h200.gpu);
    CHECK(fp8_us < bf16_us);
    CHECK(fp8_us > 0.9 * bf16_us);
  }

  // the price: the JSON's fa3_mla terms, read here apart from the engine's reader
  const nlohmann::json j = read_json_file(models_dir() + "/kernels/fa3_attention.json");
  const auto& terms = j["fa3_mla"]["terms"];
  const Hardware h200 = load_hardware("h200:nvswitch", 8);
  const double mb = v.bytes / 1e6, gflop = v.flops / 1e9;
  // one request's 4-token verify over the context the plan gives (2048 by default): 2.36 MB of
  // latent cache and 0.14 MB of query and output, 0.29 GFLOP (QK over 576, PV over 512)
  REQUIRE(mb == Approx(2.50).epsilon(0.01));
  REQUIRE(gflop == Approx(0.285).epsilon(0.01));
  const double fa3_mla = compute_us(v, h200.gpu);
  CHECK(fa3_mla == Approx(terms["fixed_us"].get<double>() + terms["us_per_mb"].get<double>() * mb +
                          terms["us_per_gflop"].get<double>() * gflop));
  // measured 18.73 us at this shape (traces/attnbench/fa3-mla-kernels-h200-2026-12-03/fa3-mla-kernels.log)
  CHECK(fa3_mla == Approx(18.73).epsilon(0.1));
  // the replay's prediction (price_stack_attention off): the profile's terms, and the merge kernel
  GpuProfile off = h200.gpu;
  off.price_stack_attention = false;
  Op roofline = v;
  roofline.attention_kernel = AttentionKernel::Roofline;
  CHECK(compute_us(v, off) == Approx(compute_us(roofline, h200.gpu)));
  const RunSpec resolved = fa3_test_resolved("deepseek-v3", "h200:nvswitch", {"tp", "8"});
  Hardware replayed = h200;
  replayed.gpu.price_stack_attention = false;
  const CostContext stack{&h200, &resolved, AllReduceChoice{}, Anchors{}, 8},
      replay{&replayed, &resolved, AllReduceChoice{}, Anchors{}, 8};
  const Op& merge = op_named(c, PhaseKind::Verify, "mla_split_merge");
  CHECK(fused_away(merge, stack));  // FA3's measured call includes its combine kernel
  CHECK_FALSE(fused_away(merge, replay));
  CHECK_FALSE(fused_away(v, stack));
  // so a verify on FA3 launches one kernel a layer fewer than the replay's, and its other
  // (elementwise) time leaves out the merge's cost on each of the 61 layers
  const PhasePlan& ver = *c.find(PhaseKind::Verify);
  const PhaseTiming on_fa3 = time_phase(ver, stack), replayed_ver = time_phase(ver, replay);
  CHECK(replayed_ver.kernels - on_fa3.kernels == 61);
  CHECK(replayed_ver.other_us - on_fa3.other_us == Approx(61 * compute_us(merge, h200.gpu)));
}

TEST_CASE("run says where FA3's measured price applies, and where its shape keeps the profile's terms") {
  // a chain on one H200 unless `extra` names a top-k or the hardware
  auto notes = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run",
                                     "--model-path",
                                     "llama-3.1-8b",
                                     "--speculative-algorithm",
                                     "EAGLE3",
                                     "--speculative-num-steps",
                                     "3",
                                     "--speculative-num-draft-tokens",
                                     "4",
                                     "--accept-len",
                                     "2"};
    for (const auto& [flag, value] : {std::pair<std::string, std::string>{"--speculative-eagle-topk", "1"},
                                      std::pair<std::string, std::string>{"--hardware", "h200:nvswitch"}})
      if (std::find(extra.begin(), extra.end(), flag) == extra.end()) args.insert(args.end(), {flag, value});
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_specsim(args);
    REQUIRE(r.exit_code == 0);
    return r.out + r.err;
  };
  CHECK(notes({}).find("FA3 backend (every phase) is priced as FA3's paged-KV kernel") != std::string::npos);
  CHECK(notes({"--kv-cache-dtype", "fp8_e4m3"})
            .find("FA3 backend (every phase) is priced as FA3's paged-KV kernel measured on an H200 "
                  "(models/kernels/fa3_attention.json) (assumption: over this run's 1-byte KV cache, the measured "
                  "2-byte call with the cache's own bytes") != std::string::npos);
  CHECK(notes({"--speculative-eagle-topk", "2"}).find("FA3 backend (plain decode)") != std::string::npos);
  CHECK(notes({"--hardware", "b200:nvswitch"}).find("FA3 backend") == std::string::npos);
  CHECK(notes({"--runtime", "vllm"}).find("FA3 backend") == std::string::npos);
  // named FA3 off Hopper is not FA3's measured kernel (FA3 runs on Hopper only)
  CHECK_FALSE(fa3_test_resolved("llama-3.1-8b", "b200:nvswitch", {"attention_backend", "fa3"}).fa3_attention);
  // an MLA model: its absorbed call, or the profile's terms for a shape not measured
  auto mla_notes = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = fa3_test_mla_command();
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_specsim(args);
    REQUIRE(r.exit_code == 0);
    return r.out + r.err;
  };
  CHECK(mla_notes({}).find("MLA attention on SGLang's FA3 backend is priced as FA3's absorbed MLA call") !=
        std::string::npos);
  CHECK(mla_notes({"--kv-cache-dtype", "fp8_e4m3"})
            .find("measured on an H200 (models/kernels/fa3_attention.json, fa3_mla) (assumption: over this run's "
                  "1-byte KV cache") != std::string::npos);
  CHECK(mla_notes({"--attention-backend", "flashinfer"}).find("FA3 backend") == std::string::npos);
  // the NextN draft is an MLA layer; an EAGLE-3 draft's MHA attention takes the head-dim-128 price
  CHECK(mla_notes({}).find("the draft's MHA attention") == std::string::npos);
  const auto eagle = test::run_specsim({"run", "--model-path", "deepseek-v3", "--tp-size", "8", "--hardware",
                                        "h200:nvswitch", "--speculative-algorithm", "EAGLE3", "--accept-len", "2"});
  REQUIRE(eagle.exit_code == 0);
  CHECK((eagle.out + eagle.err).find("the draft's MHA attention as FA3's paged-KV kernel") != std::string::npos);
}

TEST_CASE("a broken fa3_attention.json is refused in one line, exit 2, no output file") {
  const test::BrokenModelFile f("kernels/fa3_attention.json");
  // a Llama chain on one H200: SGLang's FA3 path, so the file is read
  const std::vector<std::string> chain = {"run",        "--model-path",  "llama-3.1-8b",
                                          "--hardware", "h200:nvswitch", "--speculative-algorithm",
                                          "EAGLE3",     "--accept-len",  "2"};
  f.check_refused([](nlohmann::json& j) { j["fa3"]["terms"]["us_per_parsec"] = 1.0; }, chain);  // unknown term
  f.check_refused([](nlohmann::json& j) { j["fa3"]["terms"]["fixed_us"] = -1.0; }, chain);
  f.check_refused([](nlohmann::json& j) { j["fa3"]["terms"] = nlohmann::json::object(); }, chain);
  f.check_refused([](nlohmann::json& j) { j.erase("fa3"); }, chain);
  f.check_refused([](nlohmann::json& j) { j["reference_bf16_tflops"]["value"] = 0; }, chain);
  f.check_refused([](nlohmann::json& j) { j["measured_head_dim"]["value"] = 0; }, chain);
  f.check_refused([](nlohmann::json& j) { j.erase("fa3_mla"); }, chain);
  f.check_refused([](nlohmann::json& j) { j["fa3_mla"]["terms"]["us_per_gflop"] = -0.5; }, chain);
  // an MLA model reads its measured shape
  const std::vector<std::string> mla = fa3_test_mla_command();
  f.check_refused([](nlohmann::json& j) { j.erase("measured_mla_latent_dim"); }, mla);
  f.check_refused([](nlohmann::json& j) { j["measured_mla_rope_dim"]["value"] = -64; }, mla);
  // the shipped file, put back, runs
  f.restore();
  CHECK(f.run(chain).exit_code == 0);
  CHECK(f.run(mla).exit_code == 0);
}
