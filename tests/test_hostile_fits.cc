// Degenerate fits: `calibrate --from` refuses measurements that cannot constrain the fit (every
// time equal, one op shape, repeat counts that do not add up to the phase, flat all-reduces) and
// a fitted profile that still misses its own points, instead of writing a profile that misleads.
#include <functional>
#include <nlohmann/json.hpp>

#include "hostile_cases.h"

using namespace specsim::test;
using json = nlohmann::json;

namespace {

const std::string kDecode = "replay/h200/llama-3.1-8b_decode_t1.json";

// `rel` (a shipped report) changed by `doctor`, written into `dir` as `name`.
std::string doctored(const std::string& dir, const std::string& name, const std::string& rel,
                     const std::function<void(json&)>& doctor) {
  json r = json::parse(slurp(traces_path(rel)));
  doctor(r);
  write_text(dir + "/" + name, r.dump());
  return dir + "/" + name;
}

BadCase calibrate(const std::vector<std::string>& reports, const std::string& out, const std::string& mentions) {
  std::vector<std::string> args{"calibrate", "--hardware", "h200:nvswitch", "-o", out};
  for (const auto& r : reports) args.insert(args.end(), {"--from", r});
  return {args, mentions};
}

}  // namespace

TEST_CASE("fits: measurements that cannot constrain the compute fit are refused, nothing written") {
  const std::string dir = fresh_dir(), out = dir + "/out.json";
  // Every op at one time (the phase time left as measured).
  const auto flat_ops = doctored(dir, "flat_ops.json", kDecode, [](json& r) {
    for (auto& p : r["phases"])
      for (auto& o : p["ops"]) o["measured_us"] = 100.0;
  });
  // Every op one shape, timings that add up to the phase: still one size only.
  const auto one_shape = doctored(dir, "one_shape.json", kDecode, [](json& r) {
    for (auto& p : r["phases"]) {
      json o = p["ops"][0];
      o["repeat"] = 100;
      o["measured_us"] = p["measured"]["us"].get<double>() / 500;
      p["ops"] = json::array();
      for (int i = 0; i < 5; ++i) p["ops"].push_back(o), p["ops"].back()["measured_us"] = (1 + 0.1 * i) * 8.0;
    }
  });
  // Repeat counts far above the phase's layers: the ops add up to thousands of phases.
  const auto huge_repeats = doctored(dir, "huge_repeats.json", kDecode, [](json& r) {
    for (auto& o : r["phases"][0]["ops"]) o["repeat"] = 100000;
  });
  // Op timings far below the phase: a unit slip (ms read as us) in the op times.
  const auto tiny_ops = doctored(dir, "tiny_ops.json", kDecode, [](json& r) {
    for (auto& o : r["phases"][0]["ops"]) o["measured_us"] = o["measured_us"].get<double>() / 1000;
  });
  // Two settings whose phases all took the same time.
  auto flat_phase = [](json& r) {
    for (auto& p : r["phases"]) p["measured"]["us"] = 4400.0;
  };
  const auto flat_a = doctored(dir, "flat_a.json", kDecode, flat_phase);
  const auto flat_b = doctored(dir, "flat_b.json", "replay/h200/llama-3.1-8b_decode_t16.json", flat_phase);
  expect_bad_input({
      calibrate({flat_ops}, out, "all 14 op timings are 100 us"),
      calibrate({one_shape}, out, "one shape"),
      calibrate({huge_repeats}, out, "repeat count"),
      calibrate({tiny_ops}, out, "repeat count or a time"),
      calibrate({flat_a, flat_b}, out, "whatever their setting"),
  });
  CHECK_FALSE(exists(out));
}

TEST_CASE("fits: a fit that misses its own points, or flat all-reduces, is refused") {
  const std::string dir = fresh_dir(), out = dir + "/out.json";
  // Ranks that shared one GPU: their compute times are a functional check, not a measurement.
  const std::string shared = traces_path("replay/h200-mpi-shared/r-mpi-shared.json");
  // Every phase's all-reduces at one time, whatever they move (the compute share stays sane).
  auto flat_ar = [](json& r) {
    for (auto& p : r["phases"]) p["measured"]["allreduce_us"] = 20.0;
  };
  const auto a = doctored(dir, "a.json", "replay/h200x2/r-nccl.json", flat_ar);
  const auto b = doctored(dir, "b.json", "replay/h200x2/r-nccl-t4.json", flat_ar);
  const auto c = doctored(dir, "c.json", "replay/h200x2/r-custom.json", flat_ar);
  const auto d = doctored(dir, "d.json", "replay/h200x2/r-custom-t4.json", flat_ar);
  expect_bad_input({
      calibrate({shared}, out, "still misses"),
      calibrate({a, b}, out, "all-reduce graphs took 20 us"),
      calibrate({c, d}, out, "all-reduce graphs took 20 us"),
  });
  CHECK_FALSE(exists(out));
}

TEST_CASE("fits: the shipped replay reports still calibrate (the checks pass real measurements)") {
  const std::string dir = fresh_dir();
  for (const auto& set : std::vector<std::vector<std::string>>{
           {kDecode},
           {"replay/h200/llama-3.1-70b_verify_t8.json", "replay/h200/deepseek-v3_decode_t1.json"},
           {"replay/h200-eager/eager-llama-3.1-70b.json"},
           {"replay/h200x2/r-nccl.json", "replay/h200x2/r-nccl-t4.json", "replay/h200x2/r-custom.json"}}) {
    std::vector<std::string> args{"calibrate", "--hardware", "h200:nvswitch", "-o", dir + "/p.json"};
    for (const auto& r : set) args.insert(args.end(), {"--from", traces_path(r)});
    const auto r = run_specsim(args);
    INFO(set.front() << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(exists(dir + "/p.json"));
    std::remove((dir + "/p.json").c_str());
  }
}
