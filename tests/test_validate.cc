// `specsim validate`: published cases predicted without anchors, errors per role, targets.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "accept/accept_len.h"
#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "util/error.h"
#include "validate/error_bands.h"
#include "validate/nccl_check.h"
#include "validate/transfer.h"
#include "validate/validate.h"

using namespace specsim;

namespace {

// The tiny set's predictions made directly: llama-3.1-8b on one H100, SGLang, (3, 1, 4), bs 1.
CycleResult direct(double accept) {
  RunArgs a;
  a.model_path = "llama-3.1-8b";
  a.hardware = "h100-sxm:nvswitch";
  a.tp_size = 1, a.batch_size = 1, a.num_steps = 3, a.topk = 1, a.num_draft_tokens = 4;
  a.algorithm = "EAGLE3";
  a.accept_len = accept;
  a.runtime = "sglang";
  a.allreduce = {"nccl"};
  return run_scenario(resolve_scenario(a)).results.front();
}

const CaseOutcome& find(const ValidateResult& r, const std::string& id) {
  for (const auto& o : r.cases)
    if (o.c.id == id) return o;
  throw std::runtime_error("no case " + id);
}

}  // namespace

TEST_CASE("validate predicts each case and summarises the errors per role") {
  const ValidateResult r = run_validate(test::traces_path("../tests/data/validate-set"));
  REQUIRE(r.cases.size() == 5);
  const double p = direct(3.0).baseline_tok_s;
  CHECK(*find(r, "a-fit-base100").baseline_tok_s == Approx(p));
  // Fit: measured 100, 150, 200 against one prediction P (~152 tok/s): errors P/100 - 1 (~ +52%),
  // P/150 - 1 (~ +1%), P/200 - 1 (~ -24%). Median |error| is the -24% one's size; worst is +52%.
  REQUIRE(p > 125);
  REQUIRE(p < 175);
  CHECK(r.baseline[0].n == 3);
  CHECK(r.baseline[0].median_abs_pct == Approx(100 * (1 - p / 200)));
  CHECK(r.baseline[0].worst_pct == Approx(100 * (p / 100 - 1)));
  CHECK(r.baseline[0].worst_id == "a-fit-base100");
  // Held out: the one spec case, accept len 3 as stated; the skipped case is not scored.
  const CaseOutcome& d = find(r, "d-held-spec");
  CHECK(*d.spec_tok_s == Approx(direct(3.0).spec_tok_s));
  CHECK(r.spec[1].n == 1);
  CHECK(r.spec[1].median_abs_pct == Approx(std::fabs(100 * (*d.spec_tok_s / 300 - 1))));
  CHECK(r.spec[0].n == 0);  // no fit case states an accept length
  CHECK(find(r, "e-skip-no-zoo").skipped.find("zoo_model") != std::string::npos);
  // Fit cases without an accept length still time the cycle: no spec prediction, no implied length.
  CHECK_FALSE(find(r, "a-fit-base100").spec_tok_s);
  // Targets: spec median and worst over held-out cases, baseline median over held-out cases.
  REQUIRE(r.targets.size() == 3);
  CHECK(r.targets[0].met() == (r.spec[1].median_abs_pct <= 10));
  // d's plain figure is b's (same source, deployment, batch and value): one measurement, counted once.
  CHECK(find(r, "d-held-spec").baseline_repeat);
  CHECK_FALSE(find(r, "b-fit-base150").baseline_repeat);
  CHECK(find(r, "d-held-spec").baseline_tok_s);  // still predicted and printed
  CHECK(r.targets[2].stats.n == 0);
}

