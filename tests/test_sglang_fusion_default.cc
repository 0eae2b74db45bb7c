// SGLang's own default for FlashInfer's all-reduce fusion (scenario/sglang_fusion_default.h): on
// for the models and GPUs each release names, off under --enforce-disable-flashinfer-allreduce-
// fusion, dated by --sglang-release or a pasted command's later flags, kept by a saved scenario and
// read from a server log's server_args.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "pasted_command.h"
#include "run_json.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const char* kFusedByDefault = "turns FlashInfer's all-reduce fusion on by default";

// A plain run of `model` on `gpu` at tp `tp`: whether SGLang's default fused it, and its step.
struct Plain {
  bool fused = false, kept_off = false, unfit = false;
  double base_tok_s = 0;
};
Plain plain_run(const std::string& model, const std::string& gpu, int tp, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"run",
                                   "--model-path",
                                   model,
                                   "--hardware",
                                   gpu + ":nvswitch",
                                   "--tp-size",
                                   std::to_string(tp),
                                   "--speculative-algorithm",
                                   "NONE",
                                   "--allreduce",
                                   "nccl"};
  args.insert(args.end(), more.begin(), more.end());
  const json j = run_json(args);
  Plain p;
  for (const auto& n : j.at("notes")) {
    const std::string s = n;
    if (s.find(kFusedByDefault) == std::string::npos) continue;
    p.fused = s.find("every layer boundary") != std::string::npos;
    p.kept_off = s.find("kept off") != std::string::npos;
    p.unfit = s.find("priced without it") != std::string::npos;
  }
  p.base_tok_s = j.at("scenarios")[0].at("baseline").at("tok_per_s").get<double>();
  return p;
}

}  // namespace

TEST_CASE("v0.5.2's default: GPT-OSS on SM100 fused, elsewhere not; the enforce switch keeps it off") {
  const Plain b200 = plain_run("gpt-oss-120b", "b200", 4);
  CHECK(b200.fused);
  const Plain off = plain_run("gpt-oss-120b", "b200", 4, {"--enforce-disable-flashinfer-allreduce-fusion"});
  CHECK(off.kept_off);
  CHECK_FALSE(off.fused);
  CHECK(b200.base_tok_s > off.base_tok_s);  // NCCL's all-reduce and the norm apart cost more here
  const Plain asked = plain_run("gpt-oss-120b", "b200", 4, {"--enable-flashinfer-allreduce-fusion"});
  CHECK(asked.base_tok_s == Approx(b200.base_tok_s));        // the default is the flag's effect
  CHECK_FALSE(plain_run("gpt-oss-120b", "h200", 4).fused);   // SM90: not before v0.5.7
  CHECK_FALSE(plain_run("deepseek-v3", "b200", 8).fused);    // DeepSeek: not before v0.5.4
  CHECK_FALSE(plain_run("llama-3.1-70b", "b200", 8).fused);  // never for Llama
  CHECK_FALSE(plain_run("gpt-oss-120b", "b200", 1).fused);   // no all-reduce at tp 1
}

