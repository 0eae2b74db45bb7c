#include "timeline/replay_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "report/report.h"
#include "timeline/trace_writer.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim {
using nlohmann::json;

namespace {

constexpr int kPid = 0;
constexpr int kTidMeasPhases = 0, kTidMeasGpu = 1, kTidPredPhases = 2, kTidPredGpu = 3, kTidPredHost = 4;

double non_negative(const json& o, const char* key, const std::string& where) {
  const double v = json_double(o, key, where);
  if (v < 0) throw InputError("must not be negative", where + "." + key);
  return v;
}

double positive(const json& o, const char* key, const std::string& where) {
  const double v = json_double(o, key, where);
  if (!(v > 0)) throw InputError("must be positive", where + "." + key);
  return v;
}

const json& object_field(const json& o, const char* key, const std::string& where) {
  if (!o.is_object() || !o.contains(key)) throw InputError("missing field", where + "." + key);
  if (!o[key].is_object()) throw InputError("expected an object", where + "." + key);
  return o[key];
}

ReplayTraceOp parse_op(const json& o, const std::string& w) {
  if (!o.is_object()) throw InputError("expected an object", w);
  ReplayTraceOp op;
  op.block = json_string(o, "block", w);
  op.name = json_string(o, "name", w);
  op.kind = json_string(o, "kind", w);
  op.dtype = json_string(o, "dtype", w);
  op.ran_dtype = o.contains("ran_dtype") ? json_string(o, "ran_dtype", w) : op.dtype;
  op.note = o.contains("note") && o["note"].is_string() ? o["note"].get<std::string>() : "";
  op.repeat = json_int(o, "repeat", w);
  if (op.repeat < 1) throw InputError("must be >= 1", w + ".repeat");
  op.m = non_negative(o, "m", w), op.n = non_negative(o, "n", w), op.k = non_negative(o, "k", w);
  op.batch = non_negative(o, "batch", w), op.experts = non_negative(o, "experts", w);
  op.flops = non_negative(o, "flops", w), op.bytes = non_negative(o, "bytes", w);
  op.measured_us = positive(o, "measured_us", w);
  op.predicted_us = non_negative(o, "predicted_us", w);
  return op;
}

// Blocks in order (consecutive ops of one block and repeat form a block, as plan_of() reads
// them), each block's repeats in order, its ops in order within a repeat.
void lay_out(ReplayTracePhase& p) {
  const double scale = p.scale;
  double t = p.start_us, tp = p.start_us + (p.graph ? p.launch_us : 0.0);
  for (std::size_t i = 0; i < p.ops.size();) {
    std::size_t j = i + 1;
    while (j < p.ops.size() && p.ops[j].block == p.ops[i].block && p.ops[j].repeat == p.ops[i].repeat) ++j;
    for (int layer = 0; layer < p.ops[i].repeat; ++layer)
      for (std::size_t o = i; o < j; ++o) {
        ReplayTraceEvent e;
        e.op = &p.ops[o];
        e.layer = layer;
        // The next op starts at this op's end (the same double) so the ns rounding telescopes.
        e.start_us = t, e.dur_us = p.ops[o].measured_us * scale, t = e.start_us + e.dur_us;
        e.pred_start_us = tp, e.pred_dur_us = p.ops[o].predicted_us, tp = e.pred_start_us + e.pred_dur_us;
        p.events.push_back(e);
      }
    i = j;
  }
}

std::string shape_json(const ReplayTraceOp& o) {
  return fmt::format("{{\"m\":{:g},\"n\":{:g},\"k\":{:g},\"batch\":{:g},\"experts\":{:g}}}", o.m, o.n, o.k, o.batch,
                     o.experts);
}

std::string op_args(const ReplayTracePhase& p, const ReplayTraceEvent& e) {
  const ReplayTraceOp& o = *e.op;
  return fmt::format(
      "{{\"phase\":\"{}\",\"block\":\"{}\",\"layer\":{},\"kind\":\"{}\",\"shape\":{},\"dtype\":\"{}\",\"ran_dtype\":\"{"
      "}\","
      "\"bytes\":{:.0f},\"flops\":{:.0f},\"predicted_us\":{},\"measured_us\":{},\"measured_scaled_us\":{},\"scale\":{},"
      "\"note\":\"{}\"}}",
      trace_escape(p.name), trace_escape(o.block), e.layer, trace_escape(o.kind), shape_json(o), trace_escape(o.dtype),
      trace_escape(o.ran_dtype), o.bytes, o.flops, o.predicted_us, o.measured_us, e.dur_us, p.scale,
      trace_escape(o.note));
}

}  // namespace