TEST_CASE("specsim validate: text, JSON, and bad cases") {
  const std::string set = test::traces_path("../tests/data/validate-set");
  const auto text = test::run_specsim({"validate", "--set", set});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("skipped:") != std::string::npos);
  CHECK(text.out.find("targets:") != std::string::npos);
  // Assumptions are numbered notes under the table, each text once; a case's row names its notes.
  CHECK(text.out.find("(assumed: notes 1)") != std::string::npos);
  CHECK(text.out.find("  [1] zoo_gpu: test: the source names no GPU\n") != std::string::npos);
  const auto js = test::run_specsim({"validate", "--set", set, "--json"});
  REQUIRE(js.exit_code == 0);
  const auto j = nlohmann::json::parse(js.out);
  CHECK(j.at("cases").size() == 5);
  CHECK(j.at("summary").at("fit").at("baseline_tok_s").at("n") == 3);
  CHECK(j.at("cases").at(3).at("assumptions").at("zoo_gpu") == "test: the source names no GPU");
  CHECK(j.at("cases").at(0).at("assumptions").empty());

  const std::string dir = test::fresh_dir();
  auto c = nlohmann::json::parse(test::slurp(set + "/a-fit-base100.json"));
  c.erase("role");
  test::write_text(dir + "/x.json", c.dump());
  const auto bad = test::run_specsim({"validate", "--set", dir});
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("x.json:role") != std::string::npos);
  c = nlohmann::json::parse(test::slurp(set + "/a-fit-base100.json"));
  c["baseline_tok_s"] = -3;
  test::write_text(dir + "/x.json", c.dump());
  CHECK(test::run_specsim({"validate", "--set", dir}).err.find("x.json:baseline_tok_s") != std::string::npos);
  c = nlohmann::json::parse(test::slurp(set + "/a-fit-base100.json"));
  c["assumptions"] = {{"gpu_type", "no such field"}};
  test::write_text(dir + "/x.json", c.dump());
  CHECK(test::run_specsim({"validate", "--set", dir}).err.find("x.json:assumptions.gpu_type") != std::string::npos);
  CHECK(test::run_specsim({"validate", "--set", dir + "/none"}).exit_code == 2);
}

namespace {

// A case's `command` as arguments for run_specsim (its first word is the program's name).
std::vector<std::string> command_args(const nlohmann::json& c) {
  std::vector<std::string> args;
  std::istringstream words(c.at("command").get<std::string>());
  for (std::string w; words >> w;) args.push_back(w);
  REQUIRE(args.size() > 1);
  CHECK(args.front() == "specsim");
  args.erase(args.begin());
  return args;
}

}  // namespace

TEST_CASE("validate: each case's command replays its prediction with specsim run") {
  const std::string set = test::traces_path("../tests/data/validate-set");
  const auto js = test::run_specsim({"validate", "--set", set, "--json"});
  REQUIRE(js.exit_code == 0);
  const auto cases = nlohmann::json::parse(js.out).at("cases");
  const auto& d = cases.at(3);
  REQUIRE(d.at("id") == "d-held-spec");
  // Every setting of the case file, as the flag run takes (hand-written: the mapping is the contract).
  CHECK(d.at("command") ==
        "specsim run --model-path llama-3.1-8b --hardware h100-sxm:nvswitch --tp-size 1 --batch-size 1 --runtime "
        "sglang --allreduce nccl --speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --accept-len 3");
  auto args = command_args(d);
  args.push_back("--json");
  const auto run = test::run_specsim(args);
  REQUIRE(run.exit_code == 0);
  const auto spec = nlohmann::json::parse(run.out).at("scenarios").at(0).at("spec");
  CHECK(spec.at("tok_per_s").get<double>() == Approx(d.at("predicted").at("spec_tok_s").get<double>()));
  // No accept length and no spec figure: plain decoding alone; no zoo model: no command.
  CHECK(cases.at(0).at("command").get<std::string>().find("--speculative-algorithm NONE") != std::string::npos);
  CHECK(cases.at(4).at("command").is_null());

  // No accept length but a measured spec tok/s: run derives the accept length from it, as validate does.
  const std::string dir = test::fresh_dir();
  auto c = nlohmann::json::parse(test::slurp(set + "/d-held-spec.json"));
  c["accept_length"] = nullptr;
  c["batch_size"] = 2;
  c["spec_tok_s"] = 150.0;  // per stream: the whole batch's 300 goes to run
  test::write_text(dir + "/x.json", c.dump());
  const auto one = nlohmann::json::parse(test::run_specsim({"validate", "--set", dir, "--json"}).out).at("cases").at(0);
  const std::string cmd = one.at("command");
  CHECK(cmd.find("--measured-spec-tok-s 300") != std::string::npos);
  CHECK(cmd.find("--accept-len") == std::string::npos);
  args = command_args(one);
  args.push_back("--json");
  const auto implied = test::run_specsim(args);
  REQUIRE(implied.exit_code == 0);
  CHECK(nlohmann::json::parse(implied.out).at("scenarios").at(0).at("spec").at("accept_len").get<double>() ==
        Approx(one.at("implied_accept_len").get<double>()));
}

