// `specsim check`: a baseline from `specsim run --json` passes on its own scenario, a doctored one
// fails with exit 1 and a diff table, different inputs and malformed baselines are bad input.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check/check.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

std::string make_baseline(const std::string& dir, const std::vector<std::string>& flags = {}) {
  std::vector<std::string> a = {"run", "--json"};
  a.insert(a.end(), flags.begin(), flags.end());
  const auto r = run_specsim(a);
  REQUIRE(r.exit_code == 0);
  const std::string path = dir + "/base.json";
  write_text(path, r.out);
  return path;
}

// Multiplies one figure of the first scenario: a phase's us or a tok/s.
std::string doctor(const std::string& dir, const std::string& base, const std::string& phase, double factor) {
  json j = json::parse(slurp(base));
  json& sc = j["scenarios"][0];
  if (phase == "spec")
    sc["spec"]["tok_per_s"] = sc["spec"]["tok_per_s"].get<double>() * factor;
  else
    for (auto& p : sc["phases"])
      if (p["name"] == phase) p["us"] = p["us"].get<double>() * factor;
  const std::string path = dir + "/doctored-" + phase + std::to_string(factor) + ".json";
  write_text(path, j.dump(2));
  return path;
}

std::string fmt_failures(size_t n) { return "failures=\"" + std::to_string(n) + "\""; }

// The baseline as specsim wrote it before baselines carried their scenario.
std::string without_scenario(const std::string& dir, const std::string& base) {
  json j = json::parse(slurp(base));
  REQUIRE(j.contains("scenario_file"));
  j.erase("scenario_file");
  const std::string path = dir + "/old-style.json";
  write_text(path, j.dump(2));
  return path;
}

}  // namespace

TEST_CASE("check passes on its own baseline") {
  const std::string dir = fresh_dir();
  const std::string base = make_baseline(dir);
  const auto r = run_specsim({"check", "--baseline", base});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("check: ok") != std::string::npos);
  CHECK(r.out.find("verify us") != std::string::npos);
  CHECK(r.out.find("REGRESSED") == std::string::npos);
  // Same with explicit flags on both sides.
  const std::string b2 = make_baseline(fresh_dir(), {"--batch-size", "4", "--allreduce", "fixed:40"});
  CHECK(run_specsim({"check", "--baseline", b2, "--batch-size", "4", "--allreduce", "fixed:40"}).exit_code == 0);
}

