// The zoo's 2026 targets and GPUs: gpt-oss-120b/20b (MXFP4 experts, sliding-window attention),
// GLM-4.7 with its MTP layer, AMD MI300X/MI325X/MI355X over xGMI. Counts are computed by hand from
// the config.json widths and the profiles' figures.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/stack_allreduce.h"
#include "plan/cycle_plan.h"
#include "scenario/hardware.h"
#include "scenario/memory_fit.h"
#include "scenario/model_spec.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::test;

namespace {

ModelSpec zoo_model(const std::string& name) {
  return model_from_config(resolve_model_config(name, "--model-path"), "--model-path");
}

const OpBlock* find_block(const PhasePlan& p, const std::string& name) {
  for (const auto& b : p.blocks)
    if (name == b.name) return &b;
  return nullptr;
}

const Op* find_in(const OpBlock& b, const std::string& name) {
  for (const auto& o : b.ops)
    if (name == o.name) return &o;
  return nullptr;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

TEST_CASE("gpt-oss-120b: widths, alternating sliding layers and 116.8B parameters counted by hand") {
  const ModelSpec m = zoo_model("gpt-oss-120b");
  CHECK(m.arch == Arch::GptOss);
  CHECK(m.hidden == 2880);
  CHECK(m.layers == 36);
  CHECK(m.heads == 64);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 64);
  CHECK(m.moe.routed_experts == 128);
  CHECK(m.moe.experts_per_token == 4);
  CHECK(m.moe.intermediate == 2880);
  CHECK(m.moe.shared_experts == 0);
  CHECK(m.moe.first_dense_layers == 0);
  CHECK(m.sliding_window == 128);
  CHECK(m.sliding_layers == 18);  // layer_types: sliding, full, sliding, ...
  CHECK(m.attention_sinks);
  // quantization_config: mxfp4 experts; self_attn, router, embeddings, lm_head not converted.
  CHECK(m.weight_dtype == DType::BF16);
  CHECK(m.experts_dtype() == DType::MXFP4);
  // Per layer: q (64 x 64) + k, v (8 x 64 each) from 2880, o back to 2880; 128 experts of gate, up,
  // down (3 x 2880 x 2880); embedding and LM head 201088 x 2880 each.
  const double attn = 2880.0 * (64 + 2 * 8) * 64 + 64.0 * 64 * 2880;  // 26,542,080
  const double experts = 128.0 * 3 * 2880 * 2880;                     // 3,185,049,600
  const double emb = 2.0 * 201088 * 2880;                             // 1,158,266,880
  CHECK(m.param_count() == Approx(36 * (attn + experts) + emb));
  CHECK(m.param_count() == Approx(116.7756e9).epsilon(1e-5));
}

TEST_CASE("gpt-oss-20b: 24 layers of 32 experts, 20.9B parameters") {
  const ModelSpec m = zoo_model("gpt-oss-20b");
  CHECK(m.layers == 24);
  CHECK(m.moe.routed_experts == 32);
  CHECK(m.sliding_layers == 12);
  const double per_layer = 2880.0 * 80 * 64 + 64.0 * 64 * 2880 + 32.0 * 3 * 2880 * 2880;
  CHECK(m.param_count() == Approx(24 * per_layer + 2.0 * 201088 * 2880));
  CHECK(m.param_count() == Approx(20.9056e9).epsilon(1e-4));
}

TEST_CASE("gpt-oss-120b MXFP4 memory fit on one H100: 60.7 GiB of weights, windowed KV, by hand") {
  const ModelSpec m = zoo_model("gpt-oss-120b");
  const Hardware hw = load_hardware("h100-sxm:nvswitch", 1);
  RunSpec run;
  run.tp_size = 1, run.algo = SpecAlgo::None, run.context_len = 8192, run.batch_size = 1;
  const MemoryFit f = memory_fit(m, nullptr, hw, run, 0.9);
  // Experts: 36 x 128 x 3 x 2880^2 weights at 4 bits + one e8m0 scale per 32 = 0.53125 B each;
  // attention (36 x 26,542,080) and embedding + LM head (1,158,266,880) at 2 B.
  const double expert_bytes = 36.0 * 128 * 3 * 2880 * 2880 * (0.5 + 1.0 / 32);  // 60,914,073,600
  const double other_bytes = (36.0 * 26542080 + 1158266880) * 2;                // 4,227,563,520
  CHECK(f.weights_gib == Approx((expert_bytes + other_bytes) / kGiB));
  CHECK(f.weights_gib == Approx(60.667).epsilon(1e-4));
  // KV per token and layer: 2 (K, V) x 8 heads x 64 x 2 B = 2048 B; 18 full layers hold 8192
  // tokens, 18 sliding layers the window's 128.
  CHECK(f.kv_gib_per_request == Approx((18.0 * 8192 + 18.0 * 128) * 2048 / kGiB));
  CHECK(f.fits());
  // bf16 weights (--dtype bf16) would not: 116.8B x 2 B = 217 GiB.
  run.dtype = DType::BF16;
  CHECK_FALSE(memory_fit(m, nullptr, hw, run, 0.9).weights_fit());
}

TEST_CASE("gpt-oss sliding-window layers read 128 tokens of KV, the full layers the whole context") {
  const ModelSpec m = zoo_model("gpt-oss-120b");
  RunSpec r;
  r.algo = SpecAlgo::None;
  r.tp_size = 1, r.batch_size = 1, r.context_len = 8192;
  r.allreduce = {parse_allreduce("nccl")};
  const CyclePlan plan = build_plan(m, nullptr, r);
  const PhasePlan* base = plan.find(PhaseKind::BaselineDecode);
  REQUIRE(base);
  const OpBlock* swa = find_block(*base, "moe_layer_sliding");
  const OpBlock* full = find_block(*base, "moe_layer");
  REQUIRE(swa);
  REQUIRE(full);
  CHECK(swa->repeat == 18);
  CHECK(full->repeat == 18);
  const Op* a_swa = find_in(*swa, "attention");
  const Op* a_full = find_in(*full, "attention");
  REQUIRE(a_swa);
  REQUIRE(a_full);
  // KV read (tokens x 2048 B) plus q in and out (2 x 64 heads x 64 x 2 B = 16384 B).
  CHECK(a_swa->bytes == Approx(128.0 * 2048 + 16384));
  CHECK(a_full->bytes == Approx(8192.0 * 2048 + 16384));
  // Below the window both kinds read the whole context.
  r.context_len = 100;
  const CyclePlan short_plan = build_plan(m, nullptr, r);
  const PhasePlan* sb = short_plan.find(PhaseKind::BaselineDecode);
  REQUIRE(sb);
  CHECK(find_in(*find_block(*sb, "moe_layer_sliding"), "attention")->bytes ==
        Approx(find_in(*find_block(*sb, "moe_layer"), "attention")->bytes));
}

TEST_CASE("gpt-oss EAGLE-3 drafts: SpecForge's Llama layer, draft vocab 32000") {
  for (const char* name : {"gpt-oss-120b/eagle3", "gpt-oss-20b/eagle3"}) {
    const ModelSpec d = zoo_model(name);
    CHECK(d.arch == Arch::LlamaEagle3);
    CHECK(d.hidden == 2880);
    CHECK(d.intermediate == 17280);
    CHECK(d.draft_vocab == 32000);
    CHECK(d.vocab == 201088);
  }
}

TEST_CASE("glm-4.7: GQA + 160 routed experts and one fused shared expert, 3 dense layers; its MTP layer") {
  const ModelSpec m = zoo_model("glm-4.7");
  CHECK(m.arch == Arch::Glm4Moe);
  CHECK(m.hidden == 5120);
  CHECK(m.layers == 92);
  CHECK(m.heads == 96);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.moe.routed_experts == 160);
  CHECK(m.moe.shared_experts == 1);
  CHECK(m.moe.fuse_shared);
  CHECK(m.moe.first_dense_layers == 3);
  CHECK(m.sliding_layers == 0);
  const double attn = 5120.0 * (96 + 2 * 8) * 128 + 96.0 * 128 * 5120;  // 136,314,880
  const double dense = 3.0 * 5120 * 12288;                              // 188,743,680
  const double moe = 161.0 * 3 * 5120 * 1536;                           // 3,798,466,560
  const double emb = 2.0 * 151552 * 5120;
  CHECK(m.param_count() == Approx(92 * attn + 3 * dense + 89 * moe + emb));
  CHECK(m.param_count() == Approx(352.72e9).epsilon(1e-4));
  const ModelSpec d = zoo_model("glm-4.7/nextn");
  CHECK(d.arch == Arch::Glm4MoeNextN);
  CHECK(d.is_nextn());
  CHECK(d.layers == 1);
  CHECK(d.moe.first_dense_layers == 0);
}

