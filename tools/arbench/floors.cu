// Floors of a small all-reduce (floors.h): an empty graph node, a GPU->GPU flag, the memory
// traffic of a flag-free one-shot among virtual ranks, and the fused all-reduce + add + RMSNorm's
// traffic and row sums alone.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "car_fused_args.h"
#include "car_fused_rows.cuh"
#include "car_layout.h"
#include "floors.h"
#include "sys_scope_ptx.cuh"

namespace specsim::arbench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define FL_CUDA(call) check((call), #call)

__global__ void empty_kernel() {}
/// Empty but for one read of a parameter block as large as the all-reduce's.
__global__ void params_kernel(const __grid_constant__ car::detail::LaunchArgs a) {
  if (a.count == 1) asm volatile("trap;");
}
/// The same, waiting for the previous kernel and then letting the next one launch (PDL).
__global__ void params_pdl_kernel(const __grid_constant__ car::detail::LaunchArgs a) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (a.count == 1) asm volatile("trap;");
}

__device__ __forceinline__ std::uint64_t now_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/// One 32-bit load of the given kind (LoadKind).
__device__ __forceinline__ std::uint32_t load_kind(const std::uint32_t* p, int kind) {
  std::uint32_t v;
  switch (kind) {
    case kLoadL2: asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); break;
    case kLoadRelaxedGpu: asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); break;
    case kLoadVolatile: asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); break;
    case kLoadAcquireSys: asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); break;
    default: asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  }
  return v;
}
__device__ __forceinline__ std::uint32_t load_flag(const std::uint32_t* p, int kind) { return load_kind(p, kind); }

/// `n` dependent loads of one word (its value is 0, so the chain stays on one address).
__global__ void load_chain(const std::uint32_t* p, int n, int kind, std::uint64_t* out) {
  std::uint32_t idx = 0;
  const std::uint64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) idx = load_kind(p + idx, kind);
  out[0] = now_ns() - t0;
  out[1] = idx;
}
__device__ __forceinline__ void store_flag(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/// One thread: the starter stores i into the peer's flag and waits for i in its own; the other
/// side waits for i and answers. out[0] = elapsed ns (starter), out[1] = 1 on timeout.
__global__ void ping_pong(const std::uint32_t* mine, std::uint32_t* peer, int round_trips, int starter, int kind,
                          std::uint64_t timeout_ns, std::uint64_t* out) {
  const std::uint64_t t0 = now_ns();
  for (int i = 1; i <= round_trips; ++i) {
    const auto want = static_cast<std::uint32_t>(i);
    if (starter) store_flag(peer, want);
    while (load_flag(mine, kind) != want) {
      if (now_ns() - t0 > timeout_ns) {
        out[1] = 1;
        return;
      }
    }
    if (!starter) store_flag(peer, want);
  }
  out[0] = now_ns() - t0;
}

/// `n` reads of %globaltimer, each depending on the last (so they cannot overlap).
__global__ void timer_chain(int n, std::uint64_t* out) {
  std::uint64_t acc = 0;
  const long long c0 = clock64();
  for (int i = 0; i < n; ++i) {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : "l"(acc) : "memory");
    acc += t & 1;
  }
  out[0] = static_cast<std::uint64_t>(clock64() - c0);
  out[1] = acc;
}

using car::detail::load_relaxed_sys;
using car::detail::store_relaxed_sys;

/// One vector's share of the flag-free one-shot's traffic for rank r, in its two halves: the
/// sends (v into slot r of every peer's area, to rank+1, rank+2, ... when `rotated`, else to 0,
/// 1, ...), then the loads and refills (all bits set) of the peers' slots of its own area, whose
/// low bits it returns so that no load is dropped.
__device__ __forceinline__ void ll_vector_sends(uint4* areas, const uint4& v, int r, std::size_t i, std::size_t area,
                                                std::size_t slot_vecs, int ranks, bool rotated) {
  for (int k = 1; k < ranks; ++k) {
    const int q = rotated ? (r + k) % ranks : k - 1 + (k - 1 >= r ? 1 : 0);  // every peer once
    store_relaxed_sys(areas + q * area + r * slot_vecs + i, v);
  }
}
__device__ __forceinline__ unsigned ll_vector_polls(uint4* areas, int r, std::size_t i, std::size_t area,
                                                    std::size_t slot_vecs, int ranks) {
  unsigned seen = 0;
  for (int q = 0; q < ranks; ++q)
    if (q != r) seen ^= load_relaxed_sys(areas + r * area + q * slot_vecs + i).x & 1u;
  for (int q = 0; q < ranks; ++q)
    if (q != r) areas[r * area + q * slot_vecs + i] = make_uint4(~0u, ~0u, ~0u, ~0u);
  return seen;
}

