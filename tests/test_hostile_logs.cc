// Logs and reports: accept lengths a scenario cannot produce are refused with their line, not
// clamped; `ingest --json` prints one JSON object for every kind of file.
#include <nlohmann/json.hpp>
#include <regex>

#include "hostile_cases.h"

using namespace specsim::test;

namespace {

// The synthetic EAGLE-3 log with the `nth` accept len (0-based) replaced by `value`.
std::string log_with_accept_len(int nth, const std::string& value) {
  const std::string log = slurp(traces_path("sglang-eagle3-decode-synthetic.log"));
  const std::regex re(R"(accept len: [0-9.]+)");
  std::string out;
  auto it = std::sregex_iterator(log.begin(), log.end(), re);
  std::size_t last = 0;
  for (int i = 0; it != std::sregex_iterator(); ++it, ++i) {
    out += log.substr(last, it->position() - last);
    out += i == nth ? "accept len: " + value : it->str();
    last = it->position() + it->length();
  }
  return out + log.substr(last);
}

}  // namespace

TEST_CASE("logs: accept lengths above steps + 1 or below 1 are refused with their line") {
  const std::string dir = fresh_dir();
  write_text(dir + "/deep.log", log_with_accept_len(3, "5.0"));  // the built-in scenario drafts 2 steps: at most 3
  write_text(dir + "/low.log", log_with_accept_len(0, "0.5"));
  write_text(dir + "/absurd.log", log_with_accept_len(0, "100"));
  write_text(dir + "/neg.log", log_with_accept_len(0, "-2"));
  expect_bad_input({
      {{"run", "--accept-from", dir + "/deep.log", "--cycles", "10"}, "above --speculative-num-steps + 1 = 3"},
      {{"run", "--accept-from", dir + "/deep.log", "--trace", dir + "/t.json"}, "deep.log:"},
      {{"run", "--accept-from", dir + "/low.log"}, "below 1"},
      {{"ingest", "--sglang-log", dir + "/low.log"}, "low.log:"},
      {{"run", "--accept-from", dir + "/absurd.log"}, "above 64"},
      {{"ingest", "--sglang-log", dir + "/absurd.log", "--json"}, "above 64"},
      {{"ingest", "--sglang-log", dir + "/neg.log"}, "bad accept len"},
  });
  CHECK_FALSE(exists(dir + "/t.json"));
  // The same log is accepted when the scenario drafts deep enough.
  CHECK(run_specsim({"run", "--accept-from", dir + "/deep.log", "--cycles", "10", "--speculative-num-steps", "4",
                     "--speculative-num-draft-tokens", "5"})
            .exit_code == 0);
}

TEST_CASE("logs: a deeper draft's accept lengths are refused when only their mean is used too") {
  const std::string dir = fresh_dir();
  write_text(dir + "/deep.log", log_with_accept_len(3, "3.5"));  // its mean (about 2.1) would pass unnoticed
  const auto base = run_specsim({"run", "--json", "--accept-from", dir + "/deep.log", "--speculative-num-steps", "3",
                                 "--speculative-num-draft-tokens", "4"});
  REQUIRE(base.exit_code == 0);
  write_text(dir + "/base.json", base.out);
  expect_bad_input({
      {{"run", "--accept-from", dir + "/deep.log"}, "deep.log:"},
      {{"run", "--accept-from", dir + "/deep.log", "--json"}, "above --speculative-num-steps + 1 = 3"},
      // The baseline carries its 3-step draft; a change under test to 2 steps meets the deeper log.
      {{"check", "--baseline", dir + "/base.json", "--accept-from", dir + "/deep.log", "--speculative-num-steps", "2",
        "--speculative-num-draft-tokens", "3"},
       "deep.log:"},
  });
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--accept-from", dir + "/deep.log", "--speculative-num-steps", "3", "--speculative-num-draft-tokens",
            "4"},
           {"check", "--baseline", dir + "/base.json", "--accept-from", dir + "/deep.log", "--speculative-num-steps",
            "3", "--speculative-num-draft-tokens", "4"},
           {"check", "--baseline", dir + "/base.json", "--accept-from", dir + "/deep.log"}}) {
    const auto r = run_specsim(args);
    INFO(args[0] << ": " << r.err);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("logs: ingest --json prints one JSON object for every kind of file") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"ingest", "--json", "--torch-trace", traces_path("torch-trace-verify-synthetic.json")},
           {"ingest", "--json", "--sglang-log", traces_path("sglang-eagle3-decode-synthetic.log")},
           {"ingest", "--json", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt")},
           {"ingest", "--json", "--replay-report", traces_path("replay/h200/llama-3.1-8b_decode_t1.json")}}) {
    const auto r = run_specsim(args);
    INFO(args[2] << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.is_object());
    CHECK(j.at("file").get<std::string>() == args[3]);
  }
  const auto nccl = nlohmann::json::parse(
      run_specsim({"ingest", "--json", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt")}).out);
  CHECK(nccl["tables"][0]["world"] == 8);
  CHECK(nccl["tables"][0]["rows"].size() == 25);
}