TEST_CASE("specsim run: gpt-oss-120b on H200 and B200, glm-4.7 with its NextN draft") {
  const CliResult h200 = run_specsim({"run", "--model-path", "gpt-oss-120b", "--hardware", "h200:nvswitch", "--tp-size",
                                      "4", "--speculative-algorithm", "EAGLE3", "--accept-len", "2.4"});
  INFO(h200.err);
  REQUIRE(h200.exit_code == 0);
  CHECK(h200.out.find("mxfp4 (experts; attention bf16)") != std::string::npos);
  CHECK(h200.out.find("gpt-oss-120b/eagle3") != std::string::npos);
  const CliResult b200 = run_specsim({"run", "--model-path", "gpt-oss-120b", "--hardware", "b200:nvswitch", "--tp-size",
                                      "4", "--speculative-algorithm", "NONE"});
  INFO(b200.err);
  CHECK(b200.exit_code == 0);
  const CliResult small = run_specsim({"run", "--model-path", "gpt-oss-20b", "--hardware", "h100-sxm:nvswitch",
                                       "--tp-size", "1", "--speculative-algorithm", "EAGLE3", "--accept-len", "2.4"});
  INFO(small.err);
  CHECK(small.exit_code == 0);
  const CliResult glm = run_specsim({"run", "--model-path", "glm-4.7", "--hardware", "h200:nvswitch", "--tp-size", "8",
                                     "--speculative-algorithm", "NEXTN", "--accept-len", "2.5"});
  INFO(glm.err);
  REQUIRE(glm.exit_code == 0);
  CHECK(glm.out.find("Glm4MoeForCausalLMNextN") != std::string::npos);
}