long long ReplayTrace::events() const {
  long long n = 0;
  for (const auto& p : phases) n += static_cast<long long>(p.events.size());
  return n;
}

ReplayTrace replay_trace_from_report(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("kind") || j["kind"] != "specsim-replay")
    throw InputError("not a specsim replay report (expected \"kind\": \"specsim-replay\")", where + ": kind");
  ReplayTrace t;
  t.source = where;
  t.device = j.value("device", "?");
  t.date = j.value("date", "?");
  if (j.contains("scenario") && j["scenario"].is_object()) {
    const json& sc = j["scenario"];
    t.model = sc.value("model", "?"), t.hardware = sc.value("hardware", "?");
    t.tp = sc.contains("tp") && sc["tp"].is_number_integer() ? sc["tp"].get<int>() : 1;
  }
  t.gpus = j.contains("gpus") && j["gpus"].is_number_integer() ? j["gpus"].get<int>() : 1;
  t.collectives = j.value("collectives", "");
  if (j.contains("notes") && j["notes"].is_array())
    for (const auto& n : j["notes"])
      if (n.is_string()) t.report_notes.push_back(n.get<std::string>());
  if (!j.contains("phases") || !j["phases"].is_array() || j["phases"].empty())
    throw InputError("no phases", where + ": phases");
  long long slices = 0;
  double t0 = 0;
  int pi = 0;
  for (const auto& pj : j["phases"]) {
    const std::string w = fmt::format("{}: phases[{}]", where, pi++);
    if (!pj.is_object()) throw InputError("expected an object", w);
    ReplayTracePhase p;
    p.name = json_string(pj, "phase", w);
    p.graph = json_bool(pj, "graph", w);
    p.tokens = json_int(pj, "tokens", w);
    p.measured_us = positive(object_field(pj, "measured", w), "us", w + ".measured");
    const json& pr = object_field(pj, "predicted", w);
    p.predicted_us = non_negative(pr, "us", w + ".predicted");
    p.launch_us = pr.contains("launch_us") ? non_negative(pr, "launch_us", w + ".predicted") : 0.0;
    if (!pj.contains("ops") || !pj["ops"].is_array() || pj["ops"].empty())
      throw InputError("missing field or no ops", w + ".ops");
    int oi = 0;
    for (const auto& o : pj["ops"]) {
      const std::string wo = fmt::format("{}.ops[{}]", w, oi++);
      p.ops.push_back(parse_op(o, wo));
      slices += p.ops.back().repeat;
      if (slices > kMaxTraceSlices)
        throw InputError(fmt::format("more than {} op slices", kMaxTraceSlices), wo + ".repeat");
      p.event_sum_us += p.ops.back().measured_us * p.ops.back().repeat;
    }
    p.scale = p.measured_us / p.event_sum_us;
    p.start_us = t0;
    lay_out(p);
    // The next phase starts after the longer of the two spans, on a whole nanosecond, so measured
    // and predicted of one phase start together and slice times round the same way.
    const double end = t0 + std::max({p.measured_us, p.predicted_us,
                                      p.events.back().pred_start_us + p.events.back().pred_dur_us - t0});
    t0 = std::ceil(end * 1e3) / 1e3;
    t.phases.push_back(std::move(p));
  }
  return t;
}

