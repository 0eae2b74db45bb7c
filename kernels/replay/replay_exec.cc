// The GPU replay executor: prepares every op of a phase (cuBLASLt descriptors and algorithms,
// rotating weight and KV buffers larger than L2, filled with random data), then times the phase
// as the plan runs it (one CUDA graph, or eager launches) and each op from an eager pass.
#include "replay_exec.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "custom_allreduce.h"
#include "replay_kernels.h"
#include "replay_rank.h"

namespace specsim::replay {
namespace detail {
namespace {
const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}
}  // namespace

void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("{} failed: {} ({}:{})", call, cudaGetErrorString(e), base_name(file), line));
}
void check(cublasStatus_t e, const char* call, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("{} failed: cuBLAS status {} ({}:{})", call, int(e), base_name(file), line));
}
void check(ncclResult_t e, const char* call, const char* file, int line) {
  if (e != ncclSuccess)
    throw std::runtime_error(fmt::format("{} failed: {} ({}:{})", call, ncclGetErrorString(e), base_name(file), line));
}
}  // namespace detail

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;
constexpr double kRotateL2Multiple = 4.0;  // weights reused only after 4x L2 of other traffic
constexpr double kSpinPerOpNs = 15000, kSpinBaseNs = 10000;  // host queues a layer behind a spin

struct DevBuf {
  void* p = nullptr;
  std::size_t bytes = 0;
  DevBuf() = default;
  explicit DevBuf(std::size_t b) : bytes(std::max<std::size_t>(b, 256)) { REPLAY_CHECK(cudaMalloc(&p, bytes)); }
  DevBuf(DevBuf&& o) noexcept : p(std::exchange(o.p, nullptr)), bytes(o.bytes) {}
  DevBuf& operator=(DevBuf&& o) noexcept { std::swap(p, o.p), std::swap(bytes, o.bytes); return *this; }
  DevBuf(const DevBuf&) = delete;
  ~DevBuf() { if (p) cudaFree(p); }
};

struct Gpu {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  DevBuf workspace;
  int sms = 0;
  double l2_bytes = 0;
  bool fp8 = false;
  std::string name;
  // Multi-rank replay (one thread or one process per rank): this rank's collectives and the
  // barrier every rank passes before each timed launch, so all ranks start each replay together.
  int device = 0, rank = 0, world = 1;
  ncclComm_t nccl = nullptr;              ///< all-gathers; all-reduces unless `car`; null: none run
  car::Communicator* car = nullptr;       ///< the custom all-reduce (`--allreduce custom`)
  car::Variant car_variant = car::Variant::Auto;
  std::function<void()> barrier;          ///< std::barrier (threads) or MPI_Barrier (processes)
  void sync() const { if (barrier) barrier(); }
  Gpu() = default;
  Gpu(const Gpu&) = delete;
  ~Gpu() {
    if (lt) cublasLtDestroy(lt);
    if (stream) cudaStreamDestroy(stream);
  }
};

struct GemmShape {
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
  bool fp8 = false;
  std::size_t weight_bytes() const { return std::size_t(batch * n * k) * (fp8 ? 1 : 2); }
};