TEST_CASE("validate --case: one case, its command and the run's report") {
  const std::string set = test::traces_path("../tests/data/validate-set");
  const auto d = test::run_specsim({"validate", "--set", set, "--case", "d-held-spec"});
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("case d-held-spec (held out") != std::string::npos);
  CHECK(d.out.find("  spec tok/s       measured    300.0") != std::string::npos);
  CHECK(d.out.find("  replay: specsim run --model-path llama-3.1-8b") != std::string::npos);
  CHECK(d.out.find("== all-reduce: nccl") != std::string::npos);  // the run's own report follows
  const auto j = test::run_specsim({"validate", "--set", set, "--case", "d-held-spec", "--json"});
  REQUIRE(j.exit_code == 0);
  const auto dj = nlohmann::json::parse(j.out);
  CHECK(dj.at("report").at("scenarios").at(0).at("spec").at("tok_per_s").get<double>() ==
        Approx(dj.at("case").at("predicted").at("spec_tok_s").get<double>()));
  CHECK(dj.at("not_run").is_null());
  // A case the zoo cannot express is shown with the reason, not run.
  const auto e = test::run_specsim({"validate", "--set", set, "--case", "e-skip-no-zoo"});
  CHECK(e.exit_code == 0);
  CHECK(e.out.find("no run: model not in the zoo") != std::string::npos);
  CHECK(e.out.find("== all-reduce") == std::string::npos);
  // Bad input: an unknown id, or --case with --nccl.
  const auto none = test::run_specsim({"validate", "--set", set, "--case", "no-such-case"});
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  CHECK(none.err.find("no case 'no-such-case'") != std::string::npos);
  CHECK(none.err.find("--case") != std::string::npos);
  CHECK(test::run_specsim({"validate", "--nccl", "--case", "d-held-spec"}).exit_code == 2);
}

TEST_CASE("the shipped published set loads and every case is listed") {
  const auto r = test::run_specsim({"validate", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::traces_path("published"))) {
    if (e.path().extension() != ".json") continue;
    ++files;
    // Every zoo model and draft a case names is a config in models/.
    const auto c = nlohmann::json::parse(test::slurp(e.path().string()));
    INFO(e.path().filename().string());
    for (const char* key : {"zoo_model", "zoo_draft"})
      if (c.contains(key) && c.at(key).is_string())
        CHECK(std::filesystem::is_regular_file(test::models_path(c.at(key).get<std::string>() + "/config.json")));
  }
  CHECK(files >= 19);
  CHECK(j.at("cases").size() == files);
}

