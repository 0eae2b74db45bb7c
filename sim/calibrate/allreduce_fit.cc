#include "calibrate/allreduce_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <type_traits>

#include "calibrate/profile_io.h"
#include "cost/bus_bandwidth.h"
#include "cost/custom_ar_model.h"
#include "cost/nccl_fit_curve.h"
#include "cost/nccl_model.h"
#include "engine/op_cost.h"
#include "plan/op_builders.h"
#include "measured/replay_result.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
using nlohmann::json;

namespace {

constexpr int kMaxCustomIterations = 20;  // the custom fit re-picks each point's variant, then re-solves
// The custom model's peer bandwidth applies to every size, so it is only fitted when the bytes
// term is a real share of the largest measured message (decode-sized messages are all latency).
constexpr double kMinBytesShare = 0.25;

std::string stem(const std::string& f) { return std::filesystem::path(f).stem().string(); }

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

// A parameter of a linear fit: its value, bounds, whether the points constrain it.
struct Param {
  const char* name = "";
  double value = 0;
  double lo = 0, hi = 0;
  bool free = true;
  // Where it is held when the solution leaves [lo, hi] (NaN: at the bound), and what to say then
  // ("": the value the fit gave).
  double fallback = std::numeric_limits<double>::quiet_NaN();
  std::string on_bound;
  std::string why;      // why it is held ("": free)
  std::function<double(double)> shown;  // the value as a note shows it (empty: as is), e.g. us/byte as GB/s
};
Param param(const char* name, double value, double lo, double hi) {
  Param p;
  p.name = name, p.value = value, p.lo = lo, p.hi = hi;
  return p;
}

std::vector<int> free_cols(const std::vector<Param>& ps) {
  std::vector<int> c;
  for (int i = 0; i < int(ps.size()); ++i)
    if (ps[std::size_t(i)].free) c.push_back(i);
  return c;
}

// Columns scaled to unit norm: the terms differ by orders of magnitude (1 per graph, 1e6 bytes).
Eigen::MatrixXd scaled(const Eigen::MatrixXd& A, const std::vector<int>& cols, Eigen::VectorXd& scale) {
  Eigen::MatrixXd S(A.rows(), Eigen::Index(cols.size()));
  scale.resize(Eigen::Index(cols.size()));
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const double n = A.col(cols[k]).norm();
    scale(Eigen::Index(k)) = n > 0 ? n : 1.0;
    S.col(Eigen::Index(k)) = A.col(cols[k]) / scale(Eigen::Index(k));
  }
  return S;
}

bool full_rank(const Eigen::MatrixXd& A, const std::vector<Param>& ps) {
  const auto cols = free_cols(ps);
  if (cols.empty()) return true;
  Eigen::VectorXd s;
  const Eigen::MatrixXd S = scaled(A, cols, s);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(S);
  qr.setThreshold(1e-9);
  return qr.rank() == Eigen::Index(cols.size());
}

// Least squares of A x = b over the free parameters (held ones move to the right-hand side); a
// value outside its bounds is held there (or at its fallback) and the rest solved again.
void solve_bounded(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, std::vector<Param>& ps) {
  for (std::size_t round = 0; round <= ps.size(); ++round) {
    const auto cols = free_cols(ps);
    Eigen::VectorXd rhs = b;
    for (std::size_t i = 0; i < ps.size(); ++i)
      if (!ps[i].free) rhs -= A.col(Eigen::Index(i)) * ps[i].value;
    if (cols.empty()) return;
    Eigen::VectorXd s;
    const Eigen::VectorXd y = scaled(A, cols, s).colPivHouseholderQr().solve(rhs);
    bool inside = true;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      Param& p = ps[std::size_t(cols[k])];
      const double v = y(Eigen::Index(k)) / s(Eigen::Index(k));
      if (v >= p.lo && v <= p.hi && std::isfinite(v)) {
        p.value = v;
        continue;
      }
      inside = false;
      p.free = false;
      p.value = std::isnan(p.fallback) ? std::clamp(v, p.lo, p.hi) : p.fallback;
      p.why =
          p.on_bound.empty() ? fmt::format("the fit gave {:.4g}, outside [{:.4g}, {:.4g}]", v, p.lo, p.hi) : p.on_bound;
    }
    if (inside) return;
  }
}

