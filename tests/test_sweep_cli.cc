// `specsim sweep` end to end: grid size, CSV columns, determinism across threads, equality with
// `specsim run --json`, skipped points, bad ranges, plots.
#include <algorithm>
#include <catch2/catch.hpp>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(s);
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  size_t col(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    FAIL("no column " << name);
    return 0;
  }
};

Csv parse_csv(const std::string& text) {
  Csv c;
  std::stringstream ss(text);
  std::string line;
  std::getline(ss, line);
  c.header = split(line, ',');
  while (std::getline(ss, line)) c.rows.push_back(split(line, ','));
  return c;
}

// The label of a fixed latency, as the sweep writes it (fixed:40).
std::string fmt_fixed(double us) {
  std::ostringstream o;
  o << "fixed:" << us;
  return o.str();
}

}  // namespace

TEST_CASE("sweep: one row per point with every setting and figure") {
  const auto r =
      run_specsim({"sweep", "--allreduce", "fixed:10..50:10", "--accept-len", "1.5,2,2.5", "--batch-size", "1,4"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv c = parse_csv(r.out);
  CHECK(c.rows.size() == 5 * 3 * 2);
  for (const char* col : {"tp_size",
                          "dtype",
                          "batch_size",
                          "context_len",
                          "speculative_num_steps",
                          "speculative_eagle_topk",
                          "speculative_num_draft_tokens",
                          "allreduce",
                          "allreduce_fixed_us",
                          "accept_len",
                          "baseline_step_us",
                          "baseline_tok_s",
                          "cycle_us",
                          "spec_tok_s",
                          "speedup",
                          "breakeven_accept_len",
                          "allreduce_share",
                          "draft_decode_us",
                          "verify_us",
                          "draft_extend_us",
                          "baseline_decode_us",
                          "cycle_gemm_us",
                          "cycle_allreduce_us",
                          "cycle_launch_us"})
    CHECK_NOTHROW(c.col(col));
  for (const auto& row : c.rows) REQUIRE(row.size() == c.header.size());
  // Grid order: batch outermost of these, then all-reduce, accept len fastest.
  CHECK(c.rows[0][c.col("allreduce")] == "fixed:10");
  CHECK(c.rows[1][c.col("accept_len")] == "2");
  CHECK(c.rows[3][c.col("allreduce")] == "fixed:20");
  CHECK(c.rows[15][c.col("batch_size")] == "4");
  // More all-reduce latency, slower cycle.
  CHECK(std::stod(c.rows[3][c.col("cycle_us")]) > std::stod(c.rows[0][c.col("cycle_us")]));
  CHECK(r.err.find("30 points, 30 evaluated, 0 skipped") != std::string::npos);
  // No --allreduce: NCCL and the custom kernel, like `specsim run`.
  const auto d = run_specsim({"sweep", "--batch-size", "1,4"});
  REQUIRE(d.exit_code == 0);
  const Csv dc = parse_csv(d.out);
  REQUIRE(dc.rows.size() == 4);
  CHECK(dc.rows[0][dc.col("allreduce")] == "nccl");
  CHECK(dc.rows[1][dc.col("allreduce")] == "custom");
}

TEST_CASE("sweep: a point equals `specsim run --json` with the same flags") {
  const std::string dir = fresh_dir();
  // Llama-3.1-70B fits the H200s at tp 4 and 8 (DeepSeek-V3 does not fit four of the built-in box's GPUs)
  const auto r = run_specsim({"sweep", "--tp-size", "4,8", "--speculative-num-draft-tokens", "2..4", "--batch-size",
                              "1,4", "--allreduce", "nccl,fixed:50", "--model-path", "llama-3.1-70b", "--accept-len",
                              "2", "-o", dir + "/s.csv"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv c = parse_csv(slurp(dir + "/s.csv"));
  REQUIRE(c.rows.size() == 2 * 3 * 2 * 2);
  struct Case {
    std::string tp, n, bs, ar;
  };
  for (const Case k : {Case{"4", "3", "4", "fixed:50"}, Case{"8", "2", "1", "nccl"}, Case{"8", "4", "4", "nccl"}}) {
    INFO(k.tp << " " << k.n << " " << k.bs << " " << k.ar);
    const std::vector<std::string>* row = nullptr;
    for (const auto& rw : c.rows)
      if (rw[c.col("tp_size")] == k.tp && rw[c.col("speculative_num_draft_tokens")] == k.n &&
          rw[c.col("batch_size")] == k.bs && rw[c.col("allreduce")] == k.ar)
        row = &rw;
    REQUIRE(row);
    const auto one =
        run_specsim({"run", "--json", "--tp-size", k.tp, "--speculative-num-draft-tokens", k.n, "--batch-size", k.bs,
                     "--allreduce", k.ar, "--model-path", "llama-3.1-70b", "--accept-len", "2"});
    REQUIRE(one.exit_code == 0);
    const json j = json::parse(one.out);
    const json& sc = j["scenarios"][0];
    auto v = [&](const char* col) { return std::stod((*row)[c.col(col)]); };
    CHECK(v("speculative_num_steps") == j["settings"]["speculative_num_steps"].get<double>());
    CHECK(v("accept_len") == sc["spec"]["accept_len"].get<double>());
    CHECK(v("baseline_step_us") == sc["baseline"]["step_us"].get<double>());
    CHECK(v("baseline_tok_s") == sc["baseline"]["tok_per_s"].get<double>());
    CHECK(v("cycle_us") == sc["spec"]["cycle_us"].get<double>());
    CHECK(v("spec_tok_s") == sc["spec"]["tok_per_s"].get<double>());
    CHECK(v("speedup") == sc["spec"]["speedup"].get<double>());
    CHECK(v("breakeven_accept_len") == sc["spec"]["breakeven_accept_len"].get<double>());
    CHECK(v("allreduce_share") == sc["spec"]["allreduce_share"].get<double>());
    bool saw_draft_decode = false;
    for (const auto& p : sc["phases"]) {
      const std::string col = p["name"].get<std::string>() + "_us";
      CHECK(v(col.c_str()) == p["us"].get<double>());
      saw_draft_decode |= p["name"] == "draft_decode";
    }
    if (!saw_draft_decode) CHECK((*row)[c.col("draft_decode_us")].empty());  // N 2: one step, no draft decode
  }
  // A swept acceptance rate goes through the chain formula as in `specsim run --accept-rate`.
  const auto rr = run_specsim({"sweep", "--accept-rate", "0.6,0.8", "--allreduce", "nccl"});
  REQUIRE(rr.exit_code == 0);
  const Csv rc = parse_csv(rr.out);
  REQUIRE(rc.rows.size() == 2);
  const auto one = run_specsim({"run", "--json", "--accept-rate", "0.8", "--allreduce", "nccl"});
  REQUIRE(one.exit_code == 0);
  const json j = json::parse(one.out);
  CHECK(std::stod(rc.rows[1][rc.col("accept_len")]) == j["scenarios"][0]["spec"]["accept_len"].get<double>());
  CHECK(std::stod(rc.rows[1][rc.col("spec_tok_s")]) == j["scenarios"][0]["spec"]["tok_per_s"].get<double>());
}

TEST_CASE("sweep: byte-identical output on 1 and 2 threads") {
  const std::string dir = fresh_dir();
  const std::vector<std::string> flags = {
      "sweep", "--allreduce", "fixed:1..100:1,nccl", "--accept-len", "1..3:0.1", "--batch-size", "1,2"};
  auto with = [&](const std::string& threads, const std::string& tag) {
    auto a = flags;
    for (const auto& s : {std::string("--threads"), threads, std::string("-o"), dir + "/" + tag + ".csv",
                          std::string("--json"), dir + "/" + tag + ".json"})
      a.push_back(s);
    const auto r = run_specsim(a);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  };
  with("1", "one");
  with("2", "two");
  const std::string one = slurp(dir + "/one.csv");
  CHECK(std::count(one.begin(), one.end(), '\n') == 1 + 101 * 21 * 2);
  CHECK(one == slurp(dir + "/two.csv"));
  CHECK(slurp(dir + "/one.json") == slurp(dir + "/two.json"));
  const json j = json::parse(slurp(dir + "/one.json"));
  CHECK(j["points"] == 101 * 21 * 2);
  CHECK(j["rows"].size() == 101 * 21 * 2);
  CHECK(j["rows"][0].size() == j["columns"].size());
  CHECK(j["axes"]["--accept-len"].size() == 21);
}

TEST_CASE("sweep: invalid points are skipped and counted, not fatal") {
  // With topk 1 SGLang forces N = steps + 1: sweeping both leaves invalid pairs.
  const auto r = run_specsim(
      {"sweep", "--speculative-num-steps", "1..3", "--speculative-num-draft-tokens", "2..4", "--allreduce", "nccl"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv c = parse_csv(r.out);
  CHECK(c.rows.size() == 3);
  for (const auto& row : c.rows)
    CHECK(std::stoi(row[c.col("speculative_num_draft_tokens")]) == std::stoi(row[c.col("speculative_num_steps")]) + 1);
  CHECK(r.err.find("9 points, 3 evaluated, 6 skipped") != std::string::npos);
  CHECK(r.err.find("SGLang forces num-draft-tokens") != std::string::npos);

  // Accept lens beyond the draft tokens are skipped per point.
  const auto a = run_specsim({"sweep", "--accept-len", "2,3,4", "--allreduce", "nccl"});
  REQUIRE(a.exit_code == 0);
  CHECK(parse_csv(a.out).rows.size() == 2);
  CHECK(a.err.find("accept len 4 outside [1, 3]") != std::string::npos);

  // Reasons that differ per point (a size in the text) print ten lines, then one line for the rest
  // (on eight H200s, which hold the KV cache of the batches whose all-reduce outgrows the kernel).
  const auto big =
      run_specsim({"sweep", "--batch-size", "1..400", "--allreduce", "custom", "--hardware", "h200:nvswitch"});
  REQUIRE(big.exit_code == 0);
  size_t lines = 0;
  for (size_t p = big.err.find("  skipped "); p != std::string::npos; p = big.err.find("  skipped ", p + 1)) ++lines;
  CHECK(lines == 10);
  CHECK(big.err.find("more skip reasons") != std::string::npos);

  // Nothing evaluable at all: an error, exit 2.
  const auto none = run_specsim({"sweep", "--accept-len", "5,6", "--allreduce", "nccl"});
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("error: no point of the grid could be evaluated") != std::string::npos);
}

TEST_CASE("sweep: a malformed range is bad input naming the flag, and writes nothing") {
  const std::string dir = fresh_dir();
  for (const std::vector<std::string> args : {std::vector<std::string>{"--batch-size", "8..2"},
                                              {"--accept-len", "1.5..3"},
                                              {"--tp-size", "4,x"},
                                              {"--allreduce", "fixed:10..abc"},
                                              {"--speculative-num-draft-tokens", "2..8:0"}}) {
    std::vector<std::string> a = {"sweep", "-o", dir + "/x.csv"};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_specsim(a);
    INFO(args[0] << " " << args[1] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find("(" + args[0] + ")") != std::string::npos);
    CHECK_FALSE(exists(dir + "/x.csv"));
  }
}

TEST_CASE("sweep: plots with gnuplot") {
  if (!have_gnuplot()) {
    std::cout << "SKIP: gnuplot is not installed (apt-get install gnuplot-nox); plot tests not run\n";
    return;
  }
  const std::string dir = fresh_dir();
  struct Plot {
    std::string file;
    std::vector<std::string> args;
  };
  for (const auto& p : {Plot{"tokps.png", {"--allreduce", "fixed:10..300:10"}},
                        Plot{"heat.png", {"--allreduce", "fixed:10..300:10", "--accept-len", "1..3:0.1"}},
                        Plot{"bars.png", {"--batch-size", "1,4,16"}},
                        Plot{"tokps.svg", {"--allreduce", "fixed:10..300:10", "--accept-len", "1.5,2,2.5"}}}) {
    std::vector<std::string> a = {"sweep", "--plot", dir + "/" + p.file};
    a.insert(a.end(), p.args.begin(), p.args.end());
    const auto r = run_specsim(a);
    INFO(p.file << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());  // --plot alone: no CSV on stdout
    const std::string img = slurp(dir + "/" + p.file);
    CHECK(img.size() > 1000);
    if (p.file.ends_with(".png"))
      CHECK(img.substr(1, 3) == "PNG");
    else
      CHECK(img.find("<svg") != std::string::npos);
  }
  // A plot that the grid cannot give is bad input before any work.
  const auto bad = run_specsim({"sweep", "--plot", dir + "/h.png", "--plot-kind", "heatmap", "--batch-size", "1,2"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("(--plot-kind)") != std::string::npos);
  const auto ext = run_specsim({"sweep", "--plot", dir + "/h.jpg", "--batch-size", "1,2"});
  CHECK(ext.exit_code == 2);
  CHECK(ext.err.find("(--plot)") != std::string::npos);
}

TEST_CASE("sweep: --plot without gnuplot is an environment error (exit 3) saying what to install") {
  const std::string dir = fresh_dir();
  const auto r = run_program("/usr/bin/env", {"PATH=" + dir, specsim_bin(), "sweep", "--allreduce", "fixed:10..50:10",
                                              "--plot", dir + "/p.png"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("error: plots need gnuplot on the PATH (apt-get install gnuplot-nox)") != std::string::npos);
  CHECK_FALSE(exists(dir + "/p.png"));
}

TEST_CASE("sweep: --plot with a missing TMPDIR is an environment error, not an internal one") {
  if (!exists("/usr/bin/gnuplot")) return;  // the gnuplot check comes first
  const std::string dir = fresh_dir();
  const auto r = run_program("/usr/bin/env", {"TMPDIR=" + dir + "/missing", specsim_bin(), "sweep", "--allreduce",
                                              "fixed:10..50:10", "--plot", dir + "/p.png"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("set TMPDIR to an existing writable folder") != std::string::npos);
  CHECK_FALSE(exists(dir + "/p.png"));
}

TEST_CASE("sweep: the tok/s plot marks the measured operating point and draws the baseline dashed") {
  if (!have_gnuplot()) {
    std::cout << "SKIP: gnuplot is not installed (apt-get install gnuplot-nox); plot test not run\n";
    return;
  }
  const std::string dir = fresh_dir();
  const auto r = run_specsim(
      {"sweep", "--allreduce", "fixed:20..300:20", "--plot", dir + "/p.png", "--plot-script", dir + "/p.gp"});
  REQUIRE(r.exit_code == 0);
  const std::string gp = slurp(dir + "/p.gp");
  // the built-in scenario's measurement: 54.1 tok/s with NCCL at 200 us per all-reduce
  CHECK(gp.find("\n200 54.1\n") != std::string::npos);
  CHECK(gp.find("title 'measured (built-in): 54.1 tok/s with NCCL at 200 us'") != std::string::npos);
  CHECK(gp.find("using 1:2 with lines lw 2 dt 2") != std::string::npos);  // the baseline, dashed
  // a model given by path has no measurement: no such point
  const auto m =
      run_specsim({"sweep", "--model-path", "llama-3.1-8b", "--accept-len", "3", "--tp-size", "2", "--allreduce",
                   "fixed:5..50:5", "--plot", dir + "/q.png", "--plot-script", dir + "/q.gp"});
  REQUIRE(m.exit_code == 0);
  CHECK(slurp(dir + "/q.gp").find("measured (") == std::string::npos);
}

TEST_CASE("sweep: fixed:A..B:STEP@verify moves only the verify all-reduce; the baseline stays on NCCL") {
  const std::string dir = fresh_dir();
  const auto r = run_specsim(
      {"sweep", "--allreduce", "fixed:5..250:5@verify", "--accept-len", "1.5,2,2.5", "--json", dir + "/s.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(slurp(dir + "/s.json"));
  const auto& cols = j["columns"];
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == name) return i;
    FAIL("no column " << name);
    return size_t(0);
  };
  REQUIRE(j["rows"].size() == 50 * 3);
  const double baseline = j["rows"][0][col("baseline_tok_s")].get<double>();
  std::map<double, std::vector<std::pair<double, double>>> by_accept;  // accept len -> (us, speedup)
  for (const auto& row : j["rows"]) {
    CHECK(row[col("baseline_tok_s")].get<double>() == baseline);  // identical at every point
    const double us = row[col("allreduce_fixed_us")].get<double>();
    CHECK(row[col("allreduce")].get<std::string>() == fmt_fixed(us) + "@verify");
    by_accept[row[col("accept_len")].get<double>()].emplace_back(us, row[col("speedup")].get<double>());
  }
  REQUIRE(by_accept.size() == 3);
  for (auto& [accept, pts] : by_accept) {
    INFO("accept len " << accept);
    std::sort(pts.begin(), pts.end());
    REQUIRE(pts.size() == 50);
    for (size_t i = 1; i < pts.size(); ++i) CHECK(pts[i].second <= pts[i - 1].second);  // non-increasing
    CHECK(pts.back().second < pts.front().second);                                      // and it does fall
  }
  // A point equals `specsim run --allreduce fixed:V@verify` at the same accept len.
  const auto one = run_specsim({"--allreduce", "fixed:40@verify", "--accept-len", "2", "--json"});
  REQUIRE(one.exit_code == 0);
  const json rj = json::parse(one.out);
  bool matched = false;
  for (const auto& row : j["rows"])
    if (row[col("allreduce_fixed_us")] == 40.0 && row[col("accept_len")] == 2.0) {
      matched = true;
      CHECK(row[col("baseline_tok_s")].get<double>() == rj["scenarios"][0]["baseline"]["tok_per_s"].get<double>());
      CHECK(row[col("spec_tok_s")].get<double>() == rj["scenarios"][0]["spec"]["tok_per_s"].get<double>());
    }
  CHECK(matched);
  // Unscoped, the fixed latency moves the baseline too (every phase): its tok/s is not constant.
  const auto all = run_specsim({"sweep", "--allreduce", "fixed:5..250:5", "--accept-len", "2"});
  REQUIRE(all.exit_code == 0);
  const Csv c = parse_csv(all.out);
  CHECK(c.rows.front()[c.col("baseline_tok_s")] != c.rows.back()[c.col("baseline_tok_s")]);
}

TEST_CASE("sweep: scoped fixed ranges parse in the CSV and draw the tok/s and heat-map plots") {
  const std::string dir = fresh_dir();
  // two phases: the label holds a comma, so the CSV quotes it
  const auto two = run_specsim({"sweep", "--allreduce", "fixed:10..30:10@verify,draft_extend", "--accept-len", "2"});
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  CHECK(two.out.find("\"fixed:10@verify,draft_extend\"") != std::string::npos);
  if (!have_gnuplot()) {
    std::cout << "SKIP: gnuplot is not installed (apt-get install gnuplot-nox); plot test not run\n";
    return;
  }
  for (const std::string kind : {"tokps", "heatmap"}) {
    const auto r =
        run_specsim({"sweep", "--allreduce", "fixed:5..250:5@verify", "--accept-len", "1.5,2,2.5", "--plot-kind", kind,
                     "--plot", dir + "/" + kind + ".png", "--plot-script", dir + "/" + kind + ".gp"});
    INFO(kind << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(slurp(dir + "/" + kind + ".png").substr(1, 3) == "PNG");
    // the x axis says which all-reduce moved and what stayed on NCCL
    CHECK(slurp(dir + "/" + kind + ".gp")
              .find("set xlabel 'verify all-reduce latency (us; draft_decode, draft_extend, baseline on NCCL as "
                    "modelled)'") != std::string::npos);
  }
  // the tok/s plot's baseline is one flat line: every x has the same baseline tok/s
  const std::string gp = slurp(dir + "/tokps.gp");
  CHECK(gp.find("\n5 89.5 ") != std::string::npos);
  CHECK(gp.find("\n250 89.5 ") != std::string::npos);
  // two scopes on one latency axis cannot be drawn: bad input naming --allreduce, nothing written
  const auto mixed = run_specsim(
      {"sweep", "--allreduce", "fixed:5..50:5@verify", "--allreduce", "fixed:5..50:5", "--plot", dir + "/m.png"});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("different phases") != std::string::npos);
  CHECK(mixed.err.find("(--allreduce)") != std::string::npos);
  CHECK_FALSE(exists(dir + "/m.png"));
}

TEST_CASE("sweep: --measured-* flags take one value; a list or range is refused naming the flag") {
  const std::string dir = fresh_dir();
  for (const std::string flag : {"--measured-baseline-tok-s", "--measured-allreduce-us", "--measured-spec-tok-s"})
    for (const std::string value : {"80,90", "80..90", "80..90:5"}) {
      const auto r = run_specsim({"sweep", flag, value, "--allreduce", "nccl", "-o", dir + "/x.csv"});
      INFO(flag << " " << value << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.rfind("error: '" + value + "' is a list or range", 0) == 0);
      CHECK(r.err.find("one measurement") != std::string::npos);
      CHECK(r.err.find("(" + flag + ")\n") != std::string::npos);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_FALSE(exists(dir + "/x.csv"));
    }
  // one value still anchors the sweep
  const auto ok = run_specsim({"sweep", "--measured-baseline-tok-s", "80", "--allreduce", "nccl"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("sweep: a measurement on the command line anchors at the axes' one values, as run does") {
  const std::vector<std::string> flags = {"--model-path",
                                          "llama-3.1-8b",
                                          "--hardware",
                                          "h200:nvswitch",
                                          "--speculative-num-steps",
                                          "3",
                                          "--speculative-num-draft-tokens",
                                          "4",
                                          "--measured-spec-tok-s",
                                          "500",
                                          "--allreduce",
                                          "nccl"};
  auto with = [&](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), flags.begin(), flags.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const auto run = run_specsim(with({"run"}, {"--speculative-eagle-topk", "1", "--batch-size", "2", "--json"}));
  REQUIRE(run.exit_code == 0);
  const json rj = json::parse(run.out);
  const std::string dir = fresh_dir();
  const auto sw =
      run_specsim(with({"sweep"}, {"--speculative-eagle-topk", "1", "--batch-size", "2", "--json", dir + "/a.json"}));
  INFO(sw.err);
  REQUIRE(sw.exit_code == 0);
  const json j = json::parse(slurp(dir + "/a.json"));
  const auto cols = j["columns"].get<std::vector<std::string>>();
  auto col = [&](const std::string& name) {
    const auto at = std::find(cols.begin(), cols.end(), name);
    REQUIRE(at != cols.end());
    return j["rows"][0][at - cols.begin()].get<double>();
  };
  // The measurement was taken at topk 1, batch 2: the sweep's one point is that setting.
  CHECK(col("accept_len") == Approx(rj["settings"]["accept_len"].get<double>()));
  CHECK(col("spec_tok_s") == Approx(500.0));
  CHECK(j["tok_per_s_band"]["spec"]["class"].get<std::string>().rfind("anchored ", 0) == 0);
  // Several values of an axis the measurement depends on: which one was measured is not said.
  for (const auto& [axis, values] :
       std::vector<std::pair<std::string, std::string>>{{"--speculative-eagle-topk", "1,4"}, {"--batch-size", "1,2"}}) {
    const auto r = run_specsim(with({"sweep"}, {axis, values, "-o", dir + "/b.csv"}));
    INFO(axis << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--measured-spec-tok-s was measured at one " + axis) != std::string::npos);
    CHECK(r.err.find("--save-scenario") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(exists(dir + "/b.csv"));
  }
}

TEST_CASE("sweep: points `specsim run` refuses for memory are skipped with the reason, never ranked") {
  const std::string dir = fresh_dir();
  // the built-in scenario: run refuses batch 16 (weights + KV cache over the budget)
  const auto run16 = run_specsim({"--batch-size", "16"});
  REQUIRE(run16.exit_code == 2);
  const std::string reason = run16.err.substr(7, run16.err.size() - 8);  // without "error: " and the newline
  const auto r = run_specsim(
      {"sweep", "--batch-size", "1,8,16", "--allreduce", "nccl", "-o", dir + "/s.csv", "--json", dir + "/s.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("3 points, 2 evaluated, 1 skipped") != std::string::npos);
  CHECK(r.err.find("skipped 1 point (first: point 2): " + reason) != std::string::npos);
  const Csv c = parse_csv(slurp(dir + "/s.csv"));
  REQUIRE(c.rows.size() == 2);
  for (const auto& row : c.rows) CHECK(row[c.col("batch_size")] != "16");
  const json j = json::parse(slurp(dir + "/s.json"));
  REQUIRE(j["skipped"].size() == 1);
  CHECK(j["skipped"][0]["reason"] == reason);
  CHECK(j["skipped"][0]["count"] == 1);
  // every batch the sweep evaluates, run takes; every one it skips for memory, run refuses
  const auto wide = run_specsim({"sweep", "--batch-size", "1..12", "--allreduce", "nccl", "-o", dir + "/w.csv"});
  REQUIRE(wide.exit_code == 0);
  const Csv w = parse_csv(slurp(dir + "/w.csv"));
  std::set<std::string> ran;
  for (const auto& row : w.rows) ran.insert(row[w.col("batch_size")]);
  CHECK(ran.size() < 12);
  for (int b = 1; b <= 12; ++b) {
    INFO("batch " << b);
    const auto one = run_specsim({"--batch-size", std::to_string(b), "--allreduce", "nccl"});
    CHECK((one.exit_code == 0) == (ran.count(std::to_string(b)) == 1));
  }
}

TEST_CASE("sweep --scenario: a saved measured run is the starting point, its anchors carried to every point") {
  const std::string dir = fresh_dir();
  const auto save = run_specsim(
      {"run", "--measured-baseline-tok-s", "80", "--allreduce", "nccl", "--save-scenario", dir + "/m.json"});
  INFO(save.err);
  REQUIRE(save.exit_code == 0);
  // The advice the refusal gives (a measurement beside a swept batch) is a command that runs.
  const auto refused = run_specsim({"sweep", "--measured-baseline-tok-s", "80", "--batch-size", "1,2"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("sweep --scenario FILE") != std::string::npos);
  const auto r = run_specsim({"sweep", "--scenario", dir + "/m.json", "--batch-size", "1,2"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv c = parse_csv(r.out);
  REQUIRE(c.rows.size() == 2);  // the file's one backend at two batch sizes
  for (const char* bs : {"1", "2"}) {
    INFO("batch " << bs);
    const json j = json::parse(run_specsim({"run", "--json", "--scenario", dir + "/m.json", "--batch-size", bs}).out);
    const json& sc = j["scenarios"][0];
    const std::vector<std::string>* row = nullptr;
    for (const auto& rw : c.rows)
      if (rw[c.col("batch_size")] == bs) row = &rw;
    REQUIRE(row);
    CHECK(std::stod((*row)[c.col("baseline_tok_s")]) == sc["baseline"]["tok_per_s"].get<double>());
    CHECK(std::stod((*row)[c.col("spec_tok_s")]) == sc["spec"]["tok_per_s"].get<double>());
  }
  // The anchor holds at batch 1: the measured 80 tok/s comes back there.
  for (const auto& rw : c.rows)
    if (rw[c.col("batch_size")] == "1") CHECK(std::stod(rw[c.col("baseline_tok_s")]) == Approx(80.0).epsilon(1e-9));
  // A missing file is bad input naming the flag, and nothing is written.
  const auto missing = run_specsim({"sweep", "--scenario", dir + "/none.json", "-o", dir + "/out.csv"});
  CHECK(missing.exit_code == 2);
  CHECK(!exists(dir + "/out.csv"));
}

TEST_CASE("sweep, tune: a pasted launch command says that only run reads one") {
  for (const char* cmd : {"sweep", "tune"}) {
    const auto r = run_specsim({cmd, "--accept-len", "2", "--", "python", "-m", "sglang.launch_server", "--model-path",
                                "meta-llama/Llama-3.1-8B-Instruct"});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("only `specsim run` reads a launch command after --") != std::string::npos);
    CHECK(r.err.find("--scenario") != std::string::npos);
  }
}