/// The flag-free one-shot's loads and stores alone (ll_traffic_us). Rank r = blockIdx.x; its area
/// holds one slot of `slot_vecs` vectors per sender; in/out hold `nvec` vectors per rank. Sends go
/// to peers 0, 1, ... or, `rotated`, to r+1, r+2, ... (mod ranks).
__global__ void ll_traffic_kernel(uint4* areas, const uint4* in, uint4* out, std::size_t nvec, std::size_t slot_vecs,
                                  int ranks, int copy_only, int rotated) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int r = static_cast<int>(blockIdx.x);  // grid (ranks, blocks), as the flag-free kernels' virtual ranks
  const std::size_t area = slot_vecs * static_cast<std::size_t>(ranks);
  const std::size_t stride = static_cast<std::size_t>(gridDim.y) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.y) * blockDim.x + threadIdx.x; i < nvec; i += stride) {
    uint4 v = in[r * nvec + i];
    if (!copy_only) {
      ll_vector_sends(areas, v, r, i, area, slot_vecs, ranks, rotated != 0);
      v.x ^= ll_vector_polls(areas, r, i, area, slot_vecs, ranks);
    }
    out[r * nvec + i] = v;
  }
}

/// one-shot-ll-bcast's loads and stores alone (bcast_traffic_us). Rank r = blockIdx.x; its area
/// holds two slots of `slot_vecs` vectors (this call's copy, the previous one to empty).
__global__ void bcast_traffic_kernel(uint4* areas, const uint4* in, uint4* out, std::size_t nvec, std::size_t slot_vecs,
                                     int ranks) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int r = static_cast<int>(blockIdx.x);  // grid (ranks, blocks), as the flag-free kernels' virtual ranks
  const std::size_t area = 2 * slot_vecs;
  const std::size_t stride = static_cast<std::size_t>(gridDim.y) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.y) * blockDim.x + threadIdx.x;
  for (std::size_t i = first; i < nvec; i += stride) store_relaxed_sys(areas + r * area + i, in[r * nvec + i]);
  for (std::size_t i = first; i < nvec; i += stride) {
    uint4 v = in[r * nvec + i];
    unsigned seen = 0;
    for (int k = 1; k < ranks; ++k) seen ^= load_relaxed_sys(areas + ((r + k) % ranks) * area + i).x & 1u;
    areas[r * area + slot_vecs + i] = make_uint4(~0u, ~0u, ~0u, ~0u);
    v.x ^= seen;
    out[r * nvec + i] = v;
  }
}

/// The fused kernel's loads and stores alone (fused_traffic_us): grid (tokens x parts, ranks) as
/// the fused kernel's, CTA b slice b % parts of row b / parts, one vector a thread; one-shot-ll's
/// sends (to rank+1, rank+2, ...), slot loads and refills and output store, and with `norm` the
/// residual and weight loads and the new residual's store.
__global__ void fused_traffic_kernel(uint4* areas, const uint4* in, uint4* out, const uint4* res_in, uint4* res_out,
                                     const uint4* weight, std::size_t vpr, std::size_t slot_vecs, int parts, int ranks,
                                     int norm) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int r = static_cast<int>(blockIdx.y);
  const std::size_t row = blockIdx.x / parts, part = blockIdx.x % parts;
  const std::size_t len = (vpr + parts - 1) / parts, c = part * len + threadIdx.x;
  if (threadIdx.x >= len || c >= vpr) return;
  const std::size_t nvec = gridDim.x / parts * vpr, i = row * vpr + c, area = slot_vecs * ranks;
  uint4 v = in[r * nvec + i];
  ll_vector_sends(areas, v, r, i, area, slot_vecs, ranks, true);
  const uint4 res = norm ? res_in[r * nvec + i] : make_uint4(0, 0, 0, 0);
  const uint4 w = norm ? weight[r * vpr + c] : make_uint4(0, 0, 0, 0);
  v.x ^= ll_vector_polls(areas, r, i, area, slot_vecs, ranks);
  if (norm) {
    v.x ^= res.x;
    res_out[r * nvec + i] = v;
    v.y ^= w.y;
  }
  out[r * nvec + i] = v;
}

