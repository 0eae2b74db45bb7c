// The parallel layout as a searched axis: DP attention's attention op and KV cache by hand, a sweep
// over tp x dp x ep x DP attention whose rows equal `specsim run`, `tune --layouts` ranking the
// layouts SGLang accepts, and the refusal of a layout SGLang refuses, naming the flag.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "plan/cycle_plan.h"
#include "scenario/hardware.h"
#include "scenario/memory_fit.h"
#include "scenario/model_spec.h"
#include "scenario/paths.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

ModelSpec zoo_model(const std::string& name) {
  return model_from_config(resolve_model_config(name, "--model-path"), "--model-path");
}

const Op* find_op(const PhasePlan& p, OpKind k) {
  for (const auto& b : p.blocks)
    for (const auto& o : b.ops)
      if (o.kind == k) return &o;
  return nullptr;
}

RunSpec plain_run(int tp, int batch, int dp) {
  RunSpec r;
  r.algo = SpecAlgo::None;
  r.tp_size = tp, r.batch_size = batch, r.context_len = 4096;
  if (dp > 0) r.layout.dp_attention = true, r.layout.dp = dp;
  return r;
}

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
  const std::string& at(size_t row, const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return rows.at(row).at(static_cast<size_t>(it - header.begin()));
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

const std::vector<std::string> kQwen = {"--model-path", "qwen3-30b-a3b", "--hardware", "h200:nvswitch"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// `specsim COMMAND` on Qwen3-30B-A3B (128 experts, 48 layers) on H200s with `more` flags.
std::vector<std::string> qwen(const std::string& command, const std::vector<std::string>& more) {
  return with(with({command}, kQwen), more);
}

}  // namespace

TEST_CASE("DP attention: each DP rank's attention on its own requests, all heads, by hand (MLA)") {
  const ModelSpec m = zoo_model("deepseek-v3");  // 128 heads, MLA latent 512 + rope 64
  const double ctx = 4096, kv = 2.0, latent = 576, vdim = 512;
  // 32 requests, one token each: pure TP 8 gives every rank all 32 tokens and 128 / 8 heads, and
  // every rank reads every request's latent KV (MLA's cache is not split by heads).
  const CyclePlan tp = build_plan(m, nullptr, plain_run(8, 32, 0));
  const Op* a = find_op(*tp.find(PhaseKind::BaselineDecode), OpKind::Attention);
  REQUIRE(a);
  CHECK(a->m == 32);
  CHECK(a->batch == 16);
  CHECK(a->flops == Approx(2.0 * 32 * 16 * ctx * (latent + vdim)));
  CHECK(a->bytes == Approx(32 * ctx * latent * kv + 32.0 * 16 * (latent + vdim) * 2));
  // DP attention 8: a rank holds 32 / 8 = 4 requests and runs all 128 heads on them (attn tp 1)
  const CyclePlan dp = build_plan(m, nullptr, plain_run(8, 32, 8));
  const Op* d = find_op(*dp.find(PhaseKind::BaselineDecode), OpKind::Attention);
  REQUIRE(d);
  CHECK(d->m == 4);
  CHECK(d->batch == 128);
  CHECK(d->flops == Approx(2.0 * 4 * 128 * ctx * (latent + vdim)));  // the same FLOPs a rank as TP 8 ...
  CHECK(d->flops == Approx(a->flops));
  CHECK(d->bytes == Approx(4 * ctx * latent * kv + 4.0 * 128 * (latent + vdim) * 2));  // ... an eighth of the KV
  // DP 2 on tp 8: 16 requests a rank over an attention group of 4 GPUs, 32 heads each
  const CyclePlan dp2 = build_plan(m, nullptr, plain_run(8, 32, 2));  // kept: d2 points into it
  const Op* d2 = find_op(*dp2.find(PhaseKind::BaselineDecode), OpKind::Attention);
  REQUIRE(d2);
  CHECK(d2->m == 16);
  CHECK(d2->batch == 32);
  CHECK(d2->bytes == Approx(16 * ctx * latent * kv + 16.0 * 32 * (latent + vdim) * 2));
}

TEST_CASE("DP attention: GQA heads per rank are all heads, the KV its own requests', by hand") {
  const ModelSpec m = zoo_model("qwen3-30b-a3b");  // 32 query heads, 4 KV heads of 128
  REQUIRE(m.heads == 32);
  REQUIRE(m.kv_heads == 4);
  REQUIRE(m.head_dim == 128);
  const double ctx = 4096, hd = 128;
  // DP attention 4 on tp 4, 16 requests: 4 a rank, 32 query heads and all 4 KV heads each
  const CyclePlan dp = build_plan(m, nullptr, plain_run(4, 16, 4));  // kept: d points into it
  const Op* d = find_op(*dp.find(PhaseKind::BaselineDecode), OpKind::Attention);
  REQUIRE(d);
  CHECK(d->m == 4);
  CHECK(d->batch == 32);
  CHECK(d->flops == Approx(2.0 * 4 * 32 * ctx * 2 * hd));
  CHECK(d->bytes == Approx(4 * ctx * 2 * 4 * hd * 2.0 + 2.0 * 4 * 32 * hd * 2));
  // pure TP 4: all 16 requests, 8 query heads and 1 KV head a rank: the same FLOPs and KV bytes
  const CyclePlan tp = build_plan(m, nullptr, plain_run(4, 16, 0));  // kept: a points into it
  const Op* a = find_op(*tp.find(PhaseKind::BaselineDecode), OpKind::Attention);
  REQUIRE(a);
  CHECK(a->m == 16);
  CHECK(a->batch == 8);
  CHECK(a->flops == Approx(d->flops));
  CHECK(a->bytes == Approx(16 * ctx * 2 * 1 * hd * 2.0 + 2.0 * 16 * 8 * hd * 2));
}

TEST_CASE("DP attention: the KV cache a GPU holds is its DP rank's requests', by hand") {
  const ModelSpec m = zoo_model("deepseek-v3");
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  const double gib = 1024.0 * 1024 * 1024;
  const double per_request = 4096.0 * m.layers * 576 * 2.0 / gib;  // MLA latent, bf16, every layer
  const MemoryFit tp = memory_fit(m, nullptr, hw, plain_run(8, 32, 0), std::nullopt);
  const MemoryFit dp = memory_fit(m, nullptr, hw, plain_run(8, 32, 8), std::nullopt);
  CHECK(tp.kv_gib_per_request == Approx(per_request));
  CHECK(tp.kv_gib == Approx(32 * per_request));
  CHECK(dp.kv_gib_per_request == Approx(per_request));
  CHECK(dp.kv_gib == Approx(4 * per_request));  // 32 requests over 8 DP ranks
  // 33 requests: the largest rank holds 5
  CHECK(memory_fit(m, nullptr, hw, plain_run(8, 33, 8), std::nullopt).kv_gib == Approx(5 * per_request));
  // the weights beside the routed experts are whole on every rank of a DP-8 layout: more per GPU
  CHECK(dp.weights_gib > tp.weights_gib);
}

TEST_CASE("sweep over layouts: one row per tp x dp x ep x DP attention, each equal to `specsim run`") {
  const auto r =
      run_specsim(qwen("sweep", {"--tp-size", "4", "--dp", "1,2,4", "--enable-dp-attention", "off,on", "--ep-size",
                                 "1,4", "--batch-size", "8", "--accept-len", "2", "--allreduce", "nccl"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv c = parse_csv(r.out);
  // 3 dp x 2 on/off x 2 ep = 12 points; DP attention off with dp 2 or 4 is refused (4 points)
  REQUIRE(c.rows.size() == 8);
  CHECK(r.err.find("12 points, 8 evaluated, 4 skipped") != std::string::npos);
  CHECK(r.err.find("skipped 4 points") != std::string::npos);
  CHECK(r.err.find("--enable-dp-attention") != std::string::npos);
  std::set<std::string> seen;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const std::string key =
        c.at(i, "tp_size") + "/" + c.at(i, "dp_size") + "/" + c.at(i, "ep_size") + "/" + c.at(i, "enable_dp_attention");
    seen.insert(key);
    CHECK(c.at(i, "moe_a2a_backend") == "none");
    if (c.at(i, "enable_dp_attention") == "0") CHECK(c.at(i, "dp_size") == "1");
  }
  CHECK(seen ==
        std::set<std::string>{"4/1/1/0", "4/1/4/0", "4/1/1/1", "4/1/4/1", "4/2/1/1", "4/2/4/1", "4/4/1/1", "4/4/4/1"});
  // the per-layout summary names each layout with its best figures
  CHECK(r.err.find("by layout") != std::string::npos);
  CHECK(r.err.find("tp 4, dp attention 4, ep 4: best") != std::string::npos);
  // a row is `specsim run` at the same layout
  for (const auto& [dp, ep] : std::vector<std::pair<std::string, std::string>>{{"4", "4"}, {"2", "1"}}) {
    size_t row = c.rows.size();
    for (size_t i = 0; i < c.rows.size(); ++i)
      if (c.at(i, "dp_size") == dp && c.at(i, "ep_size") == ep && c.at(i, "enable_dp_attention") == "1") row = i;
    REQUIRE(row < c.rows.size());
    const auto one =
        run_specsim(qwen("run", {"--json", "--tp-size", "4", "--enable-dp-attention", "--dp", dp, "--ep-size", ep,
                                 "--batch-size", "8", "--accept-len", "2", "--allreduce", "nccl"}));
    INFO(one.err);
    REQUIRE(one.exit_code == 0);
    const json sc = json::parse(one.out)["scenarios"][0];
    CHECK(std::stod(c.at(row, "spec_tok_s")) == sc["spec"]["tok_per_s"].get<double>());
    CHECK(std::stod(c.at(row, "baseline_tok_s")) == sc["baseline"]["tok_per_s"].get<double>());
    CHECK(std::stod(c.at(row, "cycle_us")) == sc["spec"]["cycle_us"].get<double>());
  }
  // DP attention changes the cycle: the dp 4 row differs from the dp 1 row at the same ep
  std::map<std::string, double> spec;
  for (size_t i = 0; i < c.rows.size(); ++i)
    if (c.at(i, "ep_size") == "1" && c.at(i, "enable_dp_attention") == "1")
      spec[c.at(i, "dp_size")] = std::stod(c.at(i, "spec_tok_s"));
  CHECK(spec.at("4") != spec.at("1"));
}

TEST_CASE("layout refused: dp > tp in a sweep and in tune --layouts, naming the flag; nothing written") {
  const std::string dir = fresh_dir();
  const auto s = run_specsim(qwen(
      "sweep", {"--tp-size", "4", "--dp", "8", "--enable-dp-attention", "--accept-len", "2", "-o", dir + "/s.csv"}));
  CHECK(s.exit_code == 2);
  CHECK(s.err.find("error: ") == 0);
  CHECK(s.err.find("(--dp-size)") != std::string::npos);
  CHECK_FALSE(exists(dir + "/s.csv"));
  const auto t = run_specsim(
      qwen("tune", {"--tp-size", "4", "--accept-len", "2", "--layouts", "tp4,tp4-dp8", "--csv", dir + "/t.csv"}));
  CHECK(t.exit_code == 2);
  CHECK(t.err.find("layout tp4-dp8") != std::string::npos);
  CHECK(t.err.find("dp 8 exceeds tp 4") != std::string::npos);
  CHECK(t.err.find("(--layouts)") != std::string::npos);
  CHECK_FALSE(exists(dir + "/t.csv"));
  // a value of --enable-dp-attention that is neither on nor off
  const auto v =
      run_specsim(qwen("sweep", {"--tp-size", "4", "--enable-dp-attention", "off,maybe", "--accept-len", "2"}));
  CHECK(v.exit_code == 2);
  CHECK(v.err.find("'maybe' is not on or off") != std::string::npos);
  CHECK(v.err.find("(--enable-dp-attention)") != std::string::npos);
  // the bare flag is on, as in `specsim run`
  const auto on = run_specsim(qwen(
      "sweep", {"--tp-size", "4", "--dp", "2", "--enable-dp-attention", "--accept-len", "2", "--allreduce", "nccl"}));
  INFO(on.err);
  REQUIRE(on.exit_code == 0);
  const Csv oc = parse_csv(on.out);
  REQUIRE(oc.rows.size() == 1);
  CHECK(oc.at(0, "dp_size") == "2");
  CHECK(oc.at(0, "enable_dp_attention") == "1");
  // ep that does not divide tp, a layout past the box, a malformed item
  for (const char* bad : {"tp4-ep3", "tp8", "tp4-dq2", "dp2", "tp4,tp4"}) {
    const auto b = run_specsim(qwen("tune", {"--tp-size", "4", "--accept-len", "2", "--layouts", bad}));
    INFO(bad << ": " << b.err);
    CHECK(b.exit_code == 2);
    CHECK(b.err.find("(--layouts)") != std::string::npos);
  }
}

TEST_CASE("tune --layouts auto: every layout SGLang accepts on the GPUs, ranked by best tok/s per batch size") {
  const std::vector<std::string> small = {"--max-steps", "2", "--max-topk", "2", "--max-draft-tokens", "4"};
  const auto r = run_specsim(with(
      qwen("tune", {"--tp-size", "4", "--accept-len", "2.5", "--layouts", "auto", "--batch-size", "1,32", "--json"}),
      small));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  // SGLang's rules on 4 GPUs, written out: tp | 4; ep | tp (and 128 experts); with DP attention
  // dp | tp, dp >= 2. tp 1: 1; tp 2: ep 1,2 + dp 2 x ep 1,2; tp 4: ep 1,2,4 + dp 2,4 x ep 1,2,4.
  std::set<std::string> want = {"tp1", "tp2", "tp2-ep2", "tp2-dp2", "tp2-dp2-ep2", "tp4", "tp4-ep2", "tp4-ep4"};
  for (const char* dp : {"2", "4"})
    for (const char* ep : {"", "-ep2", "-ep4"}) want.insert(std::string("tp4-dp") + dp + ep);
  std::set<std::string> got;
  std::map<std::string, json> by_name;
  for (const auto& l : j["layouts"]) {
    got.insert(l["layout"].get<std::string>());
    by_name[l["layout"].get<std::string>()] = l;
  }
  CHECK(got == want);
  // each batch size's ranking is by each layout's best tok/s, descending, and its best row is the
  // top of a plain tune of that layout
  REQUIRE(j["ranking"].size() == 2);
  for (const auto& rk : j["ranking"]) {
    const int bs = rk["batch_size"].get<int>();
    double last = 1e300;
    for (const auto& name : rk["by_best_tok_s"]) {
      const json& l = by_name.at(name.get<std::string>());
      for (const auto& b : l["batches"])
        if (b["batch_size"].get<int>() == bs) {
          const double t = b["best_tok_s"]["tok_s"].get<double>();
          CHECK(t <= last);
          last = t;
          CHECK(b["best_speedup"]["speedup"].get<double>() >= b["best_tok_s"]["speedup"].get<double>());
          CHECK(b["pays"].get<bool>() == (t > b["plain_best_tok_s"].get<double>()));
        }
    }
  }
  const auto one = run_specsim(with(qwen("tune", {"--tp-size", "4", "--enable-dp-attention", "--dp", "4", "--ep-size",
                                                  "4", "--accept-len", "2.5", "--batch-size", "32", "--json"}),
                                    small));
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const json o = json::parse(one.out);
  const json& best = o["batches"][0]["ranked"][0];
  bool found = false;
  for (const auto& b : by_name.at("tp4-dp4-ep4")["batches"])
    if (b["batch_size"] == 32) {
      found = true;
      CHECK(b["best_tok_s"]["tok_s"].get<double>() == Approx(best["tok_s"].get<double>()));
      CHECK(b["best_tok_s"]["steps"] == best["steps"]);
      CHECK(b["best_tok_s"]["draft_tokens"] == best["draft_tokens"]);
    }
  CHECK(found);
  // the text names the fastest layout and the largest speedup per batch size
  const auto text = run_specsim(
      with(qwen("tune", {"--tp-size", "4", "--accept-len", "2.5", "--layouts", "tp4,tp4-dp4-ep4", "--batch-size", "1"}),
           small));
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("batch size 1: layouts by their best speculative tok/s") != std::string::npos);
  CHECK(text.out.find("fastest with speculation: ") != std::string::npos);
  CHECK(text.out.find("largest speedup: ") != std::string::npos);
  CHECK(text.out.find("tp4-dp4-ep4") != std::string::npos);
}

TEST_CASE("tune --layouts: a layout that does not fit GPU memory is skipped with the reason, not ranked") {
  // DeepSeek-V3 (fp8, ~640 GiB) fits 8 H200s at tp 8, not tp 4 on 4 of them
  const auto r = run_specsim({"tune", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8",
                              "--accept-len", "2", "--layouts", "tp4,tp8", "--batch-size", "1", "--max-steps", "1",
                              "--max-topk", "1", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["layouts"].size() == 2);
  CHECK(j["layouts"][0]["layout"] == "tp4");
  CHECK(j["layouts"][0]["skipped_reason"].get<std::string>().find("does not fit") != std::string::npos);
  CHECK(j["layouts"][1]["skipped_reason"].is_null());
  CHECK(j["ranking"][0]["by_best_tok_s"] == json::array({"tp8"}));
}
