// Measured latency traces from a GPU replay report: `specsim ingest --replay-report R.json --trace
// --csv` writes the analytic run's formats, measured op slices scaled to the phase time, predicted
// beside them; a bad report writes nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"
#include "timeline/replay_trace.h"
#include "timeline/trace_writer.h"
#include "util/json_io.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::string kReport = "replay/h200/llama-3.1-8b_verify_t4.json";

long long expanded_ops(const json& report) {
  long long n = 0;
  for (const auto& p : report["phases"])
    for (const auto& o : p["ops"]) n += o["repeat"].get<int>();
  return n;
}

struct Track {
  int slices = 0;
  std::map<std::string, double> dur_by_phase;  ///< microseconds, summed from the written slices
};

// Converts `rel` through the CLI and checks everything that does not depend on the model.
void check_conversion(const std::string& rel) {
  const std::string file = traces_path(rel), dir = fresh_dir();
  const json report = read_json_file(file);
  const auto r = run_specsim({"ingest", "--replay-report", file, "--trace", dir + "/t.json", "--csv", dir + "/t.csv"});
  INFO(rel << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  const json trace = json::parse(slurp(dir + "/t.json"));  // throws (fails the test) when not JSON
  REQUIRE(trace["otherData"]["kind"] == "specsim-replay-trace");
  bool scaling_noted = false;
  for (const auto& n : trace["otherData"]["notes"])
    scaling_noted |= n.get<std::string>().find("scale") != std::string::npos;
  CHECK(scaling_noted);

  Track measured, predicted;
  double prev_end_ns = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int tid = e["tid"];
    if (tid != 1 && tid != 3) continue;  // the measured and predicted GPU streams
    const auto& a = e["args"];
    for (const char* k : {"phase", "shape", "bytes", "flops", "predicted_us", "measured_us"}) REQUIRE(a.contains(k));
    Track& t = tid == 1 ? measured : predicted;
    ++t.slices;
    t.dur_by_phase[a["phase"]] += e["dur"].get<double>();
    if (tid == 1) {
      // Back to back within a phase, never overlapping (whole nanoseconds).
      const double ts_ns = std::round(e["ts"].get<double>() * 1e3);
      CHECK(ts_ns >= prev_end_ns);
      prev_end_ns = ts_ns + std::round(e["dur"].get<double>() * 1e3);
      CHECK(e["dur"].get<double>() == Approx(a["measured_scaled_us"].get<double>()).margin(1e-3));
    } else {
      CHECK(e["dur"].get<double>() == Approx(a["predicted_us"].get<double>()).margin(1e-3));
    }
  }
  const long long ops = expanded_ops(report);
  CHECK(measured.slices == ops);
  CHECK(predicted.slices == ops);
  int graph_phases = 0;
  for (const auto& p : report["phases"]) {
    const std::string name = p["phase"];
    const double us = p["measured"]["us"];
    INFO(name);
    if (p["graph"].get<bool>()) {
      ++graph_phases;
      CHECK(std::abs(measured.dur_by_phase[name] - us) <= 1e-6 * us);
    }
    // The predicted ops keep the report's per-op predictions (not scaled).
    double pred = 0, calls = 0;
    for (const auto& o : p["ops"])
      pred += o["predicted_us"].get<double>() * o["repeat"].get<int>(), calls += o["repeat"].get<int>();
    CHECK(predicted.dur_by_phase[name] == Approx(pred).margin(1e-3 * calls));  // <= 1 ns rounding per slice
  }
  CHECK(graph_phases > 0);

  std::istringstream csv(slurp(dir + "/t.csv"));
  std::string line;
  std::getline(csv, line);
  CHECK(line.rfind(kTraceCsvHeader, 0) == 0);
  long long rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    CHECK(std::count(line.begin(), line.end(), ',') == 15);
  }
  CHECK(rows == ops);
}

}  // namespace

TEST_CASE("replay report -> Chrome trace and CSV: measured beside predicted, graph phases sum to measured") {
  check_conversion(kReport);
}

TEST_CASE("a two-GPU replay report (collectives measured) converts too") {
  check_conversion("replay/h200x2/r-nccl-t4.json");
}

TEST_CASE("replay trace layout: blocks in order, repeats layer by layer, scale = measured / event sum") {
  const json report = read_json_file(traces_path(kReport));
  const ReplayTrace t = replay_trace_from_report(report, "R.json");
  REQUIRE(t.phases.size() == report["phases"].size());
  for (const auto& p : t.phases) {
    INFO(p.name);
    double sum = 0;
    for (const auto& e : p.events) sum += e.dur_us;
    CHECK(std::abs(sum - p.measured_us) <= 1e-12 * p.measured_us);
    // Eager event times carry launch gaps: the graph replay is shorter than their sum.
    CHECK(p.scale < 1.0);
    CHECK(p.scale == Approx(p.measured_us / p.event_sum_us));
  }
  // verify: embed once, then 32 dense layers each running all its ops, then the lm head.
  const ReplayTracePhase& v = t.phases[1];
  REQUIRE(v.name == "verify");
  std::vector<std::string> order;
  for (const auto& e : v.events) order.push_back(e.op->block + "/" + std::to_string(e.layer) + "/" + e.op->name);
  CHECK(order.front() == "embed/0/vocab_embedding");
  CHECK(order[1] == "dense_layer/0/input_layernorm");
  std::size_t per_layer = 0;
  for (const auto& o : v.ops) per_layer += o.block == "dense_layer";
  REQUIRE(per_layer > 1);
  CHECK(order[per_layer] == "dense_layer/0/" + v.ops[per_layer].name);  // ops[0] is the embedding
  CHECK(order[1 + per_layer] == "dense_layer/1/input_layernorm");
  CHECK(order.back().rfind("lm_head/0/", 0) == 0);
  // Phases start together on both tracks, after the longer span of the one before.
  CHECK(t.phases[1].start_us >= std::max(t.phases[0].measured_us, t.phases[0].predicted_us));
}

TEST_CASE("a truncated or garbled replay report exits 2 and writes no file") {
  const std::string dir = fresh_dir(), good = slurp(traces_path(kReport));
  const std::string trace = dir + "/t.json", csv = dir + "/t.csv";
  auto refuse = [&](const std::string& text, const std::string& field) {
    write_text(dir + "/r.json", text);
    const auto r = run_specsim({"ingest", "--replay-report", dir + "/r.json", "--trace", trace, "--csv", csv});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find(field) != std::string::npos);
    CHECK_FALSE(exists(trace));
    CHECK_FALSE(exists(csv));
  };
  refuse(good.substr(0, good.size() / 2), "r.json");
  refuse("", "r.json");
  json j = json::parse(good);
  j["phases"][1]["ops"][3]["measured_us"] = "fast";
  refuse(j.dump(), "r.json: phases[1].ops[3].measured_us");
  j = json::parse(good);
  j["phases"][0]["ops"][2].erase("repeat");
  refuse(j.dump(), "r.json: phases[0].ops[2].repeat");
  j = json::parse(good);
  j["phases"][2].erase("measured");
  refuse(j.dump(), "r.json: phases[2].measured");
  j = json::parse(good);
  j["kind"] = "specsim-report";
  refuse(j.dump(), "r.json: kind");
  refuse("[1, 2, 3]", "r.json: kind");

  // --trace belongs to --replay-report here.
  const auto r =
      run_specsim({"ingest", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt"), "--trace", trace});
  CHECK(r.exit_code == 2);
  CHECK_FALSE(exists(trace));
}
