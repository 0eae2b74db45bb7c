// SGLang's FlashInfer backend priced as FlashInfer's own kernels (models/kernels/flashinfer_attention.json):
// which attention ops the plan marks (paged prefill for the verify and the draft extend, the custom
// mask's extra, batch decode on CUDA or tensor cores), what they cost, and that a replay's
// prediction prices the replay's own kernel instead.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "broken_model_file.h"
#include "cost/compute_cost.h"
#include "cost/flashinfer_attention_cost.h"
#include "plan/cycle_plan.h"
#include "replay_report/replay_report.h"
#include "scenario/hardware.h"
#include "scenario/paths.h"
#include "scenario/sglang_attention.h"
#include "spec_run.h"
#include "test_util.h"
#include "util/json_io.h"

using namespace specsim;
using specsim::test::kernel_of;
using specsim::test::op_named;
using specsim::test::spec_run;
using specsim::test::zoo_plan;

namespace {

RunSpec eagle3(int topk) {
  RunSpec r = spec_run(1, 1, 5, topk, 6);
  r.algo = SpecAlgo::Eagle3;
  return r;
}

}  // namespace

TEST_CASE("on SGLang's FlashInfer backend the verify and extend run paged prefill, the draft steps batch decode") {
  RunSpec tree = eagle3(3);
  tree.custom_mask_tree = true;
  const CyclePlan p = zoo_plan("llama-3.1-8b", tree);
  CHECK(kernel_of(p, PhaseKind::Verify, "attention") == AttentionKernel::FlashInferPrefill);
  CHECK(kernel_of(p, PhaseKind::Verify, "attention_custom_mask") == AttentionKernel::FlashInferMask);
  CHECK(kernel_of(p, PhaseKind::DraftExtend, "attention") == AttentionKernel::FlashInferPrefill);
  // Llama-3.1-8B's draft: 32 query heads over 8 KV heads, 4 a KV head: CUDA cores
  CHECK(kernel_of(p, PhaseKind::DraftDecode, "attention") == AttentionKernel::FlashInferDecode);
  // plain decode: not FlashInfer's where the chain's backend is not (FA3's is decided apart,
  // RunSpec::fa3_attention, tests/test_fa3_attention.cc; off here)
  CHECK(kernel_of(p, PhaseKind::BaselineDecode, "attention") == AttentionKernel::Roofline);
  // what FlashInfer's price reads: the requests (n) and the query heads a KV head (k), on the
  // verify's pass and on its mask's op alike; a draft step's requests are its branches
  for (const char* name : {"attention", "attention_custom_mask"}) {
    const Op& v = op_named(p, PhaseKind::Verify, name);
    CHECK(v.m == 6);  // one request's 6 draft tokens
    CHECK(v.n == 1);
    CHECK(v.k == 4);  // 32 query heads over 8 KV heads
  }
  CHECK(op_named(p, PhaseKind::DraftDecode, "attention").n == 3);
  CHECK(op_named(p, PhaseKind::DraftExtend, "attention").n == 1);

  RunSpec chain_fi = eagle3(1);
  chain_fi.custom_mask_chain = true;  // a chain's backend is FlashInfer (off Hopper, or named)
  const CyclePlan c = zoo_plan("llama-3.1-8b", chain_fi);
  CHECK(kernel_of(c, PhaseKind::Verify, "attention") == AttentionKernel::FlashInferPrefill);
  CHECK(kernel_of(c, PhaseKind::BaselineDecode, "attention") == AttentionKernel::FlashInferDecode);

  // neither FlashInfer nor FA3 (vLLM, or a GPU SGLang runs other backends on): every attention op
  // priced by the profile
  const CyclePlan fa3 = zoo_plan("llama-3.1-8b", eagle3(1));
  for (PhaseKind k : {PhaseKind::Verify, PhaseKind::DraftExtend, PhaseKind::DraftDecode, PhaseKind::BaselineDecode})
    CHECK(kernel_of(fa3, k, "attention") == AttentionKernel::Roofline);
}

