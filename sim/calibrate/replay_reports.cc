#include "calibrate/replay_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <type_traits>

#include "cost/allreduce_model.h"
#include "plan/op_builders.h"
#include "util/error.h"

namespace specsim {
using nlohmann::json;

namespace {

// A report field that is only shown or searched: its value when it has the expected type, else
// `def` (a malformed one must not throw a JSON type error).
template <class T>
T field_or(const json& j, const char* key, T def) {
  if (!j.is_object() || !j.contains(key)) return def;
  const json& v = j[key];
  if constexpr (std::is_same_v<T, bool>)
    return v.is_boolean() ? v.get<bool>() : def;
  else if constexpr (std::is_same_v<T, std::string>)
    return v.is_string() ? v.get<std::string>() : def;
  else
    return v.is_number_integer() ? v.get<T>() : def;
}

// "llama-3.1-8b tp2 b1 verify t=8": the report's scenario and the phase.
std::string phase_label(const json& report, const PhaseMeasurement& ph) {
  const json sc = report.value("scenario", json::object());
  return fmt::format("{} tp{} b{} {} t={}", sc.value("model", "?"), sc.value("tp", 0), sc.value("batch", 0),
                     phase_name(ph.kind), ph.tokens);
}

// The label with the report it came from, where reports of one setting sit side by side.
std::string with_report(const std::string& label, const std::string& file) {
  return label + " (" + std::filesystem::path(file).stem().string() + ")";
}

// The report's all-reduce backend: the field newer reports carry, else the words of
// collectives_detail ("all-reduces through custom:auto, ...").
std::string backend_of(const json& j, const std::string& f) {
  if (j.contains("allreduce_backend") && j["allreduce_backend"].is_string()) return j["allreduce_backend"];
  const std::string d = field_or<std::string>(j, "collectives_detail", "");
  const std::string key = "all-reduces through ";
  const auto at = d.find(key);
  if (at == std::string::npos)
    throw InputError("a multi-GPU report must say which backend ran its all-reduces (re-run specsim replay)",
                     f + ": allreduce_backend");
  const auto from = at + key.size();
  return d.substr(from, d.find(',', from) - from);
}

// Payload per call of a phase's all-reduces. Reports before comm_bytes was written lack it:
// every all-reduce of a forward carries its hidden state, tokens x hidden x bf16, and the
// forward's lm_head GEMM is [tokens, hidden] x [hidden, vocab/tp] (plan/forward_builders.cc).
double payload_bytes(const OpMeasurement& ar, const PhaseMeasurement& ph, const std::string& where) {
  if (ar.op.comm_bytes > 0) return ar.op.comm_bytes;
  for (const auto& o : ph.ops)
    if (o.op.kind == OpKind::Gemm && o.name == "lm_head" && o.op.m > 0 && o.op.k > 0)
      return o.op.m * o.op.k * ops::kActBytes;
  throw InputError(
      "the all-reduce ops carry no comm_bytes and no lm_head GEMM gives the hidden size (re-run specsim "
      "replay)",
      where);
}

}  // namespace

std::vector<ReplayPoint> load_replay_points(const std::vector<std::string>& files, const std::string& flag) {
  return replay_points(read_replay_reports(files), flag);
}

std::vector<ReplayPoint> replay_points(const std::vector<ReplayReport>& reports, const std::string& flag) {
  std::vector<ReplayPoint> out;
  for (const auto& [f, j] : reports)
    for (const auto& p : phases_from_report(j, f)) out.push_back({f, phase_label(j, p), p});
  if (out.empty()) throw InputError("no replay reports given", flag);
  return out;
}

std::vector<ReplayPoint> compute_share(std::vector<ReplayPoint> pts, const GpuProfile& gpu) {
  for (auto& p : pts) {
    auto& ph = p.phase;
    auto coll = [](const OpMeasurement& o) { return o.op.is_collective(); };
    if (std::none_of(ph.ops.begin(), ph.ops.end(), coll)) continue;  // one GPU: collectives were left out
    const std::string w = fmt::format("{}: {}.measured", p.file, phase_name(ph.kind));
    if (!(ph.allreduce_us > 0))
      throw InputError("a multi-GPU phase needs its all-reduces timed alone to separate its compute time",
                       w + ".allreduce_us");
    const double coll_us = std::max(0.0, ph.allreduce_us - gpu.graph_launch_us) +
                           (ph.allgather_us > 0 ? std::max(0.0, ph.allgather_us - gpu.graph_launch_us) : 0.0);
    if (!(ph.us - coll_us > 0))
      throw InputError(
          fmt::format("the collectives alone ({:.1f} us) take the whole phase ({:.1f} us)", coll_us, ph.us), w + ".us");
    ph.us -= coll_us;
    std::erase_if(ph.ops, coll);
    p.label = with_report(p.label, p.file);
  }
  return pts;
}

std::vector<AllReducePoint> load_allreduce_points(const std::vector<std::string>& files,
                                                  std::vector<std::string>* skipped) {
  return allreduce_points(read_replay_reports(files), skipped);
}

std::vector<AllReducePoint> allreduce_points(const std::vector<ReplayReport>& reports,
                                             std::vector<std::string>* skipped) {
  std::vector<AllReducePoint> out;
  for (const auto& [f, j] : reports) {
    if (!j.is_object()) throw InputError("not a specsim replay report", f);
    const json gj = j.contains("gpus") ? j["gpus"] : json(1);
    if (!gj.is_number_integer() || gj.get<long long>() < 1 || gj.get<long long>() > 1024)
      throw InputError("must be a whole number in 1..1024", f + ": gpus");
    const int world = gj.get<int>();
    if (world < 2) continue;  // one GPU: the collectives were left out, nothing to fit
    const std::string detail = field_or<std::string>(j, "collectives_detail", "");
    if (field_or(j, "shared_gpus", false) || detail.find("shared a GPU") != std::string::npos) {
      if (skipped)
        skipped->push_back(
            fmt::format("{}: its ranks shared one GPU, so its all-reduces do not measure the "
                        "interconnect; not fitted",
                        f));
      continue;
    }
    const std::string be = backend_of(j, f);
    const AllReduceChoice backend = parse_allreduce(be, f + ": allreduce_backend");
    if (!allreduce_model(backend).fittable())
      throw InputError("a replay runs real all-reduces, not '" + be + "'", f + ": allreduce_backend");
    if (backend.fused_norm) {  // its boundaries' times hold the add + RMSNorm too: not the all-reduce alone
      if (skipped)
        skipped->push_back(fmt::format(
            "{}: its layer boundaries ran the all-reduce fused with the add + RMSNorm (custom:fused), so its "
            "all-reduce times are not the all-reduce's alone; not fitted",
            f));
      continue;
    }
    const auto phases = phases_from_report(j, f);
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const auto& ph = phases[i];
      const std::string w = fmt::format("{}: phases[{}]", f, i);
      AllReducePoint p;
      p.file = f, p.device = field_or<std::string>(j, "device", "an unnamed machine"), p.backend = backend;
      p.world = world;
      p.label = with_report(phase_label(j, ph), f);
      for (const auto& o : ph.ops) {
        if (o.op.kind != OpKind::AllReduce) continue;
        const double b = payload_bytes(o, ph, w + ".ops");
        if (p.calls > 0 && std::abs(b - p.bytes) > 0.5)
          throw InputError(fmt::format("all-reduces of {:.0f} and {:.0f} B in one phase: their measured total cannot "
                                       "be split",
                                       p.bytes, b),
                           w + ".ops");
        if (p.calls == 0) p.ran = o.note;
        p.bytes = b, p.calls += o.repeat;
      }
      if (p.calls == 0) continue;  // a phase without all-reduces
      if (!(ph.allreduce_us > 0))
        throw InputError(
            "no measured all-reduce time: the all-reduces of a multi-GPU phase must be timed alone in a "
            "graph (re-run specsim replay)",
            w + ".measured.allreduce_us");
      p.measured_us = ph.allreduce_us;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace specsim
