// Error bands: the committed table is what validate computes today, and every prediction carries
// the band of its class (text, JSON, sweep CSV and plot).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/error_band.h"
#include "run_json.h"
#include "test_util.h"

using nlohmann::json;
using namespace specsim::test;

namespace {

// Column `name` of `row` in a sweep's JSON report `j` (its "columns" name each row's entries).
double sweep_col(const json& j, const json& row, const std::string& name) {
  const auto cols = j["columns"].get<std::vector<std::string>>();
  const auto at = std::find(cols.begin(), cols.end(), name);
  REQUIRE(at != cols.end());
  return row[at - cols.begin()].get<double>();
}

}  // namespace

TEST_CASE("the committed error bands are what validate computes from the published cases") {
  const std::string dir = fresh_dir();
  const CliResult r = run_specsim({"validate", "--write-error-bands", dir + "/bands.json"});
  REQUIRE(r.exit_code == 0);
  const json now = json::parse(slurp(dir + "/bands.json"));
  const json committed = json::parse(slurp(models_path("accuracy/error-bands.json")));
  // Stale bands (a model change moved the errors) fail here: regenerate with the command in
  // the file's generated_by.
  REQUIRE(now["classes"].size() == committed["classes"].size());
  for (const auto& [anchoring, classes] : now["classes"].items()) {
    INFO(anchoring);
    REQUIRE(classes.size() == committed["classes"][anchoring].size());
    for (const auto& [key, figures] : classes.items())
      for (const auto& [figure, e] : figures.items()) {
        INFO(key << " " << figure);
        const json& c = committed["classes"][anchoring][key][figure];
        CHECK(e["n"] == c["n"]);
        CHECK(e["sources"] == c["sources"]);
        CHECK(std::fabs(e["lo_pct"].get<double>() - c["lo_pct"].get<double>()) <= 0.2);
        CHECK(std::fabs(e["hi_pct"].get<double>() - c["hi_pct"].get<double>()) <= 0.2);
        CHECK(e["lo_pct"].get<double>() <= e["hi_pct"].get<double>());
      }
  }
  REQUIRE(now["classes"]["unanchored"].contains("moe/sglang"));
  REQUIRE(now["classes"]["anchored"].contains("dense/sglang"));
}

TEST_CASE("an anchored run: the measured figures are the measurement, the what-if carries its class's band") {
  const json j = run_json({});
  const json& nccl = j["scenarios"][0];
  REQUIRE(nccl["label"] == "nccl");
  CHECK(nccl["spec"]["tok_per_s_band"]["basis"] == "measured at these settings");
  CHECK(nccl["spec"]["tok_per_s_band"]["lo"].get<double>() == Approx(54.1).epsilon(0.001));
  CHECK(nccl["baseline"]["tok_per_s_band"]["hi"].get<double>() == Approx(89.5).epsilon(0.001));
  const json& custom = j["scenarios"][1];
  REQUIRE(custom["label"] == "custom");
  const json& band = custom["spec"]["tok_per_s_band"];
  CHECK(band["class"] == "anchored moe/sglang");
  CHECK(band["n"].get<int>() >= 3);
  const double tps = custom["spec"]["tok_per_s"].get<double>();
  // The band is the prediction divided by (1 + the class's 90th / 10th percentile error).
  const json table = json::parse(slurp(models_path("accuracy/error-bands.json")));
  const json& e = table["classes"]["anchored"]["moe/sglang"]["spec_tok_s"];
  CHECK(band["lo"].get<double>() == Approx(tps / (1 + e["hi_pct"].get<double>() / 100)));
  CHECK(band["hi"].get<double>() == Approx(tps / (1 + e["lo_pct"].get<double>() / 100)));
}

TEST_CASE("an unanchored dense run takes the unanchored dense band, printed beside tok/s") {
  const std::vector<std::string> args = {
      "run",       "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1",
      "--runtime", "vllm",         "--allreduce",  "nccl",       "--accept-len",      "2.5"};
  const json j = run_json(args);
  const json& s = j["scenarios"][0];
  CHECK(s["baseline"]["tok_per_s_band"]["class"] == "unanchored dense/vllm");
  CHECK(s["spec"]["tok_per_s_band"]["class"].get<std::string>().starts_with("unanchored dense/"));
  const CliResult text = run_specsim(args);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("likely measured, from the held-out errors of unanchored dense/vllm cases") != std::string::npos);
}

