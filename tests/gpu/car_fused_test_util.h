#pragma once
// Helpers shared by the fused all-reduce + add + RMSNorm GPU tests (test_car_fused.cc on virtual
// ranks, test_car_fused_ipc.cc with one process a rank): a rank's buffers, the variants, the
// separate kernel each is compared with, and the checks of one rank's outputs.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "car_fused_reference.h"
#include "car_test_util.h"

namespace cartest {

/// Device buffers of one rank.
struct RankBufs {
  void *in = nullptr, *res_in = nullptr, *res_out = nullptr, *weight = nullptr, *norm = nullptr, *quant = nullptr;
  void *ar = nullptr, *res2 = nullptr, *norm2 = nullptr, *quant2 = nullptr;  // the unfused pair's outputs
  void alloc(std::size_t bytes, std::size_t hidden_bytes) {
    for (void** p : {&in, &res_in, &res_out, &norm, &ar, &res2, &norm2}) GPU_CHECK(cudaMalloc(p, bytes));
    GPU_CHECK(cudaMalloc(&weight, hidden_bytes));
    GPU_CHECK(cudaMalloc(&quant, bytes / 2));
    GPU_CHECK(cudaMalloc(&quant2, bytes / 2));
  }
  void free_all() {
    for (void* p : {in, res_in, res_out, weight, norm, quant, ar, res2, norm2, quant2}) cudaFree(p);
  }
};

/// Device bytes to the host (after the work that wrote them has been synchronized).
inline std::vector<unsigned char> fetch(const void* d, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  GPU_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

inline constexpr specsim::car::FusedVariant kFusedVariants[] = {
    specsim::car::FusedVariant::Cluster, specsim::car::FusedVariant::ClusterPush, specsim::car::FusedVariant::Block,
    specsim::car::FusedVariant::Split, specsim::car::FusedVariant::TwoShot};

/// The separate kernel compared with variant v at `hidden`: v's row split where it runs the shape,
/// else the cluster one (the same bits either way).
inline specsim::car::FusedVariant separate_for(specsim::car::FusedVariant v, std::size_t hidden) {
  return !specsim::car::fused_clustered(v) &&
                 specsim::car::fused_variant_refuse_reason(specsim::car::FusedVariant::Block, hidden)
             ? specsim::car::FusedVariant::Cluster
             : v;
}

/// One rank's outputs against the CPU reference and the unfused pair's: the new residual (fused
/// and unfused) bitwise, the norm bitwise equal to the pair's and within 2 ulps of the CPU's, and
/// with an fp8 copy (`q` not null) that copy equal to the host's e4m3 of the norm and bitwise to
/// the pair's. `who` starts every message.
inline void check_fused_rank(Checker& ck, const std::string& who, const FusedProblem& p, DType dt, float quant_scale,
                             const std::vector<unsigned char>& res, const std::vector<unsigned char>& res2,
                             const std::vector<unsigned char>& norm, const std::vector<unsigned char>& norm2,
                             const std::vector<unsigned char>* q, const std::vector<unsigned char>* q2) {
  const std::size_t count = p.tokens * p.hidden;
  ck.expect(res == p.new_residual, who + " residual bitwise = CPU");
  ck.expect(res2 == p.new_residual, who + " unfused residual bitwise = CPU");
  ck.expect(norm == norm2, who + " norm bitwise = all-reduce + add_rmsnorm");
  std::size_t off = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (!norm_within(load16(norm, i, dt), p.norm[i], dt)) ++off;
  ck.expect(off == 0, who + " norm within 2 ulps of the CPU: " + std::to_string(off) + " elements off");
  if (q == nullptr) return;
  std::size_t qwrong = 0;
  for (std::size_t i = 0; i < count; ++i)
    if ((*q)[i] != to_e4m3(load16(norm, i, dt) * (1.0f / quant_scale))) ++qwrong;
  ck.expect(qwrong == 0, who + " fp8 copy = host e4m3 (" + std::to_string(qwrong) + " off)");
  ck.expect(*q == *q2, who + " fp8 copy bitwise = the unfused pair's");
}

}  // namespace cartest