/// The row sum of kind `kKind` (RowSumKind) alone (row_sum_us): grid (tokens x parts, ranks), a
/// made-up sum of squares a thread, the block barrier every variant has after its reduce, then
/// the variant's own row sum (car_fused_rows.cuh); CTA (x, y)'s total into out. A wait that gives
/// up writes -1 there.
template <int kKind>
__global__ void __launch_bounds__(car::detail::kFusedMaxThreads)
    row_sum_kernel(unsigned long long* partials, float* out, car::detail::RankPtrs me, std::uint32_t call, int parts,
                   std::uint64_t timeout_ns) {
  namespace cd = car::detail;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if constexpr (kKind == kRowSumClusterPush) cd::cluster_started_arrive();
  __shared__ cd::RowSumSmem sm;
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  constexpr int kMode = kKind == kRowSumClusterPush ? cd::kFusedClusterPush : cd::kFusedSplit;
  const cd::RowSplit rs = cd::row_split<kMode>(parts);
  if constexpr (kKind == kRowSumClusterPush) cd::cluster_started_wait();
  __syncthreads();
  // a whole number per CTA and call (sums stay exact), so a stale or another row's partial shows
  const float ss = static_cast<float>(1 + (blockIdx.x + 3 * blockIdx.y + call) % 7);
  bool stop = false;
  float total = 0.0f;
  if constexpr (kKind == kRowSumNone) {
    cd::warp_partials(ss, sm);
    total = cd::fold_warps(sm, 0, blockDim.x >> 5);
  } else if constexpr (kKind == kRowSumSplit) {
    total = cd::row_sum_split(ss, sm, &failed, 0, rs, partials + blockIdx.y * cd::kFusedPartialWords, call, me,
                              timeout_ns, stop);
  } else {
    total = cd::row_sum_push(ss, sm, &failed, 0, stop);
  }
  if (threadIdx.x == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = stop ? -1.0f : total;
}

// Ends the capture on `st`, then times the graph: one warm-up launch, the median of 5; destroys
// the graph and the stream.
double end_capture_median_ms(cudaStream_t st) {
  cudaGraph_t g;
  cudaGraphExec_t x;
  FL_CUDA(cudaStreamEndCapture(st, &g));
  FL_CUDA(cudaGraphInstantiate(&x, g, 0));
  cudaEvent_t e0, e1;
  FL_CUDA(cudaEventCreate(&e0));
  FL_CUDA(cudaEventCreate(&e1));
  FL_CUDA(cudaGraphLaunch(x, st));  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < 5; ++r) {
    FL_CUDA(cudaEventRecord(e0, st));
    FL_CUDA(cudaGraphLaunch(x, st));
    FL_CUDA(cudaEventRecord(e1, st));
    FL_CUDA(cudaEventSynchronize(e1));
    float t = 0;
    FL_CUDA(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  FL_CUDA(cudaEventDestroy(e0));
  FL_CUDA(cudaEventDestroy(e1));
  FL_CUDA(cudaGraphExecDestroy(x));
  FL_CUDA(cudaGraphDestroy(g));
  FL_CUDA(cudaStreamDestroy(st));
  return ms[2];
}

// The traffic floors' common part: per rank an area of `area_slots` slots of the message's
// vectors (all bits set, as an empty flag-free slot), its input and output; `nodes` launches of
// `launch(cfg, ...)` on the flag-free kernels' grid (ranks, blocks) with PDL, captured in one
// graph; us per node.
template <typename Launch>
double traffic_graph_us(int device, int ranks, std::size_t bytes, std::size_t area_slots, int blocks, int threads,
                        int nodes, Launch launch) {
  FL_CUDA(cudaSetDevice(device));
  const std::size_t nvec = (bytes + 15) / 16, slot_vecs = (nvec + 15) / 16 * 16;
  const auto nr = static_cast<std::size_t>(ranks);
  uint4 *areas = nullptr, *in = nullptr, *out = nullptr;
  FL_CUDA(cudaMalloc(&areas, nr * area_slots * slot_vecs * sizeof(uint4)));
  FL_CUDA(cudaMemset(areas, 0xff, nr * area_slots * slot_vecs * sizeof(uint4)));
  FL_CUDA(cudaMalloc(&in, nr * nvec * sizeof(uint4)));
  FL_CUDA(cudaMemset(in, 0, nr * nvec * sizeof(uint4)));
  FL_CUDA(cudaMalloc(&out, nr * nvec * sizeof(uint4)));
  cudaStream_t st;
  FL_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(ranks), static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  FL_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < nodes; ++k) FL_CUDA(launch(cfg, areas, static_cast<const uint4*>(in), out, nvec, slot_vecs));
  const double ms = end_capture_median_ms(st);
  FL_CUDA(cudaFree(areas));
  FL_CUDA(cudaFree(in));
  FL_CUDA(cudaFree(out));
  return ms * 1e3 / nodes;
}

}  // namespace

