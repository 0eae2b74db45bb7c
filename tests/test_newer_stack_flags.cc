// Flags of later releases than the pinned tables' (models/stacks/sglang-v0.5.18-newer-flags.csv,
// vllm-main-2026-08-17-newer-flags.csv): a pasted command holding one is read (ignored, refused, or
// a new name of a pinned flag read as it) and says which release it dates the command to; a
// speculative SGLang command is priced on the worker its release runs (spec v2 with overlap from
// v0.5.11 by default). A server log's launch line is read the same way.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "pasted_command.h"
#include "run_json.h"
#include "scenario/sglang_cmdline.h"
#include "scenario/stack_flag_table.h"
#include "scenario/vllm_cmdline.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kSglangLater = {"python", "-m", "sglang.launch_server", "--model-path",
                                               "meta-llama/Llama-3.1-8B-Instruct"};
const std::vector<std::string> kEagleLater = {
    "--speculative-algorithm",        "EAGLE3", "--speculative-draft-model-path", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "--speculative-num-steps",        "3",      "--speculative-eagle-topk",       "1",
    "--speculative-num-draft-tokens", "4"};

std::vector<std::string> newer_with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

std::string later_note(const json& j, const std::string& text) {
  for (const auto& n : j.at("notes"))
    if (n.get<std::string>().find(text) != std::string::npos) return n;
  return "";
}

