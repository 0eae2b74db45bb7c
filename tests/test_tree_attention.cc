// A draft tree's attention on SGLang's FlashAttention-3 backend: a pass over the prefix, a pass over
// the tree's own tokens, two LSE copies and a merge in every attention layer of the verify and of
// each draft step (RunSpec::fa3_tree_attention). SGLang runs it for MLA models on Hopper by
// default and for other models when the command names --attention-backend fa3.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "plan/cycle_plan.h"
#include "scenario/sglang_attention.h"
#include "spec_run.h"
#include "test_util.h"

using namespace specsim;
using specsim::test::spec_run;

namespace {

// How many ops named `name` phase `kind` of Llama-3.1-8B's plan runs per cycle (blocks x repeats).
int ops_named(const RunSpec& run, PhaseKind kind, const std::string& name) {
  const std::string cfg = resolve_model_config("llama-3.1-8b", "--model-path");
  const ModelSpec target = model_from_config(cfg, "--model-path");
  const ModelSpec draft = model_from_config(zoo_draft_config(cfg), "draft");
  const CyclePlan plan = build_plan(target, &draft, run);
  int n = 0;
  for (const auto& b : plan.find(kind)->blocks)
    for (const auto& o : b.ops)
      if (o.name == name) n += b.repeat;
  return n;
}

// Llama-3.1-8B with its EAGLE-3 draft at (5, ?, 6) as a pasted SGLang launch command.
const std::vector<std::string> kLlamaLaunch = {"--",
                                               "python",
                                               "-m",
                                               "sglang.launch_server",
                                               "--model-path",
                                               "meta-llama/Llama-3.1-8B-Instruct",
                                               "--speculative-algorithm",
                                               "EAGLE3",
                                               "--speculative-draft-model-path",
                                               "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
                                               "--speculative-num-steps",
                                               "5",
                                               "--speculative-num-draft-tokens",
                                               "6"};

// `specsim ARGS... EXTRA...`, required to succeed, its stdout parsed (ARGS hold --json before any
// pasted command, which test::run_json's trailing --json would land in).
nlohmann::json run_ok(std::vector<std::string> args, const std::vector<std::string>& extra = {}) {
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// Phase `name` of a run report's first scenario.
nlohmann::json phase_named(const nlohmann::json& report, const std::string& name) {
  for (const auto& p : report["scenarios"][0]["phases"])
    if (p["name"] == name) return p;
  FAIL("no phase " << name);
  return {};
}

// The verify's and the draft steps' attention_us of the pasted Llama command on one H200.
std::pair<double, double> attention_us(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", "--hardware", "h200:nvswitch", "--accept-len", "3", "--json"};
  args.insert(args.end(), kLlamaLaunch.begin(), kLlamaLaunch.end());
  const nlohmann::json j = run_ok(args, extra);
  return {phase_named(j, "verify")["attention_us"].get<double>(),
          phase_named(j, "draft_decode")["attention_us"].get<double>()};
}

}  // namespace

TEST_CASE("a tree on FA3 runs two attention passes and a merge in every attention layer") {
  RunSpec tree = spec_run(1, 1, 5, 3, 6);
  tree.fa3_tree_attention = true;
  const int layers = 32;  // Llama-3.1-8B; the EAGLE-3 draft has one
  CHECK(ops_named(tree, PhaseKind::Verify, "tree_attention") == layers);
  CHECK(ops_named(tree, PhaseKind::Verify, "merge_state") == layers);
  CHECK(ops_named(tree, PhaseKind::Verify, "lse_copy_prefix") == layers);
  CHECK(ops_named(tree, PhaseKind::DraftDecode, "tree_attention") == 1);
  CHECK(ops_named(tree, PhaseKind::DraftExtend, "tree_attention") == 0);  // the extend is not a tree
  CHECK(ops_named(tree, PhaseKind::BaselineDecode, "tree_attention") == 0);
  tree.fa3_tree_attention = false;
  CHECK(ops_named(tree, PhaseKind::Verify, "tree_attention") == 0);
  // A chain runs one pass whatever the backend (a sweep or tune moving topk gets it per plan).
  RunSpec chain = spec_run(1, 1, 5, 1, 6);
  chain.fa3_tree_attention = true;
  CHECK(ops_named(chain, PhaseKind::Verify, "tree_attention") == 0);
  CHECK(ops_named(chain, PhaseKind::DraftDecode, "tree_attention") == 0);
}

TEST_CASE("the cascade follows SGLang's attention backend: FlashInfer for a Llama tree unless fa3 is named") {
  const auto [chain_v, chain_d] = attention_us({"--speculative-eagle-topk", "1"});
  const auto [def_v, def_d] = attention_us({"--speculative-eagle-topk", "3"});
  const auto [fa3_v, fa3_d] = attention_us({"--speculative-eagle-topk", "3", "--attention-backend", "fa3"});
  const auto [fi_v, fi_d] = attention_us({"--speculative-eagle-topk", "3", "--attention-backend", "flashinfer"});
  // SGLang's default for an MHA model's tree: FlashInfer, one pass, its mask a custom mask, priced
  // as FlashInfer's measured custom-mask kernel (tests/test_flashinfer_attention.cc); the chain runs
  // FA3's kernel at its measured price (tests/test_fa3_attention.cc), unmasked. Both measured at
  // about 18 us and 15 us a layer at these shapes.
  INFO("verify attention us: chain " << chain_v << ", default tree " << def_v << ", fa3 tree " << fa3_v
                                     << "; a draft step's: default " << def_d << ", fa3 " << fa3_d);
  CHECK(def_v > chain_v * 1.1);
  CHECK(def_v < chain_v * flashinfer_custom_mask_factor());
  CHECK(fi_v == Approx(def_v));
  CHECK(fa3_v > chain_v + 32 * 2.0);  // at least a kernel's floor more in each of 32 layers
  // the draft steps: FlashInfer's batch decode (the default's; on CUDA cores, about 23 us a layer
  // for three branches, measured) costs more than FA3's two passes and merge (its prefix pass at
  // FA3's measured price, the tree pass and merge on the profile's terms)
  CHECK(fi_d > fa3_d);
  CHECK(def_d == Approx(fi_d));
}

TEST_CASE("an MLA model's tree on Hopper takes FA3's two passes by default; elsewhere and on vLLM one") {
  auto verify_ops = [](const std::vector<std::string>& extra) {
    const nlohmann::json j =
        run_ok({"run", "--model-path", "deepseek-v3", "--tp-size", "8", "--accept-len", "2", "--speculative-num-steps",
                "3", "--speculative-eagle-topk", "2", "--speculative-num-draft-tokens", "4", "--allreduce", "nccl",
                "--json", "--speculative-algorithm", "EAGLE3"},
               extra);
    return std::make_pair(phase_named(j, "verify")["kernels"].get<int>(), j["settings"]["tree_attention_backend"]);
  };
  const auto [h200, h200_backend] = verify_ops({"--hardware", "h200:nvswitch"});
  const auto [h200_fi, h200_fi_backend] =
      verify_ops({"--hardware", "h200:nvswitch", "--", "python", "-m", "sglang.launch_server", "--model-path",
                  "deepseek-ai/DeepSeek-V3", "--attention-backend", "flashinfer"});
  const auto [b200, b200_backend] = verify_ops({"--hardware", "b200:nvswitch"});
  const auto [vllm, vllm_backend] = verify_ops({"--hardware", "h200:nvswitch", "--runtime", "vllm"});
  CHECK(h200_backend == "fa3");
  CHECK(h200_fi_backend == "flashinfer");
  CHECK(b200_backend == "flashinfer");
  CHECK(vllm_backend.is_null());
  // 61 MLA layers, four kernels each for the tree's second pass, its LSE copies and the merge, less
  // the split merge FA3's measured call includes
  CHECK(h200 == h200_fi + 61 * 4 - 61);
  CHECK(vllm == h200_fi);
}

TEST_CASE("a scenario file keeps the command's attention backend; an unpriced one is refused") {
  const std::string dir = test::fresh_dir(), file = dir + "/fi.json";
  const auto [fi_v, fi_d] =
      attention_us({"--speculative-eagle-topk", "3", "--attention-backend", "flashinfer", "--port", "30000"});
  std::vector<std::string> save = {"run", "--hardware", "h200:nvswitch", "--accept-len", "3", "--save-scenario", file};
  save.insert(save.end(), kLlamaLaunch.begin(), kLlamaLaunch.end());
  for (const char* flag : {"--speculative-eagle-topk", "3", "--attention-backend", "flashinfer"}) save.push_back(flag);
  const auto saved = test::run_specsim(save);
  INFO(saved.err);
  REQUIRE(saved.exit_code == 0);
  nlohmann::json f = nlohmann::json::parse(test::slurp(file));
  CHECK(f["settings"]["attention_backend"] == "flashinfer");
  const nlohmann::json again = run_ok({"run", "--scenario", file, "--json"});
  CHECK(phase_named(again, "verify")["attention_us"].get<double>() == Approx(fi_v));
  f["settings"]["attention_backend"] = "triton";
  test::write_text(dir + "/bad.json", f.dump());
  const auto bad = test::run_specsim({"run", "--scenario", dir + "/bad.json"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--attention-backend") != std::string::npos);
  CHECK(bad.out.empty());
}

TEST_CASE("specsim's own --attention-backend: a what-if, per sweep point by its topk") {
  const std::vector<std::string> base = {"--model-path",
                                         "llama-3.1-8b",
                                         "--hardware",
                                         "h200:nvswitch",
                                         "--tp-size",
                                         "1",
                                         "--accept-len",
                                         "3",
                                         "--speculative-num-steps",
                                         "5",
                                         "--speculative-num-draft-tokens",
                                         "6",
                                         "--allreduce",
                                         "nccl"};
  auto run_spec = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", "--json"};
    args.insert(args.end(), base.begin(), base.end());
    const nlohmann::json j = run_ok(args, extra);
    CHECK(j["settings"]["tree_attention_backend"] == "fa3");
    return j["scenarios"][0]["spec"]["tok_per_s"].get<double>();
  };
  const double chain = run_spec({"--speculative-eagle-topk", "1", "--attention-backend", "fa3"});
  const double tree = run_spec({"--speculative-eagle-topk", "3", "--attention-backend", "fa3"});
  const std::string dir = test::fresh_dir();
  std::vector<std::string> sweep = {
      "sweep", "--speculative-eagle-topk", "1,3", "--attention-backend", "fa3", "--json", dir + "/t.json"};
  sweep.insert(sweep.end(), base.begin(), base.end());
  REQUIRE(test::run_specsim(sweep).exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(dir + "/t.json"));
  const auto cols = j["columns"].get<std::vector<std::string>>();
  const auto at = [&](const std::string& name) {
    return std::size_t(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  REQUIRE(j["rows"].size() == 2);
  for (const auto& row : j["rows"]) {
    const int topk = static_cast<int>(row[at("speculative_eagle_topk")].get<double>());
    CHECK(row[at("spec_tok_s")].get<double>() == Approx(topk == 1 ? chain : tree).epsilon(1e-6));
  }
  CHECK(tree < chain);  // at the same accept length the tree's cycle is longer
  const auto bad = test::run_specsim({"run", "--attention-backend", "triton"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--attention-backend") != std::string::npos);
}

TEST_CASE("a verify on SGLang's FlashInfer backend reads its mask as a custom mask, by topk per plan") {
  RunSpec chain = spec_run(1, 1, 5, 1, 6);
  CHECK(ops_named(chain, PhaseKind::Verify, "attention_custom_mask") == 0);
  chain.custom_mask_chain = true;
  CHECK(ops_named(chain, PhaseKind::Verify, "attention_custom_mask") == 32);  // one a layer of Llama-3.1-8B
  CHECK(ops_named(chain, PhaseKind::DraftDecode, "attention_custom_mask") == 0);
  CHECK(ops_named(chain, PhaseKind::DraftExtend, "attention_custom_mask") == 0);
  CHECK(ops_named(chain, PhaseKind::BaselineDecode, "attention_custom_mask") == 0);
  RunSpec tree = spec_run(1, 1, 5, 3, 6);
  tree.custom_mask_chain = true;  // a sweep or tune moving topk takes the tree's decision
  CHECK(ops_named(tree, PhaseKind::Verify, "attention_custom_mask") == 0);
  tree.custom_mask_tree = true;
  CHECK(ops_named(tree, PhaseKind::Verify, "attention_custom_mask") == 32);
}

TEST_CASE("which verifies read a custom mask: SGLang's default backend per model, GPU and topk, or the flag") {
  // settings.verify_custom_mask of the pasted Llama command (or another model) with these flags.
  auto masked = [](const std::vector<std::string>& extra, const std::string& model = "") {
    std::vector<std::string> args = {"run", "--accept-len", "2", "--allreduce", "nccl", "--json"};
    if (model.empty()) {
      args.insert(args.end(), extra.begin(), extra.end());
      args.insert(args.end(), kLlamaLaunch.begin(), kLlamaLaunch.end());
    } else {
      for (const char* f : {"--model-path", model.c_str()}) args.push_back(f);
      for (const char* f : {"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3",
                            "--speculative-num-draft-tokens", "4", "--tp-size", "8"})
        args.push_back(f);
      args.insert(args.end(), extra.begin(), extra.end());
    }
    return run_ok(args)["settings"]["verify_custom_mask"];
  };
  const std::vector<std::string> h200 = {"--hardware", "h200:nvswitch"}, a100 = {"--hardware", "a100-sxm:nvswitch"};
  auto with = [](std::vector<std::string> v, const std::vector<std::string>& more) {
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "1"})) == false);  // Llama chains on Hopper: FA3
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "3"})) == true);   // trees of MHA models: FlashInfer
  CHECK(masked(with(a100, {"--speculative-eagle-topk", "1"})) == true);   // off Hopper: FlashInfer
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "1", "--attention-backend", "flashinfer"})) == true);
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "3", "--attention-backend", "fa3"})) == false);
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "2"}), "deepseek-v3") == false);  // MLA: other backends
  CHECK(masked({"--hardware", "b200:nvswitch", "--speculative-eagle-topk", "2"}, "deepseek-v3") == false);
  CHECK(masked({"--hardware", "mi300x:xgmi", "--speculative-eagle-topk", "3"}) == false);  // AMD: aiter, triton
  CHECK(masked({"--hardware", "mi300x:xgmi", "--speculative-eagle-topk", "3", "--attention-backend", "flashinfer"}) ==
        false);
  // gpt-oss: FA3 on Hopper by its own rule, and SGLang refuses flashinfer for it.
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "2"}), "gpt-oss-20b") == false);
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "1", "--attention-backend", "flashinfer"}), "gpt-oss-20b") ==
        false);
  CHECK(masked(with(h200, {"--speculative-eagle-topk", "1", "--runtime", "vllm"})).is_null());

  // The price: a Llama chain's verify attention on an A100 (FlashInfer by default) against FA3 named.
  auto verify_attention = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", "--accept-len", "2", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), kLlamaLaunch.begin(), kLlamaLaunch.end());
    return phase_named(run_ok(args), "verify")["attention_us"].get<double>();
  };
  const double fi = verify_attention(with(a100, {"--speculative-eagle-topk", "1"}));
  const double fa3 = verify_attention(with(a100, {"--speculative-eagle-topk", "1", "--attention-backend", "fa3"}));
  const double s = flashinfer_custom_mask_factor();
  CHECK(fi > fa3 * s);
  CHECK(fi < fa3 * 4);
}