TEST_CASE("every shipped case's command, run as printed, gives validate's prediction") {
  const auto r = test::run_specsim({"validate", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto shipped = nlohmann::json::parse(r.out);
  int replayed = 0;
  for (const auto& c : shipped.at("cases")) {
    if (c.at("command").is_null() || !c.at("skipped").is_null()) continue;
    INFO(c.at("id").get<std::string>());
    auto args = command_args(c);
    args.push_back("--json");
    const auto run = test::run_specsim(args);
    REQUIRE(run.exit_code == 0);
    const auto s = nlohmann::json::parse(run.out).at("scenarios").at(0);
    const auto bs_flag = std::find(args.begin(), args.end(), std::string("--batch-size"));
    REQUIRE(bs_flag + 1 < args.end());
    const double bs = std::stod(*(bs_flag + 1));  // run reports the whole batch, validate per stream
    const auto& pred = c.at("predicted");
    CHECK(s.at("baseline").at("tok_per_s").get<double>() / bs == Approx(pred.at("baseline_tok_s").get<double>()));
    if (!pred.at("spec_tok_s").is_null())
      CHECK(s.at("spec").at("tok_per_s").get<double>() / bs == Approx(pred.at("spec_tok_s").get<double>()));
    if (!c.at("implied_accept_len").is_null())
      CHECK(s.at("spec").at("accept_len").get<double>() == Approx(c.at("implied_accept_len").get<double>()));
    ++replayed;
  }
  CHECK(replayed >= 19);
}

TEST_CASE("validate --nccl: the NCCL model against the A100 nccl-tests log, 8 KB - 1 MB") {
  const auto logs = run_nccl_check(test::traces_path("nccl-tests"), 8 * 1024, 1024 * 1024);
  REQUIRE(!logs.empty());
  const NcclCheckLog& a100 = logs.front();
  CHECK(a100.gpus == 8);
  REQUIRE(a100.rows.size() == 8);          // 8 KB, 16 KB, ..., 1 MB
  CHECK(a100.rows.front().bytes == 8192);  // the log's rows, as printed
  CHECK(a100.rows.front().measured_us == Approx(36.86));
  CHECK(a100.rows.back().measured_us == Approx(67.31));
  CHECK(a100.small_rows == 4);  // 8, 16, 32, 64 KB
  for (const auto& r : a100.rows) CHECK(r.predicted_us > 0);
  // A -g 8 log: one thread launches the 8 collectives; its 8 B latency is shown, not scored.
  CHECK(a100.gpus_per_thread == 8);
  REQUIRE(a100.latency_point);
  CHECK(a100.latency_point->bytes == 4096);
  const auto cli = test::run_specsim({"validate", "--nccl", "--json"});
  REQUIRE(cli.exit_code == 0);
  CHECK(nlohmann::json::parse(cli.out).at(0).at("rows").size() == 8);
}

TEST_CASE("validate --nccl: published PCIe tables (points) are within 25% at 8-64 KB, uncalibrated") {
  const auto logs = run_nccl_check(test::traces_path("nccl-tests"), 8 * 1024, 1024 * 1024);
  int pcie = 0;
  for (const auto& l : logs) {
    if (l.hardware.rfind("rtx-pro-6000", 0) != 0) continue;
    ++pcie;
    INFO(l.file);
    CHECK(l.small_rows > 0);
    CHECK(l.worst_small_pct <= 25.0);
    for (const auto& r : l.rows) CHECK(r.choice.find("P2P") != std::string::npos);
  }
  CHECK(pcie == 3);  // the two published tables and the 8x RTX 5090 (patched driver, P2P) log
  // The GeForce 4090 logs go through host memory: the issue's partial copies are latency points
  // only, the full stock-driver log has rows at every size.
  int geforce = 0;
  for (const auto& l : logs)
    if (l.hardware.rfind("rtx-4090", 0) == 0) {
      INFO(l.file);
      ++geforce;
      REQUIRE(l.latency_point);
      CHECK(l.latency_point->choice.find("SHM") != std::string::npos);
      const bool partial = l.file.find("issue1530") != std::string::npos;
      CHECK(l.rows.empty() == partial);
      if (!partial) CHECK(l.small_rows == 4);
      for (const auto& r : l.rows) CHECK(r.choice.find("SHM") != std::string::npos);
    }
  CHECK(geforce == 3);
}

TEST_CASE("validate --nccl: a points table is read as printed; bad rows and formats are refused by file:line") {
  const std::string dir = test::fresh_dir();
  test::write_text(dir + "/t.txt", "# comment\n8192 20.0\n\n65536 30.0\n1024 18.0\n");
  const std::string entry =
      R"({"file": "t.txt", "format": "points", "hardware": "rtx-pro-6000:pcie-switch", "gpus": 8, "launch": "x"})";
  test::write_text(dir + "/index.json", "{\"logs\": [" + entry + "]}");
  const auto logs = run_nccl_check(dir, 8 * 1024, 1024 * 1024);
  REQUIRE(logs.size() == 1);
  REQUIRE(logs[0].rows.size() == 2);
  CHECK(logs[0].rows[1].measured_us == 30.0);
  CHECK(logs[0].small_rows == 2);
  REQUIRE(logs[0].latency_point);
  CHECK(logs[0].latency_point->measured_us == 18.0);
  CHECK(nccl_check_text(logs).find("latency at 1024 B") != std::string::npos);

  test::write_text(dir + "/t.txt", "8192 20.0\n65536 abc\n");
  try {
    run_nccl_check(dir, 8 * 1024, 1024 * 1024);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line().find("t.txt:2") != std::string::npos);
  }
  test::write_text(dir + "/index.json", "{\"logs\": [" + entry.substr(0, entry.size() - 1) + R"(, "format": "csv"}]})");
  CHECK_THROWS_AS(run_nccl_check(dir, 8 * 1024, 1024 * 1024), InputError);
  test::write_text(dir + "/index.json",
                   "{\"logs\": [" + entry.substr(0, entry.size() - 1) + R"(, "nccl_p2p_level": "FAR"}]})");
  try {
    run_nccl_check(dir, 8 * 1024, 1024 * 1024);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where().find("nccl_p2p_level") != std::string::npos);
  }
}

// ---- validate --transfer: families of rows predicted from their anchor row ----