const json* later_finding(const json& d, const std::string& id) {
  for (const auto& f : d.at("findings"))
    if (f.at("id") == id) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("releases compare by their dotted numbers") {
  CHECK(release_at_least("v0.5.14", "v0.5.14"));
  CHECK(release_at_least("v0.5.18", "v0.5.14"));
  CHECK(release_at_least("v0.5.14", "v0.5.9"));  // 14 > 9, not "1" < "9"
  CHECK_FALSE(release_at_least("v0.5.9", "v0.5.14"));
  CHECK_FALSE(release_at_least("0.5.2", "v0.5.3"));
  CHECK(release_at_least("v0.6", "v0.5.18"));
}

TEST_CASE("the later releases' table: every row dated, applied where modelled, and not a v0.5.2 flag") {
  const StackFlagTable& t = stack_flag_table("sglang");
  const auto& applied = sglang_applied_flags();
  CHECK(t.newer_release == "v0.5.18");
  CHECK(t.newer.size() > 250);
  for (const auto& n : t.newer) {
    INFO(n.row.flag);
    CHECK(!n.row.what.empty());
    CHECK(release_at_least(n.since, "v0.5.3"));
    CHECK(release_at_least("v0.5.18", n.since));
    CHECK(t.find(n.row.flag, "test") == nullptr);  // exact, and no prefix of a v0.5.2 flag either
    const bool has = std::find(applied.begin(), applied.end(), n.row.flag) != applied.end();
    CHECK(has == n.row.modelled_for_some());
  }
  // a later name of a v0.5.2 flag is read as that flag
  const auto* decode_bs = t.older_spelling("--cuda-graph-max-bs-decode");
  REQUIRE(decode_bs != nullptr);
  CHECK(decode_bs->flag == "--cuda-graph-max-bs");
  CHECK(decode_bs->since == "v0.5.14");
  const auto* earlier = t.older_spelling("--speculative-draft");  // an earlier release's spelling
  REQUIRE(earlier != nullptr);
  CHECK(earlier->since.empty());
}

TEST_CASE("a later release's flag in a pasted command: ignored with its release said, or refused naming it") {
  const CliResult ok = paste_run(newer_with(kSglangLater, {"--tokenizer-backend", "fastokens", "--enable-trace"}));
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  const json j = json::parse(ok.out);
  const std::string note = later_note(j, "flags of later releases than SGLang v0.5.2");
  CHECK(note.find("--tokenizer-backend (v0.5.11)") != std::string::npos);
  CHECK(note.find("--enable-trace (v0.5.3)") != std::string::npos);
  CHECK(note.find("priced on SGLang v0.5.2's terms") != std::string::npos);
  int ignored = 0;
  for (const auto& f : j.at("pasted_command").at("flags"))
    if (f.at("flag") == "--tokenizer-backend" || f.at("flag") == "--enable-trace")
      ignored += f.at("class") == "ignored";
  CHECK(ignored == 2);
  // the price is the command's without them
  const CliResult plain = paste_run(kSglangLater);
  REQUIRE(plain.exit_code == 0);
  CHECK(json::parse(plain.out)["scenarios"][0]["baseline"] == j["scenarios"][0]["baseline"]);

  for (const auto& extra : std::vector<std::vector<std::string>>{
           {"--enable-torch-symm-mem"}, {"--speculative-adaptive"}, {"--cuda-graph-backend-decode", "breakable"}}) {
    const CliResult r = paste_run(newer_with(kSglangLater, extra));
    INFO(extra[0] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not modelled: " + extra[0]) != std::string::npos);
    CHECK(r.out.empty());
  }
  const CliResult unknown = paste_run(newer_with(kSglangLater, {"--no-such-flag"}));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("or of a later release up to v0.5.18 (models/stacks/sglang-v0.5.18-newer-flags.csv)") !=
        std::string::npos);
}

TEST_CASE("a later name of a v0.5.2 setting reaches the run as that setting") {
  const CliResult named =
      paste_run(newer_with(kSglangLater, {"--cuda-graph-max-bs-decode", "4"}), {"--batch-size", "8"});
  const CliResult old = paste_run(newer_with(kSglangLater, {"--cuda-graph-max-bs", "4"}), {"--batch-size", "8"});
  INFO(named.err);
  REQUIRE(named.exit_code == 0);
  REQUIRE(old.exit_code == 0);
  const json n = json::parse(named.out), o = json::parse(old.out);
  CHECK(n["scenarios"][0]["baseline"] == o["scenarios"][0]["baseline"]);
  CHECK(later_note(n, "--cuda-graph-max-bs-decode read as --cuda-graph-max-bs") != "");
  // batch 8 over a graph limit of 4 runs eagerly: not the price of the graphed batch
  const CliResult graphed = paste_run(kSglangLater, {"--batch-size", "8"});
  REQUIRE(graphed.exit_code == 0);
  CHECK(json::parse(graphed.out)["scenarios"][0]["baseline"] != n["scenarios"][0]["baseline"]);

  // --cuda-graph-backend-decode: `disabled` is --disable-cuda-graph, `full` the default
  const CliResult disabled = paste_run(newer_with(kSglangLater, {"--cuda-graph-backend-decode", "disabled"}));
  const CliResult off = paste_run(newer_with(kSglangLater, {"--disable-cuda-graph"}));
  const CliResult full = paste_run(newer_with(kSglangLater, {"--cuda-graph-backend-decode", "full"}));
  const CliResult plain = paste_run(kSglangLater);
  REQUIRE(disabled.exit_code == 0);
  REQUIRE(full.exit_code == 0);
  CHECK(json::parse(disabled.out)["scenarios"][0]["baseline"] == json::parse(off.out)["scenarios"][0]["baseline"]);
  CHECK(json::parse(full.out)["scenarios"][0]["baseline"] == json::parse(plain.out)["scenarios"][0]["baseline"]);
  CHECK(json::parse(full.out)["scenarios"][0]["baseline"] != json::parse(off.out)["scenarios"][0]["baseline"]);
}

TEST_CASE("a speculative SGLang command runs the worker its release, top-k and overlap pick") {
  const std::vector<std::string> spec = newer_with(kSglangLater, kEagleLater);
  const std::vector<std::string> acc;  // paste_run gives the accept len
  // a pasted command priced: its notes, the runtime profile it used and its spec tok/s
  struct Priced {
    std::string worker, profile;
    double tok_s = 0;
  };
  auto priced = [&](const std::vector<std::string>& cmd, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> with = acc;
    with.insert(with.end(), flags.begin(), flags.end());
    const CliResult r = paste_run(cmd, with);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    return Priced{later_note(j, "the speculative worker is"), j.at("settings").at("runtime_profile"),
                  j.at("scenarios")[0].at("spec").at("tok_per_s").get<double>()};
  };
  auto with_env = [](const std::string& env, const std::vector<std::string>& cmd) {
    std::vector<std::string> out = {env};
    out.insert(out.end(), cmd.begin(), cmd.end());
    return out;
  };
  // v0.5.14 on: spec v2 with overlap, the only worker; its profile hides host work behind the forwards
  const Priced v18 = priced(newer_with(spec, {"--cuda-graph-max-bs-decode", "32", "--language-model-only"}));
  CHECK(v18.worker.find("spec v2 with overlap scheduling (SGLang v0.5.18: the only speculative worker from "
                        "v0.5.13)") != std::string::npos);
  CHECK(v18.profile == "models/runtime/sglang-spec-v2.json");
  const Priced v1_terms =
      priced(newer_with(spec, {"--cuda-graph-max-bs-decode", "32", "--language-model-only"}), {"--runtime", "sglang"});
  CHECK(v1_terms.profile == "models/runtime/sglang.json");
  CHECK(v1_terms.worker.find("--runtime sglang prices it as given") != std::string::npos);
  CHECK(v18.tok_s > v1_terms.tok_s);
  // ... without overlap: v2's synchronous path, priced on the v1 terms and said so
  const Priced sync = priced(newer_with(spec, {"--language-model-only", "--disable-overlap-schedule"}));
  CHECK(sync.worker.find("spec v2 without overlap scheduling (SGLang v0.5.18 with --disable-overlap-schedule)") !=
        std::string::npos);
  CHECK(sync.profile == "models/runtime/sglang.json");
  // v0.5.11-v0.5.12: v2 by default; v1 with top-k > 1, --disable-overlap-schedule or the variable off
  const std::vector<std::string> v11 = newer_with(spec, {"--tokenizer-backend", "fastokens"});
  CHECK(priced(v11).profile == "models/runtime/sglang-spec-v2.json");
  CHECK(priced(v11).worker.find("SGLang v0.5.11: the default from v0.5.11") != std::string::npos);
  std::vector<std::string> tree = v11;
  tree[std::find(tree.begin(), tree.end(), "--speculative-eagle-topk") - tree.begin() + 1] = "4";
  tree[std::find(tree.begin(), tree.end(), "--speculative-num-draft-tokens") - tree.begin() + 1] = "8";
  const Priced v11_tree = priced(tree);
  CHECK(v11_tree.profile == "models/runtime/sglang.json");
  CHECK(v11_tree.worker.find("v1 (SGLang v0.5.11 runs top-k 4 on the v1 worker)") != std::string::npos);
  CHECK(
      v11_tree.worker.find("from v0.5.13 SGLang runs it on spec v2 (--sglang-release v0.5.13 or later prices that)") !=
      std::string::npos);
  CHECK(priced(newer_with(v11, {"--disable-overlap-schedule"})).profile == "models/runtime/sglang.json");
  for (const std::string off : {"SGLANG_ENABLE_SPEC_V2=0", "SGLANG_ENABLE_SPEC_V2=false", "SGLANG_ENABLE_SPEC_V2=N"}) {
    INFO(off);
    const Priced p = priced(with_env(off, v11));
    CHECK(p.profile == "models/runtime/sglang.json");
    CHECK(p.worker.find("with SGLANG_ENABLE_SPEC_V2 off") != std::string::npos);
  }
  // v0.5.13: the variable off is v2 without overlap; from v0.5.14 it is gone and changes nothing
  CHECK(priced(with_env("SGLANG_ENABLE_SPEC_V2=0", newer_with(spec, {"--load-snapshot-publish-interval", "30"})))
            .worker.find("spec v2 without overlap") != std::string::npos);
  CHECK(priced(with_env("SGLANG_ENABLE_SPEC_V2=0", newer_with(spec, {"--language-model-only"}))).profile ==
        "models/runtime/sglang-spec-v2.json");
  // before v0.5.11 (and v0.5.2's flags alone): v1 unless the variable is on, then v2 with overlap
  const Priced plain = priced(spec);
  CHECK(plain.worker.empty());  // the pinned release's worker needs no note
  CHECK(plain.profile == "models/runtime/sglang.json");
  CHECK(priced(newer_with(spec, {"--pre-warm-nccl"})).profile == "models/runtime/sglang.json");
  const Priced opted = priced(with_env("SGLANG_ENABLE_SPEC_V2=1", spec));
  CHECK(opted.profile == "models/runtime/sglang-spec-v2.json");
  CHECK(opted.tok_s == Approx(v18.tok_s));
  // SGLang refuses spec v2 with a tree before v0.5.11; a value EnvBool does not read is refused
  std::vector<std::string> old_tree = spec;
  old_tree[std::find(old_tree.begin(), old_tree.end(), "--speculative-eagle-topk") - old_tree.begin() + 1] = "4";
  const CliResult refused = paste_run(with_env("SGLANG_ENABLE_SPEC_V2=1", old_tree), acc);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("SGLANG_ENABLE_SPEC_V2") != std::string::npos);
  CHECK(refused.err.find("top-k 4") != std::string::npos);
  CHECK(refused.out.empty());
  const CliResult word = paste_run(with_env("SGLANG_ENABLE_SPEC_V2=off", spec), acc);
  CHECK(word.exit_code == 2);
  CHECK(word.err.find("SGLANG_ENABLE_SPEC_V2") != std::string::npos);
  // a plain command of a later release: priced on v0.5.2's terms
  CHECK(paste_run(newer_with(kSglangLater, {"--cuda-graph-max-bs-decode", "32"})).exit_code == 0);
}

