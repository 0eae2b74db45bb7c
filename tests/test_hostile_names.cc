// File names that are not UTF-8 ($'\xff\xfe.json'): file names are bytes, and every input kind
// (model config, scenario, SGLang log, hardware profile, nccl-tests log) and every output (-o,
// --trace, --csv, --plot, --save-scenario) takes them. A missing or bad file is one `error:` line
// naming it with the bad bytes escaped (\xff), so the line stays UTF-8 text; a good one simply
// works; JSON that echoes such a path stays valid JSON; a saved scenario, which must read back
// exactly, refuses such a path before any output is written.
#include <nlohmann/json.hpp>

#include "hostile_cases.h"
#include "util/utf8.h"

using namespace specsim::test;

namespace {

const std::string kBad = "\xff\xfe";         // never valid UTF-8
const std::string kBadShown = "\\xff\\xfe";  // as an error line shows it

// One error line, valid UTF-8, exit 2, naming the file with its bytes escaped.
void check_names_file(const CliResult& r) {
  INFO("stderr: " << specsim::escape_non_utf8(r.err));
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(specsim::is_utf8(r.err));
  CHECK(r.err.find(kBadShown) != std::string::npos);
}

// Exit 0 and, when `json`, stdout is JSON a strict parser reads.
void check_works(const CliResult& r, bool json) {
  INFO("stderr: " << specsim::escape_non_utf8(r.err));
  CHECK(r.exit_code == 0);
  if (json) CHECK_NOTHROW(nlohmann::json::parse(r.out));
}

void copy_file(const std::string& from, const std::string& to) { write_text(to, slurp(from)); }

const std::vector<std::string> kRunBase = {
    "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size", "8", "--accept-len", "2"};

}  // namespace

TEST_CASE("file names: a missing input of every kind is named with its bytes escaped") {
  const std::string dir = fresh_dir(), p = dir + "/" + kBad + ".json", out = dir + "/out.json";
  const std::vector<std::vector<std::string>> cases = {
      {"--model-path", p, "--accept-len", "2"},
      {"--scenario", p},
      {"--hardware", p, "--tp-size", "8"},
      {"--accept-from", p},
      {"ingest", "--sglang-log", p},
      {"calibrate", "--nccl-tests", p, "--hardware", "h200:nvswitch", "-o", out},
  };
  for (const auto& a : cases) {
    check_names_file(run_specsim(a));
    count_cases();
  }
  CHECK_FALSE(exists(out));
}

TEST_CASE("file names: a bad input of every kind is named with its bytes escaped, nothing written") {
  const std::string dir = fresh_dir(), p = dir + "/" + kBad + ".json", out = dir + "/out.json", trace = dir + "/t.json";
  write_text(p, "{ not json");
  const std::vector<std::vector<std::string>> cases = {
      {"--model-path", p, "--accept-len", "2", "--trace", trace},
      {"--scenario", p, "--trace", trace},
      {"--hardware", p, "--tp-size", "8", "--trace", trace},
      {"--accept-from", p, "--trace", trace},
      {"calibrate", "--nccl-tests", p, "--hardware", "h200:nvswitch", "-o", out},
  };
  for (const auto& a : cases) {
    check_names_file(run_specsim(a));
    count_cases();
  }
  CHECK_FALSE(exists(out));
  CHECK_FALSE(exists(trace));
}

