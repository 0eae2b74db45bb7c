// Real data is never refused: every nccl-tests log the repository ships under traces/nccl-tests/
// whose all-reduce table reaches bandwidth-bound sizes calibrates (their small sizes are flat,
// latency-bound, and fit as latency only); a table of latency-bound sizes alone, where no
// bandwidth can be seen, is refused with a line that says so, and a log whose rows were cut
// mid-line (the partial ones, as published) is refused naming the line.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "hostile_cases.h"
#include "ingest/nccl_tests.h"
#include "util/error.h"

using namespace specsim::test;
namespace fs = std::filesystem;

TEST_CASE("real logs: every shipped nccl-tests log with a table calibrates") {
  const nlohmann::json index = nlohmann::json::parse(slurp(traces_path("nccl-tests/index.json")));
  auto hardware_of = [&](const std::string& name) -> std::string {
    for (const auto& l : index["logs"])
      if (l["file"] == name) return l["hardware"];
    if (name.rfind("rtx4090", 0) == 0) return "rtx-4090:pcie-numa";
    if (name.rfind("rtx5090", 0) == 0) return "rtx-5090:pcie-numa";
    if (name.rfind("a100", 0) == 0) return "a100-sxm:nvswitch";
    return "h200:nvswitch";
  };
  const std::string dir = fresh_dir();
  int calibrated = 0, latency_only = 0, unreadable = 0;
  for (const auto& e : fs::directory_iterator(traces_path("nccl-tests"))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".txt" || name.find(".points.") != std::string::npos) continue;
    specsim::ingest::NcclTestsLog log;
    try {
      log = specsim::ingest::parse_nccl_tests(slurp(e.path().string()), name);
    } catch (const specsim::InputError& err) {
      // No whole table (the partial logs: rows cut mid-line as published): refused naming the line.
      const CliResult r = run_specsim({"calibrate", "--nccl-tests", e.path().string(), "--hardware", hardware_of(name),
                                       "-o", dir + "/" + name + ".json"});
      count_cases();
      INFO(name << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find(name + ":") != std::string::npos);
      ++unreadable;
      continue;
    }
    std::map<int, std::set<double>> sizes;  // world -> sizes of its all-reduce rows
    for (const auto& t : log.tables)
      if (t.collective.empty() || t.collective.find("all_reduce") != std::string::npos)
        for (const auto& r : t.rows) sizes[t.world()].insert(r.bytes);
    for (const auto& [world, s] : sizes) {
      const std::string out = dir + "/" + name + "." + std::to_string(world) + ".json";
      const CliResult r = run_specsim({"calibrate", "--nccl-tests", e.path().string(), "--hardware", hardware_of(name),
                                       "--world", std::to_string(world), "-o", out});
      INFO(name << " world " << world << ": " << r.err);
      count_cases();
      if (s.size() >= 2 && *s.rbegin() >= double(1 << 20)) {  // reaches MiB sizes: bandwidth shows
        CHECK(r.exit_code == 0);
        CHECK(exists(out));
        ++calibrated;
      } else {
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("no bandwidth can be fitted") != std::string::npos);
        CHECK_FALSE(exists(out));
        ++latency_only;
      }
    }
  }
  CHECK(calibrated >= 5);                 // the A100 (three), RTX 4090 and RTX 5090 logs
  CHECK(latency_only + unreadable <= 2);  // the two partial RTX 4090 logs at most
}

TEST_CASE("real logs: the RTX 5090 log calibrates on its own hardware, its flat small sizes as latency only") {
  const std::string dir = fresh_dir(), out = dir + "/hw.json";
  const CliResult r =
      run_specsim({"calibrate", "--nccl-tests", traces_path("nccl-tests/rtx5090-x8-pcie-p2p-sys-nccl2.29.7.txt"),
                   "--hardware", "rtx-5090:pcie-numa", "-o", out});
  count_cases();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto fit = nlohmann::json::parse(slurp(out))["topology"]["nccl_fit"];
  bool flat_piece = false, bandwidth_piece = false;
  for (const auto& p : fit["pieces"]) {
    flat_piece = flat_piece || p["busbw_gbps"].get<double>() == 0;
    bandwidth_piece = bandwidth_piece || p["busbw_gbps"].get<double>() > 0;
    CHECK(p["lat_us"].get<double>() >= 0);
  }
  CHECK(flat_piece);
  CHECK(bandwidth_piece);
  // The profile it wrote is one run reads.
  CHECK(run_specsim({"--hardware", out, "--tp-size", "8", "--model-path", "llama-3.1-8b", "--allreduce", "nccl",
                     "--accept-len", "2"})
            .exit_code == 0);
}
