// Numbers: nothing non-finite or impossible is printed or written. Figures that overflow, integer
// fields out of range, degenerate fits, a negative seed and a NaN duration are errors.
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "hostile_cases.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

std::string sub(const std::string& text, const std::string& pattern, const std::string& with) {
  return std::regex_replace(text, std::regex(pattern), with);
}

}  // namespace

TEST_CASE("numbers: overflowing durations, throughputs and anchors are errors naming their input") {
  const std::string dir = fresh_dir();
  const std::string kernel =
      R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ts": 1, "dur": 1.7e308})";
  write_text(dir + "/torch.json", "{\"traceEvents\": [" + kernel + ", " + kernel + "]}");
  const std::string log = slurp(traces_path("sglang-eagle3-decode-synthetic.log"));
  write_text(dir + "/tput.log", sub(log, R"(gen throughput \(token/s\): [0-9.]+)", "gen throughput (token/s): 1e308"));
  const std::string base = slurp(traces_path("sglang-baseline-old-form-synthetic.log"));
  write_text(dir + "/base.log", sub(base, R"(gen throughput \(token/s\): [0-9.]+)", "gen throughput (token/s): 1e308"));
  const auto ok = run_specsim({"--json"});
  write_text(dir + "/baseline.json", ok.out);
  expect_bad_input({
      {{"ingest", "--torch-trace", dir + "/torch.json"}, "torch.json"},
      {{"ingest", "--torch-trace", dir + "/torch.json", "--json"}, "above"},
      {{"run", "--anchor-trace", dir + "/torch.json"}, "above"},
      {{"ingest", "--sglang-log", dir + "/tput.log"}, "above 1e9"},
      {{"run", "--accept-from", dir + "/tput.log"}, "above 1e9"},
      {{"run", "--baseline-from", dir + "/base.log"}, "above 1e9"},
      {{"--measured-baseline-tok-s", "1e300", "--accept-len", "2"}, "--measured-baseline-tok-s"},
      {{"--measured-baseline-tok-s", "1e300", "--accept-len", "2", "--json"}, "out of range"},
      {{"bench", "--measured-baseline-tok-s", "1e300", "--accept-len", "2", "--seconds", "0.05"}, "out of range"},
      {{"check", "--baseline", dir + "/baseline.json", "--measured-baseline-tok-s", "1e300", "--accept-len", "2",
        "--allow-different-settings"},
       "out of range"},
  });
  // sweep prints its summary first; the error is the last line, and no CSV row is printed.
  count_cases();
  const auto r = run_specsim({"sweep", "--measured-baseline-tok-s", "1e300", "--accept-len", "2"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("error: no point of the grid could be evaluated") != std::string::npos);
  CHECK(r.err.find("out of range (--measured-baseline-tok-s)") != std::string::npos);
}

TEST_CASE("numbers: integer fields of logs are range-checked") {
  const std::string dir = fresh_dir(), out = dir + "/hw.json";
  const std::string log = slurp(traces_path("nccl-tests-a100sxm4x8-nvlink.txt"));
  write_text(dir + "/gpus.txt", sub(log, "nGpus 8", "nGpus 1000000"));
  write_text(dir + "/threads.txt", sub(log, "nThread 1", "nThread 2000"));
  write_text(dir + "/word.txt", sub(log, "nGpus 8", "nGpus eight"));
  write_text(dir + "/product.txt", sub(sub(log, "nThread 1", "nThread 64"), "nGpus 8", "nGpus 64"));
  // Flat: every size takes the same time, so no bandwidth can be fitted.
  std::string flat;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::vector<std::string> f{std::istream_iterator<std::string>(in), {}};
    if (f.size() == 13 && std::isdigit(static_cast<unsigned char>(f[0][0]))) {
      f[5] = f[9] = "50.00";
      line.clear();
      for (const auto& x : f) line += " " + x;
    }
    flat += line + "\n";
  }
  write_text(dir + "/flat.txt", flat);
  REQUIRE(flat != log);
  std::vector<BadCase> cases;
  for (const auto& [file, mentions] : std::vector<std::pair<std::string, std::string>>{
           {"gpus.txt", "nGpus"}, {"threads.txt", "nThread"}, {"word.txt", "nGpus"}, {"product.txt", "above 1024"}}) {
    cases.push_back({{"ingest", "--nccl-tests", dir + "/" + file}, mentions});
    cases.push_back(
        {{"calibrate", "--nccl-tests", dir + "/" + file, "--hardware", "a100-sxm:nvswitch", "-o", out}, mentions});
  }
  cases.push_back(
      {{"calibrate", "--nccl-tests", dir + "/flat.txt", "--hardware", "a100-sxm:nvswitch", "-o", out}, "degenerate"});
  expect_bad_input(cases);
  CHECK_FALSE(exists(out));
}

TEST_CASE("numbers: a negative seed and a non-finite duration are refused, not wrapped") {
  expect_bad_input({
      {{"--seed", "-5", "--cycles", "3"}, "--seed"},
      {{"--seed", "1.5", "--cycles", "3"}, "--seed"},
      {{"--seed", "+3", "--cycles", "3"}, "--seed"},
      {{"bench", "--seconds", "nan"}, "--seconds"},
      {{"bench", "--seconds", "inf"}, "--seconds"},
      {{"bench", "--seconds", "-nan"}, "--seconds"},
  });
  CHECK(run_specsim({"--seed", "18446744073709551615", "--cycles", "3"}).exit_code == 0);
}

TEST_CASE("numbers: an absurd figure in a hardware or runtime profile is named in the profile, not blamed elsewhere") {
  const std::string dir = fresh_dir();
  nlohmann::json hw = nlohmann::json::parse(slurp(models_path("hardware/h200-calibrated.json")));
  hw["gpu"]["attention_fixed_us"]["value"] = 1e308;
  write_text(dir + "/hw.json", hw.dump(2));
  nlohmann::json rt = nlohmann::json::parse(slurp(models_path("runtime/sglang.json")));
  std::string term;
  for (auto& [k, v] : rt["per_cycle"].items())
    if (v.is_object() && v.contains("value") && term.empty()) v["value"] = 1e308, term = k;
  REQUIRE_FALSE(term.empty());
  write_text(dir + "/rt.json", rt.dump(2));
  expect_bad_input({
      {{"--hardware", dir + "/hw.json", "--tp-size", "1", "--model-path", "llama-3.1-8b"}, "gpu.attention_fixed_us"},
      {{"--runtime", dir + "/rt.json"}, term},
      {{"--runtime", dir + "/rt.json"}, "rt.json"},
  });
}
