// All-reduce calibration from multi-GPU replay reports (calibrate --from): the points read from
// the 2x H200 reports, the NCCL and custom fits (real and synthetic), what the written profile
// predicts, one-GPU reports left as they were, and the refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "calibrate/allreduce_fit.h"
#include "calibrate/profile_io.h"
#include "cost/custom_ar_model.h"
#include "cost/nccl_curve_cost.h"
#include "cost/nccl_model.h"
#include "engine/phase_timer.h"
#include "replay_report/replay_report.h"
#include "test_util.h"
#include "util/error.h"
#include "util/json_io.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

std::string x2(const std::string& name) { return traces_path("replay/h200x2/" + name + ".json"); }
const std::vector<std::string> kNccl = {x2("r-nccl"), x2("r-nccl-t4")};
const std::vector<std::string> kCustom = {x2("r-custom"), x2("r-custom-t4")};

// Writes `j` as a report file under `dir` and returns its path.
std::string save(const std::string& dir, const std::string& name, const json& j) {
  const std::string p = dir + "/" + name + ".json";
  write_text(p, j.dump());
  return p;
}

// Points whose measured graph time is what `truth` predicts, plus `graph_us` per graph.
std::vector<AllReducePoint> synthetic(const Hardware& truth, const std::string& backend, double graph_us,
                                      const std::vector<double>& sizes) {
  std::vector<AllReducePoint> pts;
  for (double b : sizes)
    for (int calls : {3, 65}) {
      AllReducePoint p;
      p.file = "synthetic", p.label = "synthetic", p.device = "test", p.world = 2, p.calls = calls, p.bytes = b;
      p.backend = parse_allreduce(backend);
      p.measured_us = graph_us + predict_allreduce_us(p, truth);
      pts.push_back(p);
    }
  return pts;
}

// The all-reduce time of the whole phase with its collectives, as `specsim run` times it on `hw`.
double phase_allreduce_us(const PhaseMeasurement& ph, const AllReducePoint& p, const Hardware& hw) {
  PhasePlan plan = plan_of(ph);
  for (auto& b : plan.blocks)
    for (auto& op : b.ops)
      if (op.kind == OpKind::AllReduce) op.comm_bytes = p.bytes;
  const RunSpec run;
  AllReduceChoice backend = p.backend;
  if (backend.kind == AllReduceChoice::Kind::Custom) backend.variant = variant_that_ran(p);  // the measured kernel
  const CostContext ctx{&hw, &run, backend, Anchors{}, p.world};
  return time_phase(plan, ctx).allreduce_us;
}

}  // namespace

TEST_CASE("the 2x H200 reports give one all-reduce point per phase; one-GPU reports give none") {
  const auto pts = load_allreduce_points(kNccl);
  REQUIRE(pts.size() == 8);
  const json j = read_json_file(kNccl[0]);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& p = pts[i];
    CHECK(p.world == 2);
    CHECK(p.backend.kind == AllReduceChoice::Kind::Nccl);
    CHECK(p.device == "2 x NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB)");
    CHECK(p.measured_us == j["phases"][i]["measured"]["allreduce_us"].get<double>());
    CHECK(p.calls == (p.label.find("draft") != std::string::npos ? 3 : 65));  // 2 per layer + the embedding's
  }
  // tokens x hidden 4096 x bf16: draft_decode 4 tokens, verify 8, draft_extend 6, baseline 1.
  CHECK(pts[0].bytes == 32768);
  CHECK(pts[1].bytes == 65536);
  CHECK(pts[2].bytes == 49152);
  CHECK(pts[3].bytes == 8192);
  CHECK(pts[0].ran == "NCCL");
  const auto custom = load_allreduce_points({x2("r-custom")});
  REQUIRE(custom.size() == 4);
  CHECK(custom[0].backend.kind == AllReduceChoice::Kind::Custom);
  CHECK(custom[0].backend.variant == "auto");
  CHECK(custom[0].ran == "custom all-reduce, one-shot-pull");
  CHECK(load_allreduce_points({traces_path("replay/h200/llama-3.1-8b_decode_t1.json")}).empty());
}

