// CyclePlan: shapes and collective counts as SGLang runs them (docs/sources.md#S-sglang-collectives).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "plan/cycle_plan.h"
#include "spec_run.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using specsim::test::spec_run;

namespace {

struct Loaded {
  ModelSpec target, draft;
};
Loaded zoo(const std::string& name) {
  const std::string cfg = resolve_model_config(name, "--model-path");
  return {model_from_config(cfg, "--model-path"), model_from_config(zoo_draft_config(cfg), "draft")};
}

const Op* find_op(const PhasePlan& p, const std::string& block, const std::string& name) {
  for (const auto& b : p.blocks)
    if (block == b.name)
      for (const auto& o : b.ops)
        if (name == o.name) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("collective counts per target forward match SGLang's 1 + 2L all-reduces and 1 all-gather") {
  struct Case {
    const char* model;
    int ar;
  };
  for (const Case c : {Case{"deepseek-v3", 123}, Case{"kimi-k2", 123}, Case{"llama-3.1-70b", 161},
                       Case{"llama-3.1-8b", 65}, Case{"qwen3-32b", 129}, Case{"qwen3-235b-a22b", 189}}) {
    INFO(c.model);
    const auto m = zoo(c.model);
    const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(8, 1, 2, 1, 3));
    const PhasePlan* verify = plan.find(PhaseKind::Verify);
    REQUIRE(verify);
    CHECK(verify->count_of(OpKind::AllReduce) == c.ar);
    CHECK(verify->count_of(OpKind::AllGather) == 1);
    CHECK(plan.find(PhaseKind::BaselineDecode)->count_of(OpKind::AllReduce) == c.ar);
    // EAGLE-3 draft: embedding, o_proj, MLP all-reduces + the logits all-gather.
    CHECK(plan.find(PhaseKind::DraftExtend)->count_of(OpKind::AllReduce) == 3);
    CHECK(plan.find(PhaseKind::DraftExtend)->count_of(OpKind::AllGather) == 1);
  }
}

TEST_CASE("DeepSeek-V3 verify at bs 1, N 3: 123 all-reduces of 43008 bytes") {
  const auto m = zoo("deepseek-v3");
  const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(8, 1, 2, 1, 3));
  const PhasePlan* v = plan.find(PhaseKind::Verify);
  CHECK(v->tokens == 3);
  CHECK(v->comm_bytes_of(OpKind::AllReduce) == Approx(123.0 * 43008));
  CHECK(v->comm_bytes_of(OpKind::AllGather) == Approx(3.0 * 129280 * 2));
  // Phase shapes: (S-1) draft decodes of bs*topk, verify of bs*N, extend of bs*(S+1).
  CHECK(plan.find(PhaseKind::DraftDecode)->count == 1);
  CHECK(plan.find(PhaseKind::DraftDecode)->tokens == 1);
  CHECK(plan.find(PhaseKind::DraftExtend)->tokens == 3);
  CHECK(plan.find(PhaseKind::BaselineDecode)->comm_bytes_of(OpKind::AllReduce) == Approx(123.0 * 14336));
}

