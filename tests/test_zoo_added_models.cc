// Zoo models added for the published cases: Qwen3-30B-A3B (MoE) with two EAGLE-3 drafts,
// Llama-2-7B with its EAGLE draft and Qwen3-8B with its EAGLE-3 draft. Counts are computed by hand from the config.json
// widths.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "plan/cycle_plan.h"
#include "scenario/model_spec.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;

namespace {

ModelSpec load(const std::string& zoo_rel) {
  return model_from_config(resolve_model_config(test::models_path(zoo_rel + "/config.json"), "--model-path"),
                           "--model-path");
}

// Summed bytes and distinct experts of every MoE GEMM in one forward of a phase, layer repeats counted.
struct MoeTraffic {
  double bytes = 0, experts = 0;
  int ops = 0;
};
MoeTraffic moe_traffic(const PhasePlan& p) {
  MoeTraffic t;
  for (const auto& b : p.blocks)
    for (const auto& o : b.ops)
      if (o.kind == OpKind::MoeGemm)
        t.bytes += b.repeat * o.bytes, t.experts += b.repeat * o.experts, t.ops += b.repeat;
  return t;
}

}  // namespace

TEST_CASE("qwen3-30b-a3b: widths from its config and 30.5B parameters counted by hand") {
  const ModelSpec m = load("qwen3-30b-a3b");
  CHECK(m.arch == Arch::Qwen3Moe);
  CHECK(m.hidden == 2048);
  CHECK(m.layers == 48);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 4);
  CHECK(m.head_dim == 128);
  CHECK(m.moe.routed_experts == 128);
  CHECK(m.moe.experts_per_token == 8);
  CHECK(m.moe.intermediate == 768);
  CHECK(m.moe.shared_experts == 0);
  // Per layer: q (32 x 128) + k, v (4 x 128 each) from 2048, o back to 2048; 128 experts of
  // gate, up, down (3 x 2048 x 768); embedding and LM head 151936 x 2048 each.
  const double attn = 2048.0 * (32 + 2 * 4) * 128 + 32.0 * 128 * 2048;  // 18,874,368
  const double experts = 128.0 * 3 * 2048 * 768;                        // 603,979,776
  const double emb = 2.0 * 151936 * 2048;                               // 622,329,856
  CHECK(m.param_count() == Approx(48 * (attn + experts) + emb));
  CHECK(m.param_count() == Approx(30.519e9).epsilon(1e-4));
}

TEST_CASE("qwen3-30b-a3b at TP 2, bs 1: one decode step reads 8 experts per layer, each split two ways") {
  const ModelSpec m = load("qwen3-30b-a3b");
  RunSpec r;
  r.algo = SpecAlgo::None;
  r.tp_size = 2, r.batch_size = 1;
  r.allreduce = {parse_allreduce("nccl")};
  const CyclePlan plan = build_plan(m, nullptr, r);
  const PhasePlan* base = plan.find(PhaseKind::BaselineDecode);
  REQUIRE(base);
  const MoeTraffic t = moe_traffic(*base);
  CHECK(t.ops == 2 * 48);                    // w13 and w2 in every layer
  CHECK(t.experts == Approx(2 * 48 * 8.0));  // one token touches exactly its 8 experts
  // Per rank and layer: 8 experts x (2 x 384 x 2048 + 2048 x 384) bf16 weights, plus the
  // activations of 8 token-expert pairs in and out of each GEMM.
  const double weights = 48 * 8 * 3.0 * 384 * 2048 * 2;
  const double acts = 48 * 8 * ((2048 + 2 * 384) + (384 + 2048)) * 2.0;
  CHECK(t.bytes == Approx(weights + acts));
  CHECK(weights == Approx(1.812e9).epsilon(1e-3));
}

TEST_CASE("qwen3-30b-a3b drafts: SpecForge's (the default) and AngelSlim's EAGLE-3 configs") {
  const std::string target = resolve_model_config("qwen3-30b-a3b", "--model-path");
  const ModelSpec spec_forge = model_from_config(zoo_draft_config(target), "draft");
  CHECK(spec_forge.arch == Arch::LlamaEagle3);
  CHECK(spec_forge.hidden == 2048);
  CHECK(spec_forge.intermediate == 12288);
  CHECK(spec_forge.draft_vocab == 32000);
  const ModelSpec angel = load("qwen3-30b-a3b/eagle3-angelslim");
  CHECK(angel.arch == Arch::LlamaEagle3);
  CHECK(angel.intermediate == 6144);
  CHECK(angel.draft_vocab == 32000);
  CHECK(angel.kv_heads == 4);
}

