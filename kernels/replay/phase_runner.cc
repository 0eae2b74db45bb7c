// The phase runner: allocates what one phase's ops read and write (weight and KV slots rotating
// through more than the L2, activation scratch), fills it with random data, and times the phase
// as the plan runs it (one CUDA graph, or eager launches), each op class alone in a graph, each
// op from an eager pass with events between ops, and the GEMMs alone through a fresh cuBLASLt
// (block-scaled fp8 ones through their own kernel).
#include "phase_runner.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "block_fp8_gemm.h"
#include "cuda_check.h"
#include "op_prep.h"
#include "replay_kernels.h"

namespace specsim::replay::detail {
namespace {

constexpr double kSpinPerOpNs = 15000, kSpinBaseNs = 10000;  // host queues a layer behind a spin

// Activation-sized buffers every op of a phase shares (they stay in L2, as in a real forward).
struct Scratch {
  DevBuf x, x8, xs, y, q, attn_out, src, dst, ar_in, ar_out, ag_in, ag_out;  // xs: x8's token-group scales
  DevBuf res_in, res_out, norm_w;  // fused boundaries: the residual in and out, the RMSNorm weight
};

BlockFp8Shape block_shape(const PreparedOp& p) { return {p.gs.m, p.gs.n, p.gs.k, p.gs.batch}; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

class PhaseRunner {
 public:
  PhaseRunner(RankGpu& g, const PhasePlan& ph, const ReplayOptions& opt) : g_(g), ph_(ph), opt_(opt) {
    std::size_t x = 0, x8 = 0, xs = 0, y = 0, q = 0, out = 0, mem = 0, ar = 0, ag = 0, fused = 0, hidden = 0;
    for (const auto& b : ph.blocks) {
      PreparedBlock pb;
      pb.block = &b;
      std::size_t block_bytes = 0;
      for (const auto& op : b.ops) {
        if (norm_fused_away(g, op)) continue;  // runs inside the boundary's fused all-reduce
        PreparedOp p = prepare_op(g, op, b);
        block_bytes += p.slot_bytes;
        if (p.how == How::Gemm) {
          const std::size_t xe = std::size_t(p.gs.batch * p.gs.m * p.gs.k);
          (p.gs.fp8 ? x8 : x) = std::max(p.gs.fp8 ? x8 : x, xe * (p.gs.fp8 ? 1 : 2));
          y = std::max(y, std::size_t(p.gs.batch * p.gs.m * p.gs.n) * 2);
          if (p.gs.block_fp8) xs = std::max(xs, block_shape(p).a_scale_floats() * 4);
        } else if (p.how == How::Attention) {
          q = std::max(q, std::size_t(p.attn.qtiles) * kAttnChunkRows * kAttnRowElems * 2);
          out = std::max(out, attention_out_floats(p.attn) * 4);
        } else if (p.how == How::AllReduceNccl || p.how == How::AllReduceCustom) {
          ar = std::max(ar, p.elems * 2);
        } else if (p.how == How::AllReduceFused) {
          ar = std::max(ar, p.elems * 2), fused = std::max(fused, p.elems * 2);
          hidden = std::max(hidden, p.fused.hidden);
        } else if (p.how == How::AllGather) {
          ag = std::max(ag, p.elems * 2);
        } else {
          mem = std::max(mem, p.vec16 * 16);
        }
        pb.ops.push_back(std::move(p));
      }
      pb.nrot = b.repeat <= 1 || block_bytes == 0
                    ? 1
                    : int(std::min<double>(
                          b.repeat, std::max(2.0, std::ceil(kRotateL2Multiple * g.l2_bytes / double(block_bytes)))));
      total_bytes_ += double(pb.nrot) * double(block_bytes);
      blocks_.push_back(std::move(pb));
    }
    std::size_t free_b = 0, total_b = 0;
    GPU_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (total_bytes_ > 0.85 * double(free_b))
      throw std::runtime_error(fmt::format("the {} phase needs {:.1f} GiB of weights and KV; {:.1f} GiB are free",
                                           phase_name(ph.kind), total_bytes_ / 1073741824.0,
                                           double(free_b) / 1073741824.0));
    std::uint64_t seed = 1;
    auto alloc = [&](DevBuf& d, std::size_t bytes, bool fp8, float scale) {
      d = DevBuf(bytes);
      fill_random(d.p, fp8 ? d.bytes : d.bytes / 2, fp8, scale, seed++, g.stream);
    };
    for (auto& pb : blocks_)
      for (auto& p : pb.ops) {
        if (p.slot_bytes == 0) continue;
        p.rot.resize(std::size_t(pb.nrot));
        for (auto& d : p.rot) {
          alloc(d, p.slot_bytes, p.how == How::Gemm && p.gs.fp8, p.how == How::Gemm ? 0.05f : 1.0f);
          // block-scaled fp8: the scales after W as finite floats (bf16 noise in their high halves)
          if (p.gs.block_fp8)
            fill_random(static_cast<char*>(d.p) + p.w_scale_offset, (d.bytes - p.w_scale_offset) / 2, false, 0.01f,
                        seed++, g.stream);
        }
      }
    alloc(s_.x, x, false, 1.0f);
    alloc(s_.x8, x8, true, 1.0f);
    alloc(s_.xs, xs, false, 0.01f);
    alloc(s_.y, y, false, 1.0f);
    alloc(s_.q, q, false, 0.1f);
    s_.attn_out = DevBuf(out);
    alloc(s_.src, mem, false, 1.0f);
    alloc(s_.dst, mem, false, 1.0f);
    if (ar > 0) alloc(s_.ar_in, ar, false, 1.0f), alloc(s_.ar_out, ar, false, 1.0f);
    if (fused > 0) alloc(s_.res_in, fused, false, 1.0f), alloc(s_.res_out, fused, false, 1.0f);
    if (fused > 0) alloc(s_.norm_w, hidden * 2, false, 1.0f);
    if (ag > 0) alloc(s_.ag_in, ag, false, 1.0f), alloc(s_.ag_out, ag * std::size_t(g.world), false, 1.0f);
    GPU_CHECK(cudaStreamSynchronize(g.stream));
  }

  PhaseMeasurement run() {
    PhaseMeasurement m;
    m.kind = ph_.kind, m.graph = ph_.graph, m.tokens = ph_.tokens;
    for (const auto& pb : blocks_) m.kernels += pb.block->repeat * int(pb.ops.size());
    g_.sync();
    forward(kAll);  // loads cuBLAS kernels (and warms the collectives) before any capture
    GPU_CHECK(cudaStreamSynchronize(g_.stream));
    m.us = ph_.graph ? time_graph([&] { forward(kAll); }) : time_eager();
    per_op(m);
    const bool has[3] = {count(OpClass::Gemm) > 0, count(OpClass::Attention) > 0, count(OpClass::Other) > 0};
    if (has[0]) m.gemm_us = time_graph([&] { forward(int(OpClass::Gemm)); });
    if (has[1]) m.attention_us = time_graph([&] { forward(int(OpClass::Attention)); });
    if (has[2]) m.other_us = time_graph([&] { forward(int(OpClass::Other)); });
    if (count(OpClass::AllReduce) > 0) m.allreduce_us = time_graph([&] { forward(int(OpClass::AllReduce)); });
    if (count(OpClass::AllGather) > 0) m.allgather_us = time_graph([&] { forward(int(OpClass::AllGather)); });
    if (opt_.gemm_chain && has[0]) m.bare_gemm_chain_us = bare_gemm_chain();
    return m;
  }

 private:
  void launch(const PreparedOp& p, int rep, cudaStream_t st) {
    const void* slot = p.rot.empty() ? nullptr : p.rot[std::size_t(rep) % p.rot.size()].p;
    switch (p.how) {
      case How::Gemm: gemm(p, slot, st); break;
      case How::Attention: attention(s_.q.p, slot, p.attn, static_cast<float*>(s_.attn_out.p), st); break;
      case How::Memory: stream_bytes(s_.src.p, s_.dst.p, p.vec16, g_.sms, st); break;
      case How::AllReduceNccl:
        GPU_CHECK(ncclAllReduce(s_.ar_in.p, s_.ar_out.p, p.elems, ncclBfloat16, ncclSum, g_.nccl, st));
        break;
      case How::AllReduceCustom:
        g_.car->allreduce(s_.ar_in.p, s_.ar_out.p, p.elems, car::DType::BF16, g_.car_variant, st);
        break;
      case How::AllReduceFused:  // the new residual out of place, so replays do not grow it
        g_.car->allreduce_add_rmsnorm({s_.ar_in.p, s_.res_in.p, s_.res_out.p, s_.norm_w.p, s_.ar_out.p, nullptr},
                                      p.fused, st);
        break;
      case How::AllGather: GPU_CHECK(ncclAllGather(s_.ag_in.p, s_.ag_out.p, p.elems, ncclBfloat16, g_.nccl, st)); break;
    }
  }

  void gemm(const PreparedOp& p, const void* slot, cudaStream_t st) const {
    if (p.gs.block_fp8) {
      const auto* scales = reinterpret_cast<const float*>(static_cast<const char*>(slot) + p.w_scale_offset);
      block_fp8_gemm(s_.x8.p, static_cast<const float*>(s_.xs.p), slot, scales, s_.y.p, block_shape(p), st);
    } else {
      p.gemm->run(slot, p.gs.fp8 ? s_.x8.p : s_.x.p, s_.y.p, g_.workspace.p, st);
    }
  }

  static constexpr int kAll = -1;
  // One forward's launches; `cls` >= 0 keeps only the ops of that OpClass.
  void forward(int cls) {
    for (const auto& pb : blocks_)
      for (int r = 0; r < pb.block->repeat; ++r)
        for (const auto& p : pb.ops)
          if (cls == kAll || cls == int(op_class(p.op->kind))) launch(p, r, g_.stream);
  }
  int count(OpClass c) const {
    int n = 0;
    for (const auto& pb : blocks_)
      for (const auto& p : pb.ops) n += op_class(p.op->kind) == c;
    return n;
  }

  // Median GPU time of one replay of a graph captured from `body` (events around each launch).
  template <class F>
  double time_graph(F body) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    GPU_CHECK(cudaStreamBeginCapture(g_.stream, cudaStreamCaptureModeThreadLocal));
    body();
    GPU_CHECK(cudaStreamEndCapture(g_.stream, &graph));
    GPU_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t e0, e1;
    GPU_CHECK(cudaEventCreate(&e0));
    GPU_CHECK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int i = 0; i < opt_.warmup + opt_.iters; ++i) {
      g_.sync();  // multi-GPU: every rank launches this replay together
      GPU_CHECK(cudaEventRecord(e0, g_.stream));
      GPU_CHECK(cudaGraphLaunch(exec, g_.stream));
      GPU_CHECK(cudaEventRecord(e1, g_.stream));
      GPU_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      GPU_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= opt_.warmup) t.push_back(ms * 1e3);
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
    return median(t);
  }

