// specsim-gemmbench: the replay's block-scaled fp8 GEMM (kernels/replay/block_fp8_gemm.h) at
// DeepSeek-V3's and Kimi-K2's TP-8 shapes per rank, M = 1..64, beside cuBLASLt's per-tensor fp8
// GEMM on the same shape. Each row is one CUDA graph of back-to-back launches over weight copies
// that rotate through more than 4x the L2 (every launch reads W from memory), median of the
// replays. Prints a table, the least-squares fit of time - weight bytes at the profile's GEMM rate
// = fixed + per-128-of-K (what gemm_fp8_block_fixed_us and gemm_fp8_block_us_per_kblock of
// models/hardware/gpus/*.json hold), and with --json the rows and the fit as JSON.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "block_fp8_gemm.h"
#include "calibrate/replay_fp8_fit.h"
#include "cuda_check.h"
#include "error_boundary.h"
#include "gemm_runner.h"
#include "replay_kernels.h"
#include "scenario/hardware.h"
#include "util/error.h"
#include "util/output_files.h"

using namespace specsim::replay;
using nlohmann::json;

namespace {

struct Shape {
  const char* name;
  std::int64_t n, k;
  bool moe;  ///< expert GEMM: batched over the experts M tokens touch (DeepSeek: 256 routed, top 8, 1 shared)
};

// Per rank at TP 8 (sim/plan/forward_builders.cc builds the same shapes).
const Shape kShapes[] = {
    {"dsv3 fused_qkv_a_proj", 2112, 7168, false},
    {"dsv3 q_b_proj", 3072, 1536, false},
    {"dsv3 o_proj", 7168, 2048, false},
    {"dsv3 dense gate_up", 4608, 7168, false},
    {"dsv3 dense down", 7168, 2304, false},
    {"dsv3 N=4096 K=7168", 4096, 7168, false},
    {"kimi-k2 q_b_proj", 1536, 1536, false},
    {"kimi-k2 o_proj", 7168, 1024, false},
    {"dsv3 moe_w13", 512, 7168, true},
    {"dsv3 moe_w2", 7168, 256, true},
};

struct Flags {
  int iters = 20, launches = 200;
  std::vector<int> ms{1, 2, 3, 4, 8, 16, 32, 64};
  std::string only, json_path, hardware = "h200:nvswitch";
  int fit_max_m = 16;
  bool list = false;
};

struct Row {
  std::string name;
  BlockFp8Shape s;
  int tokens = 0;
  double block_us = 0, tensor_us = -1;  // tensor: -1 where cuBLASLt has no algorithm
  double weight_bytes() const { return double(s.batch * s.n * s.k); }
};

// The GEMM the replay runs for `tokens` tokens: MoE rows split the token-expert pairs over the
// expected distinct experts as kernels/replay/op_prep.cc does.
BlockFp8Shape shape_for(const Shape& sh, int tokens) {
  if (!sh.moe) return {tokens, sh.n, sh.k, 1};
  const double distinct = 256.0 * (1.0 - std::pow(1.0 - 8.0 / 256.0, tokens)) + 1.0;
  const auto batch = std::max<std::int64_t>(1, std::llround(distinct));
  const auto m = std::max<std::int64_t>(1, std::int64_t(std::ceil(tokens * 9.0 / double(batch))));
  return {m, sh.n, sh.k, batch};
}

// Median microseconds per launch of `launch(i)` (i: the weight copy) captured `n` times in a graph.
template <class F>
double time_launches(F launch, int n, int iters, cudaStream_t st) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  for (int i = 0; i < 3; ++i) launch(i);  // warm (module load) outside the capture
  GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < n; ++i) launch(i);
  GPU_CHECK(cudaStreamEndCapture(st, &g));
  GPU_CHECK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  GPU_CHECK(cudaEventCreate(&e0));
  GPU_CHECK(cudaEventCreate(&e1));
  std::vector<double> t;
  for (int i = 0; i < iters + 3; ++i) {
    GPU_CHECK(cudaEventRecord(e0, st));
    GPU_CHECK(cudaGraphLaunch(ge, st));
    GPU_CHECK(cudaEventRecord(e1, st));
    GPU_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    GPU_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 3) t.push_back(ms * 1e3 / n);
  }
  cudaGraphExecDestroy(ge), cudaGraphDestroy(g), cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Device buffers freed on scope exit.