std::string replay_chrome_trace(const ReplayTrace& t) {
  std::vector<std::string> notes = {
      "measured: every op slice is its eager CUDA-event time (args.measured_us, which carries eager launch gaps) "
      "times its phase's scale (args.scale) so the ops of a phase sum to the phase's measured time (median graph "
      "replay for a graph phase, median eager forward for an eager one); shares between ops are measured, their sum "
      "is the phase time",
      "predicted: the analytic engine's time per op (args.predicted_us) back to back after the predicted graph "
      "launch; the phase span is the predicted phase time",
      "one forward per phase as replayed, phases in report order (draft_decode runs num_steps times per cycle, drawn "
      "once); each phase starts on both tracks after the longer of the previous phase's measured and predicted spans"};
  if (t.gpus > 1)
    notes.push_back(
        fmt::format("{} GPUs replayed one rank each; the trace shows rank 0's ops (all ranks run the same "
                    "ops); collectives: {}",
                    t.gpus, t.collectives));
  for (const auto& n : t.report_notes) notes.push_back("replay: " + n);
  fmt::memory_buffer b;
  fmt::format_to(
      std::back_inserter(b),
      "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"specsim_version\":\"{}\",\"kind\":\"specsim-replay-trace\","
      "\"source\":\"{}\",\"device\":\"{}\",\"date\":\"{}\",\"model\":\"{}\",\"hardware\":\"{}\",\"tp\":{},"
      "\"gpus\":{},\"notes\":[",
      kSpecsimVersion, trace_escape(t.source), trace_escape(t.device), trace_escape(t.date), trace_escape(t.model),
      trace_escape(t.hardware), t.tp, t.gpus);
  for (std::size_t i = 0; i < notes.size(); ++i)
    fmt::format_to(std::back_inserter(b), "{}\"{}\"", i ? "," : "", trace_escape(notes[i]));
  fmt::format_to(std::back_inserter(b), "]}},\"traceEvents\":[\n");
  // The first event carries no leading comma; trace_slice/trace_meta start theirs with ",\n".
  fmt::format_to(std::back_inserter(b),
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"{}\"}}}}", kPid,
                 trace_escape("GPU replay on " + t.device + " (measured vs predicted)"));
  trace_meta(b, kPid, kTidMeasPhases, "thread_name", "measured phases");
  trace_meta(b, kPid, kTidMeasGpu, "thread_name", "measured GPU stream (scaled event times)");
  trace_meta(b, kPid, kTidPredPhases, "thread_name", "predicted phases");
  trace_meta(b, kPid, kTidPredGpu, "thread_name", "predicted GPU stream");
  trace_meta(b, kPid, kTidPredHost, "thread_name", "predicted host launches");
  for (const auto& p : t.phases) {
    const std::string span_args = fmt::format(
        "{{\"phase\":\"{}\",\"tokens\":{},\"mode\":\"{}\",\"kernels\":{},\"measured_us\":{},\"predicted_us\":{},"
        "\"event_sum_us\":{},\"scale\":{}}}",
        trace_escape(p.name), p.tokens, p.graph ? "graph" : "eager", p.events.size(), p.measured_us, p.predicted_us,
        p.event_sum_us, p.scale);
    trace_slice(b, kPid, kTidMeasPhases, p.name + " (measured)", "phase", p.start_us, p.start_us + p.measured_us,
                span_args);
    trace_slice(b, kPid, kTidPredPhases, p.name + " (predicted)", "phase", p.start_us, p.start_us + p.predicted_us,
                span_args);
    if (p.graph && p.launch_us > 0)
      trace_slice(b, kPid, kTidPredHost, "cudaGraphLaunch", "launch", p.start_us, p.start_us + p.launch_us, "");
    for (const auto& e : p.events) {
      const std::string args = op_args(p, e);
      trace_slice(b, kPid, kTidMeasGpu, e.op->name, e.op->kind, e.start_us, e.start_us + e.dur_us, args);
      trace_slice(b, kPid, kTidPredGpu, e.op->name, e.op->kind, e.pred_start_us, e.pred_start_us + e.pred_dur_us, args);
    }
    // What the predicted phase holds beyond its ops and launch (eager host-bound time, overhead).
    const double ops_end = p.events.back().pred_start_us + p.events.back().pred_dur_us;
    if (p.start_us + p.predicted_us - ops_end > 1e-3)
      trace_slice(b, kPid, kTidPredHost, "predicted time beyond the ops (host launches, overhead)", "overhead", ops_end,
                  p.start_us + p.predicted_us, "");
  }
  fmt::format_to(std::back_inserter(b), "\n]}}\n");
  return fmt::to_string(b);
}

std::string replay_trace_csv(const ReplayTrace& t) {
  fmt::memory_buffer b;
  fmt::format_to(std::back_inserter(b), "{},measured_event_us,predicted_start_us,predicted_dur_us\n", kTraceCsvHeader);
  for (const auto& p : t.phases)
    for (const auto& e : p.events) {
      const ReplayTraceOp& o = *e.op;
      fmt::format_to(std::back_inserter(b),
                     "0,{},0,{},{:g}x{:g}x{:g},{:.0f},{:.3f},{:.3f},0,{},{},{:.0f},,{:.3f},{:.3f},{:.3f}\n", p.name,
                     o.name, o.m, o.n, o.k, o.bytes, e.start_us, e.dur_us, e.layer, o.kind, o.flops, o.measured_us,
                     e.pred_start_us, e.pred_dur_us);
    }
  return fmt::to_string(b);
}

void write_replay_trace_files(const json& report, const std::string& where, const std::string& trace_path,
                              const std::string& csv_path) {
  if (trace_path.empty() && csv_path.empty()) return;
  const ReplayTrace t = replay_trace_from_report(report, where);
  const std::string trace = trace_path.empty() ? "" : replay_chrome_trace(t);
  const std::string csv = csv_path.empty() ? "" : replay_trace_csv(t);
  write_outputs_atomic({{OutputFile{trace_path, "--trace"}, trace}, {OutputFile{csv_path, "--csv"}, csv}});
}

}  // namespace specsim