  // Median time of one eager forward, host launches included (as the plan's eager phase runs).
  double time_eager() {
    cudaEvent_t e0, e1;
    GPU_CHECK(cudaEventCreate(&e0));
    GPU_CHECK(cudaEventCreate(&e1));
    std::vector<double> t;
    const int iters = std::min(opt_.iters, 10), warm = std::min(opt_.warmup, 3);
    for (int i = 0; i < warm + iters; ++i) {
      g_.sync();
      GPU_CHECK(cudaEventRecord(e0, g_.stream));
      forward(kAll);
      GPU_CHECK(cudaEventRecord(e1, g_.stream));
      GPU_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      GPU_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= warm) t.push_back(ms * 1e3);
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    return median(t);
  }

  // Eager pass with an event between every two ops. A spin kernel before each layer keeps the
  // GPU busy while the host queues that layer, so the events time the kernels, not the host.
  void per_op(PhaseMeasurement& m) {
    std::size_t n_events = 0;
    for (const auto& pb : blocks_) n_events += std::size_t(pb.block->repeat) * (pb.ops.size() + 1);
    std::vector<cudaEvent_t> ev(n_events);
    for (auto& e : ev) GPU_CHECK(cudaEventCreate(&e));
    std::vector<std::vector<double>> samples;  // per op instance, one per pass
    for (int pass = 0; pass < std::max(1, opt_.op_passes); ++pass) {
      g_.sync();
      std::size_t e = 0;
      for (const auto& pb : blocks_)
        for (int r = 0; r < pb.block->repeat; ++r) {
          spin(std::uint64_t(kSpinBaseNs + kSpinPerOpNs * double(pb.ops.size())), g_.stream);
          GPU_CHECK(cudaEventRecord(ev[e++], g_.stream));
          for (const auto& p : pb.ops) {
            launch(p, r, g_.stream);
            GPU_CHECK(cudaEventRecord(ev[e++], g_.stream));
          }
        }
      GPU_CHECK(cudaStreamSynchronize(g_.stream));
      std::size_t i = 0, k = 0;
      for (const auto& pb : blocks_)
        for (int r = 0; r < pb.block->repeat; ++r) {
          for (std::size_t o = 0; o < pb.ops.size(); ++o, ++i) {
            float ms = 0;
            GPU_CHECK(cudaEventElapsedTime(&ms, ev[k + o], ev[k + o + 1]));
            if (samples.size() <= i) samples.emplace_back();
            samples[i].push_back(ms * 1e3);
          }
          k += pb.ops.size() + 1;
        }
    }
    for (auto& e : ev) cudaEventDestroy(e);
    std::size_t i = 0;
    for (const auto& pb : blocks_) {
      std::vector<double> sum(pb.ops.size(), 0.0);
      for (int r = 0; r < pb.block->repeat; ++r)
        for (std::size_t o = 0; o < pb.ops.size(); ++o) sum[o] += median(samples[i++]);
      for (std::size_t o = 0; o < pb.ops.size(); ++o) {
        OpMeasurement om = pb.ops[o].meta;
        om.measured_us = sum[o] / pb.block->repeat;
        switch (op_class(pb.ops[o].op->kind)) {
          case OpClass::Gemm: m.eager_gemm_us += sum[o]; break;
          case OpClass::Attention: m.eager_attention_us += sum[o]; break;
          case OpClass::AllReduce:
          case OpClass::AllGather: break;  // timed alone in a graph (allreduce_us, allgather_us)
          default: m.eager_other_us += sum[o]; break;
        }
        m.ops.push_back(std::move(om));
      }
    }
  }