TEST_CASE("FlashInfer decodes on tensor cores past four query heads a KV head, as SGLang picks") {
  // Qwen3-30B-A3B: 32 query heads over 4 KV heads (8 a KV head)
  RunSpec plain = spec_run(1, 4, 1, 1, 1);
  plain.algo = SpecAlgo::None;
  plain.custom_mask_chain = true;
  CHECK(kernel_of(zoo_plan("qwen3-30b-a3b", plain), PhaseKind::BaselineDecode, "attention") ==
        AttentionKernel::FlashInferDecodeTc);
  CHECK(kernel_of(zoo_plan("llama-3.1-8b", plain), PhaseKind::BaselineDecode, "attention") ==
        AttentionKernel::FlashInferDecode);
  // an fp8 KV cache decodes on tensor cores whatever the group
  plain.kv_cache_bytes = 1;
  CHECK(kernel_of(zoo_plan("llama-3.1-8b", plain), PhaseKind::BaselineDecode, "attention") ==
        AttentionKernel::FlashInferDecodeTc);
}

TEST_CASE("FlashInfer's query tile follows its CUDA-graph plan: 16, 64 or 128 rows") {
  CHECK(flashinfer_query_tile(1, 4, 4) == 16);     // 4 x 4 = 16 packed rows
  CHECK(flashinfer_query_tile(1, 16, 4) == 64);    // 64
  CHECK(flashinfer_query_tile(1, 16, 8) == 128);   // 128
  CHECK(flashinfer_query_tile(4, 64, 1) == 64);    // (64 - 4 + 1) x 1 = 61
  CHECK(flashinfer_query_tile(16, 64, 8) == 128);  // the plan sizes for the longest request it allows
}

TEST_CASE("FlashInfer's kernels cost their measured terms; the custom mask its time beyond the causal pass") {
  // the shipped coefficients, read here apart from the engine's reader
  const nlohmann::json j = read_json_file(models_dir() + "/kernels/flashinfer_attention.json");
  auto term = [&](const char* kernel, const char* name) {
    return j[kernel]["terms"].contains(name) ? j[kernel]["terms"][name].get<double>() : 0.0;
  };
  const Hardware h200 = load_hardware("h200:nvswitch", 1), h100 = load_hardware("h100-sxm:nvswitch", 1);
  // One request's 16-token verify layer of Llama-3.1-8B (4 query heads a KV head): a 64-row tile,
  // no padding; 16 MB of KV, 2 GFLOP.
  Op op;
  op.kind = OpKind::Attention;
  op.m = 16, op.n = 1, op.k = 4, op.bytes = 16e6, op.flops = 2e9;
  const double roofline = compute_us(op, h200.gpu);
  auto linear = [&](const char* kernel, double mb, double gflop) {
    return term(kernel, "fixed_us") + term(kernel, "fixed_us_tile64") + term(kernel, "us_per_mb") * mb +
           term(kernel, "us_per_gflop") * gflop + term(kernel, "us_per_padded_gflop") * gflop +
           term(kernel, "us_per_token") * 16;
  };
  op.attention_kernel = AttentionKernel::FlashInferPrefill;
  const double prefill = compute_us(op, h200.gpu);
  CHECK(prefill == Approx(linear("prefill", 16, 2)));
  CHECK(prefill > roofline);  // FlashInfer's prefill pays about 9 us fixed, the replay's kernel about 3
  // another GPU: the byte term at its bandwidth, the FLOP term at its peak
  const double bw = 4800 / h100.gpu.mem_bw_gbps, pk = 989.4 / h100.gpu.peak_bf16_tflops;
  CHECK(compute_us(op, h100.gpu) == Approx(linear("prefill", 16 * bw, 2 * pk)));
  op.attention_kernel = AttentionKernel::FlashInferDecode;
  CHECK(compute_us(op, h200.gpu) == Approx(linear("decode", 16, 2)));
  op.attention_kernel = AttentionKernel::FlashInferDecodeTc;
  CHECK(compute_us(op, h200.gpu) == Approx(linear("decode_tc", 16, 2)));

  // the mask op carries (factor - 1) x the pass's work; it costs custom(pass) - causal(pass)
  const double s = flashinfer_custom_mask_factor();
  Op mask = op;
  mask.attention_kernel = AttentionKernel::FlashInferMask;
  mask.bytes = op.bytes * (s - 1), mask.flops = op.flops * (s - 1);
  const double extra = compute_us(mask, h200.gpu);
  CHECK(extra > 0);
  CHECK(prefill + extra == Approx(linear("custom", 16, 2)));
  // two 16-token requests of 8 query heads a KV head: a 128-row tile padded from 128 rows, none
  Op two = mask;
  two.m = 32, two.n = 2, two.k = 8;
  CHECK(compute_us(two, h200.gpu) > extra);  // the larger tile's fixed cost

  // a stack kernel switched off: the profile's roofline, whatever the mark
  GpuProfile off = h200.gpu;
  off.price_stack_attention = false;
  op.attention_kernel = AttentionKernel::FlashInferPrefill;
  CHECK(compute_us(op, off) == Approx(roofline));
}