TEST_CASE("NCCL fit on the H200 reports: every point moves toward the measurement") {
  const Hardware base = load_hardware("h200:nvswitch", 2);
  const auto pts = load_allreduce_points(kNccl);
  const AllReduceFit f = fit_nccl_allreduce(pts, base, "test");
  CHECK(f.worst_before_pct > 15);
  CHECK(f.worst_after_pct < 5);
  CHECK(f.graph_us > 0);
  CHECK(f.graph_us < base.gpu.graph_launch_us);
  Hardware cal = base;
  cal.topo = f.topo;
  for (const auto& p : pts) {
    INFO(p.label);
    CHECK(std::abs(allreduce_error_pct(p, cal, f.graph_us)) < std::abs(allreduce_error_pct(p, base, f.graph_us)));
  }
  REQUIRE(f.topo.nccl_fit);
  const NcclFit& c = *f.topo.nccl_fit;
  CHECK(c.world == 2);
  CHECK(c.pieces.front().min_bytes == 8192);
  CHECK(c.pieces.front().max_bytes == 65536);
  CHECK(parse_nccl_fit(nccl_fit_json(c), "fit").pieces.size() == c.pieces.size());  // loadable as written
  // Outside the measured sizes the tuning model stays: 64 MiB costs what it cost before.
  CHECK(nccl_allreduce(64.0 * (1 << 20), 2, cal, NcclSettings{}).fitted);
  CHECK(nccl_fit_us(c, 64.0 * (1 << 20)) ==
        Approx(nccl_allreduce(64.0 * (1 << 20), 2, base, NcclSettings{}).us).epsilon(1e-9));
  // Other world sizes keep the tuning model.
  CHECK_FALSE(nccl_allreduce(65536, 4, cal, NcclSettings{}).fitted);
}

TEST_CASE("custom fit on the H200 reports: barrier refitted, bandwidth held, the engine's variant is the kernel's") {
  const Hardware base = load_hardware("h200:nvswitch", 2);
  const auto pts = load_allreduce_points(kCustom);
  const AllReduceFit f = fit_custom_allreduce(pts, base);
  CHECK(f.worst_before_pct > 10);
  CHECK(f.worst_after_pct < 5);
  CHECK(f.topo.barrier_us > base.topo.barrier_us);
  // 64 KiB moves bytes for a few % of its time: a bandwidth fitted there would be noise.
  CHECK(f.topo.peer_write_bw_gbps == base.topo.peer_write_bw_gbps);
  CHECK(f.topo.peer_read_bw_gbps == base.topo.peer_read_bw_gbps);
  std::string notes;
  for (const auto& n : f.notes) notes += n + "\n";
  CHECK(notes.find("too little to fit a bandwidth") != std::string::npos);
  // The reports ran one-shot pull (their `auto` then); `auto` now picks the flag-free one-shot
  // (sim/scenario/custom_ar_policy.h): the fit describes the kernel that ran, and says so.
  CHECK(notes.find("the kernel ran one-shot-pull but the engine's custom now picks one-shot-ll") != std::string::npos);
  for (const auto& p : pts) CHECK(custom_allreduce(p.bytes, p.world, base, "auto").variant == CustomVariant::OneShotLL);
}

TEST_CASE("synthetic points: the fits recover the latency, bandwidth and graph cost they were made with") {
  const Hardware base = load_hardware("h200:nvswitch", 2);
  SECTION("nccl") {
    Hardware truth = base;
    truth.topo.nccl_fit = NcclFit{2, {{1, 1e12, 5.0, 200.0}}, "truth"};
    const auto pts = synthetic(truth, "nccl", 4.0, {8192, 65536, 262144, 1048576});
    const AllReduceFit f = fit_nccl_allreduce(pts, base, "test");
    CHECK(f.graph_us == Approx(4.0).epsilon(1e-6));
    CHECK(f.topo.nccl_fit->pieces.front().lat_us == Approx(5.0).epsilon(1e-6));
    CHECK(f.topo.nccl_fit->pieces.front().busbw_gbps == Approx(200.0).epsilon(1e-6));
    CHECK(f.worst_after_pct < 1e-6);
  }
  SECTION("custom, large enough messages for a bandwidth") {
    Hardware truth = base;
    truth.topo.barrier_us = 2.5, truth.topo.peer_read_bw_gbps = 300;
    const auto pts = synthetic(truth, "custom:one-shot-pull", 6.0, {262144, 1048576, 4194304});
    const AllReduceFit f = fit_custom_allreduce(pts, base);
    CHECK(f.graph_us == Approx(6.0).epsilon(1e-6));
    CHECK(f.topo.barrier_us == Approx(2.5).epsilon(1e-6));
    CHECK(f.topo.peer_read_bw_gbps == Approx(300).epsilon(1e-6));
    CHECK(f.topo.peer_write_bw_gbps == base.topo.peer_write_bw_gbps);  // a 2-rank pull writes to no peer
    CHECK(f.worst_after_pct < 1e-6);
  }
  SECTION("custom, a bandwidth above the link is held at the link") {
    Hardware truth = base;
    truth.topo.peer_read_bw_gbps = 440;
    auto pts = synthetic(truth, "custom:one-shot-pull", 6.0, {1048576, 4194304});
    for (auto& p : pts) p.measured_us *= 0.97;  // faster than any bandwidth under the link explains
    const AllReduceFit f = fit_custom_allreduce(pts, base);
    CHECK(f.topo.peer_read_bw_gbps == Approx(base.link_bw_gbps()));
  }
}