  // The phase's GEMMs, same shapes and weights, through a fresh cuBLASLt handle called directly.
  double bare_gemm_chain() {
    cublasLtHandle_t lt;
    GPU_CHECK(cublasLtCreate(&lt));
    struct Call {
      const LtGemm* g;  // null: the block-scaled fp8 kernel (no cuBLASLt state to refresh)
      const PreparedOp* p;
      const void* w;
    };
    std::vector<std::unique_ptr<LtGemm>> owned;
    std::vector<Call> calls;
    for (const auto& pb : blocks_) {
      std::vector<const LtGemm*> mine;
      for (const auto& p : pb.ops) {
        if (p.how != How::Gemm) continue;
        if (p.gs.block_fp8) {
          mine.push_back(nullptr);
          continue;
        }
        owned.push_back(std::make_unique<LtGemm>(lt, p.gs));
        mine.push_back(owned.back().get());
      }
      for (int r = 0; r < pb.block->repeat; ++r) {
        std::size_t j = 0;
        for (const auto& p : pb.ops)
          if (p.how == How::Gemm) calls.push_back({mine[j++], &p, p.rot[std::size_t(r) % p.rot.size()].p});
      }
    }
    auto one = [&](const Call& c) {
      if (c.g)
        c.g->run(c.w, c.p->gs.fp8 ? s_.x8.p : s_.x.p, s_.y.p, g_.workspace.p, g_.stream);
      else
        gemm(*c.p, c.w, g_.stream);
    };
    for (const auto& c : calls) one(c);  // warm
    const double us = time_graph([&] {
      for (const auto& c : calls) one(c);
    });
    owned.clear();
    cublasLtDestroy(lt);
    return us;
  }

  RankGpu& g_;
  const PhasePlan& ph_;
  const ReplayOptions& opt_;
  std::vector<PreparedBlock> blocks_;
  Scratch s_;
  double total_bytes_ = 0;
};

}  // namespace

PhaseMeasurement run_phase(RankGpu& g, const PhasePlan& ph, const ReplayOptions& opt) {
  PhaseRunner runner(g, ph, opt);
  return runner.run();
}

}  // namespace specsim::replay::detail