TEST_CASE("a replay's prediction prices the replay's own attention kernel, not FlashInfer's") {
  RunSpec tree = eagle3(3);
  tree.custom_mask_tree = true;
  const CyclePlan p = zoo_plan("llama-3.1-8b", tree);
  const Hardware hw = load_hardware("h200:nvswitch", 1);
  PhasePlan verify_attention = *p.find(PhaseKind::Verify);
  for (auto& b : verify_attention.blocks) std::erase_if(b.ops, [](const Op& o) { return o.kind != OpKind::Attention; });
  double stack = 0, roofline = 0;
  GpuProfile off = hw.gpu;
  off.price_stack_attention = false;
  for (const auto& b : verify_attention.blocks)
    for (const auto& o : b.ops) stack += b.repeat * compute_us(o, hw.gpu), roofline += b.repeat * compute_us(o, off);
  REQUIRE(stack != Approx(roofline));
  const PhaseTiming replayed = predict_replayed_phase(verify_attention, hw, tree);
  Hardware hw_off = hw;
  hw_off.gpu.price_stack_attention = false;
  CHECK(replayed.us == Approx(predict_replayed_phase(verify_attention, hw_off, tree).us));
  // the replayed phase: the roofline ops plus the graph launch and kernel gaps, never FlashInfer's
  CHECK(replayed.us < stack);
  CHECK(replayed.us > roofline);
}

TEST_CASE("a broken flashinfer_attention.json is refused in one line, exit 2, no output file") {
  const test::BrokenModelFile f("kernels/flashinfer_attention.json");
  // a Llama tree on one H200: SGLang's FlashInfer path, so the file is read
  const std::vector<std::string> tree = {"run",
                                         "--model-path",
                                         "llama-3.1-8b",
                                         "--hardware",
                                         "h200:nvswitch",
                                         "--speculative-algorithm",
                                         "EAGLE3",
                                         "--speculative-num-steps",
                                         "3",
                                         "--speculative-eagle-topk",
                                         "2",
                                         "--speculative-num-draft-tokens",
                                         "4",
                                         "--accept-len",
                                         "2"};
  f.check_refused([](nlohmann::json& j) { j["custom"]["terms"]["us_per_parsec"] = 1.0; }, tree);  // unknown term
  f.check_refused([](nlohmann::json& j) { j["prefill"]["terms"]["fixed_us"] = -1.0; }, tree);
  f.check_refused([](nlohmann::json& j) { j["decode"]["terms"] = nlohmann::json::object(); }, tree);
  f.check_refused([](nlohmann::json& j) { j.erase("decode_tc"); }, tree);
  f.check_refused([](nlohmann::json& j) { j["reference_mem_bw_gbps"]["value"] = 0; }, tree);
  // the shipped file, put back, runs
  f.restore();
  CHECK(f.run({"run", "--model-path", "llama-3.1-8b", "--speculative-algorithm", "EAGLE3", "--speculative-eagle-topk",
               "2", "--accept-len", "2"})
            .exit_code == 0);
}