struct Buf {
  void* p = nullptr;
  explicit Buf(std::size_t bytes) { GPU_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 256))); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
};

Row time_row(const Shape& sh, int tokens, double l2_bytes, cublasLtHandle_t lt, void* ws, const Flags& f,
             cudaStream_t st) {
  Row r{sh.name, shape_for(sh, tokens), tokens};
  const auto& s = r.s;
  const std::size_t wbytes = std::size_t(r.weight_bytes()), wsc = s.w_scale_floats() * 4;
  const int nbuf = int(std::clamp(std::ceil(4.0 * l2_bytes / double(wbytes)), 1.0, 1000.0));
  std::vector<std::unique_ptr<Buf>> w, wscale;
  for (int i = 0; i < nbuf; ++i) {
    w.push_back(std::make_unique<Buf>(wbytes));
    wscale.push_back(std::make_unique<Buf>(wsc));
    fill_random(w.back()->p, wbytes, true, 0.05f, 17 + i, st);
    fill_random(wscale.back()->p, wsc / 2, false, 0.01f, 91 + i, st);  // finite floats (bf16 in the high half)
  }
  const std::size_t abytes = std::size_t(s.batch * s.m * s.k);
  Buf a(abytes), as(s.a_scale_floats() * 4), c(std::size_t(s.batch * s.m * s.n) * 2);
  fill_random(a.p, abytes, true, 1.0f, 5, st);
  fill_random(as.p, s.a_scale_floats() * 2, false, 0.01f, 6, st);
  const int n = std::max(f.launches, nbuf);
  r.block_us = time_launches(
      [&](int i) {
        const auto k = std::size_t(i % nbuf);
        block_fp8_gemm(a.p, static_cast<const float*>(as.p), w[k]->p, static_cast<const float*>(wscale[k]->p), c.p, s,
                       st);
      },
      n, f.iters, st);
  detail::GemmShape gs;
  gs.m = s.m, gs.n = s.n, gs.k = s.k, gs.batch = s.batch, gs.fp8 = true;
  detail::LtGemm g(lt, gs);
  if (g.ok())
    r.tensor_us = time_launches([&](int i) { g.run(w[std::size_t(i % nbuf)]->p, a.p, c.p, ws, st); }, n, f.iters, st);
  return r;
}

struct Fit {
  double fixed_us = 0, us_per_kblock = 0, worst_pct = 0;
  int points = 0;
};

// Least squares of (time - bytes / rate) = fixed + per_kblock * K / 128 over the dense rows at M <= max_m.
Fit fit_rows(const std::vector<Row>& rows, double bytes_per_us, int max_m) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  Fit fit;
  for (const auto& r : rows) {
    if (r.s.batch != 1 || r.tokens > max_m) continue;
    const double x = double(r.s.k) / kFp8Group, y = r.block_us - r.weight_bytes() / bytes_per_us;
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++fit.points;
  }
  const double det = fit.points * sxx - sx * sx;
  if (fit.points < 2 || std::abs(det) < 1e-12) return fit;
  fit.us_per_kblock = (fit.points * sxy - sx * sy) / det;
  fit.fixed_us = (sy - fit.us_per_kblock * sx) / fit.points;
  for (const auto& r : rows) {
    if (r.s.batch != 1 || r.tokens > max_m) continue;
    const double pred = fit.fixed_us + fit.us_per_kblock * double(r.s.k) / kFp8Group + r.weight_bytes() / bytes_per_us;
    fit.worst_pct = std::max(fit.worst_pct, 100.0 * std::abs(pred - r.block_us) / r.block_us);
  }
  return fit;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