TEST_CASE("one message size: the NCCL latency is fitted, the bandwidth kept from the base model, and said") {
  const Hardware base = load_hardware("h200:nvswitch", 2);
  std::vector<AllReducePoint> pts;
  for (const auto& p : load_allreduce_points(kNccl))
    if (p.bytes == 8192) pts.push_back(p);
  REQUIRE(pts.size() == 3);  // two baseline decodes (65 calls) and one draft decode (3)
  const AllReduceFit f = fit_nccl_allreduce(pts, base, "test");
  REQUIRE(f.values.size() == 2);
  CHECK(f.values[1].held);
  CHECK(f.values[1].after == f.values[1].before);
  CHECK(f.values[0].after < f.values[0].before);  // NCCL ran faster than the tuning model says
  bool said = false;
  for (const auto& n : f.notes) said |= n.find("only one message size (8192 B)") != std::string::npos;
  CHECK(said);
  CHECK(f.worst_after_pct < 5);
}

TEST_CASE("calibrate --from NCCL and custom reports writes both fits with sources; the profile prices closer") {
  const std::string dir = fresh_dir(), out = dir + "/cal.json";
  std::vector<std::string> args = {"calibrate", "--hardware", "h200:nvswitch", "-o", out};
  for (const auto& f : kNccl) args.insert(args.end(), {"--from", f});
  for (const auto& f : kCustom) args.insert(args.end(), {"--from", f});
  const auto r = run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("all-reduce fit (nccl, world 2): 8 all-reduce-only graphs") != std::string::npos);
  CHECK(r.out.find("all-reduce fit (custom, world 2): 8 all-reduce-only graphs") != std::string::npos);
  CHECK(r.out.find("barrier_us                        1.530 ->") != std::string::npos);
  CHECK(r.out.find("fitted all-reduce points:") != std::string::npos);
  // The compute table sees the multi-GPU phases without their collectives, labelled by report.
  CHECK(r.out.find("verify t=8 (r-nccl)") != std::string::npos);

  const json j = read_json_file(out);
  const std::string src = j["topology"]["nccl_fit"]["source"];
  CHECK(src.find("specsim calibrate --from r-nccl.json r-nccl-t4.json on 2 x NVIDIA H200") != std::string::npos);
  CHECK(src.find(utc_date_today()) != std::string::npos);
  const std::string bsrc = j["topology"]["barrier_us"]["source"];
  CHECK(bsrc.find("--from r-custom.json r-custom-t4.json") != std::string::npos);
  CHECK(j["topology"]["peer_read_bw_gbps"]["source"].get<std::string>().find("measured") == std::string::npos);
  REQUIRE(j["calibration"]["allreduce"].size() == 2);

  const Hardware shipped = load_hardware("h200:nvswitch", 2), cal = load_hardware(out, 2);
  REQUIRE(cal.topo.nccl_fit);
  for (const auto& [files, backend] : {std::pair{kNccl, "nccl"}, std::pair{kCustom, "custom"}}) {
    double graph_us = -1;
    for (const auto& s : j["calibration"]["allreduce"])
      if (s["backend"] == backend) graph_us = s["graph_fixed_us"];
    REQUIRE(graph_us > 0);
    const auto pts = load_allreduce_points(files);
    std::vector<PhaseMeasurement> phases;
    for (const auto& f : files)
      for (const auto& ph : phases_from_report(read_json_file(f), f)) phases.push_back(ph);
    REQUIRE(phases.size() == pts.size());
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const auto& p = pts[i];
      INFO(p.label);
      // The all-reduces alone (less the graph's fixed cost), as the written profile prices them ...
      const double m = p.measured_us - graph_us;
      CHECK(std::abs(predict_allreduce_us(p, cal) - m) < std::abs(predict_allreduce_us(p, shipped) - m));
      CHECK(std::abs(predict_allreduce_us(p, cal) - m) / m < 0.05);
      // ... and inside the whole phase, as `specsim run` times it (compute and collectives).
      CHECK(std::abs(phase_allreduce_us(phases[i], p, cal) - m) <
            std::abs(phase_allreduce_us(phases[i], p, shipped) - m));
      CHECK(phase_allreduce_us(phases[i], p, cal) == Approx(predict_allreduce_us(p, cal)));
    }
  }
}