// Rows weighted by 1/measured: every graph's relative error counts alike, whether it holds 3
// all-reduces (a draft forward) or 65 (a target forward).
struct System {
  Eigen::MatrixXd A;
  Eigen::VectorXd b;
};

std::size_t distinct(const std::vector<AllReducePoint>& pts, double AllReducePoint::*f) {
  std::set<double> s;
  for (const auto& p : pts) s.insert(p.*f);
  return s.size();
}
std::size_t distinct_calls(const std::vector<AllReducePoint>& pts) {
  std::set<int> s;
  for (const auto& p : pts) s.insert(p.calls);
  return s.size();
}

// The graph's fixed cost is only separable from the per-call cost when graphs hold different
// numbers of all-reduces; bandwidth only when sizes differ. Held parameters say why.
void free_by_data(std::vector<Param>& ps, const std::vector<AllReducePoint>& pts, int g, std::vector<int> bw) {
  if (distinct_calls(pts) < 2)
    ps[std::size_t(g)].free = false, ps[std::size_t(g)].why = "every graph held the same number of all-reduces";
  if (distinct(pts, &AllReducePoint::bytes) < 2)
    for (int i : bw)
      if (ps[std::size_t(i)].free)
        ps[std::size_t(i)].free = false,
        ps[std::size_t(i)].why =
            fmt::format("only one message size ({:.0f} B) was measured: kept from the base model", pts.front().bytes);
}

// Holds parameters, bandwidths first, while the free columns are rank deficient.
void hold_until_full_rank(const Eigen::MatrixXd& A, std::vector<Param>& ps, const std::vector<int>& order) {
  for (int i : order) {
    if (full_rank(A, ps)) return;
    if (ps[std::size_t(i)].free)
      ps[std::size_t(i)].free = false, ps[std::size_t(i)].why = "not separable from the other terms by these points";
  }
}

void note_held(const std::vector<Param>& ps, std::vector<std::string>& notes) {
  for (const auto& p : ps)
    if (!p.free && !p.why.empty())
      notes.push_back(fmt::format("{} held at {:.4g}: {}", p.name,
                                  p.shown ? p.shown(p.value) : p.value, p.why));
}

// Base NCCL line (latency, bus bandwidth) at `bytes`: the base profile's measured curve at this
// world, else the tuning model's pick.
std::pair<double, double> nccl_base_line(double bytes, int world, const Hardware& base) {
  if (base.topo.nccl_fit)
    if (const NcclFitPiece* p = nccl_fit_piece(*base.topo.nccl_fit, bytes, world)) return {p->lat_us, p->busbw_gbps};
  Hardware h = base;
  h.topo.nccl_fit.reset();
  const NcclEstimate e = nccl_allreduce(bytes, world, h, NcclSettings{});
  return {e.latency_us, e.busbw_gbps};
}

// The base curve outside the measured range, as pieces: the base profile's own measured pieces
// at this world, else one piece per (algorithm, protocol) the tuning model picks above the range
// (each is exactly a line), sampled at 2^(1/8) steps up to 16 GiB.
constexpr double kSampleStep = 1.0905077326652577;  // 2^(1/8)
constexpr double kSampleMaxBytes = 16.0 * (1ull << 30);
std::vector<NcclFitPiece> nccl_outside(double lo, double hi, int world, const Hardware& base, bool& from_fit) {
  std::vector<NcclFitPiece> out;
  from_fit = base.topo.nccl_fit && base.topo.nccl_fit->world == world;
  if (from_fit) {
    for (auto p : base.topo.nccl_fit->pieces) {
      if (p.min_bytes < lo) out.push_back({p.min_bytes, std::min(p.max_bytes, lo), p.lat_us, p.busbw_gbps});
      if (p.max_bytes > hi) out.push_back({std::max(p.min_bytes, hi), p.max_bytes, p.lat_us, p.busbw_gbps});
    }
    return out;
  }
  Hardware h = base;
  h.topo.nccl_fit.reset();
  int last = -1;
  for (double x = hi * kSampleStep; x <= kSampleMaxBytes; x *= kSampleStep) {
    const double b = std::round(x);  // whole bytes, for a readable profile
    const NcclEstimate e = nccl_allreduce(b, world, h, NcclSettings{});
    const int key = e.algo * 10 + e.proto;
    if (key != last) out.push_back({b, b, e.latency_us, e.busbw_gbps});
    out.back().max_bytes = b;
    last = key;
  }
  return out;
}