TEST_CASE("check --gate phases fails with exit 1 on a doctored baseline") {
  const std::string dir = fresh_dir();
  const std::string base = make_baseline(dir);
  // The baseline claims verify was 10% faster: the rerun is slower than it.
  const auto r = run_specsim({"check", "--baseline", doctor(dir, base, "verify", 0.9), "--gate", "phases"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("REGRESSED") != std::string::npos);
  CHECK(r.out.find("+11.11%") != std::string::npos);
  CHECK(r.out.find("check: REGRESSED: 1 of") != std::string::npos);
  // The baseline claims 10% more speculative tok/s.
  CHECK(run_specsim({"check", "--baseline", doctor(dir, base, "spec", 1.1)}).exit_code == 1);
  // 2% is within the default 3%, not within 1%.
  const std::string two = doctor(dir, base, "baseline_decode", 0.98);
  CHECK(run_specsim({"check", "--baseline", two, "--gate", "phases"}).exit_code == 0);
  CHECK(run_specsim({"check", "--baseline", two, "--tolerance", "1%", "--gate", "phases"}).exit_code == 1);
  CHECK(run_specsim({"check", "--baseline", two, "--tolerance", "0.01", "--gate", "phases"}).exit_code == 1);
  // Faster than the baseline is not a regression.
  const auto faster = run_specsim({"check", "--baseline", doctor(dir, base, "verify", 1.2)});
  CHECK(faster.exit_code == 0);
  CHECK(faster.out.find("faster") != std::string::npos);
}

TEST_CASE("check of a baseline without its scenario refuses to compare different inputs") {
  const std::string dir = fresh_dir();
  const std::string base = without_scenario(dir, make_baseline(dir));
  const auto r = run_specsim({"check", "--baseline", base, "--batch-size", "4"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("settings/batch_size: baseline 1, now 4") != std::string::npos);
  CHECK(r.err.find("(--baseline)") != std::string::npos);
  CHECK(r.err.find("remake it with `specsim run FLAGS --json > FILE`") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(run_specsim({"check", "--baseline", base}).exit_code == 0);  // made with no flags: rerun the same
  const auto hw = run_specsim({"check", "--baseline", base, "--hardware", "h200:nvswitch"});
  CHECK(hw.exit_code == 2);
  CHECK(hw.err.find("hardware/spec") != std::string::npos);
  // Asked to compare anyway: it does (and bs 4 moves the figures, so it regresses).
  const auto anyway = run_specsim({"check", "--baseline", base, "--batch-size", "4", "--allow-different-settings"});
  CHECK((anyway.exit_code == 0 || anyway.exit_code == 1));
  CHECK(anyway.err.find("note: comparing different inputs") != std::string::npos);
  CHECK(anyway.out.find("verify us") != std::string::npos);
}

TEST_CASE("check: bad input exits 2") {
  const std::string dir = fresh_dir();
  write_text(dir + "/broken.json", "{\"specsim_version\": ");
  write_text(dir + "/other.json", "{\"hello\": 1}");
  for (const auto& path : {dir + "/missing.json", dir + "/broken.json", dir + "/other.json"}) {
    const auto r = run_specsim({"check", "--baseline", path});
    INFO(path << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
  }
  CHECK(run_specsim({"check"}).exit_code == 2);  // --baseline is required
  const std::string base = make_baseline(dir);
  const auto tol = run_specsim({"check", "--baseline", base, "--tolerance", "abc"});
  CHECK(tol.exit_code == 2);
  CHECK(tol.err.find("(--tolerance)") != std::string::npos);
  json carried = json::parse(slurp(base));
  carried["scenario_file"] = 7;  // the scenario it carries is not one
  write_text(dir + "/bad-scenario.json", carried.dump());
  const auto sc = run_specsim({"check", "--baseline", dir + "/bad-scenario.json"});
  CHECK(sc.exit_code == 2);
  CHECK(sc.err.find("bad-scenario.json: scenario_file: format") != std::string::npos);
  const auto replay = run_specsim({"check", "--baseline", base, "--replay"});
  CHECK(replay.exit_code == 2);
  // an analytic baseline is refused with --replay (measured vs measured: tests/test_check_replay.cc)
  CHECK(replay.err.find("specsim replay -o") != std::string::npos);
}

TEST_CASE("tolerance parsing") {
  using specsim::check::parse_tolerance;
  CHECK(parse_tolerance("3%") == Approx(0.03));
  CHECK(parse_tolerance("0.05") == Approx(0.05));
  CHECK(parse_tolerance("0") == 0);
  CHECK_THROWS_AS(parse_tolerance("3"), specsim::InputError);
  CHECK_THROWS_AS(parse_tolerance("-1%"), specsim::InputError);
  CHECK_THROWS_AS(parse_tolerance("3%%"), specsim::InputError);
}

TEST_CASE("check gates: tok/s by default, cycle time or every phase on request; JSON for CI") {
  const std::string dir = fresh_dir();
  // steps 2 -> 3: the verify forward is slower (+5%) but speculative tok/s rises
  const std::string base = make_baseline(dir, {"--speculative-num-steps", "2"});
  const std::vector<std::string> rerun = {
      "check", "--baseline", base, "--speculative-num-steps", "3", "--allow-different-settings"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = rerun;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_specsim(a);
  };
  const auto tok = with({});
  INFO(tok.out << tok.err);
  CHECK(tok.exit_code == 0);
  CHECK(tok.out.find("worse (not gated)") != std::string::npos);
  CHECK(with({"--gate", "phases"}).exit_code == 1);
  CHECK(with({"--gate", "cycle_us"}).exit_code == 1);  // the NCCL cycle grows 6%
  CHECK(with({"--gate", "cycle_us", "--tolerance", "10%"}).exit_code == 0);
  const auto bad = with({"--gate", "latency"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("(--gate)") != std::string::npos);

  const auto j = with({"--json", "--gate", "phases"});
  CHECK(j.exit_code == 1);
  const nlohmann::json out = nlohmann::json::parse(j.out);
  CHECK(out["gate"] == "phases");
  CHECK(out["verdict"] == "regressed");
  bool verify_regressed = false;
  for (const auto& r : out["rows"])
    if (r["figure"] == "verify us" && r["allreduce"] == "nccl") verify_regressed = r["regressed"].get<bool>();
  CHECK(verify_regressed);
  CHECK(nlohmann::json::parse(with({"--json"}).out)["verdict"] == "ok");
}

TEST_CASE("check takes the rerun's accept len from an SGLang log") {
  const std::string dir = fresh_dir();
  const std::string log = traces_path("sglang-eagle3-decode-synthetic.log");
  const std::string base = make_baseline(dir, {"--accept-from", log});
  const auto same = run_specsim({"check", "--baseline", base, "--accept-from", log});
  INFO(same.out << same.err);
  CHECK(same.exit_code == 0);
  // the baseline carries the accept len the log gave: rerun as made without the log
  CHECK(run_specsim({"check", "--baseline", base}).exit_code == 0);
  // a baseline without its scenario, rerun without the log: the built-in accept len, refused
  CHECK(run_specsim({"check", "--baseline", without_scenario(dir, base)}).exit_code == 2);
}

TEST_CASE("check --baseline alone reruns the scenario the baseline carries") {
  const std::string dir = fresh_dir();
  const std::string base = make_baseline(dir, {"--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch",
                                               "--tp-size", "2", "--batch-size", "4", "--accept-len", "2.5"});
  const json b = json::parse(slurp(base));
  CHECK(b["scenario_file"]["model"] == "llama-3.1-8b");
  const auto r = run_specsim({"check", "--baseline", base});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("rerunning the scenario of " + base + ", as it was made\n") != std::string::npos);
  CHECK(r.out.find("check: ok") != std::string::npos);
  CHECK(r.err.empty());
  // --json: the version, no change and no difference, every row gated or not, the verdict.
  const auto j = run_specsim({"check", "--baseline", base, "--json"});
  REQUIRE(j.exit_code == 0);
  const json out = json::parse(j.out);
  CHECK(out["specsim_version"] == b["specsim_version"]);
  CHECK(out["baseline"]["carries_scenario"] == true);
  CHECK(out["changes_under_test"].empty());
  CHECK(out["input_differences"].empty());
  CHECK(out["verdict"] == "ok");
  size_t gated = 0;
  for (const auto& row : out["rows"]) gated += row["gated"].get<bool>();
  CHECK(gated == 4);  // the default gate: baseline and spec tok/s of each backend (nccl, custom)
}

TEST_CASE("check: flags beside a baseline are the change under test; a slower one fails with exit 1") {
  const std::string dir = fresh_dir();
  const std::string base = make_baseline(dir);
  // An 8x longer context: every forward reads more KV cache, tok/s falls.
  const auto r = run_specsim({"check", "--baseline", base, "--context-len", "16384"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("with the change under test: --context-len 16384") != std::string::npos);
  CHECK(r.out.find("settings/context_len: baseline 2048, now 16384") != std::string::npos);
  CHECK(r.out.find("check: REGRESSED") != std::string::npos);
  const auto j = run_specsim({"check", "--baseline", base, "--context-len", "16384", "--json"});
  CHECK(j.exit_code == 1);
  const json out = json::parse(j.out);
  CHECK(out["verdict"] == "regressed");
  CHECK(out["changes_under_test"] == json::array({"--context-len 16384"}));
  REQUIRE(out["input_differences"].size() == 1);
  CHECK(out["input_differences"][0] == "settings/context_len: baseline 2048, now 16384");
  // A faster change passes: custom all-reduce alone, whose tok/s beats NCCL's here.
  const auto faster = run_specsim({"check", "--baseline", base, "--eager-phases", "none"});
  INFO(faster.out << faster.err);
  CHECK(faster.exit_code == 0);
  CHECK(faster.out.find("change under test: --eager-phases none") != std::string::npos);
}

TEST_CASE("check: a phase whose forwards a cycle change is compared per cycle, not per forward") {
  const std::string dir = fresh_dir();
  const std::string base = make_baseline(dir);
  const json b = json::parse(slurp(base));
  double base_draft = 0;  // the built-in's draft_decode, one forward at 2 steps
  for (const auto& p : b["scenarios"][0]["phases"])
    if (p["name"] == "draft_decode") base_draft = p["us"].get<double>() * p["count"].get<double>();
  REQUIRE(base_draft > 0);
  const auto r = run_specsim(
      {"check", "--baseline", base, "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4", "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code <= 1);
  bool seen = false;
  const json out = json::parse(r.out);
  for (const auto& row : out["rows"]) {
    const std::string f = row["figure"];
    CHECK(f != "draft_decode us");  // not a per-forward figure across different counts
    if (f != "draft_decode us a cycle (1 -> 2 forwards)" || row["allreduce"] != "nccl") continue;
    seen = true;
    CHECK(row["baseline"].get<double>() == Approx(base_draft));
    CHECK(row["now"].get<double>() > row["baseline"].get<double>());  // two draft forwards cost more than one
  }
  CHECK(seen);
}

TEST_CASE("check --junit: one testcase per figure, a regression a failure; nothing written on bad input") {
  const std::string dir = fresh_dir();
  const std::string base = make_baseline(dir);
  const std::string xml = dir + "/check.xml";
  CHECK(run_specsim({"check", "--baseline", base, "--junit", xml}).exit_code == 0);
  const std::string ok = slurp(xml);
  CHECK(ok.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0) == 0);
  CHECK(ok.find("failures=\"0\"") != std::string::npos);
  CHECK(ok.find("<testcase classname=\"specsim.check.nccl\" name=\"spec tok/s\">") != std::string::npos);
  CHECK(ok.find("<failure") == std::string::npos);
  const auto bad = run_specsim({"check", "--baseline", base, "--context-len", "16384", "--junit", xml, "--json"});
  CHECK(bad.exit_code == 1);
  const std::string failed = slurp(xml);
  CHECK(failed.find("<failure message=\"REGRESSED\" type=\"regression\">nccl spec tok/s: baseline") !=
        std::string::npos);
  CHECK(failed.find("name=\"change_under_test\" value=\"--context-len 16384\"") != std::string::npos);
  size_t regressed = 0;
  const json bad_json = json::parse(bad.out);
  for (const auto& row : bad_json["rows"]) regressed += row["regressed"].get<bool>();
  CHECK(regressed > 0);
  CHECK(failed.find(fmt_failures(regressed)) != std::string::npos);
  const std::string fresh = dir + "/never.xml";
  CHECK(run_specsim({"check", "--baseline", base, "--tolerance", "abc", "--junit", fresh}).exit_code == 2);
  CHECK(run_specsim({"check", "--baseline", base, "--batch-size", "0", "--junit", fresh}).exit_code == 2);
  CHECK_FALSE(exists(fresh));
}