TEST_CASE("a class whose cases all come from one source gives way to the wider class") {
  // The unanchored MoE-on-vLLM rows are one table's (AngelSlim's H20 README table): one source.
  const json table = json::parse(slurp(models_path("accuracy/error-bands.json")));
  const json& one = table["classes"]["unanchored"]["moe/vllm"]["baseline_tok_s"];
  REQUIRE(one["n"].get<int>() >= 3);
  REQUIRE(one["sources"] == 1);
  REQUIRE(table["classes"]["unanchored"]["moe/any"]["baseline_tok_s"]["sources"].get<int>() >= 2);
  const json j = run_json({"run", "--model-path", "qwen3-30b-a3b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1",
                           "--runtime", "vllm", "--allreduce", "nccl", "--accept-len", "2"});
  CHECK(j["scenarios"][0]["baseline"]["tok_per_s_band"]["class"] == "unanchored moe/any");
}

TEST_CASE("a sweep's CSV carries each tok/s band; its plot shades it") {
  const std::string dir = fresh_dir();
  std::vector<std::string> args = {"sweep", "--allreduce", "fixed:5..250:50@verify", "-o", dir + "/s.csv"};
  const bool gnuplot = run_program("/bin/sh", {"-c", "command -v gnuplot"}).exit_code == 0;
  if (gnuplot)
    args.insert(args.end(), {"--plot-script", dir + "/s.gp", "--plot", dir + "/s.png"});
  else
    std::cout << "SKIP (the plot's band): gnuplot is not installed (apt-get install gnuplot-nox)\n";
  const CliResult r = run_specsim(args);
  REQUIRE(r.exit_code == 0);
  const std::string csv = slurp(dir + "/s.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header.ends_with("baseline_tok_s_lo,baseline_tok_s_hi,spec_tok_s_lo,spec_tok_s_hi"));
  if (gnuplot) {
    CHECK(slurp(dir + "/s.gp").find("with filledcurves") != std::string::npos);
    CHECK(slurp(dir + "/s.gp").find("likely range") != std::string::npos);
  }
  REQUIRE(run_specsim({"sweep", "--allreduce", "fixed:40@verify", "--json", dir + "/s.json"}).exit_code == 0);
  const json j = json::parse(slurp(dir + "/s.json"));
  const json& band = j["tok_per_s_band"]["spec"];
  auto col = [&](const std::string& name) { return sweep_col(j, j["rows"][0], name); };
  CHECK(col("spec_tok_s_lo") == Approx(col("spec_tok_s") * band["lo_factor"].get<double>()));
  CHECK(col("spec_tok_s_hi") == Approx(col("spec_tok_s") * band["hi_factor"].get<double>()));
}

TEST_CASE("a what-if at another batch size than its tok/s measurements takes the other-batch band") {
  // The built-in scenario's tok/s were measured at batch 1: batch 1 is anchored there, batch 2 only
  // from another batch (validate --transfer's batch-size rows, its widest errors).
  const json table = json::parse(slurp(models_path("accuracy/error-bands.json")));
  REQUIRE(table["classes"].contains("anchored_other_batch"));
  const json at2 = run_json({"--batch-size", "2"});
  const json& custom = at2["scenarios"][1];
  REQUIRE(custom["label"] == "custom");
  const std::string cls = custom["spec"]["tok_per_s_band"]["class"].get<std::string>();
  CHECK(cls.rfind("anchored at another batch ", 0) == 0);
  const std::string key = cls.substr(std::string("anchored at another batch ").size());
  const json& e = table["classes"]["anchored_other_batch"][key]["spec_tok_s"];
  const double tps = custom["spec"]["tok_per_s"].get<double>();
  CHECK(custom["spec"]["tok_per_s_band"]["lo"].get<double>() == Approx(tps / (1 + e["hi_pct"].get<double>() / 100)));
  // Batch 2's NCCL figures are predictions too (the measurements were taken at batch 1).
  CHECK(at2["scenarios"][0]["spec"]["tok_per_s_band"]["basis"] != "measured at these settings");
  CHECK(run_json({})["scenarios"][1]["spec"]["tok_per_s_band"]["class"] == "anchored moe/sglang");

  // A sweep over batch sizes: each row's band columns by its own batch.
  const std::string dir = fresh_dir();
  REQUIRE(run_specsim({"sweep", "--batch-size", "1,2", "--allreduce", "nccl", "--json", dir + "/b.json"}).exit_code ==
          0);
  const json j = json::parse(slurp(dir + "/b.json"));
  const json& bands = j["tok_per_s_band"];
  REQUIRE(bands.contains("at_other_batch"));
  auto col = [&](const json& row, const std::string& name) { return sweep_col(j, row, name); };
  int seen = 0;
  for (const json& row : j["rows"]) {
    const int batch = static_cast<int>(col(row, "batch_size"));
    if (batch == 1) {  // NCCL at batch 1 is the measurement itself, as `run` gives it: no band but the value
      CHECK(col(row, "spec_tok_s_hi") == col(row, "spec_tok_s"));
      CHECK(col(row, "baseline_tok_s_lo") == col(row, "baseline_tok_s"));
      ++seen;
      continue;
    }
    const json& f = bands["at_other_batch"]["spec"];
    REQUIRE(f.is_object());
    CHECK(col(row, "spec_tok_s_hi") == Approx(col(row, "spec_tok_s") * f["hi_factor"].get<double>()));
    ++seen;
  }
  CHECK(seen == 2);
  CHECK(bands["spec"]["class"] != bands["at_other_batch"]["spec"]["class"]);
}

TEST_CASE("a what-if at another top-k than its spec tok/s measurements takes the other-top-k band") {
  // The built-in scenario's spec tok/s was measured with a chain (top-k 1): a tree at the same batch
  // is a what-if of another top-k (validate --transfer's top-k rows), its baseline band unchanged.
  const json table = json::parse(slurp(models_path("accuracy/error-bands.json")));
  REQUIRE(table["classes"].contains("anchored_other_topk"));
  const json tree = run_json({"--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"});
  const json& custom = tree["scenarios"][1];
  REQUIRE(custom["label"] == "custom");
  const std::string cls = custom["spec"]["tok_per_s_band"]["class"].get<std::string>();
  CHECK(cls.rfind("anchored at another top-k ", 0) == 0);
  const std::string key = cls.substr(std::string("anchored at another top-k ").size());
  const json& e = table["classes"]["anchored_other_topk"][key]["spec_tok_s"];
  const double tps = custom["spec"]["tok_per_s"].get<double>();
  CHECK(custom["spec"]["tok_per_s_band"]["hi"].get<double>() == Approx(tps / (1 + e["lo_pct"].get<double>() / 100)));
  CHECK(custom["spec"]["speedup_band"]["class"].get<std::string>().rfind("anchored at another top-k ", 0) == 0);
  CHECK(custom["baseline"]["tok_per_s_band"] == run_json({})["scenarios"][1]["baseline"]["tok_per_s_band"]);
  // The chain the measurement was taken with keeps the anchored class, other steps too.
  CHECK(run_json({"--speculative-num-steps", "3", "--speculative-num-draft-tokens",
                  "4"})["scenarios"][1]["spec"]["tok_per_s_band"]["class"] == "anchored moe/sglang");

  // A sweep over top-k: each row's spec band columns by its own top-k.
  const std::string dir = fresh_dir();
  REQUIRE(run_specsim({"sweep", "--speculative-eagle-topk", "1,4", "--speculative-num-draft-tokens", "8", "--allreduce",
                       "nccl", "--json", dir + "/k.json"})
              .exit_code == 0);
  const json j = json::parse(slurp(dir + "/k.json"));
  const json& bands = j["tok_per_s_band"];
  REQUIRE(bands.contains("at_other_topk"));
  auto col = [&](const json& row, const std::string& name) { return sweep_col(j, row, name); };
  int seen[2] = {0, 0};
  for (const json& row : j["rows"]) {
    const bool chain = col(row, "speculative_eagle_topk") == 1;
    const json& f = chain ? bands["spec"] : bands["at_other_topk"]["spec"];
    REQUIRE(f.is_object());
    CHECK(col(row, "spec_tok_s_lo") == Approx(col(row, "spec_tok_s") * f["lo_factor"].get<double>()));
    // every row decodes plainly at the measured batch with NCCL: the baseline is the measurement
    CHECK(col(row, "baseline_tok_s_hi") == col(row, "baseline_tok_s"));
    ++seen[chain];
  }
  CHECK(seen[0] >= 1);
  CHECK(seen[1] >= 1);
  CHECK(bands["spec"]["class"] != bands["at_other_topk"]["spec"]["class"]);
}

TEST_CASE("the top-k band: a saved scenario's what-if, a baseline-only anchor, and batch before top-k") {
  auto spec_class = [](const json& j) {
    return j["scenarios"][0]["spec"]["tok_per_s_band"]["class"].get<std::string>();
  };
  const std::vector<std::string> llama = {"--model-path",
                                          "llama-3.1-8b",
                                          "--hardware",
                                          "h200:nvswitch",
                                          "--allreduce",
                                          "nccl",
                                          "--speculative-num-steps",
                                          "3"};
  auto with = [&](const std::vector<std::string>& more) {
    std::vector<std::string> a = llama;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  // A chain's spec tok/s saved with its scenario, then asked about a tree at the same batch.
  const std::string dir = fresh_dir(), file = dir + "/chain.json";
  REQUIRE(run_specsim(with({"--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                            "--measured-spec-tok-s", "400", "--save-scenario", file}))
              .exit_code == 0);
  CHECK(
      spec_class(run_json({"--scenario", file, "--speculative-eagle-topk", "3", "--speculative-num-draft-tokens", "6"}))
          .rfind("anchored at another top-k ", 0) == 0);
  // Another chain.
  const std::string chain =
      spec_class(run_json({"--scenario", file, "--speculative-num-steps", "4", "--speculative-eagle-topk", "1",
                           "--speculative-num-draft-tokens", "5"}));
  CHECK(chain.rfind("anchored ", 0) == 0);
  CHECK(chain.find("top-k") == std::string::npos);
  // A batch and a top-k both away from the measurement: the batch is the wider what-if.
  CHECK(spec_class(run_json({"--scenario", file, "--batch-size", "2", "--speculative-eagle-topk", "3",
                             "--speculative-num-draft-tokens", "6"}))
            .rfind("anchored at another batch ", 0) == 0);
  // Anchored by a plain measurement only: no spec tok/s was measured at any top-k.
  const std::string base_only =
      spec_class(run_json(with({"--speculative-eagle-topk", "3", "--speculative-num-draft-tokens", "6",
                                "--measured-baseline-tok-s", "200", "--accept-len", "2"})));
  CHECK(base_only.rfind("anchored ", 0) == 0);
  CHECK(base_only.find("top-k") == std::string::npos);
}

TEST_CASE("a band that excludes its figure says so; a baseline measured at these settings has none on any backend") {
  specsim::RunBands b;
  specsim::ErrorBand over;
  over.lo = 140, over.hi = 150, over.n = 9, over.cls = "unanchored dense/vllm", over.predicted = 170;
  b.baseline = over;
  const std::string text = specsim::bands_text(b, "EAGLE3");
  CHECK(text.find("likely measured, from the held-out errors") != std::string::npos);
  CHECK(text.find("baseline 140.0-150.0 tok/s (n 9, the figure above it: held-out cases of this class measured "
                  "slower than predicted)") != std::string::npos);
  specsim::ErrorBand inside = over;
  inside.predicted = 145;
  b.baseline = inside;
  CHECK(specsim::bands_text(b, "EAGLE3").find("the figure") == std::string::npos);
  // tp 1: the custom all-reduce's baseline is NCCL's, i.e. the measured one
  const json j = run_json({"--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--accept-len", "3",
                           "--measured-baseline-tok-s", "156"});
  REQUIRE(j["scenarios"].size() >= 2);
  for (const auto& sc : j["scenarios"]) {
    INFO(sc["allreduce"]);
    CHECK(sc["baseline"]["tok_per_s_band"]["basis"] == "measured at these settings");
  }
}