// The engine's per-call custom time is affine in (barrier_us, us per byte read, us per byte
// written) for a fixed variant: coefficients by exact differences through the engine itself.
struct CustomRow {
  double c0 = 0;
  double c[3] = {0, 0, 0};
  CustomVariant variant = CustomVariant::OneShotPull;
};
CustomRow custom_row(const AllReducePoint& p, const Hardware& hw) {
  const CustomEstimate e = custom_allreduce(p.bytes, p.world, hw, p.backend.variant);
  const std::string v(custom_variant_name(e.variant));
  auto at = [&](const Hardware& h) { return custom_allreduce(p.bytes, p.world, h, v).us; };
  CustomRow r;
  r.variant = e.variant;
  Hardware h = hw;
  h.topo.barrier_us += 1;
  r.c[0] = at(h) - e.us;
  h = hw, h.topo.peer_read_bw_gbps /= 2;  // halving doubles the us per byte: the step is the value itself
  r.c[1] = (at(h) - e.us) / us_per_byte(hw.topo.peer_read_bw_gbps);
  h = hw, h.topo.peer_write_bw_gbps /= 2;
  r.c[2] = (at(h) - e.us) / us_per_byte(hw.topo.peer_write_bw_gbps);
  r.c0 = e.us - r.c[0] * hw.topo.barrier_us - r.c[1] * us_per_byte(hw.topo.peer_read_bw_gbps) -
         r.c[2] * us_per_byte(hw.topo.peer_write_bw_gbps);
  return r;
}

std::string files_of(const std::vector<AllReducePoint>& pts) {
  std::vector<std::string> f;
  for (const auto& p : pts) {
    const std::string n = std::filesystem::path(p.file).filename().string();
    if (std::find(f.begin(), f.end(), n) == f.end()) f.push_back(n);
  }
  return fmt::format("{}", fmt::join(f, " "));
}

std::string devices_of(const std::vector<AllReducePoint>& pts) {
  std::vector<std::string> d;
  for (const auto& p : pts)
    if (std::find(d.begin(), d.end(), p.device) == d.end()) d.push_back(p.device);
  return fmt::format("{}", fmt::join(d, "; "));
}

// Worst errors over the fitted points: on `before`, and on `after`.
void worst_errors(AllReduceFit& f, const Hardware& before, const Hardware& after) {
  f.worst_before_pct = f.worst_after_pct = 0;
  for (const auto& p : f.points) {
    f.worst_before_pct = std::max(f.worst_before_pct, std::abs(allreduce_error_pct(p, before, f.graph_us)));
    f.worst_after_pct = std::max(f.worst_after_pct, std::abs(allreduce_error_pct(p, after, f.graph_us)));
  }
}

Hardware with_topo(Hardware hw, const TopologyProfile& t) {
  hw.topo = t;
  return hw;
}

void describe_points(AllReduceFit& f, const std::vector<AllReducePoint>& pts) {
  f.points = pts;
  f.graphs = int(pts.size());
  f.calls = 0;
  f.min_bytes = std::numeric_limits<double>::infinity(), f.max_bytes = 0;
  for (const auto& p : pts) {
    f.calls += p.calls;
    f.min_bytes = std::min(f.min_bytes, p.bytes), f.max_bytes = std::max(f.max_bytes, p.bytes);
  }
  f.world = pts.front().world;
}

}  // namespace

std::vector<AllReducePoint> load_allreduce_points(const std::vector<std::string>& files,
                                                  std::vector<std::string>* skipped) {
  return allreduce_points(read_replay_reports(files), skipped);
}