TEST_CASE("a later flag at its own default changes nothing; --enforce-disable-flashinfer-allreduce-fusion wins") {
  const CliResult one = paste_run(
      newer_with(kSglangLater, {"--dcp-size", "1", "--kv-canary", "none", "--no-lora-strict-loading", "--dllm-fdfo"}));
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  int at_default = 0;
  const json report = json::parse(one.out);  // kept: a range-for over a temporary's member dangles
  for (const auto& f : report.at("pasted_command").at("flags")) {
    const std::string name = f.at("flag");
    if (name == "--dcp-size" || name == "--kv-canary" || name == "--no-lora-strict-loading" || name == "--dllm-fdfo") {
      CHECK(f.at("class") == "ignored");
      ++at_default;
    }
  }
  CHECK(at_default == 4);
  // off their defaults: refused
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--lora-strict-loading"}, {"--no-dllm-fdfo"}}) {
    const CliResult r = paste_run(newer_with(kSglangLater, extra));
    INFO(extra[0]);
    CHECK(r.exit_code == 2);
  }
  const CliResult two = paste_run(newer_with(kSglangLater, {"--dcp-size", "2"}));
  CHECK(two.exit_code == 2);
  CHECK(two.err.find("not modelled: --dcp-size 2") != std::string::npos);

  const std::vector<std::string> tp8 = newer_with(kSglangLater, {"--tp", "8"});
  const CliResult fused = paste_run(newer_with(tp8, {"--enable-flashinfer-allreduce-fusion"}));
  const CliResult forced = paste_run(
      newer_with(tp8, {"--enforce-disable-flashinfer-allreduce-fusion", "--enable-flashinfer-allreduce-fusion"}));
  const CliResult plain = paste_run(tp8);
  INFO(forced.err);
  REQUIRE(fused.exit_code == 0);
  REQUIRE(forced.exit_code == 0);
  REQUIRE(plain.exit_code == 0);
  const json f = json::parse(fused.out), o = json::parse(forced.out), p = json::parse(plain.out);
  CHECK(o["scenarios"][0]["baseline"] == p["scenarios"][0]["baseline"]);
  CHECK(f["scenarios"][0]["baseline"] != p["scenarios"][0]["baseline"]);
}