namespace {

const TransferFamily& family_of(const TransferResult& r, const std::string& id) {
  for (const auto& f : r.families)
    if (f.family.id == id) return f;
  throw std::runtime_error("no family " + id);
}

const TransferRow& row_of(const TransferFamily& f, const std::string& id) {
  for (const auto& r : f.rows)
    if (r.c.id == id) return r;
  throw std::runtime_error("no row " + id);
}

// llama-3.1-8b on one H100, SGLang, NCCL: the transfer set's deployment, run from flags alone.
CycleResult run_flags(int batch, int steps, std::optional<double> measured_baseline, std::optional<double> accept) {
  RunArgs a;
  a.model_path = "llama-3.1-8b";
  a.hardware = "h100-sxm:nvswitch";
  a.tp_size = 1, a.batch_size = batch;
  a.runtime = "sglang";
  a.allreduce = {"nccl"};
  if (accept) {
    a.algorithm = "EAGLE3";
    a.num_steps = steps, a.topk = 1, a.num_draft_tokens = steps + 1;
    a.accept_len = accept;
  } else {
    a.algorithm = "NONE";
  }
  a.measured_baseline_tok_s = measured_baseline;
  return run_scenario(resolve_scenario(a)).results.front();
}

// `command` as run_specsim arguments, the anchor's scenario file moved to `file`.
std::vector<std::string> transfer_args(const std::string& command, const std::string& scenario_file,
                                       const std::string& file) {
  std::vector<std::string> args;
  std::istringstream words(command);
  for (std::string w; words >> w;) args.push_back(w == scenario_file ? file : w);
  REQUIRE(args.size() > 2);
  CHECK(args.front() == "specsim");
  args.erase(args.begin());
  return args;
}

}  // namespace

TEST_CASE("transfer: rows grouped by source and deployment, the anchor chosen by the rule") {
  const TransferResult r = run_transfer(test::traces_path("../tests/data/transfer-set"));
  REQUIRE(r.families.size() == 3);
  // transfer-a: five rows; the anchor is bs 1 with the fewest draft tokens (4 before 6 and 8), ties by id.
  const TransferFamily& a = family_of(r, "a1-anchor");
  CHECK(a.family.cases.size() == 5);
  CHECK(a.not_scored.empty());
  CHECK(a.scenario_file == "transfer-a1-anchor.json");
  // A family of one row is listed, not scored; one without a baseline has no anchor at all.
  CHECK(family_of(r, "b1-alone").not_scored.find("one row") != std::string::npos);
  const TransferFamily& c = family_of(r, "c1-spec-only");
  CHECK_FALSE(c.family.anchor);
  CHECK(c.not_scored.find("no row measures both a baseline and a spec tok/s") != std::string::npos);
  CHECK(c.rows.empty());
  // A row the zoo cannot run (same source as transfer-a) is in no family.
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].first.id == "d1-no-zoo");
  CHECK(r.skipped[0].second.find("zoo_model") != std::string::npos);
}

