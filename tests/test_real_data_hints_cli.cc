// Real files the repo ships, given to a command that reads another kind or needs more than the
// file holds: one error line whose hint is true (exit 2, nothing written), never a wrong result.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "refused.h"
#include "test_util.h"

using namespace specsim::test;

TEST_CASE("arbench logs and published points files are named for what they are, not read as nccl-tests tables") {
  // before: "data row before any header"; adding one merged every variant's table into an NCCL fit
  check_refused({"ingest", "--nccl-tests", traces_path("experiments/logs/arbench-h200x2-nvlink-1k-8m.log")},
                "a specsim-arbench log");
  check_refused({"ingest", "--nccl-tests", traces_path("nccl-tests/rtxpro6000-x8-pcie-switch-p2p.points.txt")},
                "`specsim calibrate --nccl-tests FILE --world N` and `specsim validate --nccl` read");
}

namespace {

// A line starting `# specsim-arbench` among a file's first lines: arbench's own header, which a run
// script's log may put after its `# command:` or `### round N` lines.
bool is_arbench_log(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  for (int n = 0; n < 50 && std::getline(in, line); ++n)
    if (line.rfind("# specsim-arbench", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("every arbench log the repo ships is named as one by ingest and calibrate --nccl-tests") {
  // before: 24 logs under traces/arbench/ starting with `# command:` or `### round` lines gave
  // "data row before any header"
  const std::string out = fresh_dir() + "/profile.json";
  std::size_t logs = 0;
  for (const char* dir : {"arbench", "experiments/logs"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(traces_path(dir))) {
      if (!e.is_regular_file() || !is_arbench_log(e.path())) continue;
      ++logs;
      INFO(e.path().string());
      check_refused({"ingest", "--nccl-tests", e.path().string()}, "a specsim-arbench log");
      check_refused({"calibrate", "--nccl-tests", e.path().string(), "--hardware", "h200:nvswitch", "-o", out},
                    "a specsim-arbench log");
    }
  CHECK(logs > 100);
  CHECK_FALSE(exists(out));
}

TEST_CASE("diagnose --nccl-tests: a payload outside the log's table is refused, not priced at its nearest row") {
  // the partial RTX 4090 log has one row, at 8 B; the verify moves 32 KB (it was stored as the
  // 8 B time labelled "at 32768 bytes")
  const std::string out = fresh_dir() + "/s.json";
  check_refused({"diagnose",
                 traces_path("sglang-logs/real-eagle3-idle-gap-sglang-11948.log"),
                 "--model",
                 "qwen3-8b",
                 "--hardware",
                 "rtx-4090:pcie-numa",
                 "--tp-size",
                 "8",
                 "--speculative-algorithm",
                 "EAGLE3",
                 "--speculative-num-steps",
                 "3",
                 "--speculative-eagle-topk",
                 "1",
                 "--speculative-num-draft-tokens",
                 "4",
                 "--nccl-tests",
                 traces_path("nccl-tests/rtx4090-x8-pcie-ring-nccl-issue1530-partial.txt"),
                 "-o",
                 out},
                "covers 8..8 B and the verify moves 32768 B");
  CHECK_FALSE(exists(out));
}

TEST_CASE("tune reads a published-acceptance file; a draft's depth-decay file is told apart from --acceptance") {
  const CliResult t = run_specsim({"tune", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size",
                                   "8", "--speculative-algorithm", "NEXTN", "--accept-from",
                                   traces_path("published-acceptance/sglang-pr3582-deepseek-v3-nextn.json"),
                                   "--batch-size", "1", "--top", "1"});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("steps 1 topk 1 draft tokens 2: measured accept len 1.900") != std::string::npos);
  // a stated range 2.5..3 is its midpoint
  CHECK(t.out.find("steps 2 topk 4 draft tokens 4: measured accept len 2.750") != std::string::npos);
  check_refused(
      {"tune", "--model-path", "llama-3.1-8b", "--speculative-draft-model-path", "llama-3.1-8b/eagle1",
       "--speculative-algorithm", "EAGLE", "--acceptance", models_path("llama-3.1-8b/eagle1/acceptance.json")},
      "depth-decay file");
}

TEST_CASE("calibrate --from warns when its profile predicts the fitted phases worse than the base profile") {
  const std::string dir = fresh_dir();
  // one fp8 DeepSeek-V3 report: the op-weighted fit moves the phases away (7.6% -> 15.7% at worst)
  const CliResult r = run_specsim({"calibrate", "--from",
                                   traces_path("replay/h200-2026-12-02-replay-price/replay-deepseek-v3-tp8-bs1.json"),
                                   "--hardware", "h200:nvswitch", "-o", dir + "/c.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("warning: the calibrated profile predicts the phases it was fitted to worse") != std::string::npos);
  // the documented fit over 15 reports improves them: no warning
  std::vector<std::string> args = {"calibrate", "--hardware", "h200:nvswitch", "-o", dir + "/c15.json"};
  for (const char* m : {"llama-3.1-8b", "llama-3.1-70b", "deepseek-v3"})
    for (const char* p : {"decode_t1", "decode_t4", "decode_t16", "verify_t4", "verify_t16"})
      args.insert(args.end(), {"--from", traces_path(std::string("replay/h200/") + m + "_" + p + ".json")});
  const CliResult good = run_specsim(args);
  REQUIRE(good.exit_code == 0);
  CHECK(good.out.find("warning:") == std::string::npos);
}

TEST_CASE("a text file where JSON is read says it is text and what it begins with") {
  // before: "malformed JSON at line 1: fix the file", on a replay's printed table beside its report
  check_refused({"ingest", "--replay-report", traces_path("replay/h200-2026-12-01/replay-deepseek-v3-tp8-bs1.txt")},
                "this is text, not JSON (it begins 'specsim replay on NVIDIA H200");
  check_refused({"run", "--scenario", traces_path("nccl-tests/rtxpro6000-x8-pcie-switch-p2p.points.txt")},
                "this is text, not JSON");
  // a JSON file cut short keeps the plain hint
  const std::string cut = fresh_dir() + "/cut.json";
  write_text(cut, "{\"model\": ");
  check_refused({"run", "--scenario", cut}, "malformed JSON at line 1: fix the file");
}