TEST_CASE("one-GPU reports calibrate as before: no all-reduce fit, points untouched") {
  const std::string dir = fresh_dir(), out = dir + "/cal.json";
  const std::string one = traces_path("replay/h200/llama-3.1-8b_decode_t1.json");
  const auto r = run_specsim({"calibrate", "--hardware", "h200:nvswitch", "--from", one, "-o", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("all-reduce") == std::string::npos);
  const json j = read_json_file(out);
  CHECK_FALSE(j["topology"].contains("nccl_fit"));
  CHECK_FALSE(j["calibration"].contains("allreduce"));
  CHECK(j["topology"] == base_profile_json("h200:nvswitch")["topology"]);
  const auto pts = load_replay_points({one}, "--from");
  const auto same = compute_share(pts, load_hardware("h200:nvswitch", 1).gpu);
  REQUIRE(same.size() == pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    CHECK(same[i].phase.us == pts[i].phase.us);
    CHECK(same[i].phase.ops.size() == pts[i].phase.ops.size());
    CHECK(same[i].label == pts[i].label);
  }
}

TEST_CASE("multi-GPU phases reach the compute fit without their collectives") {
  const Hardware hw = load_hardware("h200:nvswitch", 1);
  const auto pts = load_replay_points({kNccl[0]}, "--from");
  const auto share = compute_share(pts, hw.gpu);
  REQUIRE(share.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& a = pts[i].phase;
    const auto& b = share[i].phase;
    CHECK(b.us == Approx(a.us - (a.allreduce_us - hw.gpu.graph_launch_us) - (a.allgather_us - hw.gpu.graph_launch_us)));
    for (const auto& o : b.ops) CHECK_FALSE(o.op.is_collective());
    CHECK(b.ops.size() + 4 == a.ops.size());  // 3 all-reduce ops and the logits all-gather
  }
}

TEST_CASE("a base profile with its own NCCL curve keeps it outside the measured sizes") {
  const std::string dir = fresh_dir();
  json prof = base_profile_json("h200:nvswitch");
  prof["topology"]["nccl_fit"] =
      nccl_fit_json(NcclFit{2, {{8, 4096, 5.0, 0}, {4096, 1e6, 6.0, 150}, {1e6, 1e10, 12, 360}}, "nccl-tests"});
  const std::string base_path = save(dir, "base", prof);
  const Hardware base = load_hardware(base_path, 2);
  const AllReduceFit f = fit_nccl_allreduce(load_allreduce_points(kNccl), base, "test");
  const auto& pc = f.topo.nccl_fit->pieces;
  REQUIRE(pc.size() == 5);  // [8, 4096], [4096, 8192] | measured [8192, 65536] | [65536, 1e6], [1e6, 1e10]
  CHECK(pc[1].max_bytes == 8192);
  CHECK(pc[2].min_bytes == 8192);
  CHECK(pc[3].min_bytes == 65536);
  CHECK(pc[3].busbw_gbps == 150);
  CHECK(pc[4].lat_us == 12);
  CHECK(f.values[0].before == 6.0);  // "before" is the base curve, not the tuning model
}

TEST_CASE("newer reports carry comm_bytes and the backend; calibrate uses them") {
  const std::string dir = fresh_dir();
  json j = read_json_file(kNccl[0]);
  j.erase("collectives_detail");
  j["allreduce_backend"] = "nccl";
  for (auto& p : j["phases"])
    for (auto& o : p["ops"])
      if (o["kind"] == "all_reduce") o["comm_bytes"] = 12345.0;
  const auto pts = load_allreduce_points({save(dir, "r", j)});
  REQUIRE(pts.size() == 4);
  for (const auto& p : pts) CHECK(p.bytes == 12345.0);
}

TEST_CASE("ranks sharing one GPU do not measure the interconnect: skipped, said") {
  const std::string dir = fresh_dir();
  json j = read_json_file(kNccl[0]);
  j["collectives_detail"] = "all-reduces through nccl, all-gathers left out (ranks shared a GPU), on 2 ranks (x)";
  std::vector<std::string> skipped;
  CHECK(load_allreduce_points({save(dir, "r", j)}, &skipped).empty());
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].find("shared one GPU") != std::string::npos);
  json mpi = read_json_file(kNccl[0]);  // the mpirun mode says it with a field
  mpi["shared_gpus"] = true;
  CHECK(load_allreduce_points({save(dir, "m", mpi)}, &skipped).empty());
  CHECK(skipped.size() == 2);
}