TEST_CASE("DeepSeek-V3 per-rank GEMM shapes at TP 8 (absorbed MLA, fused shared expert)") {
  const auto m = zoo("deepseek-v3");
  const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(8, 1, 2, 1, 3));
  const PhasePlan& v = *plan.find(PhaseKind::Verify);
  const Op* qkv_a = find_op(v, "moe_layer", "fused_qkv_a_proj");
  REQUIRE(qkv_a);
  CHECK(qkv_a->n == 2112);
  CHECK(qkv_a->k == 7168);
  CHECK(qkv_a->replicated);
  CHECK(qkv_a->dtype == DType::FP8);
  CHECK(find_op(v, "moe_layer", "q_b_proj")->n == 3072);
  CHECK(find_op(v, "moe_layer", "w_kc")->batch == 16);
  CHECK(find_op(v, "moe_layer", "o_proj")->k == 2048);
  CHECK(find_op(v, "dense_layer", "gate_up_proj")->n == 4608);
  CHECK(find_op(v, "dense_layer", "down_proj")->k == 2304);
  const Op* w13 = find_op(v, "moe_layer", "moe_w13");
  CHECK(w13->n == 512);
  CHECK(w13->k == 7168);
  CHECK(w13->m == 3 * 9);  // 8 routed + 1 fused shared expert per token
  CHECK(w13->experts == Approx(expected_distinct_experts(3, 256, 8) + 1));
  CHECK(find_op(v, "moe_layer", "moe_w2")->k == 256);
  CHECK(find_op(v, "lm_head", "lm_head")->n == 16160);
  // Layers: 3 dense + 58 MoE.
  for (const auto& b : v.blocks) {
    if (std::string(b.name) == "dense_layer") CHECK(b.repeat == 3);
    if (std::string(b.name) == "moe_layer") CHECK(b.repeat == 58);
  }
  // EAGLE-3 draft: fc is replicated and runs only on the extend forward.
  CHECK(find_op(*plan.find(PhaseKind::DraftExtend), "draft_embed", "fc")->k == 3 * 7168);
  CHECK(find_op(*plan.find(PhaseKind::DraftDecode), "draft_embed", "fc") == nullptr);
  CHECK(find_op(*plan.find(PhaseKind::DraftExtend), "draft_lm_head", "lm_head")->n == 4000);
}

TEST_CASE("DeepSeek-V3 kernels per layer as SGLang runs them (fp8, absorbed MLA, fused MoE)") {
  const auto m = zoo("deepseek-v3");
  const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(8, 1, 2, 1, 3));
  const PhasePlan& d = *plan.find(PhaseKind::BaselineDecode);
  auto names = [&](const char* block) {
    std::vector<std::string> out;
    for (const auto& b : d.blocks)
      if (std::string(b.name) == block)
        for (const auto& o : b.ops) out.emplace_back(o.name);
    return out;
  };
  // Read off deepseek_v2.py's forward_absorb with fp8 weights: each block-fp8 GEMM quantizes its
  // input first, each absorbed bmm runs per_tensor_quant_mla_fp8 + bmm_fp8, the split-KV decode
  // merges its partials, and the w_vc output is copied to [t, heads * v] before o_proj.
  const std::vector<std::string> attention = {
      "input_layernorm", "act_quant",     "fused_qkv_a_proj", "q_a_layernorm", "kv_a_layernorm",
      "act_quant",       "q_b_proj",      "bmm_quant",        "w_kc",          "rotary_emb",
      "kv_cache_store",  "mla_attention", "mla_split_merge",  "bmm_quant",     "w_vc",
      "attn_out_copy",   "act_quant",     "o_proj",           "attn_allreduce"};
  const std::vector<std::string> moe = {"post_attention_layernorm",
                                        "router_gate",
                                        "topk_select",
                                        "moe_align",
                                        "act_quant",
                                        "moe_w13",
                                        "silu_and_mul",
                                        "act_quant",
                                        "moe_w2",
                                        "moe_sum",
                                        "mlp_allreduce"};
  std::vector<std::string> moe_layer = attention;
  moe_layer.insert(moe_layer.end(), moe.begin(), moe.end());
  CHECK(names("moe_layer") == moe_layer);  // 28 kernels + 2 all-reduces
  CHECK(moe_layer.size() == 30);
  // Dense layers: the same attention, then quant + gate_up + SiLU + quant + down.
  CHECK(names("dense_layer").size() == attention.size() + 2 + 5);
  // 3 x 26 + 58 x 30 + embedding (2) + head (4) kernels in one step.
  CHECK(d.kernels() == 3 * 26 + 58 * 30 + 2 + 4);
}