TEST_CASE("SGLang's FA3 architectures and the shipped custom-mask factor") {
  CHECK(sglang_fa3_default_architecture("LlamaForCausalLM"));
  CHECK(sglang_fa3_default_architecture("Qwen3MoeForCausalLM"));
  CHECK_FALSE(sglang_fa3_default_architecture("MixtralForCausalLM"));
  CHECK_FALSE(sglang_fa3_default_architecture("GptOssForCausalLM"));  // FA3 by its own rule on Hopper
  // The median models/kernels/flashinfer_custom_mask.json records from the H200 measurement
  // (traces/attnbench/flashinfer-mask-h200-2026-12-03/), between 1 and the published 2.
  CHECK(flashinfer_custom_mask_factor() == Approx(1.74));
}

TEST_CASE("a tree's note and JSON name the backend it is priced on: FlashInfer's custom mask, or one pass") {
  auto report = [](const std::string& hw) {
    std::vector<std::string> args = {"run", "--hardware", hw, "--accept-len", "2", "--json", "--speculative-eagle-topk",
                                     "3"};
    args.insert(args.end(), kLlamaLaunch.begin(), kLlamaLaunch.end());
    return run_ok(args);
  };
  auto tree_note = [](const nlohmann::json& j) {
    for (const auto& n : j["notes"])
      if (n.get<std::string>().rfind("a draft tree's attention runs", 0) == 0) return n.get<std::string>();
    return std::string();
  };
  const nlohmann::json h200 = report("h200:nvswitch"), amd = report("mi300x:xgmi");
  CHECK(tree_note(h200).find("FlashInfer in one pass with the tree as a custom mask") != std::string::npos);
  CHECK(h200["settings"]["tree_attention_backend"] == "flashinfer");
  CHECK(tree_note(amd).find("runs in one pass,") != std::string::npos);
  CHECK(amd["settings"]["tree_attention_backend"].is_null());
  CHECK(amd["settings"]["verify_custom_mask"] == false);
}