TEST_CASE("a custom:fused replay's all-reduce times hold the fused norm: skipped, said") {
  const std::string dir = fresh_dir();
  json j = read_json_file(kNccl[0]);
  j["allreduce_backend"] = "custom:fused";
  std::vector<std::string> skipped;
  CHECK(load_allreduce_points({save(dir, "r", j)}, &skipped).empty());
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].find("custom:fused") != std::string::npos);
  j["allreduce_backend"] = "custom:one-shot-ll";  // the plain kernel is fitted
  CHECK_FALSE(load_allreduce_points({save(dir, "c", j)}, &skipped).empty());
}

TEST_CASE("bad all-reduce input: one line, exit 2, no profile written") {
  const std::string dir = fresh_dir(), out = dir + "/cal.json";
  auto refuse = [&](const std::vector<std::string>& from, const std::string& hw, const std::string& expect) {
    std::vector<std::string> args = {"calibrate", "--hardware", hw, "-o", out};
    for (const auto& f : from) args.insert(args.end(), {"--from", f});
    const auto r = run_specsim(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(expect) != std::string::npos);
    CHECK_FALSE(exists(out));
  };
  const json nccl = read_json_file(kNccl[0]);

  json w4 = read_json_file(kNccl[1]);
  w4["gpus"] = 4;
  refuse({kNccl[0], save(dir, "w4", w4)}, "h200:nvswitch",
         "the NCCL reports ran at world sizes 2, 4: a profile holds one measured NCCL curve");

  json w16 = nccl;
  w16["gpus"] = 16;
  refuse({save(dir, "w16", w16)}, "h200:nvswitch", "the reports ran on 16 GPUs but topology nvswitch holds at most 8");

  json untimed = nccl;
  untimed["phases"][1]["measured"]["allreduce_us"] = nullptr;
  refuse({save(dir, "untimed", untimed)}, "h200:nvswitch", "untimed.json: verify.measured.allreduce_us)");
  try {  // the loader names the phase by its index, as the report reader does
    load_allreduce_points({dir + "/untimed.json"});
    FAIL("an untimed multi-GPU phase was accepted");
  } catch (const InputError& e) {
    CHECK(e.where() == dir + "/untimed.json: phases[1].measured.allreduce_us");
  }

  json anon = nccl;
  anon.erase("collectives_detail");
  refuse({save(dir, "anon", anon)}, "h200:nvswitch", "(" + dir + "/anon.json: allreduce_backend)");

  json fixed = nccl;
  fixed["allreduce_backend"] = "fixed:40";
  refuse({save(dir, "fixed", fixed)}, "h200:nvswitch", "a replay runs real all-reduces, not 'fixed:40'");

  json mixed = nccl;
  int seen = 0;
  for (auto& o : mixed["phases"][0]["ops"])
    if (o["kind"] == "all_reduce") o["comm_bytes"] = seen++ == 0 ? 8192.0 : 16384.0;
  refuse({save(dir, "mixed", mixed)}, "h200:nvswitch", "all-reduces of 8192 and 16384 B in one phase");

  // rtx-4090: the driver allows no peer access, so the custom kernel cannot have run on it.
  refuse({kCustom[0]}, "rtx-4090:pcie-switch", "(--hardware)");
}