std::vector<AllReducePoint> allreduce_points(const std::vector<ReplayReport>& reports, std::vector<std::string>* skipped) {
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
    if (backend.kind == AllReduceChoice::Kind::Fixed)
      throw InputError("a replay runs real all-reduces, not '" + be + "'", f + ": allreduce_backend");
    const json sc = j.contains("scenario") ? j["scenario"] : json::object();
    const auto phases = phases_from_report(j, f);
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const auto& ph = phases[i];
      const std::string w = fmt::format("{}: phases[{}]", f, i);
      AllReducePoint p;
      p.file = f, p.device = field_or<std::string>(j, "device", "an unnamed machine"), p.backend = backend;
      p.world = world;
      p.label = fmt::format("{} tp{} b{} {} t={} ({})", field_or<std::string>(sc, "model", "?"), field_or(sc, "tp", 0),
                            field_or(sc, "batch", 0), phase_name(ph.kind), ph.tokens, stem(f));
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

double predict_allreduce_us(const AllReducePoint& p, const Hardware& hw) {
  const RunSpec run;
  const CostContext ctx{&hw, &run, p.backend, Anchors{}, p.world};
  return p.calls * allreduce_us(p.bytes, ctx, /*graph=*/true);
}

double allreduce_error_pct(const AllReducePoint& p, const Hardware& hw, double graph_us) {
  const double m = p.measured_us - graph_us;
  return m > 0 ? 100.0 * (predict_allreduce_us(p, hw) - m) / m : std::numeric_limits<double>::infinity();
}

AllReduceFit fit_nccl_allreduce(const std::vector<AllReducePoint>& pts, const Hardware& base,
                                const std::string& source) {
  if (pts.empty()) throw InputError("no NCCL all-reduce points to fit", "--from");
  AllReduceFit f;
  f.kind = AllReduceChoice::Kind::Nccl;
  describe_points(f, pts);
  const int n = f.world;
  std::vector<double> sizes;
  for (const auto& p : pts) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  const double mid = sizes[sizes.size() / 2];
  const auto [lat0, busbw0] = nccl_base_line(mid, n, base);
  const double u0 = busbw0 > 0 ? us_per_byte(allreduce_algbw_gbps(busbw0, n)) : 0.0;
  auto busbw_of = [n](double u) { return allreduce_busbw_gbps(gbps_of_us_per_byte(u), n); };

  // x = (graph fixed cost, latency per call, us per byte per call); graph = g + calls (lat + u bytes).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Param> ps = {param("graph fixed cost", base.gpu.graph_launch_us, 0, inf), param("lat_us", lat0, 0, inf),
                           param("busbw_gbps", u0, 1e-12, inf)};
  ps[2].shown = busbw_of;
  ps[2].fallback = u0, ps[2].on_bound = "the sizes gave no positive bandwidth term: kept from the base model";
  System s{Eigen::MatrixXd(Eigen::Index(pts.size()), 3), Eigen::VectorXd(Eigen::Index(pts.size()))};
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    const Eigen::Index r = Eigen::Index(i);
    s.A(r, 0) = 1 / p.measured_us, s.A(r, 1) = p.calls / p.measured_us, s.A(r, 2) = p.calls * p.bytes / p.measured_us;
    s.b(r) = 1.0;
  }
  free_by_data(ps, pts, 0, {2});
  hold_until_full_rank(s.A, ps, {2, 0});
  solve_bounded(s.A, s.b, ps);
  f.iterations = 1;
  note_held(ps, f.notes);
  f.graph_us = ps[0].value;
  const double lat = ps[1].value, u = ps[2].value;
  const double busbw = u > 0 ? busbw_of(u) : 0.0;

  NcclFit fit;
  fit.world = n;
  fit.source = source;
  bool from_fit = false;
  auto outside = nccl_outside(f.min_bytes, f.max_bytes, n, base, from_fit);
  for (const auto& q : outside)
    if (q.max_bytes <= f.min_bytes) fit.pieces.push_back(q);
  fit.pieces.push_back({f.min_bytes, f.max_bytes, lat, busbw});
  for (const auto& q : outside)
    if (q.min_bytes >= f.max_bytes) fit.pieces.push_back(q);
  f.notes.push_back(fmt::format(
      "measured range {:.0f}..{:.0f} B; outside it the {} is kept ({} piece(s))", f.min_bytes, f.max_bytes,
      from_fit ? "base profile's measured curve" : "NCCL tuning model of the base profile", fit.pieces.size() - 1));
  if (base.topo.nccl_fit && base.topo.nccl_fit->world != n)
    f.notes.push_back(fmt::format("replaces the base profile's nccl_fit at world {} (a profile holds one)",
                                  base.topo.nccl_fit->world));
  f.topo = base.topo;
  f.topo.nccl_fit = fit;
  f.values = {{"nccl_fit lat_us", lat0, lat, false}, {"nccl_fit busbw_gbps", busbw0, busbw, !ps[2].free}};
  worst_errors(f, base, with_topo(base, f.topo));
  return f;
}