TEST_CASE("a server log of a later release: dated by its server_args, spec-v2 said, refused settings listed") {
  const std::string dir = fresh_dir();
  std::string text = slurp(traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"));
  const std::string from = "server_args=ServerArgs(model_path=";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(),
               "server_args=ServerArgs(cuda_graph_backend_decode='full', speculative_adaptive=True, "
               "tokenizer_backend='fastokens', enable_torch_symm_mem=False, model_path=");
  write_text(dir + "/later.log", text);
  const json d = run_json({"diagnose", dir + "/later.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  // the log's disable_overlap_schedule=True: v2's synchronous path, priced on v1's terms and warned
  const json* v2 = later_finding(d, "spec-v2-worker");
  REQUIRE(v2 != nullptr);
  CHECK(v2->at("warning") == true);
  CHECK(v2->at("message").get<std::string>().find("without overlap scheduling (SGLang v0.5.14 with "
                                                  "--disable-overlap-schedule; its server_args has "
                                                  "cuda_graph_backend_decode)") != std::string::npos);
  // overlap on: v2 with overlap, priced with its own profile and said so
  std::string overlapped = text;
  overlapped.replace(overlapped.find("disable_overlap_schedule=True"), 29, "disable_overlap_schedule=False");
  write_text(dir + "/overlap.log", overlapped);
  const json o = run_json({"diagnose", dir + "/overlap.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  const json* v2o = later_finding(o, "spec-v2-worker");
  REQUIRE(v2o != nullptr);
  CHECK(v2o->at("warning") == false);
  CHECK(v2o->at("message").get<std::string>().find("with overlap scheduling (SGLang v0.5.14: the only speculative "
                                                   "worker from v0.5.13; its server_args has") != std::string::npos);
  CHECK(o.dump().find("sglang-spec-v2") != std::string::npos);
  CHECK(d.dump().find("sglang-spec-v2") == std::string::npos);
  const json* off = later_finding(d, "settings-not-modelled");
  REQUIRE(off != nullptr);
  const std::string listed = off->at("message");
  CHECK(listed.find("speculative_adaptive=True") != std::string::npos);  // refused, off its default
  CHECK(listed.find("enable_torch_symm_mem") == std::string::npos);      // refused, at its default
  CHECK(listed.find("cuda_graph_backend_decode") == std::string::npos);  // 'full': v0.5.2's decode graphs
  CHECK(listed.find("tokenizer_backend") == std::string::npos);          // ignored
  // v0.5.11-v0.5.12: disable_overlap_schedule=True is the v1 worker, which needs no finding
  std::string v11 = slurp(traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"));
  v11.replace(v11.find(from), from.size(),
              "server_args=ServerArgs(tokenizer_backend='huggingface', gc_threshold=[1000, 10, 10], "
              "debug_tensor_dump_layers=None, model_path=");
  write_text(dir + "/v11.log", v11);
  const json e = run_json({"diagnose", dir + "/v11.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  CHECK(later_finding(e, "spec-v2-worker") == nullptr);
  const json* listed_11 = later_finding(e, "settings-not-modelled");
  REQUIRE(listed_11 != nullptr);
  CHECK(listed_11->at("message").get<std::string>().find("gc_threshold=[1000, 10, 10]") != std::string::npos);
  CHECK(listed_11->at("message").get<std::string>().find("debug_tensor_dump_layers") == std::string::npos);
  // a default that is no literal ((suppressed): argparse sets nothing) is not compared
  std::string nsa = text;
  nsa.replace(nsa.find("cuda_graph_backend_decode='full'"), std::string("cuda_graph_backend_decode='full'").size(),
              "nsa_decode_backend=None");
  write_text(dir + "/nsa.log", nsa);
  const json n = run_json({"diagnose", dir + "/nsa.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  const json* listed_nsa = later_finding(n, "settings-not-modelled");
  REQUIRE(listed_nsa != nullptr);  // speculative_adaptive=True still is
  CHECK(listed_nsa->at("message").get<std::string>().find("nsa_decode_backend") == std::string::npos);
  // the v0.5.2 log itself: neither finding
  const json base =
      run_json({"diagnose", traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"),
                "--json", "--hardware", "h100-sxm:nvswitch"});
  CHECK(later_finding(base, "spec-v2-worker") == nullptr);
}

TEST_CASE("a later release's name for the decode graphs' limit is read from server_args") {
  const std::string dir = fresh_dir();
  const std::string text =
      slurp(traces_path("sglang-logs/sglang-baseline-llama3.1-8b-h100-synthetic-from-real-format.log"));
  const std::string from = "cuda_graph_max_bs=None";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  std::string renamed = text, old = text;
  renamed.replace(at, from.size(), "cuda_graph_max_bs_decode=4");
  old.replace(at, from.size(), "cuda_graph_max_bs=4");
  write_text(dir + "/renamed.log", renamed);
  write_text(dir + "/old.log", old);
  const json r = run_json({"diagnose", dir + "/renamed.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  const json o = run_json({"diagnose", dir + "/old.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  CHECK(r.at("scenario").dump().find("\"cuda_graph_max_bs\":4") != std::string::npos);
  json renamed_settings = r.at("scenario").at("settings");
  CHECK(renamed_settings.at("sglang_release") == "v0.5.14");  // the later key dates the log
  renamed_settings.erase("sglang_release");
  CHECK(renamed_settings == o.at("scenario").at("settings"));
}

TEST_CASE("vLLM's later flags: --spec-* read as --speculative-config's keys, others ignored or refused") {
  const std::vector<std::string> serve = {"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"};
  const StackFlagTable& t = stack_flag_table("vllm");
  CHECK(t.newer.size() > 100);
  const auto& applied = vllm_applied_flags();
  for (const auto& n : t.newer) {
    INFO(n.row.flag);
    const bool has = std::find(applied.begin(), applied.end(), n.row.flag) != applied.end();
    CHECK(has == n.row.modelled_for_some());
    CHECK(release_at_least(t.newer_release, n.since));
    CHECK(release_at_least(n.since, "main 2025-10-01"));
  }
  const CliResult later =
      paste_run(newer_with(serve, {"--spec-method", "eagle3", "--spec-model", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                   "--spec-tokens", "3", "--kv_cache_metrics"}));
  const CliResult config = paste_run(newer_with(
      serve, {"--speculative-config",
              R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})"}));
  INFO(later.err);
  REQUIRE(later.exit_code == 0);
  REQUIRE(config.exit_code == 0);
  const json l = json::parse(later.out), c = json::parse(config.out);
  CHECK(l["scenarios"][0]["spec"] == c["scenarios"][0]["spec"]);
  CHECK(l["settings"]["speculative_num_steps"] == 3);
  CHECK(later_note(l, "--spec-tokens read as --speculative-config.num_speculative_tokens") != "");
  CHECK(later_note(l, "--kv_cache_metrics (main 2025-12-01)") != "");

  // --max-cudagraph-capture-size N: the cap one value of v0.11's --cuda-graph-sizes set
  const CliResult cap = paste_run(newer_with(serve, {"--max-cudagraph-capture-size", "4"}), {"--batch-size", "8"});
  const CliResult sizes = paste_run(newer_with(serve, {"--cuda-graph-sizes", "4"}), {"--batch-size", "8"});
  INFO(cap.err);
  REQUIRE(cap.exit_code == 0);
  REQUIRE(sizes.exit_code == 0);
  CHECK(json::parse(cap.out)["scenarios"][0]["baseline"] == json::parse(sizes.out)["scenarios"][0]["baseline"]);
  CHECK(json::parse(cap.out)["settings"]["cuda_graph_max_bs"] == 4);
  CHECK(paste_run(newer_with(serve, {"--mm-ipc-gpu-memory-gb", "2"})).exit_code == 2);
  CHECK(paste_run(newer_with(serve, {"--mm-ipc-gpu-memory-gb", "0"})).exit_code == 0);  // its default

  const CliResult moe = paste_run(newer_with(serve, {"--moe-backend", "triton"}));
  CHECK(moe.exit_code == 2);
  CHECK(moe.err.find("not modelled: --moe-backend triton changes the MoE kernels") != std::string::npos);
  CHECK(moe.out.empty());
}

TEST_CASE("a vLLM log's launch: a later flag the table ignores is dropped, one it refuses listed") {
  const std::string dir = fresh_dir();
  std::string text = slurp(traces_path("vllm-logs/vllm-eagle3-qwen3-8b-h20-synthetic-from-real-format.log"));
  const std::string from = "'max_model_len': 8192, ";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.insert(at + from.size(), "'kv_cache_metrics': True, 'moe_backend': 'triton', ");
  write_text(dir + "/later.log", text);
  const json d = run_json({"diagnose", dir + "/later.log", "--json", "--hardware", "h20:nvswitch"});
  const json* off = later_finding(d, "settings-not-modelled");
  REQUIRE(off != nullptr);
  const std::string listed = off->at("message");
  CHECK(listed.find("--moe-backend triton (it changes the MoE kernels") != std::string::npos);
  CHECK(listed.find("kv-cache-metrics") == std::string::npos);
  CHECK(listed.find("kv_cache_metrics") == std::string::npos);
}

TEST_CASE("a log's later keys for the decode graphs turn them off as disable_cuda_graph does") {
  const std::string dir = fresh_dir();
  const std::string text =
      slurp(traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"));
  const std::string from = "server_args=ServerArgs(model_path=";
  REQUIRE(text.find(from) != std::string::npos);
  for (const std::string key :
       {"disable_decode_cuda_graph=True", "cuda_graph_backend_decode='disabled'", "cuda_graph_backend_decode='full'"}) {
    std::string t = text;
    t.replace(t.find(from), from.size(), "server_args=ServerArgs(" + key + ", model_path=");
    write_text(dir + "/g.log", t);
    const json d = run_json({"diagnose", dir + "/g.log", "--json", "--hardware", "h100-sxm:nvswitch"});
    INFO(key);
    CHECK(d.at("scenario").at("settings").at("disable_cuda_graph") == (key != "cuda_graph_backend_decode='full'"));
  }
}

TEST_CASE("the spec-v2 profile hides host work behind the forwards, less of it on FlashInfer") {
  auto spec_tok_s = [](const std::string& runtime, const std::string& backend) {
    const json j = run_json({"run",
                             "--json",
                             "--model-path",
                             "llama-3.1-8b",
                             "--speculative-draft-model-path",
                             "llama-3.1-8b/eagle1",
                             "--hardware",
                             "h100-sxm:nvswitch",
                             "--batch-size",
                             "1",
                             "--speculative-algorithm",
                             "EAGLE",
                             "--speculative-num-steps",
                             "5",
                             "--speculative-eagle-topk",
                             "1",
                             "--speculative-num-draft-tokens",
                             "6",
                             "--accept-len",
                             "3",
                             "--attention-backend",
                             backend,
                             "--runtime",
                             runtime});
    return j.at("scenarios")[0].at("spec").at("tok_per_s").get<double>();
  };
  const double fa3 = spec_tok_s("sglang-spec-v2", "fa3") / spec_tok_s("sglang", "fa3");
  const double flashinfer = spec_tok_s("sglang-spec-v2", "flashinfer") / spec_tok_s("sglang", "flashinfer");
  INFO("v2 over v1: fa3 " << fa3 << ", flashinfer " << flashinfer);
  CHECK(fa3 > 1.03);               // every phase's host work hides
  CHECK(flashinfer > 1.0);         // the draft extend's still does
  CHECK(flashinfer < fa3 - 0.02);  // the draft and verify plans' syncs show
  // a phase lost on FlashInfer must overlap to begin with
  const std::string dir = fresh_dir();
  json bad = json::parse(slurp(models_path("runtime/sglang-spec-v2.json")));
  bad["host_overlaps_forward"]["verify"] = false;
  write_text(dir + "/bad.json", bad.dump());
  const CliResult r = run_specsim({"run", "--runtime", dir + "/bad.json", "--accept-len", "2"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not_on_flashinfer") != std::string::npos);
}