TEST_CASE("later releases' defaults: their models and GPUs, H20 left out until v0.5.13") {
  const std::vector<std::string> v54 = {"--sglang-release", "v0.5.4"};
  CHECK(plain_run("deepseek-v3", "b200", 8, v54).fused);
  CHECK_FALSE(plain_run("deepseek-v3", "h200", 8, v54).fused);
  CHECK(plain_run("deepseek-v3", "h200", 8, {"--sglang-release", "0.5.7"}).fused);  // "v" optional
  CHECK(plain_run("qwen3-30b-a3b", "h100-sxm", 2, {"--sglang-release", "v0.5.7"}).fused);
  CHECK_FALSE(plain_run("qwen3-30b-a3b", "h20", 2, {"--sglang-release", "v0.5.12"}).fused);
  CHECK(plain_run("qwen3-30b-a3b", "h20", 2, {"--sglang-release", "v0.5.13"}).fused);
  CHECK_FALSE(plain_run("qwen3-32b", "h200", 2, {"--sglang-release", "v0.5.18"}).fused);  // dense Qwen3: no
  // DP attention: SGLang never fuses there
  CHECK_FALSE(
      plain_run("deepseek-v3", "h200", 8, {"--sglang-release", "v0.5.18", "--enable-dp-attention", "--dp-size", "8"})
          .fused);
  // an unknown release is refused, naming the flag
  const CliResult bad = run_specsim({"run", "--sglang-release", "v0.6.1"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--sglang-release") != std::string::npos);
  CHECK(bad.err.find("v0.5.2 to v0.5.18") != std::string::npos);
}

TEST_CASE("a default SGLang turns on where FlashInfer's kernel cannot run is said and left off") {
  // v0.5.5-v0.5.6 turn it on for GPT-OSS on SM120 too; the 8-GPU PCIe box has no NVLink for it
  const json j = run_json({"run", "--model-path", "gpt-oss-120b", "--hardware", "rtx-pro-6000:pcie-numa", "--tp-size",
                           "4", "--speculative-algorithm", "NONE", "--sglang-release", "v0.5.5"});
  bool said = false;
  for (const auto& n : j.at("notes"))
    said = said || n.get<std::string>().find("priced without it") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a pasted command's date and its enforce switch decide the default; a saved run keeps it") {
  const std::vector<std::string> ds = {
      "python", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"};
  auto fused = [](const CliResult& r) {
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return has_note(json::parse(r.out), "every layer boundary");
  };
  std::vector<std::string> later = ds;
  later.insert(later.end(), {"--cuda-graph-max-bs-decode", "8"});  // v0.5.14
  CHECK(fused(paste_run(later)));
  CHECK_FALSE(fused(paste_run(ds)));  // v0.5.2's rule: DeepSeek not
  std::vector<std::string> off = later;
  off.push_back("--enforce-disable-flashinfer-allreduce-fusion");
  CHECK_FALSE(fused(paste_run(off)));
  CHECK_FALSE(fused(paste_run(off, {"--enable-flashinfer-allreduce-fusion"})));  // the enforce switch wins
  // --sglang-release dates an undated command, and must not be earlier than the command's flags
  CHECK(fused(paste_run(ds, {"--sglang-release", "v0.5.9"})));
  const CliResult early = paste_run(later, {"--sglang-release", "v0.5.9"});
  CHECK(early.exit_code == 2);
  CHECK(early.err.find("the command holds flags of SGLang v0.5.14 (--cuda-graph-max-bs-decode)") != std::string::npos);
  CHECK(early.out.empty());
  // a saved scenario keeps the release (its default found again on reading) and a forced-off fusion
  const std::string dir = fresh_dir();
  std::vector<std::string> save = {"--save-scenario", dir + "/on.json"};
  REQUIRE(paste_run(later, save).exit_code == 0);
  const json file = json::parse(slurp(dir + "/on.json"));
  CHECK(file.at("settings").at("sglang_release") == "v0.5.14");
  CHECK_FALSE(file.at("settings").contains("flashinfer_allreduce_fusion"));  // a default, not a flag
  auto base_tok_s = [](const json& j) { return j.at("scenarios")[0].at("baseline").at("tok_per_s").get<double>(); };
  const double fused_tok_s = base_tok_s(json::parse(paste_run(later).out));
  const double unfused_tok_s = base_tok_s(json::parse(paste_run(off).out));
  CHECK(fused_tok_s != Approx(unfused_tok_s));
  CHECK(base_tok_s(run_json({"run", "--scenario", dir + "/on.json"})) == Approx(fused_tok_s));
  // the switch given beside the file wins
  CHECK(base_tok_s(run_json({"run", "--scenario", dir + "/on.json",
                             "--enforce-disable-flashinfer-allreduce-fusion"})) == Approx(unfused_tok_s));
  save = {"--save-scenario", dir + "/off.json"};
  REQUIRE(paste_run(off, save).exit_code == 0);
  CHECK(json::parse(slurp(dir + "/off.json")).at("settings").at("flashinfer_allreduce_fusion") == false);
  CHECK_FALSE(has_note(run_json({"run", "--scenario", dir + "/off.json"}), "every layer boundary"));
}

TEST_CASE("a server log's server_args say whether the fusion ran") {
  const std::string dir = fresh_dir();
  const std::string log =
      slurp(traces_path("sglang-logs/sglang-nextn-deepseek-v3-tp8-h200-synthetic-from-real-format.log"));
  const std::string from = "server_args=ServerArgs(";
  REQUIRE(log.find(from) != std::string::npos);
  auto diagnose_with = [&](const std::string& keys, const std::string& hardware = "h200:nvswitch") {
    std::string text = log;
    text.replace(text.find(from), from.size(), from + keys);
    const std::string path = dir + "/log-" + std::to_string(text.size()) + ".log";
    write_text(path, text);
    return run_json({"diagnose", path, "--hardware", hardware}).dump();
  };
  // v0.5.14 on: the backend field; before: the switch
  CHECK(diagnose_with("flashinfer_allreduce_fusion_backend='auto', ").find("every layer boundary") !=
        std::string::npos);
  CHECK(diagnose_with("flashinfer_allreduce_fusion_backend=None, cuda_graph_backend_decode='full', ")
            .find("every layer boundary") == std::string::npos);
  CHECK(diagnose_with("enable_flashinfer_allreduce_fusion=True, ").find("--enable-flashinfer-allreduce-fusion") !=
        std::string::npos);
  // the log's own record on a box where FlashInfer's kernel cannot run: said, not refused
  CHECK(diagnose_with("flashinfer_allreduce_fusion_backend='auto', ", "h200:pcie-switch")
            .find("the log's server_args show FlashInfer's all-reduce fusion on, but") != std::string::npos);
}

TEST_CASE("--sglang-release alone picks the speculative worker; a measurement beside the run is fused as it is") {
  auto worker_note = [](const std::vector<std::string>& more) {
    std::vector<std::string> args = {"run",           "--model-path", "llama-3.1-8b", "--hardware",
                                     "h200:nvswitch", "--accept-len", "2.5"};
    args.insert(args.end(), more.begin(), more.end());
    const json j = run_json(args);
    for (const auto& n : j.at("notes"))
      if (n.get<std::string>().find("the speculative worker is") != std::string::npos) return n.get<std::string>();
    return std::string();
  };
  CHECK(worker_note({"--sglang-release", "v0.5.14"}).find("spec v2 with overlap scheduling") != std::string::npos);
  CHECK(worker_note({}).empty());  // v0.5.2: the v1 worker, no note
  CHECK(worker_note({"--sglang-release", "0.5.14.post1"}).find("SGLang v0.5.14") != std::string::npos);
  CHECK(worker_note({"--sglang-release", "v0.5.14", "--runtime", "sglang"}).empty());  // --runtime wins
  // the anchor and the prediction see the same fused step: the measured baseline comes back exactly
  const json j =
      run_json({"run", "--model-path", "gpt-oss-120b", "--hardware", "b200:nvswitch", "--tp-size", "4",
                "--speculative-algorithm", "NONE", "--allreduce", "nccl", "--measured-baseline-tok-s", "416"});
  CHECK(has_note(j, "every layer boundary"));
  CHECK(j.at("scenarios")[0].at("baseline").at("tok_per_s").get<double>() == Approx(416).epsilon(1e-6));
  // both switches: the enforce one wins, said
  CHECK(has_note(run_json({"run", "--model-path", "llama-3.1-70b", "--hardware", "h200:nvswitch", "--tp-size", "8",
                           "--speculative-algorithm", "NONE", "--enable-flashinfer-allreduce-fusion",
                           "--enforce-disable-flashinfer-allreduce-fusion"}),
                 "wins over --enable-flashinfer-allreduce-fusion"));
}