AllReduceFit fit_custom_allreduce(const std::vector<AllReducePoint>& pts, const Hardware& base_in) {
  if (pts.empty()) throw InputError("no custom all-reduce points to fit", "--from");
  AllReduceFit f;
  f.kind = AllReduceChoice::Kind::Custom;
  describe_points(f, pts);
  for (const auto& p : pts) {
    if (const auto why = custom_unsupported_reason(base_in, p.world); !why.empty())
      throw InputError("the reports ran the custom all-reduce, but on the base profile " + why, "--hardware");
    if (p.bytes > kCustomMaxBytes)
      throw InputError(fmt::format("{:.0f} B per all-reduce exceed the custom kernel's buffer", p.bytes), p.file);
  }
  // The engine caps peer bandwidth at the link's: fit the effective one, held at or below the link.
  Hardware hw = base_in;
  const double link = hw.link_bw_gbps();
  hw.topo.peer_read_bw_gbps = std::min(hw.topo.peer_read_bw_gbps, link);
  hw.topo.peer_write_bw_gbps = std::min(hw.topo.peer_write_bw_gbps, link);
  const double inf = std::numeric_limits<double>::infinity();
  const std::string at_link = fmt::format("held at the link's {:.0f} GB/s (the engine caps peer traffic there)", link);
  std::vector<Param> ps;
  std::vector<CustomVariant> last;
  double bytes_share = 0;  // of the largest message's time, under the base profile
  for (f.iterations = 1;; ++f.iterations) {
    // x = (graph fixed cost, barrier_us, us per byte read, us per byte written).
    ps = {param("graph fixed cost", base_in.gpu.graph_launch_us, 0, inf),
          param("barrier_us", hw.topo.barrier_us, 0, inf),
          param("peer_read_bw_gbps", us_per_byte(hw.topo.peer_read_bw_gbps), us_per_byte(link), inf),
          param("peer_write_bw_gbps", us_per_byte(hw.topo.peer_write_bw_gbps), us_per_byte(link), inf)};
    ps[2].on_bound = ps[3].on_bound = at_link;
    ps[2].shown = ps[3].shown = gbps_of_us_per_byte;
    System s{Eigen::MatrixXd(Eigen::Index(pts.size()), 4), Eigen::VectorXd(Eigen::Index(pts.size()))};
    std::vector<CustomVariant> vs;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const auto& p = pts[i];
      const CustomRow row = custom_row(p, hw);
      vs.push_back(row.variant);
      if (p.bytes == f.max_bytes && f.iterations == 1) {
        const double moving = row.c[1] * ps[2].value + row.c[2] * ps[3].value;
        bytes_share = std::max(bytes_share, moving / (row.c0 + row.c[0] * ps[1].value + moving));
      }
      const Eigen::Index r = Eigen::Index(i);
      s.A(r, 0) = 1 / p.measured_us;
      for (int k = 0; k < 3; ++k) s.A(r, k + 1) = p.calls * row.c[k] / p.measured_us;
      s.b(r) = (p.measured_us - p.calls * row.c0) / p.measured_us;
    }
    for (std::size_t k : {2u, 3u})
      if (s.A.col(Eigen::Index(k)).norm() == 0)
        ps[k].free = false, ps[k].why = "the variant the engine picks for these points does not use it";
      else if (bytes_share < kMinBytesShare)
        ps[k].free = false, ps[k].why = fmt::format(
                                "the largest message ({:.0f} B) spends {:.0f}% of its time moving bytes, too little to "
                                "fit a bandwidth (the profile's applies to every size; needs {:.0f}%)",
                                f.max_bytes, 100 * bytes_share, 100 * kMinBytesShare);
    free_by_data(ps, pts, 0, {2, 3});
    hold_until_full_rank(s.A, ps, {3, 2, 0});
    solve_bounded(s.A, s.b, ps);
    hw.topo.barrier_us = ps[1].value;
    hw.topo.peer_read_bw_gbps = gbps_of_us_per_byte(ps[2].value);
    hw.topo.peer_write_bw_gbps = gbps_of_us_per_byte(ps[3].value);
    // Stop when the variant each point binds no longer moves (a fixed point), or give up saying so.
    if (vs == last) break;
    if (f.iterations == kMaxCustomIterations) {
      f.notes.push_back("the engine's variant choice kept moving: stopped after " + std::to_string(f.iterations) +
                        " iterations");
      break;
    }
    last = std::move(vs);
  }
  note_held(ps, f.notes);
  f.graph_us = ps[0].value;
  // Which variant the engine now picks, beside what the replay ran.
  std::set<std::string> picked, ran;
  for (const auto& p : pts) {
    picked.insert(std::string(custom_variant_name(custom_allreduce(p.bytes, p.world, hw, p.backend.variant).variant)));
    const auto c = p.ran.find(", ");
    if (c != std::string::npos) ran.insert(p.ran.substr(c + 2));
  }
  if (!ran.empty() && ran != picked)
    f.notes.push_back(
        fmt::format("the kernel ran {} but the engine's {} picks {}: the fitted values describe the "
                    "engine's pick",
                    fmt::join(ran, ", "), pts.front().backend.label(), fmt::join(picked, ", ")));
  // Written: what the points constrained (a bandwidth held at the link counts); the rest keeps the base value.
  auto moved = [&](const Param& p) { return p.free || p.why == at_link; };
  f.topo = base_in.topo;
  f.topo.barrier_us = hw.topo.barrier_us;
  if (moved(ps[2])) f.topo.peer_read_bw_gbps = hw.topo.peer_read_bw_gbps;
  if (moved(ps[3])) f.topo.peer_write_bw_gbps = hw.topo.peer_write_bw_gbps;
  f.values = {{"barrier_us", base_in.topo.barrier_us, f.topo.barrier_us, false},
              {"peer_read_bw_gbps", base_in.topo.peer_read_bw_gbps, f.topo.peer_read_bw_gbps, !moved(ps[2])},
              {"peer_write_bw_gbps", base_in.topo.peer_write_bw_gbps, f.topo.peer_write_bw_gbps, !moved(ps[3])}};
  worst_errors(f, base_in, with_topo(base_in, f.topo));
  return f;
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
    p.label += " (" + stem(p.file) + ")";
  }
  return pts;
}