TEST_CASE("transfer: the anchor row is reproduced and every other row predicted at its own settings") {
  const TransferResult r = run_transfer(test::traces_path("../tests/data/transfer-set"));
  const TransferFamily& f = family_of(r, "a1-anchor");
  // The anchor's run takes its measured baseline and spec tok/s with the accept length it states:
  // it gives both back exactly, and the spec tok/s at that accept length is a cycle anchor.
  const TransferRow& a = row_of(f, "a1-anchor");
  REQUIRE(a.anchor);
  CHECK(*a.baseline_tok_s == Approx(150.0));
  CHECK(*a.spec_tok_s == Approx(300.0));
  CHECK(a.command.find("--measured-baseline-tok-s 150 ") != std::string::npos);
  CHECK(a.command.find("--measured-spec-tok-s 300 ") != std::string::npos);
  CHECK(a.command.find("--accept-len 3 ") != std::string::npos);
  CHECK(a.command.find("--save-scenario transfer-a1-anchor.json") != std::string::npos);
  CHECK(*a.accept_len == Approx(3.0));
  // The cycle it measured (3 tokens / 300 tok/s = 10 ms) less the model's, split over the 2 draft
  // decode forwards, the draft extend and the verify.
  REQUIRE(f.anchor_cycle);
  const AnchorEntry& cyc = *f.anchor_cycle;
  CHECK(cyc.model + cyc.derived == Approx(1e4));
  CHECK(2 * cyc.step_extra_us + cyc.extend_extra_us + cyc.verify_extra_us == Approx(cyc.derived));

  // Same batch, another draft shape, its own accept length: the run with the anchor's baseline
  // measured at this very batch (the plain step does not depend on the draft), plus the anchor's
  // unexplained cycle time carried per forward (5 draft forwards, one verify; the runtime's
  // overlapped host work may hide a little of it).
  const TransferRow& s5 = row_of(f, "a2-steps5");
  const CycleResult flags = run_flags(1, 5, 150.0, 4.0);
  CHECK(*s5.baseline_tok_s == Approx(150.0));
  CHECK(4e6 / *s5.spec_tok_s ==
        Approx(flags.cycle_us + 4 * cyc.step_extra_us + cyc.extend_extra_us + cyc.verify_extra_us).epsilon(1e-6));
  CHECK(*s5.spec_tok_s != Approx(flags.spec_tok_s).epsilon(0.01));
  CHECK(*s5.accept_len == Approx(4.0));
  CHECK(s5.command.rfind("specsim run --scenario transfer-a1-anchor.json --model-path llama-3.1-8b", 0) == 0);
  CHECK(s5.command.find("--accept-len 4") != std::string::npos);
  CHECK(s5.command.find("--measured-") == std::string::npos);  // its own measurements are what is predicted

  // Another batch: the plain step is the model's at bs 4 plus the anchor's overhead per forward
  // (measured bs-1 step minus the model's bs-1 step), carried as a constant.
  const double step1_model = 1e6 / run_flags(1, 3, std::nullopt, std::nullopt).baseline_tok_s;
  const double step4_model = 4e6 / run_flags(4, 3, std::nullopt, std::nullopt).baseline_tok_s;
  const double overhead = 1e6 / 150.0 - step1_model;
  const TransferRow& b4 = row_of(f, "a3-bs4");
  CHECK(*b4.baseline_tok_s == Approx(1e6 / (step4_model + overhead)));

  // No accept length: the anchor's stated one, projected to this row's draft shape and given on
  // the row's command line (the anchor's file holds the anchor's own, unprojected).
  const TransferRow& na = row_of(f, "a4-no-accept");
  const double projected = accept_len_at(accept_rate_at(3.0, 3, 1, 4), 5, 1, 6);
  CHECK(*na.accept_len == Approx(projected));
  CHECK(na.accept_source.find("projected") != std::string::npos);
  CHECK(na.command.find(fmt::format("--accept-len {}", projected)) != std::string::npos);

  // Scored: the four held-out rows' spec tok/s; the baseline only where it is not the anchor's
  // own figure (bs 4); the anchor is left out.
  std::vector<double> errs;
  for (const char* id : {"a2-steps5", "a3-bs4", "a4-no-accept", "a5-tree"})
    errs.push_back(std::fabs(error_pct(*row_of(f, id).spec_tok_s, *row_of(f, id).c.spec_tok_s)));
  std::sort(errs.begin(), errs.end());
  CHECK(f.spec[1].n == 4);
  CHECK(f.spec[1].median_abs_pct == Approx((errs[1] + errs[2]) / 2));
  CHECK(std::fabs(f.spec[1].worst_pct) == Approx(errs[3]));
  CHECK(f.spec[0].n == 0);
  CHECK(r.spec[1].n == 4);  // the other families are not scored
  CHECK(r.baseline[1].n == 1);
  CHECK(r.baseline[1].worst_id == "a3-bs4");
  REQUIRE(r.targets.size() == 2);
  CHECK(r.targets[0].limit_pct == 5);
  CHECK(r.targets[1].limit_pct == 15);
  CHECK_FALSE(r.targets[1].median);
}

TEST_CASE("transfer: held-out errors by what a row changes from its anchor; batch and top-k what-ifs band apart") {
  const std::string set = test::traces_path("../tests/data/transfer-set");
  const TransferResult r = run_transfer(set);
  const TransferFamily& f = family_of(r, "a1-anchor");
  CHECK(transfer_change(row_of(f, "a2-steps5"), f) == TransferChange::DraftSettings);
  CHECK(transfer_change(row_of(f, "a3-bs4"), f) == TransferChange::BatchSize);
  CHECK(transfer_change(row_of(f, "a5-tree"), f) == TransferChange::TopK);
  // Each kind's errors are those of its rows: counted here from the rows themselves.
  int n[std::size(kTransferChanges)] = {};
  for (const auto& t : r.families) {
    if (!t.not_scored.empty()) continue;
    for (const auto& row : t.rows)
      if (!row.anchor && row.c.held_out && row.spec_tok_s && row.c.spec_tok_s)
        ++n[static_cast<int>(transfer_change(row, t))];
  }
  REQUIRE(n[static_cast<int>(TransferChange::BatchSize)] >= 1);
  REQUIRE(n[static_cast<int>(TransferChange::DraftSettings)] >= 1);
  REQUIRE(n[static_cast<int>(TransferChange::TopK)] >= 1);
  for (const TransferChange c : kTransferChanges)
    CHECK(r.spec_by_change[static_cast<int>(c)].n == n[static_cast<int>(c)]);
  const nlohmann::json j = transfer_json(r);
  CHECK(j["summary"]["held_out_spec_tok_s_by_change"]["batch size"]["n"] ==
        n[static_cast<int>(TransferChange::BatchSize)]);
  CHECK(j["summary"]["held_out_spec_tok_s_by_change"]["top-k"]["n"] == n[static_cast<int>(TransferChange::TopK)]);
  CHECK(transfer_text(r).find("held-out spec tok/s by what the row changes from its anchor") != std::string::npos);
  // The error bands file: the batch-size row in the anchored_other_batch classes only, the tree
  // row in the anchored_other_topk classes only.
  const nlohmann::json bands = error_bands_json(run_validate(set), r);
  auto holds = [&](const char* table, const std::string& id) {
    for (const auto& [key, figures] : bands["classes"][table].items())
      for (const auto& [figure, e] : figures.items())
        for (const auto& c : e["cases"])
          if (c == id) return true;
    return false;
  };
  CHECK(holds("anchored_other_batch", "a3-bs4"));
  CHECK_FALSE(holds("anchored", "a3-bs4"));
  CHECK(holds("anchored", "a2-steps5"));
  CHECK_FALSE(holds("anchored_other_batch", "a2-steps5"));
  CHECK(holds("anchored_other_topk", "a5-tree"));
  CHECK_FALSE(holds("anchored", "a5-tree"));
  CHECK_FALSE(holds("anchored_other_topk", "a2-steps5"));
  CHECK_FALSE(holds("anchored_other_topk", "a3-bs4"));
}