TEST_CASE("file names: a good input of every kind under such a name works, its JSON stays valid") {
  const std::string dir = fresh_dir();
  // Model config: a folder and a config file named with the bad bytes.
  const std::string model_dir = dir + "/" + kBad;
  REQUIRE(run_program("/bin/mkdir", {model_dir}).exit_code == 0);
  copy_file(models_path("llama-3.1-8b/config.json"), model_dir + "/config.json");
  copy_file(models_path("llama-3.1-8b/config.json"), dir + "/" + kBad + "-config.json");
  check_works(run_specsim({"--model-path", model_dir, "--hardware", "h200:nvswitch", "--tp-size", "8",
                           "--speculative-algorithm", "NONE", "--json"}),
              true);
  check_works(run_specsim({"--model-path", dir + "/" + kBad + "-config.json", "--hardware", "h200:nvswitch",
                           "--tp-size", "8", "--speculative-algorithm", "NONE", "--json"}),
              true);
  // Hardware profile.
  const std::string hw = dir + "/" + kBad + "-hw.json";
  copy_file(models_path("hardware/h200-calibrated.json"), hw);
  std::vector<std::string> a = kRunBase;
  a[3] = hw;
  a.push_back("--json");
  check_works(run_specsim(a), true);
  // Scenario file (saved under a plain name, read under the bad one).
  const std::string plain = dir + "/s.json", scen = dir + "/" + kBad + "-s.json";
  a = kRunBase;
  a.insert(a.end(), {"--save-scenario", plain});
  REQUIRE(run_specsim(a).exit_code == 0);
  copy_file(plain, scen);
  check_works(run_specsim({"--scenario", scen, "--json"}), true);
  // SGLang log.
  const std::string log = dir + "/" + kBad + ".log";
  copy_file(traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"), log);
  check_works(run_specsim({"ingest", "--sglang-log", log, "--json"}), true);
  // nccl-tests log: the profile it writes names the log, and is read back.
  const std::string nccl = dir + "/" + kBad + ".txt", prof = dir + "/prof.json";
  copy_file(traces_path("nccl-tests-a100sxm4x8-nvlink.txt"), nccl);
  check_works(run_specsim({"ingest", "--nccl-tests", nccl, "--json"}), true);
  const CliResult r = run_specsim({"calibrate", "--nccl-tests", nccl, "--hardware", "a100-sxm:nvswitch", "-o", prof});
  check_works(r, false);
  CHECK_NOTHROW(nlohmann::json::parse(slurp(prof)));
  check_works(run_specsim({"--hardware", prof, "--tp-size", "8", "--model-path", "llama-3.1-8b", "--accept-len", "2",
                           "--json"}),
              true);
  count_cases(8);
}

TEST_CASE("file names: outputs under such a name are written whole, under that name") {
  const std::string dir = fresh_dir();
  const std::string trace = dir + "/" + kBad + "-t.json", csv = dir + "/" + kBad + "-c.csv",
                    saved = dir + "/" + kBad + "-s.json", prof = dir + "/" + kBad + "-p.json",
                    sweep_csv = dir + "/" + kBad + "-sweep.csv";
  std::vector<std::string> a = kRunBase;
  a.insert(a.end(), {"--trace", trace, "--csv", csv, "--save-scenario", saved, "--cycles", "4"});
  check_works(run_specsim(a), false);
  CHECK_NOTHROW(nlohmann::json::parse(slurp(trace)));
  CHECK_FALSE(slurp(csv).empty());
  check_works(run_specsim({"--scenario", saved}), false);
  check_works(run_specsim({"calibrate", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt"), "--hardware",
                           "a100-sxm:nvswitch", "-o", prof}),
              false);
  CHECK_NOTHROW(nlohmann::json::parse(slurp(prof)));
  check_works(run_specsim({"sweep", "--batch-size", "1,2", "-o", sweep_csv}), false);
  CHECK_FALSE(slurp(sweep_csv).empty());
  count_cases(5);
  if (gnuplot_or_skip("a plot under a name that is not UTF-8")) {
    const std::string png = dir + "/" + kBad + ".png";
    check_works(run_specsim({"sweep", "--batch-size", "1,2,4", "--plot", png}), false);
    CHECK(exists(png));
    count_cases();
  }
}

TEST_CASE("file names: a saved scenario refuses a path it cannot keep, before any output is written") {
  const std::string dir = fresh_dir(), model_dir = dir + "/" + kBad;
  REQUIRE(run_program("/bin/mkdir", {model_dir}).exit_code == 0);
  copy_file(models_path("llama-3.1-8b/config.json"), model_dir + "/config.json");
  const std::string saved = dir + "/s.json", trace = dir + "/t.json", csv = dir + "/c.csv";
  const CliResult r =
      run_specsim({"--model-path", model_dir, "--hardware", "h200:nvswitch", "--tp-size", "8",
                   "--speculative-algorithm", "NONE", "--save-scenario", saved, "--trace", trace, "--csv", csv});
  count_cases();
  check_names_file(r);
  CHECK(r.err.find("(--save-scenario)") != std::string::npos);
  CHECK_FALSE(exists(saved));
  CHECK_FALSE(exists(trace));
  CHECK_FALSE(exists(csv));
}