AllReduceCalibration calibrate_allreduce(const std::vector<ReplayReport>& from, const std::vector<ReplayReport>& holdout,
                                         const Hardware& base, const Hardware& cal, const std::string& hardware_spec,
                                         json& profile) {
  AllReduceCalibration c;
  c.base = base, c.calibrated = cal;
  const auto pts = allreduce_points(from, &c.notes);
  if (pts.empty()) return c;
  c.held = allreduce_points(holdout, &c.notes);
  std::map<AllReduceChoice::Kind, std::vector<AllReducePoint>> by_kind;
  for (const auto& p : pts) by_kind[p.backend.kind].push_back(p);
  json& topo = profile["topology"];
  for (const auto& [kind, group] : by_kind) {
    std::set<int> worlds;
    for (const auto& p : group) worlds.insert(p.world);
    for (int w : worlds)
      if (w > cal.topo.max_gpus)
        throw InputError(fmt::format("the reports ran on {} GPUs but topology {} holds at most {}", w, cal.topo.name,
                                     cal.topo.max_gpus),
                         "--hardware");
    const std::string head = fmt::format(
        "measured: specsim calibrate --from {} on {} ({}): weighted least squares over {} all-reduce-only CUDA graphs "
        "of specsim replay",
        files_of(group), devices_of(group), utc_date_today(), group.size());
    if (kind == AllReduceChoice::Kind::Nccl) {
      if (worlds.size() > 1)
        throw InputError(fmt::format("the NCCL reports ran at world sizes {}: a profile holds one measured NCCL curve, "
                                     "so calibrate one world size at a time",
                                     fmt::join(worlds, ", ")),
                         "--from");
      AllReduceFit f = fit_nccl_allreduce(group, cal, head);
      f.topo.nccl_fit->source = fmt::format(
          "{} ({} calls, {:.0f}..{:.0f} B, world {}; time = lat + bytes/algbw per call "
          "and a fixed cost per graph), base {}",
          head, f.calls, f.min_bytes, f.max_bytes, f.world, hardware_spec);
      topo["nccl_fit"] = nccl_fit_json(*f.topo.nccl_fit);
      c.calibrated.topo.nccl_fit = f.topo.nccl_fit;
      c.fits.push_back(std::move(f));
    } else {
      AllReduceFit f = fit_custom_allreduce(group, cal);
      const std::string src =
          fmt::format("{} ({} calls, {:.0f}..{:.0f} B, world {}, backend {}), base {}", head, f.calls, f.min_bytes,
                      f.max_bytes, fmt::join(worlds, "/"), group.front().backend.label(), hardware_spec);
      for (const auto& v : f.values)
        if (!v.held) topo[v.name] = {{"value", v.after}, {"source", src}};
      c.calibrated.topo.barrier_us = f.topo.barrier_us;
      c.calibrated.topo.peer_read_bw_gbps = f.topo.peer_read_bw_gbps;
      c.calibrated.topo.peer_write_bw_gbps = f.topo.peer_write_bw_gbps;
      c.fits.push_back(std::move(f));
    }
  }
  // Before: the shipped machine; after: the profile as written (compute and all-reduce fits).
  json summary = json::array();
  for (auto& f : c.fits) {
    worst_errors(f, base, c.calibrated);
    summary.push_back({{"backend", f.kind == AllReduceChoice::Kind::Nccl ? "nccl" : "custom"},
                       {"world", f.world},
                       {"graphs", f.graphs},
                       {"graph_fixed_us", f.graph_us},
                       {"worst_error_pct_before", f.worst_before_pct},
                       {"worst_error_pct_after", f.worst_after_pct},
                       {"notes", f.notes}});
  }
  topo["description"] = field_or<std::string>(topo, "description", "") + " | all-reduce calibrated from specsim replay";
  profile["calibration"]["allreduce"] = summary;
  return c;
}