TEST_CASE("bf16 MLA keeps its bmm's unquantized; GQA models gain no MLA kernels") {
  auto m = zoo("deepseek-v3");
  m.target.weight_dtype = DType::BF16;
  const CyclePlan bf16 = build_plan(m.target, &m.draft, spec_run(8, 1, 2, 1, 3));
  const PhasePlan& d = *bf16.find(PhaseKind::BaselineDecode);
  CHECK(find_op(d, "moe_layer", "bmm_quant") == nullptr);
  CHECK(find_op(d, "moe_layer", "act_quant") == nullptr);
  CHECK(find_op(d, "moe_layer", "mla_split_merge"));
  CHECK(find_op(d, "moe_layer", "attn_out_copy"));
  const auto l = zoo("llama-3.1-70b");
  const CyclePlan dense = build_plan(l.target, &l.draft, spec_run(8, 1, 2, 1, 3));
  const PhasePlan& ld = *dense.find(PhaseKind::BaselineDecode);
  CHECK(find_op(ld, "dense_layer", "mla_split_merge") == nullptr);
  CHECK(find_op(ld, "dense_layer", "attn_out_copy") == nullptr);
  // Llama: norm, qkv, rotary, KV store, attention, o_proj, AR, norm, gate_up, SiLU, down, AR.
  CHECK(ld.kernels() == 80 * 12 + 2 + 4);
}

TEST_CASE("Kimi-K2 runs its shared expert as a separate sharded MLP") {
  const auto m = zoo("kimi-k2");
  CHECK_FALSE(m.target.moe.fuse_shared);
  const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(8, 1, 2, 1, 3));
  const PhasePlan& v = *plan.find(PhaseKind::Verify);
  CHECK(find_op(v, "moe_layer", "q_b_proj")->n == 8 * 192);
  CHECK(find_op(v, "moe_layer", "moe_w13")->m == 3 * 8);
  CHECK(find_op(v, "moe_layer", "gate_up_proj")->n == 2 * 2048 / 8);
}

TEST_CASE("expected distinct experts: tokens share experts") {
  CHECK(expected_distinct_experts(1, 256, 8) == Approx(8.0));
  CHECK(expected_distinct_experts(3, 256, 8) == Approx(256.0 * (1 - std::pow(248.0 / 256, 3))));
  CHECK(expected_distinct_experts(3, 256, 8) < 24.0);
  CHECK(expected_distinct_experts(10000, 256, 8) == Approx(256.0).epsilon(1e-6));
  CHECK(expected_distinct_experts(0, 256, 8) == 0.0);
}

TEST_CASE("Llama GQA shapes: local heads and replicated KV heads") {
  const auto m = zoo("llama-3.1-70b");
  const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(8, 1, 5, 4, 8));
  const PhasePlan& v = *plan.find(PhaseKind::Verify);
  CHECK(v.tokens == 8);
  CHECK(find_op(v, "dense_layer", "qkv_proj")->n == (8 + 2 * 1) * 128);
  CHECK(find_op(v, "dense_layer", "gate_up_proj")->n == 2 * 28672 / 8);
  CHECK(plan.find(PhaseKind::DraftDecode)->count == 4);
  CHECK(plan.find(PhaseKind::DraftDecode)->tokens == 4);
  CHECK(plan.find(PhaseKind::DraftExtend)->tokens == 6);
}

TEST_CASE("a tree draft step reads the KV prefix once per branch; verify and extend once per request") {
  const auto m = zoo("llama-3.1-8b");
  RunSpec run = spec_run(1, 2, 5, 4, 8);
  run.context_len = 1000;
  const CyclePlan plan = build_plan(m.target, &m.draft, run);
  // Draft layer KV per row: 1000 tokens x K and V x 8 kv heads x 128 x 2 bytes = 4096000 bytes.
  const double per_row = 1000.0 * 2 * 8 * 128 * 2;
  const Op* draft_attn = find_op(*plan.find(PhaseKind::DraftDecode), "draft_layer", "attention");
  REQUIRE(draft_attn);
  const double q_out = 2.0 * draft_attn->m * 32 * 128 * 2;      // the query rows' q and output, bf16
  CHECK(draft_attn->bytes == Approx(2 * 4 * per_row + q_out));  // bs 2 x topk 4 branches
  const Op* ext_attn = find_op(*plan.find(PhaseKind::DraftExtend), "draft_layer", "attention");
  CHECK(ext_attn->bytes == Approx(2 * per_row + 2.0 * ext_attn->m * 32 * 128 * 2));
  const Op* ver_attn = find_op(*plan.find(PhaseKind::Verify), "dense_layer", "attention");
  CHECK(ver_attn->bytes == Approx(2 * per_row + 2.0 * ver_attn->m * 32 * 128 * 2));
  // a chain (topk 1) reads it once per request.
  const CyclePlan chain = build_plan(m.target, &m.draft, spec_run(1, 2, 5, 1, 6));
  const Op* chain_attn = find_op(*chain.find(PhaseKind::DraftDecode), "draft_layer", "attention");
  CHECK(chain_attn->m == 2);
}

