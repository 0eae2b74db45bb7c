#include "replay_report/replay_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "report/report.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
using nlohmann::json;

namespace {

json error_pct(double predicted, double measured) {
  if (!(measured > 0)) return nullptr;
  return 100.0 * (predicted - measured) / measured;
}

OpKind parse_op_kind(const std::string& s, const std::string& where) {
  for (int k = 0; k <= static_cast<int>(OpKind::AllGather); ++k)
    if (op_kind_name(static_cast<OpKind>(k)) == s) return static_cast<OpKind>(k);
  throw InputError("unknown op kind '" + s + "'", where);
}

// The replay runs expert GEMMs as batched GEMMs (kernels/replay/op_prep.cc), not SGLang's Triton
// fused-MoE kernel, and fp8 GEMMs as the block-scaled kernel (128x128 weight scales, 1x128 token
// scales: gemm_fp8_block_*); replays made before that kernel ran cuBLASLt's per-tensor fp8
// (gemm_fp8_tensor_fixed_us). Its prediction prices what it ran, each by its own named term: the
// block kernel by its fitted price on this GPU (replay_block_fp8) where the profile has one; its
// attention by the profile's attention terms (the replay's split-KV kernel), not FlashInfer's.
Hardware as_replayed(const Hardware& hw, bool block_fp8) {
  Hardware h = hw;
  h.gpu.moe_gemm_memory_efficiency = 0, h.gpu.moe_gemm16_memory_efficiency = 0;
  h.gpu.price_as_replay_fp8 = block_fp8 && h.gpu.replay_block_fp8.present;
  h.gpu.price_stack_attention = false;  // the replay runs its own split-KV attention, not FlashInfer's or FA3's
  if (!block_fp8) {
    h.gpu.gemm_fp8_block_fixed_us = h.gpu.gemm_fp8_tensor_fixed_us;
    h.gpu.gemm_fp8_block_us_per_kblock = 0;
  }
  return h;
}

// The report's line naming the terms that priced the replay's fp8 GEMMs.
std::string fp8_terms(const GpuProfile& g, bool block_fp8) {
  if (block_fp8 && g.replay_block_fp8.present) {
    std::string terms;
    for (int i = 0; i < kReplayFp8Terms; ++i)
      terms += fmt::format("{}{} {:.4g}", i ? ", " : "", kReplayFp8Keys[i], g.replay_block_fp8.coef[i]);
    return "block-scaled fp8 kernel, its fitted price (replay_block_fp8: " + terms + "; " + g.replay_block_fp8.source +
           ")";
  }
  if (block_fp8)
    return fmt::format(
        "block-scaled fp8 kernel: gemm_fp8_block_fixed_us {:.2f} us + gemm_fp8_block_us_per_kblock {:.3f} us per "
        "128 of K + weight bytes at the GEMM rate",
        g.gemm_fp8_block_fixed_us, g.gemm_fp8_block_us_per_kblock);
  return fmt::format("cuBLASLt per-tensor fp8: gemm_fp8_tensor_fixed_us {:.2f} us + weight bytes at the GEMM rate",
                     g.gemm_fp8_tensor_fixed_us);
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

json op_json(const OpMeasurement& o, double predicted_us) {
  json j = {{"block", o.block},
            {"name", o.name},
            {"repeat", o.repeat},
            {"kind", std::string(op_kind_name(o.op.kind))},
            {"dtype", std::string(dtype_name(o.op.dtype))},
            {"ran_dtype", std::string(dtype_name(o.ran_dtype))},
            {"m", o.op.m},
            {"n", o.op.n},
            {"k", o.op.k},
            {"batch", o.op.batch},
            {"experts", o.op.experts},
            {"flops", o.op.flops},
            {"bytes", o.op.bytes},
            {"predicted_us", predicted_us},
            {"measured_us", o.measured_us},
            {"error_pct", error_pct(predicted_us, o.measured_us)},
            {"note", o.note}};
  if (o.block_fp8) j["block_fp8"] = true;                       // absent: per-tensor fp8 (older reports) or not fp8
  if (o.op.is_collective()) j["comm_bytes"] = o.op.comm_bytes;  // payload per rank: what calibrate fits against
  return j;
}

}  // namespace

namespace {
// A multi-rank replay whose ranks shared a GPU ran no all-gathers: predict what it ran.
CyclePlan without_allgathers(const CyclePlan& plan) {
  CyclePlan out = plan;
  for (auto& p : out.phases)
    for (auto& b : p.blocks) std::erase_if(b.ops, [](const Op& o) { return o.kind == OpKind::AllGather; });
  return out;
}
}  // namespace

bool ran_block_fp8(const PhaseMeasurement& m) {
  return std::any_of(m.ops.begin(), m.ops.end(), [](const OpMeasurement& o) { return o.block_fp8; });
}

PhaseTiming predict_replayed_phase(const PhasePlan& stripped, const Hardware& hw, const RunSpec& run, bool block_fp8) {
  const Hardware replayed = as_replayed(hw, block_fp8);
  CostContext ctx{&replayed, &run, AllReduceChoice{}, Anchors{}, 1};
  return time_phase(stripped, ctx);
}

json replay_json(const Scenario& s, const ScenarioResult& r, const ReplayMeasurement& m) {
  const CyclePlan stripped = strip_collectives(r.plan);
  // Multi-GPU replay: the collectives ran, so predicted keeps them too (same backend, no anchors).
  const bool coll = m.gpus > 1;
  const bool share = r.plan.tp > 1 && !coll;
  const bool fp8_gemms = std::any_of(m.phases.begin(), m.phases.end(), [](const PhaseMeasurement& p) {
    return std::any_of(p.ops.begin(), p.ops.end(), [](const OpMeasurement& o) {
      return (o.op.kind == OpKind::Gemm || o.op.kind == OpKind::MoeGemm) && o.ran_dtype == DType::FP8;
    });
  });
  const bool block = std::any_of(m.phases.begin(), m.phases.end(), ran_block_fp8);
  const Hardware replayed = as_replayed(s.hw, block);
  CostContext coll_ctx{&replayed, &s.run, AllReduceChoice{}, Anchors{}, r.plan.tp};
  if (coll) coll_ctx.backend = parse_allreduce(m.allreduce_backend, "replay: all-reduce backend");
  const CyclePlan coll_plan = coll && m.shared_gpus ? without_allgathers(r.plan) : r.plan;
  json j;
  j["specsim_version"] = kSpecsimVersion;
  j["kind"] = "specsim-replay";
  j["date"] = today();
  j["device"] = m.device;
  j["iters"] = m.iters;
  j["warmup"] = m.warmup;
  j["scenario"] = {{"model", s.target.name},
                   {"draft", s.draft ? json(s.draft->name) : json(nullptr)},
                   {"hardware", s.hw.spec},
                   {"tp", r.plan.tp},
                   {"batch", r.plan.batch},
                   {"context_len", s.run.context_len},
                   {"speculative", s.run.speculative()},
                   {"num_steps", s.run.num_steps},
                   {"num_draft_tokens", s.run.num_draft_tokens},
                   {"dtype", std::string(dtype_name(s.run.dtype.value_or(s.target.weight_dtype)))}};
  if (fp8_gemms) j["fp8_gemm_terms"] = fp8_terms(replayed.gpu, block);
  j["rank_share"] = share;
  j["gpus"] = m.gpus;
  if (coll) j["allreduce_backend"] = m.allreduce_backend;
  if (coll)
    j["collectives_detail"] = fmt::format(
        "all-reduces through {}, all-gathers {}, on {} ranks ({}); predicted with the "
        "same backend{}",
        m.allreduce_backend, m.shared_gpus ? "left out (ranks shared a GPU)" : "through NCCL", m.gpus,
        m.launch.empty() ? "one thread per GPU" : m.launch, m.shared_gpus ? ", without the all-gathers" : "");
  // Ranks that shared a GPU time-sliced it: a functional check, not a measurement to fit.
  if (coll) j["shared_gpus"] = m.shared_gpus;
  j["collectives"] = coll    ? std::string("measured")
                     : share ? fmt::format(
                                   "not measured: one rank's share of tp {} on one GPU; all-reduces and "
                                   "all-gathers are left out of both predicted and measured",
                                   r.plan.tp)
                             : std::string("none: tp 1 runs no collectives");
  const CycleResult* full = r.results.empty() ? nullptr : &r.results.front();
  json phases = json::array();
  for (const auto& pm : m.phases) {
    const PhasePlan* sp = coll ? coll_plan.find(pm.kind) : stripped.find(pm.kind);
    if (!sp) continue;
    const PhaseTiming pt = coll ? time_phase(*sp, coll_ctx) : predict_replayed_phase(*sp, s.hw, s.run, block);
    json p;
    p["phase"] = std::string(phase_name(pm.kind));
    p["tokens"] = pm.tokens;
    p["graph"] = pm.graph;
    p["kernels"] = pm.kernels;
    p["collectives_skipped"] = pm.collectives_skipped;
    p["predicted"] = {{"us", pt.us},
                      {"gemm_us", pt.gemm_us},
                      {"attention_us", pt.attention_us},
                      {"other_us", pt.other_us},
                      {"launch_us", pt.launch_us},
                      {"switch_us", pt.switch_us}};
    if (coll) p["predicted"]["allreduce_us"] = pt.allreduce_us, p["predicted"]["allgather_us"] = pt.allgather_us;
    if (full && full->phase(pm.kind)) {
      const PhaseTiming* f = full->phase(pm.kind);
      p["predicted_with_collectives"] = {{"backend", full->backend.label()},
                                         {"us", f->us},
                                         {"allreduce_us", f->allreduce_us},
                                         {"allgather_us", f->allgather_us},
                                         {"overhead_us", f->overhead_us}};
    }
    auto opt = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
    p["measured"] = {{"us", pm.us},
                     {"gemm_us", opt(pm.gemm_us)},
                     {"attention_us", opt(pm.attention_us)},
                     {"other_us", opt(pm.other_us)},
                     {"allreduce_us", coll    ? opt(pm.allreduce_us)
                                      : share ? json(nullptr)
                                              : json(0.0)},
                     {"eager_gemm_us", pm.eager_gemm_us},
                     {"eager_attention_us", pm.eager_attention_us},
                     {"eager_other_us", pm.eager_other_us},
                     {"bare_gemm_chain_us", opt(pm.bare_gemm_chain_us)}};
    p["error_pct"] = {{"us", error_pct(pt.us, pm.us)},
                      {"gemm", error_pct(pt.gemm_us, pm.gemm_us)},
                      {"attention", error_pct(pt.attention_us, pm.attention_us)},
                      {"other", error_pct(pt.other_us, pm.other_us)}};
    if (coll) {
      p["measured"]["allgather_us"] = opt(pm.allgather_us);
      p["error_pct"]["allreduce"] = error_pct(pt.allreduce_us, pm.allreduce_us);
      p["error_pct"]["allgather"] = error_pct(pt.allgather_us, pm.allgather_us);
    }
    if (pm.gemm_us > 0 && pm.bare_gemm_chain_us > 0)
      p["gemm_chain_overhead_pct"] = 100.0 * (pm.gemm_us - pm.bare_gemm_chain_us) / pm.bare_gemm_chain_us;
    // each op priced as the phase is: what the replay ran, on the replayed hardware terms
    CostContext ctx{&replayed, &s.run, AllReduceChoice{}, Anchors{}, 1};
    if (coll) ctx = coll_ctx;
    json ops = json::array();
    for (const auto& o : pm.ops) ops.push_back(op_json(o, op_cost(o.op, ctx, pm.graph).gpu_us));
    p["ops"] = std::move(ops);
    phases.push_back(std::move(p));
  }
  j["phases"] = std::move(phases);
  j["notes"] = m.notes;
  return j;
}

std::string replay_text(const json& j) {
  std::string out;
  const auto& sc = j.at("scenario");
  out += fmt::format("specsim replay on {} ({}; {} replays after {} warm-up)\n", j.value("device", "?"),
                     j.value("date", "?"), j.value("iters", 0), j.value("warmup", 0));
  out += fmt::format("model {} tp {} batch {} context {} dtype {}, predicted with {}\n", sc.value("model", "?"),
                     sc.value("tp", 0), sc.value("batch", 0), sc.value("context_len", 0LL), sc.value("dtype", "?"),
                     sc.value("hardware", "?"));
  out += fmt::format("collectives: {}\n", j.value("collectives", ""));
  if (j.contains("fp8_gemm_terms")) out += fmt::format("fp8 GEMMs: {}\n", j.value("fp8_gemm_terms", ""));
  out += "\n";
  out +=
      fmt::format("{:<16} {:>6} {:>5} | {:>10} {:>10} {:>7} | {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "phase", "tokens",
                  "graph", "pred us", "meas us", "err %", "gemm p", "gemm m", "attn p", "attn m", "other p", "other m");
  auto num = [](const json& v) { return v.is_number() ? fmt::format("{:.1f}", v.get<double>()) : std::string("-"); };
  auto at = [&](const json& o, const char* k) { return o.contains(k) ? num(o[k]) : std::string("-"); };
  for (const auto& p : j.at("phases")) {
    const auto& pr = p.at("predicted");
    const auto& me = p.at("measured");
    out += fmt::format("{:<16} {:>6} {:>5} | {:>10.1f} {:>10.1f} {:>7} | {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                       p.value("phase", "?"), p.value("tokens", 0), p.value("graph", false) ? "yes" : "no",
                       pr.value("us", 0.0), me.value("us", 0.0), num(p.at("error_pct").at("us")), at(pr, "gemm_us"),
                       at(me, "gemm_us"), at(pr, "attention_us"), at(me, "attention_us"), at(pr, "other_us"),
                       at(me, "other_us"));
  }
  out +=
      "\n(pred: the analytic engine on the same plan without collectives or scheduler overhead; meas: graph\n"
      " replays or eager forwards, median; a class column m: that class's ops alone in one graph, median)\n";
  for (const auto& p : j.at("phases"))
    if (p.at("predicted").contains("allreduce_us"))
      out += fmt::format("{}: all-reduce {} us predicted, {} us measured (alone in a graph); all-gather {} / {}\n",
                         p.value("phase", "?"), at(p.at("predicted"), "allreduce_us"),
                         at(p.at("measured"), "allreduce_us"), at(p.at("predicted"), "allgather_us"),
                         at(p.at("measured"), "allgather_us"));
  for (const auto& p : j.at("phases"))
    if (p.contains("gemm_chain_overhead_pct"))
      out += fmt::format("{}: GEMM chain {:.1f} us through the replay vs {:.1f} us bare ({:+.2f}%)\n",
                         p.value("phase", "?"), p.at("measured").value("gemm_us", 0.0),
                         p.at("measured").value("bare_gemm_chain_us", 0.0), p.value("gemm_chain_overhead_pct", 0.0));
  for (const auto& n : j.value("notes", std::vector<std::string>{})) out += "note: " + n + "\n";
  return out;
}

std::vector<ReplayReport> read_replay_reports(const std::vector<std::string>& paths) {
  std::vector<ReplayReport> out;
  out.reserve(paths.size());
  for (const auto& p : paths) out.push_back({p, read_json_file(p)});
  return out;
}

namespace {
constexpr int kMaxReportRepeat = 1'000'000;  // a layer count times a few: far above any model's
}  // namespace

std::vector<PhaseMeasurement> phases_from_report(const json& j, const std::string& where) {
  if (!j.is_object() || j.value("kind", "") != "specsim-replay")
    throw InputError("not a specsim replay report (expected \"kind\": \"specsim-replay\")", where);
  if (!j.contains("phases") || !j["phases"].is_array() || j["phases"].empty())
    throw InputError("no phases", where + ": phases");
  std::vector<PhaseMeasurement> out;
  int pi = 0;
  for (const auto& p : j["phases"]) {
    const std::string w = fmt::format("{}: phases[{}]", where, pi++);
    PhaseMeasurement m;
    m.kind = parse_phase(json_string(p, "phase", w), w + ".phase");
    m.graph = json_bool(p, "graph", w);
    m.tokens = json_int(p, "tokens", w);
    m.kernels = json_int(p, "kernels", w);
    if (!p.contains("measured")) throw InputError("missing field", w + ".measured");
    const auto& me = p["measured"];
    m.us = json_double(me, "us", w + ".measured");
    if (!(m.us > 0)) throw InputError("must be positive", w + ".measured.us");
    auto opt = [&](const char* k) {
      if (!me.contains(k)) throw InputError("missing field", w + ".measured." + k);
      return me[k].is_null() ? -1.0 : json_double(me, k, w + ".measured");
    };
    m.gemm_us = opt("gemm_us"), m.attention_us = opt("attention_us"), m.other_us = opt("other_us");
    // Multi-GPU replays measured the collectives too (absent or null elsewhere: -1).
    for (auto [k, v] : {std::pair{"allreduce_us", &m.allreduce_us}, std::pair{"allgather_us", &m.allgather_us}})
      *v = me.contains(k) && !me[k].is_null() ? json_double(me, k, w + ".measured") : -1.0;
    if (!p.contains("ops") || !p["ops"].is_array()) throw InputError("missing field", w + ".ops");
    // As strict as `ingest --replay-report`: a phase without ops or with negative shapes is not a
    // replay's report.
    if (p["ops"].empty()) throw InputError("no ops in this phase", w + ".ops");
    if (m.tokens < 1) throw InputError("must be >= 1", w + ".tokens");
    if (m.kernels < 0) throw InputError("must not be negative", w + ".kernels");
    int oi = 0;
    for (const auto& o : p["ops"]) {
      const std::string wo = fmt::format("{}.ops[{}]", w, oi++);
      OpMeasurement om;
      om.block = json_string(o, "block", wo);
      om.name = json_string(o, "name", wo);
      om.repeat = json_int(o, "repeat", wo);
      om.op.kind = parse_op_kind(json_string(o, "kind", wo), wo + ".kind");
      om.op.dtype = parse_dtype(json_string(o, "dtype", wo), wo + ".dtype");
      om.ran_dtype = parse_dtype(json_string(o, "ran_dtype", wo), wo + ".ran_dtype");
      om.op.m = json_double(o, "m", wo), om.op.n = json_double(o, "n", wo), om.op.k = json_double(o, "k", wo);
      om.op.batch = json_double(o, "batch", wo), om.op.experts = json_double(o, "experts", wo);
      om.op.flops = json_double(o, "flops", wo), om.op.bytes = json_double(o, "bytes", wo);
      if (o.contains("comm_bytes")) om.op.comm_bytes = json_double(o, "comm_bytes", wo);  // older reports lack it
      om.measured_us = json_double(o, "measured_us", wo);
      if (o.contains("note") && o["note"].is_string()) om.note = o["note"].get<std::string>();
      if (o.contains("block_fp8")) om.block_fp8 = json_bool(o, "block_fp8", wo);
      if (om.repeat < 1 || om.repeat > kMaxReportRepeat)
        throw InputError(fmt::format("must be in 1..{}", kMaxReportRepeat), wo + ".repeat");
      for (const auto& [k, v] : {std::pair{"m", om.op.m},
                                 {"n", om.op.n},
                                 {"k", om.op.k},
                                 {"batch", om.op.batch},
                                 {"experts", om.op.experts},
                                 {"flops", om.op.flops},
                                 {"bytes", om.op.bytes},
                                 {"comm_bytes", om.op.comm_bytes}})
        if (v < 0) throw InputError("must not be negative", wo + "." + k);
      if (!(om.measured_us > 0)) throw InputError("must be positive", wo + ".measured_us");
      m.ops.push_back(std::move(om));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace specsim