void print_allreduce_calibration(const AllReduceCalibration& c, std::ostream& out) {
  for (const auto& n : c.notes) out << "note: " << n << "\n";
  for (const auto& f : c.fits) {
    const Hardware& after = c.calibrated;
    const std::string name = f.kind == AllReduceChoice::Kind::Nccl ? "nccl" : f.points.front().backend.label();
    out << fmt::format(
        "\nall-reduce fit ({}, world {}): {} all-reduce-only graphs, {} calls, {:.0f}..{:.0f} B, {} "
        "iteration(s):\n",
        name, f.world, f.graphs, f.calls, f.min_bytes, f.max_bytes, f.iterations);
    out << fmt::format("  {:<30} {:>8.3f} -> {:>8.3f}  (fitted; not written: graph_launch_us is the GPU's)\n",
                       "graph fixed cost us", c.base.gpu.graph_launch_us, f.graph_us);
    for (const auto& v : f.values)
      out << fmt::format("  {:<30} {:>8.3f} -> {:>8.3f}{}\n", v.name, v.before, v.after, v.held ? "  (held)" : "");
    for (const auto& n : f.notes) out << "  note: " << n << "\n";
    auto table = [&](const char* title, const std::vector<AllReducePoint>& pts) {
      if (pts.empty()) return;
      out << fmt::format("\n{} (the phase's all-reduces alone in one graph, less {:.2f} us of graph cost)\n", title,
                         f.graph_us);
      out << fmt::format("  {:<52} {:>5} {:>8} {:>9} {:>9} {:>7} {:>9} {:>7}\n", "point", "calls", "bytes", "meas us",
                         "shipped", "err %", "calib", "err %");
      double wb = 0, wc = 0;
      for (const auto& p : pts) {
        const double m = p.measured_us - f.graph_us, b = predict_allreduce_us(p, c.base),
                     k = predict_allreduce_us(p, after);
        const double eb = allreduce_error_pct(p, c.base, f.graph_us), ec = allreduce_error_pct(p, after, f.graph_us);
        wb = std::max(wb, std::abs(eb)), wc = std::max(wc, std::abs(ec));
        out << fmt::format("  {:<52} {:>5} {:>8.0f} {:>9.1f} {:>9.1f} {:>+7.1f} {:>9.1f} {:>+7.1f}\n", p.label, p.calls,
                           p.bytes, m, b, eb, k, ec);
      }
      out << fmt::format("  worst |error|: shipped {:.1f}%, calibrated {:.1f}%\n", wb, wc);
    };
    table("fitted all-reduce points:", f.points);
    std::vector<AllReducePoint> held;
    for (const auto& p : c.held)
      if (p.backend.kind == f.kind && (f.kind != AllReduceChoice::Kind::Nccl || p.world == f.world)) held.push_back(p);
    table("held-out all-reduce points:", held);
  }
}

}  // namespace specsim