TEST_CASE("specsim validate --transfer: text, JSON, one family, and refusals") {
  const std::string set = test::traces_path("../tests/data/transfer-set");
  const auto text = test::run_specsim({"validate", "--transfer", "--set", set});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("anchor rule: ") != std::string::npos);
  CHECK(text.out.find("family 1: a1-anchor (5 rows)") != std::string::npos);
  CHECK(text.out.find("not scored: one row") != std::string::npos);
  CHECK(text.out.find("in no family") != std::string::npos);
  CHECK(text.out.find("spec tok/s, held-out, worst        <= 15%") != std::string::npos);

  const auto js = test::run_specsim({"validate", "--transfer", "--set", set, "--json"});
  REQUIRE(js.exit_code == 0);
  const auto j = nlohmann::json::parse(js.out);
  for (const char* key : {"set", "anchor_rule", "families", "skipped", "summary", "targets"}) CHECK(j.contains(key));
  REQUIRE(j.at("families").size() == 3);
  const auto& fa = j.at("families").at(0);
  CHECK(fa.at("anchor") == "a1-anchor");
  CHECK(fa.at("scored") == true);
  CHECK(fa.at("cases").size() == 5);
  CHECK(fa.at("anchor_command").get<std::string>().find("--save-scenario transfer-a1-anchor.json") !=
        std::string::npos);
  CHECK(fa.at("anchor_cycle").at("measured_cycle_us").get<double>() == Approx(1e4));
  CHECK(fa.at("anchor_cycle").at("accept_len") == 3.0);
  const auto& row = fa.at("rows").at(1);
  CHECK(row.at("id") == "a2-steps5");
  CHECK(row.at("anchor") == false);
  CHECK(row.at("accept_len").at("stated") == 4.0);
  for (const char* key : {"baseline_tok_s", "spec_tok_s", "speedup"}) {
    CHECK(row.at("measured").contains(key));
    CHECK(row.at("predicted").contains(key));
    CHECK(row.at("error_pct").contains(key));
  }
  CHECK(fa.at("summary").at("held_out").at("spec_tok_s").at("n") == 4);
  CHECK(j.at("families").at(2).at("anchor").is_null());
  CHECK(j.at("skipped").at(0).at("id") == "d1-no-zoo");
  CHECK(j.at("summary").at("held_out").at("spec_tok_s").at("n") == 4);
  CHECK(j.at("targets").size() == 2);

  // --case: that case's family alone.
  const auto one = test::run_specsim({"validate", "--transfer", "--set", set, "--case", "a3-bs4", "--json"});
  REQUIRE(one.exit_code == 0);
  const auto oj = nlohmann::json::parse(one.out);
  REQUIRE(oj.at("families").size() == 1);
  CHECK(oj.at("families").at(0).at("id") == "a1-anchor");
  CHECK(oj.at("skipped").empty());

  // Refused: with --nccl, an unknown case, a bad case file; one line, exit 2, nothing on stdout.
  const auto nccl = test::run_specsim({"validate", "--transfer", "--nccl"});
  CHECK(nccl.exit_code == 2);
  CHECK(nccl.out.empty());
  CHECK(nccl.err.find("--transfer") != std::string::npos);
  CHECK(std::count(nccl.err.begin(), nccl.err.end(), '\n') == 1);
  const auto none = test::run_specsim({"validate", "--transfer", "--set", set, "--case", "no-such-case"});
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  CHECK(none.err ==
        "error: no case 'no-such-case' in " + set + " (the ids are the first column of `specsim validate`) (--case)\n");
  const std::string dir = test::fresh_dir();
  auto c = nlohmann::json::parse(test::slurp(set + "/a1-anchor.json"));
  c["batch_size"] = "one";
  test::write_text(dir + "/x.json", c.dump());
  const auto bad = test::run_specsim({"validate", "--transfer", "--set", dir});
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("x.json:batch_size") != std::string::npos);
}