double ll_traffic_us(int device, int ranks, std::size_t bytes, int blocks, int threads, bool copy_only, bool rotated,
                     int nodes) {
  return traffic_graph_us(device, ranks, bytes, static_cast<std::size_t>(ranks), blocks, threads, nodes,
                          [&](const cudaLaunchConfig_t& cfg, uint4* areas, const uint4* in, uint4* out,
                              std::size_t nvec, std::size_t slot_vecs) {
                            return cudaLaunchKernelEx(&cfg, ll_traffic_kernel, areas, in, out, nvec, slot_vecs, ranks,
                                                      copy_only ? 1 : 0, rotated ? 1 : 0);
                          });
}

double bcast_traffic_us(int device, int ranks, std::size_t bytes, int blocks, int threads, int nodes) {
  return traffic_graph_us(device, ranks, bytes, 2, blocks, threads, nodes,
                          [&](const cudaLaunchConfig_t& cfg, uint4* areas, const uint4* in, uint4* out,
                              std::size_t nvec, std::size_t slot_vecs) {
                            return cudaLaunchKernelEx(&cfg, bcast_traffic_kernel, areas, in, out, nvec, slot_vecs,
                                                      ranks);
                          });
}

double timer_read_cycles(int device, int n) {
  FL_CUDA(cudaSetDevice(device));
  std::uint64_t* out = nullptr;
  FL_CUDA(cudaMalloc(&out, 2 * sizeof(std::uint64_t)));
  std::uint64_t res[2] = {0, 0};
  for (int rep = 0; rep < 2; ++rep) {
    timer_chain<<<1, 1>>>(n, out);
    FL_CUDA(cudaGetLastError());
    FL_CUDA(cudaDeviceSynchronize());
  }
  FL_CUDA(cudaMemcpy(res, out, sizeof res, cudaMemcpyDeviceToHost));
  FL_CUDA(cudaFree(out));
  return static_cast<double>(res[0]) / n;
}

int node_param_bytes() { return static_cast<int>(sizeof(car::detail::LaunchArgs)); }

double empty_graph_node_us(int device, int nodes, int kind) {
  FL_CUDA(cudaSetDevice(device));
  cudaStream_t st;
  FL_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  FL_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  car::detail::LaunchArgs args{};
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = kind == kNodeParamsPdl ? 1 : 0;
  for (int k = 0; k < nodes; ++k) {
    if (kind == kNodeEmpty)
      empty_kernel<<<1, 32, 0, st>>>();
    else
      FL_CUDA(cudaLaunchKernelEx(&cfg, kind == kNodeParams ? params_kernel : params_pdl_kernel, args));
  }
  const double ms = end_capture_median_ms(st);
  return ms * 1e3 / nodes;
}

double load_latency_ns(int device, int owner, int kind, int n) {
  FL_CUDA(cudaSetDevice(owner));
  std::uint32_t* buf = nullptr;
  FL_CUDA(cudaMalloc(&buf, 256));
  FL_CUDA(cudaMemset(buf, 0, 256));
  FL_CUDA(cudaDeviceSynchronize());
  FL_CUDA(cudaSetDevice(device));
  std::uint64_t* out = nullptr;
  FL_CUDA(cudaMalloc(&out, 2 * sizeof(std::uint64_t)));
  std::uint64_t res[2] = {0, 0};
  for (int rep = 0; rep < 2; ++rep) {  // the first warms the caches and the code
    load_chain<<<1, 1>>>(buf, n, kind, out);
    FL_CUDA(cudaGetLastError());
    FL_CUDA(cudaDeviceSynchronize());
  }
  FL_CUDA(cudaMemcpy(res, out, sizeof res, cudaMemcpyDeviceToHost));
  FL_CUDA(cudaFree(out));
  FL_CUDA(cudaSetDevice(owner));
  FL_CUDA(cudaFree(buf));
  return static_cast<double>(res[0]) / n;
}

