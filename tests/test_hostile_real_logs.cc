// Real data is never refused: every nccl-tests log the repository ships under traces/nccl-tests/
// calibrates at each of its world sizes. A table reaching bandwidth-bound sizes fits pieces with
// bandwidth (its small sizes, flat and latency-bound, as latency only); a table of latency-bound
// sizes alone (the partial RTX 4090 logs: one row of 8 B, cut mid-line after its out-of-place
// columns as published) fits as latency only at those sizes and says so.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cost/nccl_model.h"
#include "hostile_cases.h"
#include "ingest/nccl_tests.h"
#include "scenario/hardware.h"
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
  int calibrated = 0, latency_only = 0;
  for (const auto& e : fs::directory_iterator(traces_path("nccl-tests"))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".txt" || name.find(".points.") != std::string::npos) continue;
    INFO(name);
    specsim::ingest::NcclTestsLog log;
    REQUIRE_NOTHROW(log = specsim::ingest::parse_nccl_tests(slurp(e.path().string()), name));
    std::map<int, std::set<double>> sizes;  // world -> sizes of its all-reduce rows
    for (const auto& t : log.tables)
      if (t.collective.empty() || t.collective.find("all_reduce") != std::string::npos)
        for (const auto& r : t.rows) sizes[t.world()].insert(r.bytes);
    REQUIRE_FALSE(sizes.empty());
    for (const auto& [world, s] : sizes) {
      const std::string out = dir + "/" + name + "." + std::to_string(world) + ".json";
      const CliResult r = run_specsim({"calibrate", "--nccl-tests", e.path().string(), "--hardware", hardware_of(name),
                                       "--world", std::to_string(world), "-o", out});
      INFO("world " << world << ": " << r.err);
      count_cases();
      REQUIRE(r.exit_code == 0);
      REQUIRE(exists(out));
      bool bandwidth = false;
      const nlohmann::json profile = nlohmann::json::parse(slurp(out));  // kept alive: the loop walks into it
      for (const auto& p : profile["topology"]["nccl_fit"]["pieces"])
        bandwidth = bandwidth || p["busbw_gbps"].get<double>() > 0;
      if (s.size() >= 2 && *s.rbegin() >= double(1 << 20)) {  // reaches MiB sizes: bandwidth shows
        CHECK(bandwidth);
        ++calibrated;
      } else {  // latency-bound sizes alone: latency only, and the output says so
        CHECK_FALSE(bandwidth);
        CHECK(r.out.find("latency only") != std::string::npos);
        ++latency_only;
      }
    }
  }
  CHECK(calibrated >= 5);    // the A100 (three), RTX 4090 and RTX 5090 logs
  CHECK(latency_only == 2);  // the two partial RTX 4090 logs
}

TEST_CASE("real logs: every shipped points file calibrates at the world size its index entry gives") {
  // A points file does not say its ranks: --world gives them; without it the refusal says so.
  const nlohmann::json index = nlohmann::json::parse(slurp(traces_path("nccl-tests/index.json")));
  const std::string dir = fresh_dir();
  int points_files = 0;
  for (const auto& l : index["logs"]) {
    if (l.value("format", "") != "points") continue;
    const std::string name = l["file"], file = traces_path("nccl-tests/" + name), out = dir + "/" + name + ".json";
    INFO(name);
    const std::string world = std::to_string(l["gpus"].get<int>());
    const CliResult r =
        run_specsim({"calibrate", "--nccl-tests", file, "--hardware", l["hardware"], "--world", world, "-o", out});
    INFO(r.err);
    count_cases();
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("points file " + file + ": ") != std::string::npos);
    CHECK(r.out.find("world " + world + " as given (--world)") != std::string::npos);
    const nlohmann::json profile = nlohmann::json::parse(slurp(out));
    CHECK(profile["topology"]["nccl_fit"]["world"] == l["gpus"]);
    // the fit's first size is the file's smallest
    double smallest = 0;
    std::istringstream text(slurp(file));
    for (std::string line; std::getline(text, line);)
      if (!line.empty() && line[0] != '#') {
        const double b = std::stod(line);
        if (smallest == 0 || b < smallest) smallest = b;
      }
    CHECK(profile["topology"]["nccl_fit"]["pieces"][0]["min_bytes"].get<double>() == Approx(smallest));
    // the H20 excerpt's 32 B row (24.63 us between 12.52 and 14.50) cannot be followed: said, not silent
    const bool outlier = name.find("h20-") == 0;
    CHECK((r.out.find("warning: the fit misses some sizes by up to") != std::string::npos) == outlier);
    const std::string unsaid = dir + "/" + name + ".unsaid.json";
    const CliResult no_world =
        run_specsim({"calibrate", "--nccl-tests", file, "--hardware", l["hardware"], "-o", unsaid});
    CHECK(no_world.exit_code == 2);
    CHECK(no_world.err.find("does not say how many ranks ran: give --world N") != std::string::npos);
    CHECK_FALSE(exists(unsaid));
    ++points_files;
  }
  CHECK(points_files == 5);
}

TEST_CASE("real logs: a partial RTX 4090 log's one row prices 8 B only; larger all-reduces keep the model") {
  const std::string dir = fresh_dir(), out = dir + "/hw.json",
                    log = traces_path("nccl-tests/rtx4090-x8-pcie-ring-nccl-issue1530-partial.txt");
  const CliResult r = run_specsim({"calibrate", "--nccl-tests", log, "--hardware", "rtx-4090:pcie-numa", "-o", out});
  count_cases();
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Said, not silent: the row cut mid-line and the one size.
  CHECK(r.out.find("cut mid-line after their out-of-place columns (line 17)") != std::string::npos);
  CHECK(r.out.find("one size (8 B)") != std::string::npos);
  const specsim::Hardware hw = specsim::load_hardware(out, 8);
  REQUIRE(hw.topo.nccl_fit);
  REQUIRE(hw.topo.nccl_fit->pieces.size() == 1);
  const auto small = specsim::nccl_allreduce(8, 8, hw, specsim::NcclSettings{});
  CHECK(small.fitted);
  CHECK(small.us == Approx(42.14).epsilon(0.001));  // the row's out-of-place time
  // 1 MiB was not measured: the profile's own NCCL model prices it, not the 8 B latency.
  const auto large = specsim::nccl_allreduce(1 << 20, 8, hw, specsim::NcclSettings{});
  CHECK_FALSE(large.fitted);
  CHECK(large.us > small.us);
  // ingest reads the same row and names the cut line.
  const CliResult in = run_specsim({"ingest", "--nccl-tests", log, "--json"});
  REQUIRE(in.exit_code == 0);
  CHECK(nlohmann::json::parse(in.out)["cut_lines"] == nlohmann::json::array({17}));
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