TEST_CASE("AMD MI300X/MI325X/MI355X over xGMI run; RCCL beside SGLang's ROCm all-reduce by default") {
  for (const std::string gpu : {"mi300x", "mi325x", "mi355x"}) {
    const CliResult r = run_specsim(
        {"run", "--model-path", "llama-3.1-70b", "--hardware", gpu + ":xgmi", "--tp-size", "8", "--accept-len", "2.5"});
    INFO(gpu << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("8x " + gpu + " on xgmi (xGMI") != std::string::npos);
    CHECK(r.out.find("== all-reduce: nccl") != std::string::npos);
    CHECK(r.out.find("== all-reduce: sglang (SGLang custom one-shot at") != std::string::npos);
    CHECK(r.out.find("ROCm kernel over xGMI") != std::string::npos);
  }
  const Hardware mi355x = load_hardware("mi355x:xgmi", 8);
  CHECK(mi355x.gpu.amd);
  CHECK(mi355x.gpu.peak_tflops(DType::MXFP4) == Approx(10066.3));
  CHECK(mi355x.link_bw_gbps() == Approx(537.6));
}

TEST_CASE("--allreduce sglang|vllm on MI300X: the ROCm gates and sizes; this project's kernel refused") {
  const Hardware hw = load_hardware("mi300x:xgmi", 8);
  const NcclSettings nccl;
  const AllReduceChoice sg = parse_allreduce("sglang"), vl = parse_allreduce("vllm");
  auto q = [&](double bytes, const AllReduceChoice& c) { return AllReduceQuery{bytes, 8, true, &hw, &nccl, &c}; };
  CHECK(stack_path(Stack::Sglang, q(43008, sg)).kind == StackPath::Kind::OneShot);
  // SGLang doubles its buffer on ROCm (16 MiB); vLLM keeps 8 MiB and has no symmetric memory there.
  CHECK(stack_path(Stack::Sglang, q(12.0 * 1024 * 1024, sg)).kind == StackPath::Kind::TwoShot);
  CHECK(stack_path(Stack::Vllm, q(12.0 * 1024 * 1024, vl)).kind == StackPath::Kind::Nccl);
  CHECK(stack_path(Stack::Vllm, q(43008, vl)).kind == StackPath::Kind::OneShot);

  const CliResult sglang = run_specsim({"run", "--model-path", "llama-3.1-70b", "--hardware", "mi300x:xgmi",
                                        "--tp-size", "8", "--accept-len", "2.5", "--allreduce", "sglang"});
  INFO(sglang.err);
  REQUIRE(sglang.exit_code == 0);
  CHECK(sglang.out.find("SGLang custom one-shot at") != std::string::npos);
  CHECK(sglang.out.find("its ROCm kernel over xGMI, priced on the topology's peer figures (a guess") !=
        std::string::npos);
  const CliResult custom = run_specsim({"run", "--model-path", "llama-3.1-70b", "--hardware", "mi300x:xgmi",
                                        "--tp-size", "8", "--accept-len", "2.5", "--allreduce", "custom"});
  CHECK(custom.exit_code == 2);
  CHECK(custom.err.find("does not run on ROCm") != std::string::npos);
  // An AMD GPU on an NVLink topology, an NVIDIA GPU on xGMI: refused.
  const CliResult wrong = run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "mi300x:nvswitch"});
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("xgmi") != std::string::npos);
  const CliResult wrong2 = run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h200:xgmi"});
  CHECK(wrong2.exit_code == 2);
  CHECK(wrong2.err.find("has no xGMI") != std::string::npos);
}

TEST_CASE("gpt-oss configs: a layer_types list of the wrong length or an unknown type is refused by name") {
  nlohmann::json cfg = nlohmann::json::parse(slurp(models_path("gpt-oss-20b/config.json")));
  cfg["layer_types"].erase(0);
  try {
    model_from_json(cfg, "", "cfg");
    FAIL("accepted 23 layer types for 24 layers");
  } catch (const InputError& e) {
    CHECK(e.where() == "cfg: layer_types");
  }
  cfg["layer_types"].push_back("chunked_attention");
  try {
    model_from_json(cfg, "", "cfg");
    FAIL("accepted chunked_attention");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("chunked_attention") != std::string::npos);
  }
  // Without layer_types every other layer from the first slides, as transformers' GptOssConfig builds them.
  cfg.erase("layer_types");
  CHECK(model_from_json(cfg, "", "cfg").sliding_layers == 12);
}