namespace {

// Runs each scored family's anchor command (its scenario file written under a fresh folder), then
// every row's command, and checks that run gives the prediction `validate --transfer --json` printed.
int replay_families(const nlohmann::json& families) {
  int replayed = 0;
  for (const auto& f : families) {
    if (f.at("anchor_command").is_null()) continue;
    INFO(f.at("id").get<std::string>());
    const std::string name = f.at("scenario_file"), file = test::fresh_dir() + "/" + name;
    if (f.at("anchor_refused").get<bool>()) {  // printed as refused: it is, and writes nothing
      const auto refused = test::run_specsim(transfer_args(f.at("anchor_command"), name, file));
      CHECK(refused.exit_code == 2);
      CHECK_FALSE(test::exists(file));
      CHECK(f.at("rows").empty());
      continue;
    }
    if (f.at("rows").empty()) continue;
    const auto saved = test::run_specsim(transfer_args(f.at("anchor_command"), name, file));
    REQUIRE(saved.exit_code == 0);
    REQUIRE(test::exists(file));
    for (const auto& row : f.at("rows")) {
      if (!row.at("refused").is_null()) continue;
      INFO(row.at("id").get<std::string>());
      auto args = transfer_args(row.at("command"), name, file);
      if (row.at("anchor") == true) args.pop_back(), args.pop_back();  // --save-scenario FILE: written above
      args.push_back("--json");
      const auto run = test::run_specsim(args);
      REQUIRE(run.exit_code == 0);
      const auto s = nlohmann::json::parse(run.out).at("scenarios").at(0);
      const double bs = row.at("batch_size");  // run reports the whole batch, validate per stream
      const auto& pred = row.at("predicted");
      CHECK(s.at("baseline").at("tok_per_s").get<double>() / bs == Approx(pred.at("baseline_tok_s").get<double>()));
      if (!pred.at("spec_tok_s").is_null())
        CHECK(s.at("spec").at("tok_per_s").get<double>() / bs == Approx(pred.at("spec_tok_s").get<double>()));
      ++replayed;
    }
  }
  return replayed;
}

}  // namespace

TEST_CASE("validate --transfer: each row's command, run after its anchor's, gives the prediction") {
  const auto js =
      test::run_specsim({"validate", "--transfer", "--set", test::traces_path("../tests/data/transfer-set"), "--json"});
  REQUIRE(js.exit_code == 0);
  CHECK(replay_families(nlohmann::json::parse(js.out).at("families")) == 6);  // 5 rows of a, b's anchor
}

TEST_CASE("the shipped set's families: every printed command reproduces its prediction") {
  const auto js = test::run_specsim({"validate", "--transfer", "--json"});
  REQUIRE(js.exit_code == 0);
  const auto j = nlohmann::json::parse(js.out);
  int scored = 0;
  for (const auto& f : j.at("families")) scored += f.at("scored").get<bool>();
  CHECK(scored >= 7);
  CHECK(replay_families(j.at("families")) >= 50);
}

TEST_CASE("a case's stated context reaches its run as --context-len; a bad one names the field") {
  const std::string dir = test::fresh_dir();
  auto c = nlohmann::json::parse(test::slurp(test::traces_path("../tests/data/transfer-set/a1-anchor.json")));
  c["context_len"] = 512;
  test::write_text(dir + "/ctx.json", c.dump());
  const PublishedCase pc = load_published_case(dir + "/ctx.json");
  REQUIRE(pc.context_len);
  CHECK(*pc.context_len == 512);
  std::string why;
  const auto run = case_run(pc, why);
  REQUIRE(run);
  CHECK(run->args.context_len == 512);
  CHECK(case_run_command(*run).find("--context-len 512 ") != std::string::npos);
  // Without it, run's default (the key is optional).
  c.erase("context_len");
  test::write_text(dir + "/none.json", c.dump());
  CHECK_FALSE(load_published_case(dir + "/none.json").context_len);
  c["context_len"] = 0;
  test::write_text(dir + "/bad.json", c.dump());
  try {
    load_published_case(dir + "/bad.json");
    FAIL("context_len 0 accepted");
  } catch (const InputError& e) {
    CHECK(e.where().find("bad.json") != std::string::npos);
    CHECK(e.where().find("context_len") != std::string::npos);
  }
}
