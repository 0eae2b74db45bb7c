#include "timeline/trace_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "cost/allreduce_model.h"
#include "report/report.h"
#include "timeline/op_timeline.h"
#include "util/utf8.h"

namespace specsim {

namespace {

// Op names and notes are ours, but escape anyway: a trace must always parse.
std::string esc(std::string_view s) {
  std::string o;
  for (char c : escape_non_utf8(s)) {  // a trace must parse whatever bytes a name holds
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      o += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      o += c;
  }
  return o;
}

std::string shape_of(const Op& op) { return fmt::format("{:g}x{:g}x{:g}", op.m, op.n, op.k); }

// Phases and cycles sit on separate tracks: a cycle's time comes from evaluate_cycle, its phases
// from the timeline, and slices on one track must nest exactly.
constexpr int kTidSpans = 0, kTidGpu = 1, kTidHost = 2, kTidCycles = 3;
constexpr int kPidBaseline = 1000;    // + the backend's index
constexpr int kPidsPerBackend = 100;  // backend b's rank r is process b * 100 + r (ranks <= 8)

// The phases drawn as one cycle: the speculative ones, or the plain decode step without speculation.
bool in_cycle(const CyclePlan& plan, const PhasePlan& p) {
  return plan.find(PhaseKind::Verify) ? p.kind != PhaseKind::BaselineDecode : p.kind == PhaseKind::BaselineDecode;
}

// Calls fn(cycle_index, phase_plan, forward_index, forward_start_us, timeline) for every forward of
// every cycle, in time order; the plan is rebuilt per cycle for its KV length.
template <class Fn>
void for_each_forward(const TraceInput& in, const TracedBackend& tb, Fn&& fn) {
  const CostContext ctx = cost_context(*in.scenario, *in.result, tb.backend);
  double t = 0;
  for (const auto& c : tb.cycles) {
    const CyclePlan plan = plan_at_context(*in.scenario, c.context_len);
    for (const auto& p : plan.phases) {
      if (!in_cycle(plan, p)) continue;
      const ForwardTimeline f = expand_forward(p, ctx);
      for (int j = 0; j < p.count; ++j) {
        fn(c, p, j, t, f);
        t += f.total_us;
      }
    }
  }
}

// Times go out as whole nanoseconds (what Perfetto keeps), rounded from the absolute start and
// end, so back-to-back slices meet exactly instead of overlapping by a rounding step.
void slice(fmt::memory_buffer& b, int pid, int tid, std::string_view name, std::string_view cat, double start_us,
           double end_us, std::string_view args_json) {
  const long long ts = std::llround(start_us * 1e3), te = std::max(ts, std::llround(end_us * 1e3));
  fmt::format_to(std::back_inserter(b),
                 ",\n{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"cat\":\"{}\",\"ts\":{}.{:03d},\"dur\":{}.{:"
                 "03d},\"args\":{}}}",
                 pid, tid, esc(name), cat, ts / 1000, static_cast<int>(ts % 1000), (te - ts) / 1000,
                 static_cast<int>((te - ts) % 1000), args_json.empty() ? "{}" : args_json);
}

void meta(fmt::memory_buffer& b, int pid, int tid, const char* what, std::string_view name) {
  fmt::format_to(std::back_inserter(b),
                 ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"args\":{{\"name\":\"{}\"}}}}", pid, tid,
                 what, esc(name));
}

// What the op slices of one backend are drawn with.
struct SliceStyle {
  const KernelNames* names = nullptr;
  AllReduceChoice backend;
  CostContext ctx;  ///< for the anchored wait at each NCCL all-reduce
  // The model's wait for the slowest rank at an all-reduce: the anchored extra per NCCL call
  // (measured - modelled: rank skew and host synchronisation, anchors.h); ranks are otherwise
  // identical in the analytic engine, so every rank waits the same.
  double wait_us(const Op& op, PhaseKind phase, bool graph) const {
    if (op.kind != OpKind::AllReduce || ctx.world <= 1) return 0;
    const CostContext c = in_phase(ctx, phase);
    if (!allreduce_model(c.backend).floored() || !allreduce_model(c.backend).takes_nccl_anchors()) return 0;
    return graph ? c.anchors.nccl_extra_graph_us : c.anchors.nccl_extra_eager_us;
  }
};

bool collective(const Op& op) { return op.is_collective(); }

// The slices of one forward on one process, shifted to `t0`.
void forward_slices(fmt::memory_buffer& b, int pid, const PhasePlan& p, int j, double t0, const ForwardTimeline& f,
                    int cycle, const SliceStyle& st) {
  const std::string phase(phase_name(p.kind));
  const std::string label = p.count > 1 ? fmt::format("{} #{}", phase, j) : phase;
  slice(b, pid, kTidSpans, label, "phase", t0, t0 + f.total_us,
        fmt::format(
            "{{\"cycle\":{},\"tokens\":{},\"mode\":\"{}\",\"kernels\":{}{}}}", cycle, p.tokens,
            f.graph ? "graph" : "eager", f.ops.size(),
            f.ops_scale < 1 ? fmt::format(",\"kernels_scaled_to_measured\":{:.4f}", f.ops_scale) : std::string()));
  if (f.graph) slice(b, pid, kTidHost, "cudaGraphLaunch", "launch", t0, t0 + f.graph_launch_us, "");
  for (const auto& e : f.ops) {
    const Op& op = *e.op;
    const double wait = std::min(st.wait_us(op, p.kind, f.graph), e.dur_us);
    const std::string args = fmt::format(
        "{{\"op\":\"{}\",\"phase\":\"{}\",\"block\":\"{}\",\"layer\":{},\"shape\":{{\"m\":{:g},\"n\":{:g},\"k\":{:g},"
        "\"batch\":{:g},\"experts\":{:g}}},\"dtype\":\"{}\",\"bytes\":{:.0f},\"flops\":{:.0f},\"comm_bytes\":{:.0f}{}}"
        "}",
        esc(op.name), phase, esc(e.block), e.layer, op.m, op.n, op.k, op.batch, op.experts, dtype_name(op.dtype),
        op.bytes, op.flops, op.comm_bytes,
        op.kind == OpKind::AllReduce ? fmt::format(",\"wait_for_slowest_rank_us\":{:.3f}", wait) : std::string());
    slice(b, pid, kTidGpu, st.names->name(op, st.backend), op_kind_name(op.kind), t0 + e.start_us,
          t0 + (e.start_us + e.dur_us), args);
    if (wait > 0)
      slice(b, pid, kTidGpu, "wait for the slowest rank (anchored)", "wait", t0 + e.start_us, t0 + (e.start_us + wait),
            "");
    if (!f.graph)
      slice(b, pid, kTidHost, std::string("launch ") + op.name, "launch", t0 + e.host_start_us,
            t0 + (e.host_start_us + e.host_dur_us), "");
  }
  const double ops_end = f.total_us - f.runtime_us;
  if (f.overhead_us > 0)
    slice(b, pid, kTidHost, "unexplained per-forward time (anchored)", "overhead", t0 + (ops_end - f.overhead_us),
          t0 + ops_end, "");
  if (f.runtime_us > 0)
    slice(b, pid, kTidHost, "runtime's own work (scheduler, tree, accept, syncs)", "runtime", t0 + ops_end,
          t0 + f.total_us, "");
}

// One flow per collective through the group's ranks (rank 0 -> 1 -> ... -> n-1), bound to the
// collective's slice on each rank, so Perfetto links the ranks that meet there.
void collective_flows(fmt::memory_buffer& b, int pid0, int ranks, double t0, const ForwardTimeline& f,
                      long long& flow_id) {
  if (ranks < 2) return;
  for (const auto& e : f.ops) {
    if (!collective(*e.op)) continue;
    const long long ts = std::llround((t0 + e.start_us + e.dur_us / 2) * 1e3);
    const long long id = ++flow_id;
    for (int r = 0; r < ranks; ++r) {
      const char* ph = r == 0 ? "s" : r + 1 == ranks ? "f" : "t";
      fmt::format_to(std::back_inserter(b),
                     ",\n{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"cat\":\"collective\",\"id\":{},"
                     "\"ts\":{}.{:03d}{}}}",
                     ph, pid0 + r, kTidGpu, esc(e.op->name), id, ts / 1000, static_cast<int>(ts % 1000),
                     r == 0 ? "" : ",\"bp\":\"e\"");
    }
  }
}

}  // namespace

const char* const kTraceCsvHeader =
    "cycle,phase,rank,op,shape,bytes,start_us,dur_us,forward,layer,kind,flops,comm_bytes";

void trace_slice(fmt::memory_buffer& b, int pid, int tid, std::string_view name, std::string_view cat, double start_us,
                 double end_us, std::string_view args_json) {
  slice(b, pid, tid, name, cat, start_us, end_us, args_json);
}
void trace_meta(fmt::memory_buffer& b, int pid, int tid, const char* what, std::string_view name) {
  meta(b, pid, tid, what, name);
}
std::string trace_escape(std::string_view s) { return esc(s); }

long long trace_slices_per_cycle(const Scenario& s) {
  const CyclePlan plan = plan_at_context(s, s.run.context_len);
  long long per_cycle = 0;
  for (const auto& p : plan.phases)
    if (in_cycle(plan, p)) per_cycle += static_cast<long long>(p.count) * p.kernels();
  return per_cycle;
}

long long trace_slice_count(const TraceInput& in) {
  long long cycles = 0;
  for (const auto& tb : in.backends) cycles += static_cast<long long>(tb.cycles.size());
  return trace_slices_per_cycle(*in.scenario) * cycles * in.ranks;
}

std::vector<int> traced_cycle_indices(int n, long long per_cycle, long long budget, int cap) {
  long long k = per_cycle > 0 ? std::max(1LL, budget / per_cycle) : n;
  if (cap > 0) k = std::min<long long>(k, cap);
  k = std::min<long long>(k, n);
  std::vector<int> out;
  for (long long i = 0; i < k; ++i)  // evenly spaced, the first and the last included
    out.push_back(k == 1 ? 0 : static_cast<int>(i * (n - 1) / (k - 1)));
  return out;
}

std::string chrome_trace_json(const TraceInput& in) {
  const KernelNames names(in.runtime);
  fmt::memory_buffer b;
  long long cycles = 0;
  for (const auto& tb : in.backends) cycles = std::max<long long>(cycles, static_cast<long long>(tb.cycles.size()));
  std::string backends;
  for (std::size_t i = 0; i < in.backends.size(); ++i)
    backends += fmt::format("{}\"{}\"", i ? "," : "", esc(in.backends[i].backend.label()));
  fmt::format_to(std::back_inserter(b),
                 "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"specsim_version\":\"{}\","
                 "\"allreduce\":[{}],\"kernel_names\":\"{}\",\"ranks\":{},\"tp_size\":{},\"cycles\":{},\"notes\":[",
                 kSpecsimVersion, backends, esc(names.runtime()), in.ranks, in.scenario->run.tp_size, cycles);
  for (std::size_t i = 0; i < in.notes.size(); ++i)
    fmt::format_to(std::back_inserter(b), "{}\"{}\"", i ? "," : "", esc(in.notes[i]));
  fmt::format_to(std::back_inserter(b), "]}},\"traceEvents\":[\n");
  // The first event carries no leading comma; every later one starts with ",\n".
  fmt::format_to(std::back_inserter(b),
                 "{{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"{} rank 0\"}}}}",
                 in.backends.empty() ? "" : esc(in.backends[0].backend.label()));
  long long flow_id = 0;
  const CyclePlan plan = plan_at_context(*in.scenario, in.scenario->run.context_len);
  for (std::size_t bi = 0; bi < in.backends.size(); ++bi) {
    const TracedBackend& tb = in.backends[bi];
    const int pid0 = static_cast<int>(bi) * kPidsPerBackend;
    SliceStyle st{&names, tb.backend, cost_context(*in.scenario, *in.result, tb.backend)};
    for (int r = 0; r < in.ranks; ++r) {
      if (bi || r) meta(b, pid0 + r, 0, "process_name", fmt::format("{} rank {}", tb.backend.label(), r));
      meta(b, pid0 + r, kTidSpans, "thread_name", "phases");
      meta(b, pid0 + r, kTidGpu, "thread_name", "GPU stream");
      meta(b, pid0 + r, kTidHost, "thread_name", "host launches");
      meta(b, pid0 + r, kTidCycles, "thread_name", "cycles");
    }
    // Cycle spans first (on every rank), then the forwards.
    double t = 0;
    for (const auto& c : tb.cycles) {
      for (int r = 0; r < in.ranks; ++r)
        slice(b, pid0 + r, kTidCycles, fmt::format("cycle {} ({} tokens)", c.index, c.tokens), "cycle", t,
              t + c.cycle_us,
              fmt::format("{{\"tokens\":{},\"context_len\":{},\"tok_s\":{:.2f}}}", c.tokens, c.context_len, c.tok_s));
      t += c.cycle_us;
    }
    for_each_forward(in, tb, [&](const CycleSample& c, const PhasePlan& p, int j, double t0, const ForwardTimeline& f) {
      for (int r = 0; r < in.ranks; ++r) forward_slices(b, pid0 + r, p, j, t0, f, c.index, st);
      collective_flows(b, pid0, in.ranks, t0, f, flow_id);
    });
    // One plain decode step at the scenario's KV length, to compare with a cycle by eye.
    const PhasePlan* base = plan.find(PhaseKind::BaselineDecode);
    if (base && plan.find(PhaseKind::Verify)) {
      const ForwardTimeline f = expand_forward(*base, st.ctx);
      const int pid = kPidBaseline + static_cast<int>(bi);
      meta(b, pid, 0, "process_name",
           fmt::format("{} baseline decode step (rank 0, for comparison)", tb.backend.label()));
      meta(b, pid, kTidSpans, "thread_name", "phases");
      meta(b, pid, kTidGpu, "thread_name", "GPU stream");
      meta(b, pid, kTidHost, "thread_name", "host launches");
      forward_slices(b, pid, *base, 0, 0.0, f, -1, st);
    }
  }
  fmt::format_to(std::back_inserter(b), "\n]}}\n");
  return fmt::to_string(b);
}

namespace {
std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}
}  // namespace

std::string trace_csv(const TraceInput& in) {
  const KernelNames names(in.runtime);
  fmt::memory_buffer b;
  fmt::format_to(std::back_inserter(b), "{},allreduce,kernel\n", kTraceCsvHeader);
  for (const auto& tb : in.backends) {
    const std::string label = csv_quote(tb.backend.label());
    for_each_forward(in, tb, [&](const CycleSample& c, const PhasePlan& p, int j, double t0, const ForwardTimeline& f) {
      for (int r = 0; r < in.ranks; ++r)
        for (const auto& e : f.ops)
          fmt::format_to(std::back_inserter(b), "{},{},{},{},{},{:.0f},{:.3f},{:.3f},{},{},{},{:.0f},{:.0f},{},{}\n",
                         c.index, phase_name(p.kind), r, e.op->name, shape_of(*e.op), e.op->bytes, t0 + e.start_us,
                         e.dur_us, j, e.layer, op_kind_name(e.op->kind), e.op->flops, e.op->comm_bytes, label,
                         csv_quote(names.name(*e.op, tb.backend)));
    });
  }
  return fmt::to_string(b);
}

}  // namespace specsim