TEST_CASE("tp 1 runs no collectives") {
  const auto m = zoo("llama-3.1-8b");
  const CyclePlan plan = build_plan(m.target, &m.draft, spec_run(1, 1, 3, 1, 4));
  for (const auto& p : plan.phases) {
    CHECK(p.count_of(OpKind::AllReduce) == 0);
    CHECK(p.count_of(OpKind::AllGather) == 0);
  }
}

TEST_CASE("tp sizes that do not divide the heads are refused, naming --tp-size (vocabularies are padded)") {
  const auto m = zoo("deepseek-v3");
  try {
    build_plan(m.target, &m.draft, spec_run(3, 1, 2, 1, 3));
    FAIL("tp 3 accepted");
  } catch (const InputError& e) {
    CHECK(e.where() == "--tp-size");
    CHECK(std::string(e.what()).find("not divisible") != std::string::npos);
  }
}

TEST_CASE("DeepSeek's NextN draft: one MLA + MoE layer, replicated eh_proj, shared vocab-parallel head") {
  const std::string cfg = resolve_model_config("deepseek-v3", "--model-path");
  const ModelSpec target = model_from_config(cfg, "--model-path");
  const std::string nextn_cfg = zoo_draft_config(cfg, true);
  CHECK(nextn_cfg.find("nextn") != std::string::npos);
  CHECK(zoo_draft_config(cfg, false).find("eagle3") != std::string::npos);  // EAGLE3 keeps EAGLE-3's draft
  const ModelSpec nextn = model_from_config(nextn_cfg, "draft");
  REQUIRE(nextn.is_nextn());
  CHECK(nextn.is_draft());
  CHECK(nextn.draft_vocab == 129280);
  const CyclePlan plan = build_plan(target, &nextn, spec_run(8, 1, 3, 1, 4));
  const PhasePlan* dec = plan.find(PhaseKind::DraftDecode);
  REQUIRE(dec);
  CHECK(dec->count == 2);
  // Embedding, attention and MoE all-reduces of tokens x 7168 x 2 bytes, one logits all-gather.
  CHECK(dec->count_of(OpKind::AllReduce) == 3);
  CHECK(dec->count_of(OpKind::AllGather) == 1);
  CHECK(dec->comm_bytes_of(OpKind::AllReduce) == 3 * 1 * 7168 * 2);
  const Op* eh = find_op(*dec, "nextn_embed", "eh_proj");
  REQUIRE(eh);
  CHECK(eh->n == 7168);  // replicated: 2H -> H on every rank
  CHECK(eh->k == 2 * 7168);
  const Op* head = find_op(*dec, "nextn_lm_head", "lm_head");
  REQUIRE(head);
  CHECK(head->n == Approx(129280.0 / 8));
  CHECK(find_op(*dec, "nextn_layer", "moe_w13"));
  CHECK(find_op(*dec, "nextn_layer", "mla_attention"));
  const PhasePlan* ext = plan.find(PhaseKind::DraftExtend);
  REQUIRE(ext);
  CHECK(ext->tokens == 4);  // bs x (S + 1)
  CHECK(ext->comm_bytes_of(OpKind::AllReduce) == 3 * 4 * 7168 * 2);
}
