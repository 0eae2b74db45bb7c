// Flags of SGLang releases after v0.5.2 (models/stacks/sglang-v0.5.18-newer-flags.csv): a pasted
// command holding one is read (ignored, refused, or a new name of a v0.5.2 flag read as it) and
// says which release it dates the command to; a speculative command of v0.5.14 or later, which
// runs the spec-v2 worker, is refused. A server log's server_args line is dated the same way.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "pasted_command.h"
#include "run_json.h"
#include "scenario/sglang_cmdline.h"
#include "scenario/stack_flag_table.h"
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

TEST_CASE("the later releases' table: every row ignored or refused, dated, and not a v0.5.2 flag") {
  const StackFlagTable& t = stack_flag_table("sglang");
  const auto& applied = sglang_applied_flags();
  CHECK(t.newer_release == "v0.5.18");
  CHECK(t.newer.size() > 250);
  for (const auto& n : t.newer) {
    INFO(n.row.flag);
    CHECK(!n.row.what.empty());
    CHECK(n.row.cls != FlagClass::Modelled);
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
  CHECK(t.older_spelling("--speculative-draft")->since.empty());  // an earlier release's spelling
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

TEST_CASE("a speculative command of SGLang v0.5.14 or later is refused: its spec-v2 worker is not described") {
  const CliResult v2 =
      paste_run(newer_with(newer_with(kSglangLater, kEagleLater), {"--cuda-graph-max-bs-decode", "32"}));
  CHECK(v2.exit_code == 2);
  CHECK(v2.err.find("--cuda-graph-max-bs-decode is a flag of SGLang v0.5.14 and later") != std::string::npos);
  CHECK(v2.err.find("spec-v2 worker") != std::string::npos);
  CHECK(v2.out.empty());
  // the newest flag names the release
  const CliResult newest = paste_run(
      newer_with(newer_with(kSglangLater, kEagleLater), {"--tokenizer-backend", "fastokens", "--language-model-only"}));
  CHECK(newest.exit_code == 2);
  CHECK(newest.err.find("--language-model-only is a flag of SGLang v0.5.18") != std::string::npos);
  // before v0.5.14 the v1 worker still ran: priced
  const CliResult v1 =
      paste_run(newer_with(newer_with(kSglangLater, kEagleLater), {"--tokenizer-backend", "fastokens"}));
  INFO(v1.err);
  CHECK(v1.exit_code == 0);
  // a plain command of a later release: priced on v0.5.2's terms
  CHECK(paste_run(newer_with(kSglangLater, {"--cuda-graph-max-bs-decode", "32"})).exit_code == 0);
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
  const json* v2 = later_finding(d, "spec-v2-worker");
  REQUIRE(v2 != nullptr);
  CHECK(v2->at("warning") == true);
  CHECK(v2->at("message").get<std::string>().find("SGLang v0.5.14 or later (its server_args has "
                                                  "cuda_graph_backend_decode)") != std::string::npos);
  const json* off = later_finding(d, "settings-not-modelled");
  REQUIRE(off != nullptr);
  const std::string listed = off->at("message");
  CHECK(listed.find("speculative_adaptive=True") != std::string::npos);  // refused, off its default
  CHECK(listed.find("enable_torch_symm_mem") == std::string::npos);      // refused, at its default
  CHECK(listed.find("cuda_graph_backend_decode") == std::string::npos);  // 'full': v0.5.2's decode graphs
  CHECK(listed.find("tokenizer_backend") == std::string::npos);          // ignored
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
  CHECK(r.at("scenario").at("settings") == o.at("scenario").at("settings"));
}