double flag_one_way_us(int dev_a, int dev_b, int round_trips, double timeout_s, int kind) {
  const int dev[2] = {dev_a, dev_b};
  std::uint32_t* flag[2] = {nullptr, nullptr};
  std::uint64_t* out[2] = {nullptr, nullptr};
  cudaStream_t st[2];
  for (int s = 0; s < 2; ++s) {
    FL_CUDA(cudaSetDevice(dev[s]));
    FL_CUDA(cudaMalloc(&flag[s], 256));
    FL_CUDA(cudaMemset(flag[s], 0, 256));
    FL_CUDA(cudaMalloc(&out[s], 2 * sizeof(std::uint64_t)));
    FL_CUDA(cudaMemset(out[s], 0, 2 * sizeof(std::uint64_t)));
    FL_CUDA(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    FL_CUDA(cudaDeviceSynchronize());
  }
  const auto timeout_ns = static_cast<std::uint64_t>(timeout_s * 1e9);
  for (int s = 1; s >= 0; --s) {  // the answering side first, so it is polling when the starter begins
    FL_CUDA(cudaSetDevice(dev[s]));
    ping_pong<<<1, 1, 0, st[s]>>>(flag[s], flag[1 - s], round_trips, s == 0, kind, timeout_ns, out[s]);
    FL_CUDA(cudaGetLastError());
  }
  std::uint64_t res[2][2];
  for (int s = 0; s < 2; ++s) {
    FL_CUDA(cudaSetDevice(dev[s]));
    FL_CUDA(cudaStreamSynchronize(st[s]));
    FL_CUDA(cudaMemcpy(res[s], out[s], sizeof res[s], cudaMemcpyDeviceToHost));
    FL_CUDA(cudaFree(flag[s]));
    FL_CUDA(cudaFree(out[s]));
    FL_CUDA(cudaStreamDestroy(st[s]));
  }
  if (res[0][1] || res[1][1])
    throw std::runtime_error("flag ping-pong between GPU " + std::to_string(dev_a) + " and GPU " +
                             std::to_string(dev_b) + " timed out (no peer-to-peer path?)");
  return static_cast<double>(res[0][0]) * 1e-3 / (2.0 * round_trips);
}

double fused_traffic_us(int device, int ranks, std::size_t hidden, std::size_t tokens, int parts, int threads,
                        bool norm, int nodes) {
  const std::size_t vpr = hidden / 8, nr = static_cast<std::size_t>(ranks);
  uint4 *res_in = nullptr, *res_out = nullptr, *weight = nullptr;
  FL_CUDA(cudaSetDevice(device));
  FL_CUDA(cudaMalloc(&res_in, nr * tokens * vpr * sizeof(uint4)));
  FL_CUDA(cudaMemset(res_in, 0, nr * tokens * vpr * sizeof(uint4)));
  FL_CUDA(cudaMalloc(&res_out, nr * tokens * vpr * sizeof(uint4)));
  FL_CUDA(cudaMalloc(&weight, nr * vpr * sizeof(uint4)));
  FL_CUDA(cudaMemset(weight, 0, nr * vpr * sizeof(uint4)));
  const double us = traffic_graph_us(
      device, ranks, tokens * hidden * 2, nr, static_cast<int>(tokens) * parts, threads, nodes,
      [&](cudaLaunchConfig_t cfg, uint4* areas, const uint4* in, uint4* out, std::size_t, std::size_t slot_vecs) {
        cfg.gridDim = dim3(static_cast<unsigned>(tokens) * static_cast<unsigned>(parts), static_cast<unsigned>(ranks));
        return cudaLaunchKernelEx(&cfg, fused_traffic_kernel, areas, in, out, static_cast<const uint4*>(res_in),
                                  res_out, static_cast<const uint4*>(weight), vpr, slot_vecs, parts, ranks,
                                  norm ? 1 : 0);
      });
  FL_CUDA(cudaFree(res_in));
  FL_CUDA(cudaFree(res_out));
  FL_CUDA(cudaFree(weight));
  return us;
}

double row_sum_us(int device, int ranks, std::size_t tokens, int parts, int threads, int kind, int nodes) {
  namespace cd = car::detail;
  FL_CUDA(cudaSetDevice(device));
  const auto nr = static_cast<std::size_t>(ranks);
  const unsigned ctas = static_cast<unsigned>(tokens) * static_cast<unsigned>(parts);
  if (kind < 0 || kind >= kRowSumKinds || ctas > static_cast<unsigned>(cd::kMaxBlocks))
    throw std::runtime_error("row_sum_us: kind or rows x parts out of range");
  unsigned long long* partials = nullptr;
  float* out = nullptr;
  unsigned long long* err = nullptr;
  FL_CUDA(cudaMalloc(&partials, nr * cd::kFusedPartialWords * sizeof(unsigned long long)));
  FL_CUDA(cudaMemset(partials, 0, nr * cd::kFusedPartialWords * sizeof(unsigned long long)));
  FL_CUDA(cudaMalloc(&out, nr * ctas * sizeof(float)));
  FL_CUDA(cudaMalloc(&err, sizeof(unsigned long long)));
  FL_CUDA(cudaMemset(err, 0, sizeof(unsigned long long)));
  cd::RankPtrs me{};
  me.err = err;
  cudaStream_t st;
  FL_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(ctas, static_cast<unsigned>(ranks));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.stream = st;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  attr[1].id = cudaLaunchAttributeClusterDimension;
  attr[1].val.clusterDim.x = static_cast<unsigned>(parts);
  attr[1].val.clusterDim.y = 1;
  attr[1].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = kind == kRowSumClusterPush ? 2 : 1;
  const std::uint64_t timeout_ns = 2'000'000'000ull;
  FL_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  // call k + 1 tags node k's words (split), as the kernel's call count does; the words are zeroed
  // at the start of every replay, so that no replay finds a word of the one before
  FL_CUDA(cudaMemsetAsync(partials, 0, nr * cd::kFusedPartialWords * sizeof(unsigned long long), st));
  for (int k = 0; k < nodes; ++k) {
    const auto call = static_cast<std::uint32_t>(k + 1);
    if (kind == kRowSumNone)
      FL_CUDA(cudaLaunchKernelEx(&cfg, row_sum_kernel<kRowSumNone>, partials, out, me, call, parts, timeout_ns));
    else if (kind == kRowSumSplit)
      FL_CUDA(cudaLaunchKernelEx(&cfg, row_sum_kernel<kRowSumSplit>, partials, out, me, call, parts, timeout_ns));
    else
      FL_CUDA(
          cudaLaunchKernelEx(&cfg, row_sum_kernel<kRowSumClusterPush>, partials, out, me, call, parts, timeout_ns));
  }
  const double ms = end_capture_median_ms(st);  // destroys st
  std::vector<float> totals(nr * ctas);
  unsigned long long e = 0;
  FL_CUDA(cudaMemcpy(totals.data(), out, totals.size() * sizeof(float), cudaMemcpyDeviceToHost));
  FL_CUDA(cudaMemcpy(&e, err, sizeof e, cudaMemcpyDeviceToHost));
  FL_CUDA(cudaFree(partials));
  FL_CUDA(cudaFree(out));
  FL_CUDA(cudaFree(err));
  if (e != 0 || std::any_of(totals.begin(), totals.end(), [](float t) { return t < 0.0f; }))
    throw std::runtime_error(std::string("row_sum_us: a row sum of kind '") + kRowSumNames[kind] + "' gave up waiting");
  // the last node (call `nodes`): CTA (x, y)'s partial is threads x (1 + (x + 3y + call) % 7); its
  // total is its row's partials (its own for none), exact in float
  const auto partial = [&](unsigned x, unsigned y) {
    return static_cast<double>(threads) * (1 + (x + 3 * y + static_cast<unsigned>(nodes)) % 7);
  };
  for (unsigned y = 0; y < static_cast<unsigned>(ranks); ++y)
    for (unsigned x = 0; x < ctas; ++x) {
      double want = 0;
      if (kind == kRowSumNone)
        want = partial(x, y);
      else
        for (unsigned p = 0; p < static_cast<unsigned>(parts); ++p) want += partial(x / parts * parts + p, y);
      const float got = totals[y * ctas + x];
      if (got != static_cast<float>(want))
        throw std::runtime_error(std::string("row_sum_us: a row sum of kind '") + kRowSumNames[kind] + "' gave " +
                                 std::to_string(got) + " where " + std::to_string(want) + " was due");
    }
  return ms * 1e3 / nodes;
}

}  // namespace specsim::arbench