int run(const Flags& f) {
  std::vector<const Shape*> chosen;
  for (const auto& s : kShapes)
    if (std::string(s.name).find(f.only) != std::string::npos) chosen.push_back(&s);
  if (chosen.empty()) throw specsim::InputError("no shape name holds '" + f.only + "'", "--only; --list shows them");
  if (f.list) {
    for (const auto* s : chosen) fmt::print("{}  N={} K={}{}\n", s->name, s->n, s->k, s->moe ? " (experts)" : "");
    return 0;
  }
  if (!f.json_path.empty()) specsim::check_outputs({{f.json_path, "--json"}});
  const specsim::Hardware hw = specsim::load_hardware(f.hardware, 1);
  const double rate_gbps = hw.gpu.mem_bw_gbps * hw.gpu.gemm_memory_efficiency;  // the profile's GEMM rate
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
    throw specsim::EnvironmentError("no CUDA GPU found", "run specsim-gemmbench on a machine with a GPU");
  if (!block_fp8_device_ok())
    throw specsim::EnvironmentError("the GPU has no fp8 tensor cores", "run it on sm_89 or later (Ada, Hopper)");
  cudaDeviceProp prop{};
  GPU_CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cublasLtHandle_t lt;
  GPU_CHECK(cublasLtCreate(&lt));
  Buf ws(detail::kGemmWorkspaceBytes);

  fmt::print("{} ({} SMs, {:.0f} MB L2); graph of >= {} launches over weights > 4x L2, median of {} replays\n",
             prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, f.launches, f.iters);
  fmt::print("{:<22} {:>5} {:>5} {:>4} {:>4} {:>4} {:>8} | {:>9} {:>7} | {:>10} {:>9}\n", "shape", "N", "K", "tok", "M",
             "xE", "W MB", "block us", "GB/s", "cuBLASLt", "engine");
  std::vector<Row> rows;
  const auto& g = hw.gpu;
  for (const auto* sh : chosen)
    for (int m : f.ms) {
      const Row r = time_row(*sh, m, double(prop.l2CacheSize), lt, ws.p, f, st);
      const double engine = g.gemm_fp8_block_fixed_us + g.gemm_fp8_block_us_per_kblock * double(r.s.k) / kFp8Group +
                            r.weight_bytes() / (rate_gbps * 1e3);
      fmt::print("{:<22} {:>5} {:>5} {:>4} {:>4} {:>4} {:>8.1f} | {:>9.2f} {:>7.0f} | {:>10} {:>9.2f}\n", r.name, r.s.n,
                 r.s.k, m, r.s.m, r.s.batch, r.weight_bytes() / 1e6, r.block_us, r.weight_bytes() / r.block_us / 1e3,
                 r.tensor_us > 0 ? fmt::format("{:.2f}", r.tensor_us) : std::string("-"), engine);
      rows.push_back(r);
    }
  cublasLtDestroy(lt);
  cudaStreamDestroy(st);
  const Fit fit = fit_rows(rows, rate_gbps * 1e3, f.fit_max_m);
  fmt::print(
      "\nfit (dense rows, M <= {}, {} points): time - weight bytes / {:.0f} GB/s ({}: mem_bw_gbps x "
      "gemm_memory_efficiency) = {:.2f} us + {:.3f} us per 128 of K (worst {:.1f}%)\n",
      f.fit_max_m, fit.points, rate_gbps, f.hardware, fit.fixed_us, fit.us_per_kblock, fit.worst_pct);
  fmt::print("  -> gemm_fp8_block_fixed_us {:.2f}, gemm_fp8_block_us_per_kblock {:.3f} (profile now: {:.2f}, {:.3f})\n",
             fit.fixed_us, fit.us_per_kblock, g.gemm_fp8_block_fixed_us, g.gemm_fp8_block_us_per_kblock);
  fmt::print("(engine: the profile's block-fp8 price of the row; cuBLASLt: per-tensor fp8, same shape and weights)\n");
  // the price `specsim replay` predicts this kernel with (gpu.replay_block_fp8; specsim calibrate
  // --gemmbench writes it into a profile from this run's --json)
  std::vector<specsim::ReplayFp8Row> fit_rows_all;
  for (const auto& r : rows) fit_rows_all.push_back({r.name, {r.s.m, r.s.n, r.s.k, r.s.batch}, r.block_us});
  std::optional<specsim::ReplayFp8Fit> rf;
  if (fit_rows_all.size() >= std::size_t(specsim::kReplayFp8Terms)) {
    rf = specsim::fit_replay_fp8(fit_rows_all, "specsim-gemmbench");
    fmt::print("replay price (all {} rows, relative least squares): median error {:.1f}%, worst {:.1f}% ({}):",
               rf->points, rf->median_pct, rf->worst_pct, rf->worst_row);
    for (int i = 0; i < specsim::kReplayFp8Terms; ++i)
      fmt::print(" {} {:.4f}", specsim::kReplayFp8Keys[std::size_t(i)], rf->kernel.coef[std::size_t(i)]);
    fmt::print("\n");
  }
  if (f.json_path.empty()) return 0;
  json j = {{"kind", "specsim-gemmbench"}, {"device", prop.name},  {"date", today()},
            {"launches", f.launches},      {"iters", f.iters},     {"hardware", f.hardware},
            {"gemm_rate_gbps", rate_gbps}, {"rows", json::array()}};
  for (const auto& r : rows)
    j["rows"].push_back({{"shape", r.name},
                         {"n", r.s.n},
                         {"k", r.s.k},
                         {"tokens", r.tokens},
                         {"m", r.s.m},
                         {"batch", r.s.batch},
                         {"weight_bytes", r.weight_bytes()},
                         {"block_fp8_us", r.block_us},
                         {"cublaslt_tensor_fp8_us", r.tensor_us > 0 ? json(r.tensor_us) : json(nullptr)}});
  j["fit"] = {{"max_m", f.fit_max_m},
              {"points", fit.points},
              {"gemm_fp8_block_fixed_us", fit.fixed_us},
              {"gemm_fp8_block_us_per_kblock", fit.us_per_kblock},
              {"worst_pct", fit.worst_pct}};
  if (rf) {
    json c;
    for (int i = 0; i < specsim::kReplayFp8Terms; ++i)
      c[specsim::kReplayFp8Keys[std::size_t(i)]] = rf->kernel.coef[std::size_t(i)];
    j["replay_fit"] = {{"coefficients", c}, {"median_pct", rf->median_pct}, {"worst_pct", rf->worst_pct}};
  }
  specsim::write_outputs_atomic({{{f.json_path, "--json"}, j.dump(2) + "\n"}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"specsim-gemmbench: the replay's block-scaled fp8 GEMM at DeepSeek-V3/Kimi-K2 TP-8 shapes"};
  app.add_option("--iters", f.iters, "timed graph replays per row (median kept)")->check(CLI::Range(1, 100000));
  app.add_option("--launches", f.launches, "launches per graph (at least the weight copies)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--m", f.ms, "token counts (default 1 2 3 4 8 16 32 64)")->check(CLI::Range(1, 4096));
  app.add_option("--only", f.only, "only the shapes whose name holds this text (e.g. moe)");
  app.add_option("--fit-max-m", f.fit_max_m, "fit only the rows at M <= this")->check(CLI::Range(1, 4096));
  app.add_option("--hardware", f.hardware, "the profile whose GEMM rate the fit subtracts (default h200:nvswitch)");
  app.add_option("--json", f.json_path, "also write the rows and the fit as JSON to this file");
  app.add_flag("--list", f.list, "print the shape names and exit (no GPU needed)");
  return specsim::cli::guarded(app, argc, argv, [&] { return run(f); });
}