TEST_CASE("llama-2-7b: 6.74B parameters by hand; its EAGLE draft keeps the full 32000-token head") {
  const ModelSpec m = load("llama-2-7b");
  CHECK(m.arch == Arch::Llama);
  CHECK(m.kv_heads == 32);  // multi-head attention, no GQA
  const double attn = 4096.0 * (32 + 2 * 32) * 128 + 32.0 * 128 * 4096;
  const double mlp = 3.0 * 4096 * 11008;
  const double emb = 2.0 * 32000 * 4096;
  CHECK(m.param_count() == Approx(32 * (attn + mlp) + emb));
  CHECK(m.param_count() == Approx(6.738e9).epsilon(1e-3));
  const ModelSpec d = load("llama-2-7b/eagle1");
  CHECK(d.architecture == "LlamaForCausalLMEagle");
  CHECK(d.layers == 1);
  CHECK(d.draft_vocab == 32000);
  // No eagle3/ folder: the published case names this draft with zoo_draft.
  CHECK(zoo_draft_config(resolve_model_config("llama-2-7b", "--model-path")).empty());
}

TEST_CASE("qwen3-8b: 8.19B parameters by hand; its EAGLE-3 draft one layer at the target's widths") {
  const ModelSpec m = load("qwen3-8b");
  CHECK(m.arch == Arch::Qwen3);
  CHECK(m.hidden == 4096);
  CHECK(m.layers == 36);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.intermediate == 12288);
  // Per layer: q (32 x 128) + k, v (8 x 128 each) from 4096, o back to 4096; gate, up and down
  // (3 x 4096 x 12288); embedding and the untied LM head 151936 x 4096 each. Norms are left out.
  const double attn = 4096.0 * (32 + 2 * 8) * 128 + 32.0 * 128 * 4096;  // 41,943,040
  const double mlp = 3.0 * 4096 * 12288;                                // 150,994,944
  const double emb = 2.0 * 151936 * 4096;                               // 1,244,659,712
  CHECK(m.param_count() == Approx(36 * (attn + mlp) + emb).epsilon(1e-4));
  CHECK(m.param_count() == Approx(8.190e9).epsilon(1e-3));
  const ModelSpec d = model_from_config(zoo_draft_config(resolve_model_config("qwen3-8b", "--model-path")), "draft");
  CHECK(d.arch == Arch::LlamaEagle3);
  CHECK(d.layers == 1);
  CHECK(d.hidden == 4096);
  CHECK(d.intermediate == 12288);
  CHECK(d.draft_vocab == 32000);
}

TEST_CASE("zoo names: MODEL and MODEL/DRAFT resolve under models/; anything else is refused with the list") {
  // A draft by its zoo name, as published cases name it (zoo_draft) and a user would type it.
  const std::string d = resolve_model_config("llama-3.1-70b/eagle3", "--speculative-draft-model-path");
  CHECK(d == test::models_path("llama-3.1-70b/eagle3/config.json"));
  CHECK(model_from_config(d, "--speculative-draft-model-path").layers == 1);
  const auto names = zoo_names();
  for (const char* n : {"deepseek-r1", "deepseek-r1/nextn", "llama-3.3-70b", "qwen3-30b-a3b/eagle3-angelslim"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  for (const char* n : {"hardware", "nccl", "runtime", "scenarios"})  // folders without a config.json
    CHECK(std::find(names.begin(), names.end(), n) == names.end());
  CHECK(std::is_sorted(names.begin(), names.end()));
  // An HF repo id, a path climbing out of models/, a trailing slash, two levels: not zoo names.
  for (const char* in :
       {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b/../llama-3.1-8b", "llama-3.1-8b/", "llama-3.1-8b/eagle3/x"}) {
    try {
      resolve_model_config(in, "--model-path");
      FAIL(std::string("accepted ") + in);
    } catch (const InputError& e) {
      CHECK(e.where() == "--model-path");
      const std::string msg = e.what();
      CHECK(msg.find("qwen3-30b-a3b/eagle3-angelslim") != std::string::npos);
      CHECK(msg.find("llama-3.3-70b,") != std::string::npos);
    }
  }
}

TEST_CASE("EAGLE runs the zoo's EAGLE head where it has one; else the EAGLE-3 draft stands in, said") {
  auto run = [](const std::string& model) {
    return test::run_specsim({"run", "--json", "--model-path", model, "--hardware", "h200:nvswitch", "--tp-size", "8",
                              "--speculative-algorithm", "EAGLE", "--accept-len", "2.5"});
  };
  const auto llama = run("llama-3.1-8b");
  INFO(llama.err);
  REQUIRE(llama.exit_code == 0);
  const auto lj = nlohmann::json::parse(llama.out);
  CHECK(lj["model"]["draft"]["name"] == "llama-3.1-8b/eagle1");
  CHECK(lj["model"]["draft"]["architecture"] == "LlamaForCausalLMEagle");
  const auto qwen = run("qwen3-8b");
  REQUIRE(qwen.exit_code == 0);
  const auto qj = nlohmann::json::parse(qwen.out);
  CHECK(qj["model"]["draft"]["name"] == "qwen3-8b/eagle3");
  CHECK(qj.dump().find("assumption: the zoo holds no EAGLE (EAGLE-2) draft for qwen3-8b") != std::string::npos);
  const auto ds = nlohmann::json::parse(run("deepseek-v3").out);  // EAGLE on DeepSeek: its NextN layer
  CHECK(ds["model"]["draft"]["name"] == "deepseek-v3/nextn");
}