// C[m,n] = X[m,k] W[n,k]^T as PyTorch's Linear: column-major D[n,m] = op_T(W[k,n]) X[k,m].
class LtGemm {
 public:
  LtGemm(cublasLtHandle_t lt, const GemmShape& s) : lt_(lt), s_(s) {
    const cudaDataType_t wt = s.fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    REPLAY_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    REPLAY_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    REPLAY_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    layout(&a_, wt, s.k, s.n);
    layout(&b_, wt, s.k, s.m);
    layout(&c_, CUDA_R_16BF, s.n, s.m);
    cublasLtMatmulPreference_t pref;
    REPLAY_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspaceBytes;
    REPLAY_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t res{};
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, desc_, a_, b_, c_, c_, pref, 1, &res, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    ok_ = st == CUBLAS_STATUS_SUCCESS && found > 0;
    algo_ = res.algo;
  }
  ~LtGemm() {
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (c_) cublasLtMatrixLayoutDestroy(c_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }
  LtGemm(const LtGemm&) = delete;
  bool ok() const { return ok_; }
  void run(const void* w, const void* x, void* y, void* ws, cudaStream_t st) const {
    const float alpha = 1.0f, beta = 0.0f;
    REPLAY_CHECK(cublasLtMatmul(lt_, desc_, &alpha, w, a_, x, b_, &beta, y, c_, y, c_, &algo_, ws, kWorkspaceBytes, st));
  }

 private:
  void layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, std::int64_t rows, std::int64_t cols) {
    REPLAY_CHECK(cublasLtMatrixLayoutCreate(l, t, std::uint64_t(rows), std::uint64_t(cols), rows));
    if (s_.batch > 1) {
      const std::int32_t count = std::int32_t(s_.batch);
      const std::int64_t stride = rows * cols;
      REPLAY_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      REPLAY_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }
  cublasLtHandle_t lt_;
  GemmShape s_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool ok_ = false;
};

enum class How { Gemm, Attention, Memory, AllReduceNccl, AllReduceCustom, AllGather };

struct PreparedOp {
  const Op* op = nullptr;
  OpMeasurement meta;
  How how = How::Memory;
  GemmShape gs;
  std::unique_ptr<LtGemm> gemm;
  std::size_t slot_bytes = 0;  // weights or KV per rotation slot
  std::vector<DevBuf> rot;
  std::size_t vec16 = 0;
  AttentionLaunch attn;  // split-KV grid of an attention op
  std::size_t elems = 0;  // collectives: bf16 elements per rank (all-gather: sent by each rank)
};

struct PreparedBlock {
  const OpBlock* block = nullptr;
  int nrot = 1;
  std::vector<PreparedOp> ops;
};

// Activation-sized buffers every op of a phase shares (they stay in L2, as in a real forward).
struct Scratch {
  DevBuf x, x8, y, q, attn_out, src, dst, ar_in, ar_out, ag_in, ag_out;
};

std::int64_t at_least_1(double v) { return std::max<std::int64_t>(1, std::llround(v)); }

PreparedOp prepare_op(const Gpu& g, const Op& op, const OpBlock& b, std::vector<std::string>& notes) {
  PreparedOp p;
  p.op = &op;
  p.meta.block = b.name, p.meta.name = op.name, p.meta.repeat = b.repeat;
  p.meta.op = op, p.meta.op.name = "";
  p.meta.ran_dtype = op.kind == OpKind::Gemm || op.kind == OpKind::MoeGemm ? op.dtype : DType::BF16;
  switch (op.kind) {
    case OpKind::Gemm:
    case OpKind::MoeGemm: {
      p.how = How::Gemm;
      GemmShape& s = p.gs;
      s.n = at_least_1(op.n), s.k = at_least_1(op.k);
      if (op.kind == OpKind::MoeGemm) {
        s.batch = at_least_1(op.experts);
        s.m = std::max<std::int64_t>(1, std::int64_t(std::ceil(op.m / double(s.batch))));
        p.meta.note = fmt::format("{} experts x [{},{}]x[{},{}], batched", s.batch, s.m, s.k, s.k, s.n);
      } else {
        s.batch = at_least_1(op.batch), s.m = at_least_1(op.m);
      }
      if (op.dtype == DType::FP8 || op.dtype == DType::FP16 || op.dtype == DType::FP32) {
        s.fp8 = op.dtype == DType::FP8 && g.fp8 && s.k % 16 == 0 && s.n % 16 == 0;
        if (s.fp8) {
          p.gemm = std::make_unique<LtGemm>(g.lt, s);
          if (!p.gemm->ok()) s.fp8 = false;
        }
        if (!s.fp8) p.meta.note = fmt::format("{} GEMM ran as bf16", dtype_name(op.dtype));
      }
      if (!p.gemm || !p.gemm->ok()) p.gemm = std::make_unique<LtGemm>(g.lt, s);
      if (!p.gemm->ok())
        throw std::runtime_error(fmt::format("cuBLASLt has no algorithm for {} [{}x{}x{}] x{}", op.name, s.m, s.n, s.k, s.batch));
      p.meta.ran_dtype = s.fp8 ? DType::FP8 : DType::BF16;
      p.slot_bytes = s.weight_bytes();
      break;
    }
    case OpKind::Attention: {
      p.how = How::Attention;
      const double elems = std::max(1.0, op.bytes / 2);
      const double rows = std::ceil(elems / kAttnRowElems);
      const auto chunks = std::size_t(std::ceil(rows / kAttnChunkRows));
      const double flops_per_tile = 4.0 * kAttnChunkRows * kAttnChunkRows * kAttnRowElems;  // QK^T + PV
      const int qtiles = int(std::max<std::int64_t>(1, std::llround(op.flops / (double(chunks) * flops_per_tile))));
      p.attn = plan_attention(chunks, qtiles);
      p.slot_bytes = chunks * kAttnChunkRows * kAttnRowElems * 2;
      p.meta.note = fmt::format("split-KV: {} rows x {} bf16 over {} CTAs, {} query tile(s) of 16 on tensor cores{}",
                                chunks * kAttnChunkRows, kAttnRowElems, p.attn.ctas, qtiles,
                                p.attn.groups > 1 ? fmt::format(", KV read by {} query groups", p.attn.groups) : "");
      break;
    }
    case OpKind::AllReduce: {
      // bf16 payload, out of place (so repeated replays do not grow the values)
      p.elems = std::size_t(std::max(1.0, std::ceil(op.comm_bytes / 2)));
      p.how = How::AllReduceNccl;
      if (g.car && p.elems * 2 <= g.car->max_bytes()) {
        p.how = How::AllReduceCustom;
        p.meta.note = fmt::format("custom all-reduce, {}", car::to_string(g.car->resolve(g.car_variant, p.elems * 2)));
      } else {
        p.meta.note = g.car ? "over the custom all-reduce's buffer: NCCL" : "NCCL";
      }
      if (p.how == How::AllReduceNccl && !g.nccl)  // ranks sharing a GPU run no NCCL
        throw std::runtime_error(fmt::format("{}: a {} B all-reduce needs NCCL (or a custom all-reduce buffer that "
                                             "large), and this replay has no NCCL communicator", op.name, p.elems * 2));
      break;
    }
    case OpKind::AllGather:
      p.how = How::AllGather;
      p.elems = std::size_t(std::max(1.0, std::ceil(op.comm_bytes / 2 / std::max(1, g.world))));
      p.meta.note = "NCCL all-gather";
      if (!g.nccl) throw std::runtime_error(fmt::format("{}: an all-gather needs NCCL, and this replay has no NCCL communicator", op.name));
      break;
    default:
      p.how = How::Memory;
      p.vec16 = std::size_t(std::max(1.0, std::ceil(op.bytes / 2 / 16)));  // half read, half written
      break;
  }
  (void)notes;
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

class PhaseRunner {
 public:
  PhaseRunner(Gpu& g, const PhasePlan& ph, const ReplayOptions& opt, std::vector<std::string>& notes)
      : g_(g), ph_(ph), opt_(opt) {
    std::size_t x = 0, x8 = 0, y = 0, q = 0, out = 0, mem = 0, ar = 0, ag = 0;
    for (const auto& b : ph.blocks) {
      PreparedBlock pb;
      pb.block = &b;
      std::size_t block_bytes = 0;
      for (const auto& op : b.ops) {
        PreparedOp p = prepare_op(g, op, b, notes);
        block_bytes += p.slot_bytes;
        if (p.how == How::Gemm) {
          const std::size_t xe = std::size_t(p.gs.batch * p.gs.m * p.gs.k);
          (p.gs.fp8 ? x8 : x) = std::max(p.gs.fp8 ? x8 : x, xe * (p.gs.fp8 ? 1 : 2));
          y = std::max(y, std::size_t(p.gs.batch * p.gs.m * p.gs.n) * 2);
        } else if (p.how == How::Attention) {
          q = std::max(q, std::size_t(p.attn.qtiles) * kAttnChunkRows * kAttnRowElems * 2);
          out = std::max(out, attention_out_floats(p.attn) * 4);
        } else if (p.how == How::AllReduceNccl || p.how == How::AllReduceCustom) {
          ar = std::max(ar, p.elems * 2);
        } else if (p.how == How::AllGather) {
          ag = std::max(ag, p.elems * 2);
        } else {
          mem = std::max(mem, p.vec16 * 16);
        }
        pb.ops.push_back(std::move(p));
      }
      pb.nrot = b.repeat <= 1 || block_bytes == 0
                    ? 1
                    : int(std::min<double>(b.repeat, std::max(2.0, std::ceil(kRotateL2Multiple * g.l2_bytes / double(block_bytes)))));
      total_bytes_ += double(pb.nrot) * double(block_bytes);
      blocks_.push_back(std::move(pb));
    }
    std::size_t free_b = 0, total_b = 0;
    REPLAY_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (total_bytes_ > 0.85 * double(free_b))
      throw std::runtime_error(fmt::format("the {} phase needs {:.1f} GiB of weights and KV; {:.1f} GiB are free",
                                           phase_name(ph.kind), total_bytes_ / 1073741824.0, double(free_b) / 1073741824.0));
    std::uint64_t seed = 1;
    auto alloc = [&](DevBuf& d, std::size_t bytes, bool fp8, float scale) {
      d = DevBuf(bytes);
      fill_random(d.p, fp8 ? d.bytes : d.bytes / 2, fp8, scale, seed++, g.stream);
    };
    for (auto& pb : blocks_)
      for (auto& p : pb.ops) {
        if (p.slot_bytes == 0) continue;
        p.rot.resize(std::size_t(pb.nrot));
        for (auto& d : p.rot) alloc(d, p.slot_bytes, p.how == How::Gemm && p.gs.fp8, p.how == How::Gemm ? 0.05f : 1.0f);
      }
    alloc(s_.x, x, false, 1.0f);
    alloc(s_.x8, x8, true, 1.0f);
    alloc(s_.y, y, false, 1.0f);
    alloc(s_.q, q, false, 0.1f);
    s_.attn_out = DevBuf(out);
    alloc(s_.src, mem, false, 1.0f);
    alloc(s_.dst, mem, false, 1.0f);
    if (ar > 0) alloc(s_.ar_in, ar, false, 1.0f), alloc(s_.ar_out, ar, false, 1.0f);
    if (ag > 0) alloc(s_.ag_in, ag, false, 1.0f), alloc(s_.ag_out, ag * std::size_t(g.world), false, 1.0f);
    REPLAY_CHECK(cudaStreamSynchronize(g.stream));
  }

  PhaseMeasurement run() {
    PhaseMeasurement m;
    m.kind = ph_.kind, m.graph = ph_.graph, m.tokens = ph_.tokens;
    for (const auto& pb : blocks_) m.kernels += pb.block->repeat * int(pb.ops.size());
    g_.sync();
    forward(kAll);  // loads cuBLAS kernels (and warms the collectives) before any capture
    REPLAY_CHECK(cudaStreamSynchronize(g_.stream));
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
      case How::Gemm: p.gemm->run(slot, p.gs.fp8 ? s_.x8.p : s_.x.p, s_.y.p, g_.workspace.p, st); break;
      case How::Attention: attention(s_.q.p, slot, p.attn, static_cast<float*>(s_.attn_out.p), st); break;
      case How::Memory: stream_bytes(s_.src.p, s_.dst.p, p.vec16, g_.sms, st); break;
      case How::AllReduceNccl:
        REPLAY_CHECK(ncclAllReduce(s_.ar_in.p, s_.ar_out.p, p.elems, ncclBfloat16, ncclSum, g_.nccl, st));
        break;
      case How::AllReduceCustom:
        g_.car->allreduce(s_.ar_in.p, s_.ar_out.p, p.elems, car::DType::BF16, g_.car_variant, st);
        break;
      case How::AllGather:
        REPLAY_CHECK(ncclAllGather(s_.ag_in.p, s_.ag_out.p, p.elems, ncclBfloat16, g_.nccl, st));
        break;
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
    REPLAY_CHECK(cudaStreamBeginCapture(g_.stream, cudaStreamCaptureModeThreadLocal));
    body();
    REPLAY_CHECK(cudaStreamEndCapture(g_.stream, &graph));
    REPLAY_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t e0, e1;
    REPLAY_CHECK(cudaEventCreate(&e0));
    REPLAY_CHECK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int i = 0; i < opt_.warmup + opt_.iters; ++i) {
      g_.sync();  // multi-GPU: every rank launches this replay together
      REPLAY_CHECK(cudaEventRecord(e0, g_.stream));
      REPLAY_CHECK(cudaGraphLaunch(exec, g_.stream));
      REPLAY_CHECK(cudaEventRecord(e1, g_.stream));
      REPLAY_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      REPLAY_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= opt_.warmup) t.push_back(ms * 1e3);
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
    return median(t);
  }

  // Median time of one eager forward, host launches included (as the plan's eager phase runs).
  double time_eager() {
    cudaEvent_t e0, e1;
    REPLAY_CHECK(cudaEventCreate(&e0));
    REPLAY_CHECK(cudaEventCreate(&e1));
    std::vector<double> t;
    const int iters = std::min(opt_.iters, 10), warm = std::min(opt_.warmup, 3);
    for (int i = 0; i < warm + iters; ++i) {
      g_.sync();
      REPLAY_CHECK(cudaEventRecord(e0, g_.stream));
      forward(kAll);
      REPLAY_CHECK(cudaEventRecord(e1, g_.stream));
      REPLAY_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      REPLAY_CHECK(cudaEventElapsedTime(&ms, e0, e1));
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
    for (auto& e : ev) REPLAY_CHECK(cudaEventCreate(&e));
    std::vector<std::vector<double>> samples;  // per op instance, one per pass
    for (int pass = 0; pass < std::max(1, opt_.op_passes); ++pass) {
      g_.sync();
      std::size_t e = 0;
      for (const auto& pb : blocks_)
        for (int r = 0; r < pb.block->repeat; ++r) {
          spin(std::uint64_t(kSpinBaseNs + kSpinPerOpNs * double(pb.ops.size())), g_.stream);
          REPLAY_CHECK(cudaEventRecord(ev[e++], g_.stream));
          for (const auto& p : pb.ops) {
            launch(p, r, g_.stream);
            REPLAY_CHECK(cudaEventRecord(ev[e++], g_.stream));
          }
        }
      REPLAY_CHECK(cudaStreamSynchronize(g_.stream));
      std::size_t i = 0, k = 0;
      for (const auto& pb : blocks_)
        for (int r = 0; r < pb.block->repeat; ++r) {
          for (std::size_t o = 0; o < pb.ops.size(); ++o, ++i) {
            float ms = 0;
            REPLAY_CHECK(cudaEventElapsedTime(&ms, ev[k + o], ev[k + o + 1]));
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
    REPLAY_CHECK(cublasLtCreate(&lt));
    struct Call { const LtGemm* g; const void* w; const void* x; };
    std::vector<std::unique_ptr<LtGemm>> owned;
    std::vector<Call> calls;
    for (const auto& pb : blocks_) {
      std::vector<const LtGemm*> mine;
      for (const auto& p : pb.ops) {
        if (p.how != How::Gemm) continue;
        owned.push_back(std::make_unique<LtGemm>(lt, p.gs));
        mine.push_back(owned.back().get());
      }
      for (int r = 0; r < pb.block->repeat; ++r) {
        std::size_t j = 0;
        for (const auto& p : pb.ops)
          if (p.how == How::Gemm)
            calls.push_back({mine[j++], p.rot[std::size_t(r) % p.rot.size()].p, p.gs.fp8 ? s_.x8.p : s_.x.p});
      }
    }
    void* y = s_.y.p;
    void* ws = g_.workspace.p;
    for (const auto& c : calls) c.g->run(c.w, c.x, y, ws, g_.stream);  // warm
    const double us = time_graph([&] { for (const auto& c : calls) c.g->run(c.w, c.x, y, ws, g_.stream); });
    owned.clear();
    cublasLtDestroy(lt);
    return us;
  }

  Gpu& g_;
  const PhasePlan& ph_;
  const ReplayOptions& opt_;
  std::vector<PreparedBlock> blocks_;
  Scratch s_;
  double total_bytes_ = 0;
};

}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

namespace {
// Makes `device` current for this thread and sets up its stream, cuBLASLt handle and workspace.
// Returns the device's description for the report.
std::string init_gpu(Gpu& g, int device) {
  REPLAY_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  REPLAY_CHECK(cudaGetDeviceProperties(&prop, device));
  g.device = device;
  g.name = prop.name, g.sms = prop.multiProcessorCount, g.l2_bytes = prop.l2CacheSize;
  g.fp8 = prop.major * 10 + prop.minor >= 89;
  REPLAY_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  REPLAY_CHECK(cublasLtCreate(&g.lt));
  g.workspace = DevBuf(kWorkspaceBytes);
  return fmt::format("{} (sm_{}{}, {} SMs, L2 {} MiB)", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                     prop.l2CacheSize >> 20);
}
}  // namespace

namespace detail {
ReplayMeasurement replay_rank(const CyclePlan& ran, const CyclePlan& full, const ReplayOptions& opt,
                              const RankSetup& rs) {
  if (ran.phases.size() != full.phases.size())
    throw std::logic_error("replay_rank: the replayed plan and the full plan differ in phases");
  Gpu g;
  ReplayMeasurement out;
  out.device = init_gpu(g, rs.device);
  out.iters = opt.iters, out.warmup = opt.warmup;
  g.rank = rs.rank, g.world = rs.world, g.nccl = rs.nccl, g.barrier = rs.barrier;
  g.car = rs.car, g.car_variant = rs.car_variant;
  for (std::size_t i = 0; i < ran.phases.size(); ++i) {
    const PhasePlan& ph = ran.phases[i];
    PhaseRunner runner(g, ph, opt, out.notes);
    PhaseMeasurement m = runner.run();
    m.collectives_skipped = full.phases[i].kernels() - ph.kernels();
    out.phases.push_back(std::move(m));
  }
  REPLAY_CHECK(cudaStreamSynchronize(g.stream));
  if (g.car) g.car->check();
  if (!g.fp8) out.notes.push_back("this GPU has no fp8 tensor cores: fp8 GEMMs ran as bf16");
  return out;
}

std::array<double*, 7> rank_max_fields(PhaseMeasurement& m) {
  return {&m.us, &m.gemm_us, &m.attention_us, &m.other_us, &m.allreduce_us, &m.allgather_us, &m.bare_gemm_chain_us};
}

std::string rotation_note() {
  return fmt::format("weights and KV rotate so each is re-read only after {}x the L2 of other traffic",
                     kRotateL2Multiple);
}

void disable_nvls() { ::setenv("NCCL_NVLS_ENABLE", "0", 1); }
}  // namespace detail

ReplayMeasurement replay_plan(const CyclePlan& plan, const ReplayOptions& opt) {
  ReplayMeasurement out = detail::replay_rank(strip_collectives(plan), plan, opt, detail::RankSetup{});
  out.notes.push_back(detail::rotation_note());
  return out;
}

ReplayMeasurement replay_plan_multi_gpu(const CyclePlan& plan, const ReplayOptions& opt, const MultiGpuOptions& mg) {
  const int n = mg.gpus;
  if (n < 2 || n > cuda_device_count())
    throw std::runtime_error(fmt::format("a multi-GPU replay needs 2..{} GPUs, asked for {}", cuda_device_count(), n));
  if (plan.tp != n) throw std::runtime_error(fmt::format("the plan is tp {}, the replay has {} GPUs", plan.tp, n));
  detail::disable_nvls();
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) devs[std::size_t(r)] = r;
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  REPLAY_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
  std::vector<std::unique_ptr<car::Communicator>> cars;
  car::Variant variant = car::Variant::Auto;
  if (mg.custom) {
    const auto v = car::parse_variant(mg.variant);
    if (!v) throw std::runtime_error("unknown custom all-reduce variant '" + mg.variant + "'");
    variant = *v;
    cars = car::Communicator::create_single_process(devs);
  }

  std::barrier<> bar(n);
  std::vector<ReplayMeasurement> per_rank(static_cast<std::size_t>(n));
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::atomic<int> done{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        detail::RankSetup rs;
        rs.device = r, rs.rank = r, rs.world = n, rs.nccl = comms[std::size_t(r)];
        rs.barrier = [&bar] { bar.arrive_and_wait(); };
        if (mg.custom) rs.car = cars[std::size_t(r)].get(), rs.car_variant = variant;
        per_rank[std::size_t(r)] = detail::replay_rank(plan, plan, opt, rs);  // collectives run for real
      } catch (const std::exception& e) {
        errors[std::size_t(r)] = fmt::format("rank {} (GPU {}): {}", r, r, e.what());
        failed = true;
        bar.arrive_and_drop();  // do not leave the other ranks waiting at the barrier
      }
      ++done;
    });
  // A rank that failed can leave its peers blocked inside a collective, which no one can cancel:
  // after a failure give the others a bounded time, then report and exit rather than hang.
  std::chrono::steady_clock::time_point t_fail{};
  while (done.load() < n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!failed.load()) continue;
    const auto now = std::chrono::steady_clock::now();
    if (t_fail == std::chrono::steady_clock::time_point{}) t_fail = now;
    if (now - t_fail > std::chrono::seconds(60)) {
      std::fprintf(stderr, "error: a rank failed and the others did not finish within 60 s (replay)\n");
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error(e);

  ReplayMeasurement out = per_rank[0];
  out.gpus = n;
  out.allreduce_backend = mg.custom ? "custom:" + mg.variant : "nccl";
  out.device = fmt::format("{} x {}", n, per_rank[0].device);
  for (int r = 1; r < n; ++r)
    for (std::size_t i = 0; i < out.phases.size(); ++i) {
      const auto a = detail::rank_max_fields(out.phases[i]);
      const auto b = detail::rank_max_fields(per_rank[std::size_t(r)].phases[i]);
      for (std::size_t f = 0; f < a.size(); ++f) *a[f] = std::max(*a[f], *b[f]);
    }
  out.notes.push_back(fmt::format("{} GPUs, one thread per GPU (rank r on GPU r); all-reduces through {}, all-gathers "
                                  "through NCCL (NCCL_NVLS_ENABLE=0); every rank launches each replay after a "
                                  "barrier; phase and class times are the slowest rank's median; per-op times are "
                                  "rank 0's",
                                  n, mg.custom ? "the custom kernel (" + mg.variant + ")" : std::string("NCCL")));
  out.notes.push_back(detail::rotation_note());
  cars.clear();
  for (auto c : comms) ncclCommDestroy(c);
  return out;
}

}  // namespace specsim::replay
